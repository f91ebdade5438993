/* ring_residency: aborts when pool keys built through a ring plane with incremental builds
 * differ (bytes) from one full build over a flat plane, or a flat incremental sequence differs
 * from the full build, on the oracle and (with a device) on the kernels; also when the ring
 * append kernel's plane differs from the oracle's or the kernel's keys leave class pool_key.
 *
 * Parameters (from the input's end): pool 1..64, d 1..64, ring size state_rows = pool * m
 * (m 1..16), total rows appended, the append chunks (each at most state_rows - done % pool, so
 * the pool an incremental build starts at is still resident; chunks wrap the ring), the flat
 * pool_begin steps, the gate scale. Without a device the launchers must return the CUDA band. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_helpers.h"
#include "fuzz/kpool_fuzz_util.h"
#include "kernels/mla.h"
#include "oracle/mla_oracle.h"
#include "tests/lib/compare.h"

FUZZ_TARGET_NAME("ring_residency");

#define MAX_CHUNKS 64

int fuzz_one_input(const uint8_t *data, size_t size) {
    fuzz_producer p = fuzz_producer_init(data, size);
    int32_t pool = fuzz_range(&p, 0, 1) ? FUZZ_PICK(&p, ((const int32_t[]){1, 2, 4, 4, 7, 64}))
                                        : (int32_t)fuzz_range(&p, 1, 64);
    int32_t d = fuzz_range(&p, 0, 1) ? FUZZ_PICK(&p, ((const int32_t[]){1, 3, 32, 64}))
                                     : (int32_t)fuzz_range(&p, 1, 64);
    int32_t sr = pool * (int32_t)fuzz_range(&p, 1, 16);
    int32_t total = (int32_t)fuzz_range(&p, 1, 3 * sr + 2 * pool + 5);
    if (total > 4096) total = 4096;
    float gscale = FUZZ_PICK(&p, ((const float[]){1.0f, 4.0f, 30.0f, 0.0f}));
    uint64_t seed = ((uint64_t)fuzz_u32(&p) << 32) | fuzz_u32(&p);
    int32_t chunk[MAX_CHUNKS], nch = 0, done = 0;
    while (done < total) {
        int32_t cap = sr - done % pool, left = total - done;
        if (cap > left) cap = left;
        int32_t n = nch == MAX_CHUNKS - 1 ? cap : (int32_t)fuzz_range(&p, 1, cap);
        if (nch == MAX_CHUNKS - 1 && n < left) { total = done + n; } /* last chunk: stop there */
        chunk[nch++] = n;
        done += n;
    }
    int32_t np = total / pool;
    int32_t steps[8];
    for (int i = 0; i < 8; i++) steps[i] = (int32_t)fuzz_range(&p, 0, np);
    for (int i = 1; i < 8; i++) /* non-decreasing */
        if (steps[i] < steps[i - 1]) steps[i] = steps[i - 1];

    size_t w = (size_t)2 * d;
    float *k = kf_malloc((size_t)total * d * 4), *g = kf_malloc((size_t)total * d * 4),
          *ape = kf_malloc((size_t)pool * d * 4);
    for (size_t i = 0; i < (size_t)total * d; i++) {
        k[i] = kf_uni(seed, i);
        g[i] = kf_uni(seed ^ 0xA, i) * gscale;
    }
    for (size_t i = 0; i < (size_t)pool * d; i++) ape[i] = kf_uni(seed ^ 0xB, i);
    float *flat = kf_malloc((size_t)total * w * 4), *ring = calloc((size_t)sr * w, 4);
    float *full = calloc((size_t)np * d + 1, 4), *inc = calloc((size_t)np * d + 1, 4),
          *rk = calloc((size_t)np * d + 1, 4);
    FUZZ_ASSERT(ring && full && inc && rk);
