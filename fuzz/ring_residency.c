/* ring_residency: aborts when pool keys built through a ring plane with incremental builds
 * differ (bytes) from one full build over a flat plane, or a flat incremental sequence differs
 * from the full build, on the oracle and (with a device) on the kernels; also when the ring
 * append kernel's plane differs from the oracle's or the kernel's keys leave class pool_key.
 *
 * Parameters (from the input's end): pool 1..64, d 1..64, ring size state_rows = pool * m
 * (m 1..16), total rows appended, the append chunks (each at most state_rows - done % pool, so
 * the pool an incremental build starts at is still resident; chunks wrap the ring), the flat
 * pool_begin steps, the gate scale, the seed of the Philox fill (tests/lib/mla_fill.h) of k, gate
 * and ape. With a device every launch goes through the fuzz testbed (fuzz/fuzz_gpu.h): it also
 * aborts when a launch fails, a kernel writes outside its output (guard bands), leaves a key word
 * unwritten (poison) or modifies an input. Without a device the launchers must return the CUDA
 * band. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_gpu.h"
#include "fuzz/fuzz_helpers.h"
#include "kernels/mla.h"
#include "oracle/mla_oracle.h"
#include "tests/lib/compare.h"
#include "tests/lib/mla_fill.h"
#include "tests/lib/testbed.h"

FUZZ_TARGET_NAME("ring_residency");

#define MAX_CHUNKS 64

int fuzz_one_input(const uint8_t *data, size_t size) {
    tb *t = fuzz_tb_begin(data, size);
    fuzz_producer p = fuzz_producer_init(data, size);
    int32_t pool = fuzz_range(&p, 0, 1) ? FUZZ_PICK(&p, ((const int32_t[]){1, 2, 4, 4, 7, 64}))
                                        : (int32_t)fuzz_range(&p, 1, 64);
    int32_t d = fuzz_range(&p, 0, 1) ? FUZZ_PICK(&p, ((const int32_t[]){1, 3, 32, 64}))
                                     : (int32_t)fuzz_range(&p, 1, 64);
    int32_t sr = pool * (int32_t)fuzz_range(&p, 1, 16);
    int32_t total = (int32_t)fuzz_range(&p, 1, 3 * sr + 2 * pool + 5);
    if (total > 4096) total = 4096;
    float gscale = FUZZ_PICK(&p, ((const float[]){1.0f, 4.0f, 30.0f, 0.0f}));
    uint32_t seed = fuzz_u32(&p);
    seed ^= fuzz_u32(&p); /* 8 bytes, as the seed always took: other draws keep their bytes */
    int32_t chunk[MAX_CHUNKS], nch = 0, done = 0;
    while (done < total) {
        int32_t cap = sr - done % pool, left = total - done;
        if (cap > left) cap = left;
        int32_t n = nch == MAX_CHUNKS - 1 ? cap : (int32_t)fuzz_range(&p, 1, cap);
        if (nch == MAX_CHUNKS - 1 && n < left) {
            total = done + n;
        } /* last chunk: stop there */
        chunk[nch++] = n;
        done += n;
    }
    int32_t np = total / pool;
    int32_t steps[8];
    for (int i = 0; i < 8; i++) steps[i] = (int32_t)fuzz_range(&p, 0, np);
    for (int i = 1; i < 8; i++) /* non-decreasing */
        if (steps[i] < steps[i - 1]) steps[i] = steps[i - 1];
    fuzz_tb_casef(t,
                  "pool %d d %d state_rows %d total %d chunks %d gate_scale %g seed 0x%08X "
                  "flat steps %d %d %d %d %d %d %d %d",
                  pool, d, sr, total, nch, (double)gscale, seed, steps[0], steps[1], steps[2],
                  steps[3], steps[4], steps[5], steps[6], steps[7]);

    size_t w = (size_t)2 * d, nkg = (size_t)total * d, nkeys = (size_t)np * d;
    size_t nflat = (size_t)total * w, nring = (size_t)sr * w, nape = (size_t)pool * d;
    fuzz_buf *bk = fuzz_in(t, "k", nkg * 4), *bg = fuzz_in(t, "gate", nkg * 4);
    fuzz_buf *bape = fuzz_in(t, "ape", nape * 4), *bflat = fuzz_in(t, "flat plane", nflat * 4);
    float *k = bk->host, *g = bg->host, *ape = bape->host, *flat = bflat->host;
    fuzz_fill_f32(k, nkg, MLA_FILL_REALISTIC, seed, "k", 1.0f);
    fuzz_fill_f32(g, nkg, MLA_FILL_REALISTIC, seed, "gate", gscale);
    fuzz_fill_f32(ape, nape, MLA_FILL_REALISTIC, seed, "ape", 1.0f);
    float *ring = fuzz_alloc(t, nring * 4);
    float *full = fuzz_alloc(t, nkeys * 4), *inc = fuzz_alloc(t, nkeys * 4);
    float *rk = fuzz_alloc(t, nkeys * 4);
    memset(ring, 0, nring * 4);
    memset(full, 0, nkeys * 4);
    memset(inc, 0, nkeys * 4);
    memset(rk, 0, nkeys * 4);
    const int64_t kshape[2] = {np, d}, rshape[2] = {sr, (int64_t)w};
    /* oracle: flat full, flat incremental, ring incremental */
    oracle_index_append_ring_f32(flat, k, g, 0, total, d, d, 0);
    oracle_kpool_pool_keys_f32(flat, ape, full, 0, np, pool, d, 0);
    int32_t built = 0;
    for (int i = 0; i <= 8; i++) {
        int32_t now = i < 8 ? steps[i] : np;
        oracle_kpool_pool_keys_f32(flat, ape, inc, built, now, pool, d, 0);
        built = now;
    }
    tb_compare(t, "pool_keys", ST_F32, 2, kshape, inc, "oracle flat incremental", full,
               "oracle flat full", MLA_TOL_EXACT, NULL, 1);
    done = 0, built = 0;
    for (int c = 0; c < nch; c++) {
        oracle_index_append_ring_f32(ring, k + (size_t)done * d, g + (size_t)done * d, done,
                                     chunk[c], d, d, sr);
        done += chunk[c];
        int32_t now = done / pool;
        oracle_kpool_pool_keys_f32(ring, ape, rk, built, now, pool, d, sr);
        built = now;
    }
    tb_compare(t, "pool_keys", ST_F32, 2, kshape, rk, "oracle ring + incremental", full,
               "oracle flat full", MLA_TOL_EXACT, NULL, 1);

    if (fuzz_gpu_enabled()) {
        /* one freshly poisoned key plane per build sequence; the ring plane must be fully
         * written once total >= state_rows */
        fuzz_buf *kfull = fuzz_out(t, "pool_keys", nkeys * 4, "pool_keys (flat full)", 1);
        fuzz_buf *kinc = fuzz_out(t, "pool_keys", nkeys * 4, "the flat incremental builds", 1);
        fuzz_buf *kring = fuzz_out(t, "pool_keys", nkeys * 4, "the ring appends and builds", 1);
        fuzz_buf *bring = fuzz_out(t, "ring", nring * 4, "the ring appends", total >= sr);
        double *atol = fuzz_alloc(t, nkeys * sizeof *atol);
        mla_tol_pool_key_bounds(flat, ape, 0, np, pool, d, 0, atol);
        fuzz_gpu_upload(t);
        float *dk = bk->dev, *dg = bg->dev, *dr = bring->dev;
        const float *da = bape->dev, *df = bflat->dev;
        char what[96];
        fuzz_launched(t, memra_mla_kpool_pool_keys_f32(df, da, kfull->dev, 0, np, pool, d, 0, NULL),
                      "pool_keys (flat full)");
        built = 0;
        for (int i = 0; i <= 8; i++) {
            int32_t now = i < 8 ? steps[i] : np;
            snprintf(what, sizeof what, "pool_keys (flat, begin %d, n_pools %d)", built, now);
            fuzz_launched(
                t, memra_mla_kpool_pool_keys_f32(df, da, kinc->dev, built, now, pool, d, 0, NULL),
                what);
            built = now;
        }
        done = 0, built = 0;
        for (int c = 0; c < nch; c++) {
            snprintf(what, sizeof what, "ring append (slot %d, t %d)", done, chunk[c]);
            fuzz_launched(t,
                          memra_mla_index_append_ring_f32(dr, dk + (size_t)done * d,
                                                          dg + (size_t)done * d, done, chunk[c], d,
                                                          d, sr, NULL),
                          what);
            done += chunk[c];
            int32_t now = done / pool;
            snprintf(what, sizeof what, "pool_keys (ring, begin %d, n_pools %d)", built, now);
            fuzz_launched(
                t, memra_mla_kpool_pool_keys_f32(dr, da, kring->dev, built, now, pool, d, sr, NULL),
                what);
            built = now;
        }
        fuzz_gpu_check(t);
        /* kernel flat full == oracle within pool_key */
        tb_compare(t, "pool_keys", ST_F32, 2, kshape, kfull->got, "kernel flat full", full,
                   "oracle flat full", MLA_TOL_POOL_KEY, atol, 0);
        /* kernel flat incremental == kernel full */
        tb_compare(t, "pool_keys", ST_F32, 2, kshape, kinc->got, "kernel flat incremental",
                   kfull->got, "kernel flat full", MLA_TOL_EXACT, NULL, 1);
        /* kernel ring + incremental == kernel full; ring plane == oracle ring */
        tb_compare(t, "pool_keys", ST_F32, 2, kshape, kring->got, "kernel ring + incremental",
                   kfull->got, "kernel flat full", MLA_TOL_EXACT, NULL, 1);
        /* every ring row is written once total >= state_rows */
        if (total >= sr)
            tb_compare(t, "ring", ST_F32, 2, rshape, bring->got, "kernel ring plane", ring,
                       "oracle ring plane", MLA_TOL_EXACT, NULL, 1);
    } else if (fuzz_no_device()) {
        FUZZ_ASSERT_CUDA_BAND(
            t, memra_mla_index_append_ring_f32(ring, k, g, 0, chunk[0], d, d, sr, NULL),
            "ring append");
        if (np > 0)
            FUZZ_ASSERT_CUDA_BAND(
                t, memra_mla_kpool_pool_keys_f32(flat, ape, full, 0, np, pool, d, 0, NULL),
                "pool_keys");
    }
    return 0;
}