#define TUPLE "pool %d d %d state_rows %d total %d chunks %d gate_scale %g"
#define TARGS pool, d, sr, total, nch, (double)gscale
    /* oracle: flat full, flat incremental, ring incremental */
    oracle_index_append_ring_f32(flat, k, g, 0, total, d, d, 0);
    oracle_kpool_pool_keys_f32(flat, ape, full, 0, np, pool, d, 0);
    int32_t built = 0;
    for (int i = 0; i <= 8; i++) {
        int32_t now = i < 8 ? steps[i] : np;
        oracle_kpool_pool_keys_f32(flat, ape, inc, built, now, pool, d, 0);
        built = now;
    }
    FUZZ_ASSERT_MSG(memcmp(inc, full, (size_t)np * d * 4) == 0,
                    "oracle: flat incremental (steps %d %d %d %d %d %d %d %d) != full; " TUPLE,
                    steps[0], steps[1], steps[2], steps[3], steps[4], steps[5], steps[6], steps[7],
                    TARGS);
    done = 0, built = 0;
    for (int c = 0; c < nch; c++) {
        oracle_index_append_ring_f32(ring, k + (size_t)done * d, g + (size_t)done * d, done,
                                     chunk[c], d, d, sr);
        done += chunk[c];
        int32_t now = done / pool;
        oracle_kpool_pool_keys_f32(ring, ape, rk, built, now, pool, d, sr);
        built = now;
    }
    for (size_t e = 0; e < (size_t)np * d; e++)
        FUZZ_ASSERT_MSG(kf_bits(rk[e]) == kf_bits(full[e]),
                        "oracle: ring + incremental != flat full at key[%zu][%zu]: %a vs %a; " TUPLE,
                        e / (size_t)d, e % (size_t)d, (double)rk[e], (double)full[e], TARGS);

    if (!kf_have_gpu()) {
        int rc = memra_mla_index_append_ring_f32(ring, k, g, 0, chunk[0], d, d, sr, NULL);
        KF_ASSERT_CUDA_BAND(rc, TUPLE, TARGS);
        if (np > 0) {
            rc = memra_mla_kpool_pool_keys_f32(flat, ape, full, 0, np, pool, d, 0, NULL);
            KF_ASSERT_CUDA_BAND(rc, TUPLE, TARGS);
        }
    } else {
        float *dk = kf_dev_from(k, (size_t)total * d * 4), *dg = kf_dev_from(g, (size_t)total * d * 4),
              *da = kf_dev_from(ape, (size_t)pool * d * 4), *df = kf_dev_from(flat, (size_t)total * w * 4),
              *dr = kf_dev((size_t)sr * w * 4), *dkeys = kf_dev((size_t)np * d * 4 + 4);
        float *got = kf_malloc((size_t)np * d * 4 + 4), *gring = kf_malloc((size_t)sr * w * 4);
        /* kernel flat full == oracle within pool_key */
        kf_poison(dkeys, (size_t)np * d * 4);
        int rc = memra_mla_kpool_pool_keys_f32(df, da, dkeys, 0, np, pool, d, 0, NULL);
        FUZZ_ASSERT_MSG(rc == 0, "pool_keys (flat full) returned %d; " TUPLE, rc, TARGS);
        float *kfull = kf_malloc((size_t)np * d * 4 + 4);
        kf_download(kfull, dkeys, (size_t)np * d * 4);
        double *atol = kf_malloc((size_t)np * d * sizeof *atol + 8);
        mla_tol_pool_key_bounds(flat, ape, 0, np, pool, d, 0, atol);
        mla_tol tol = mla_tol_exact();
        tol.cls = MLA_TOL_POOL_KEY;
        tol.atol_elem = atol;
        mla_cmp_result cr = mla_compare_f32(kfull, full, (size_t)np * d, &tol);
        FUZZ_ASSERT_MSG(cr.pass && !cr.n_nan_mismatch,
                        "kernel pool_keys vs oracle outside class pool_key: key[%zu][%zu] kernel "
                        "%a oracle %a |diff| %g bound %g; " TUPLE, cr.worst_index / (size_t)d,
                        cr.worst_index % (size_t)d, (double)cr.got_worst, (double)cr.ref_worst,
                        cr.worst_abs, cr.worst_bound, TARGS);
        /* kernel flat incremental == kernel full */
        kf_poison(dkeys, (size_t)np * d * 4);
        built = 0;
        for (int i = 0; i <= 8; i++) {
            int32_t now = i < 8 ? steps[i] : np;
            rc = memra_mla_kpool_pool_keys_f32(df, da, dkeys, built, now, pool, d, 0, NULL);
            FUZZ_ASSERT_MSG(rc == 0, "pool_keys (flat, begin %d, n_pools %d) returned %d; " TUPLE,
                            built, now, rc, TARGS);
            built = now;
        }
        kf_download(got, dkeys, (size_t)np * d * 4);
        FUZZ_ASSERT_MSG(memcmp(got, kfull, (size_t)np * d * 4) == 0,
                        "kernel flat incremental != kernel full (bytes); " TUPLE, TARGS);
        /* kernel ring + incremental == kernel full; ring plane == oracle ring */
        kf_poison(dkeys, (size_t)np * d * 4);
        kf_poison(dr, (size_t)sr * w * 4);
        done = 0, built = 0;
        for (int c = 0; c < nch; c++) {
            rc = memra_mla_index_append_ring_f32(dr, dk + (size_t)done * d, dg + (size_t)done * d,
                                                 done, chunk[c], d, d, sr, NULL);
            FUZZ_ASSERT_MSG(rc == 0, "ring append (slot %d, t %d) returned %d; " TUPLE, done,
                            chunk[c], rc, TARGS);
            done += chunk[c];
            int32_t now = done / pool;
            rc = memra_mla_kpool_pool_keys_f32(dr, da, dkeys, built, now, pool, d, sr, NULL);
            FUZZ_ASSERT_MSG(rc == 0, "pool_keys (ring, begin %d, n_pools %d) returned %d; " TUPLE,
                            built, now, rc, TARGS);
            built = now;
        }
        kf_download(got, dkeys, (size_t)np * d * 4);
        FUZZ_ASSERT_MSG(memcmp(got, kfull, (size_t)np * d * 4) == 0,
                        "kernel ring + incremental != kernel flat full (bytes); " TUPLE, TARGS);
        if (total >= sr) { /* every ring row written */
            kf_download(gring, dr, (size_t)sr * w * 4);
            FUZZ_ASSERT_MSG(memcmp(gring, ring, (size_t)sr * w * 4) == 0,
                            "kernel ring plane != oracle ring plane (bytes); " TUPLE, TARGS);
        }
        KF_CUDA(cudaFree(dk));
        KF_CUDA(cudaFree(dg));
        KF_CUDA(cudaFree(da));
        KF_CUDA(cudaFree(df));
        KF_CUDA(cudaFree(dr));
        KF_CUDA(cudaFree(dkeys));
        free(got), free(gring), free(kfull), free(atol);
    }
    free(k), free(g), free(ape), free(flat), free(ring), free(full), free(inc), free(rk);
    return 0;
}
