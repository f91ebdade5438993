/* gathered_indices: aborts when attn_gathered over an adversarial index list (-1, other
 * negatives, repeats, out of order, the query's own row, all -1) leaves class attn of the
 * oracle, when a query with no valid entry is not exactly +0 (kernel or oracle), or when the
 * oracle's output depends on the list's order / padding beyond class attn.
 *
 * Parameters (from the input's end): n_head 1..8, kv_rank {1, 4, 63, 64, 128, 512} or 1..64,
 * d_rope {0, 2, 64}, t_q 1..3, t_kv 1..300, n_slots 1..96, per-query list style, seeds, scale.
 * Non-negative entries are always rows of the cache (the caller's guarantee). Without a device
 * the launcher must return the CUDA band. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_helpers.h"
#include "fuzz/kpool_fuzz_util.h"
#include "kernels/mla.h"
#include "oracle/mla_oracle.h"
#include "tests/lib/compare.h"

FUZZ_TARGET_NAME("gathered_indices");

static int32_t gen_entry(int style, uint64_t seed, int32_t s, int32_t tkv, int32_t own,
                         int32_t n_slots) {
    uint64_t w = kf_word(seed, (uint64_t)s);
    static const int32_t NEG[] = {-1, -1, -1, -2, -7, -1000000, INT32_MIN};
    switch (style) {
    case 0: return -1;                                               /* all invalid */
    case 1: return (int32_t)(w % 4u) == 0 ? NEG[(w >> 8) % 7u] : (int32_t)((w >> 16) % (uint64_t)tkv);
    case 2: return (int32_t)((w >> 16) % (uint64_t)(tkv < 3 ? tkv : 3)); /* heavy repeats */
    case 3: return s % 3 == 0 ? own : (s % 3 == 1 ? -1 : (int32_t)((w >> 16) % (uint64_t)tkv));
    case 4: return n_slots - 1 - s < tkv ? tkv - 1 - (n_slots - 1 - s) % tkv : -1; /* descending */
    default: return s < tkv ? s : -1;                                 /* ascending, padded */
    }
}

int fuzz_one_input(const uint8_t *data, size_t size) {
    fuzz_producer p = fuzz_producer_init(data, size);
    int32_t H = (int32_t)fuzz_range(&p, 1, 8);
    int32_t R = fuzz_range(&p, 0, 1) ? FUZZ_PICK(&p, ((const int32_t[]){1, 4, 63, 64, 128, 512}))
                                     : (int32_t)fuzz_range(&p, 1, 64);
    int32_t dr = FUZZ_PICK(&p, ((const int32_t[]){0, 0, 2, 64}));
    int32_t tq = (int32_t)fuzz_range(&p, 1, 3);
    int32_t tkv = (int32_t)fuzz_range(&p, tq, 300);
    int32_t ns = (int32_t)fuzz_range(&p, 1, 96);
    float scale = FUZZ_PICK(&p, ((const float[]){0.0625f, 1.0f, 0.0f, -0.5f, 4.0f}));
    float vscale = FUZZ_PICK(&p, ((const float[]){1.0f, 0.01f, 8.0f}));
    int style[3];
    for (int i = 0; i < 3; i++) style[i] = (int)fuzz_range(&p, 0, 5);
    uint64_t seed = ((uint64_t)fuzz_u32(&p) << 32) | fuzz_u32(&p);

    int32_t W = R + dr;
    size_t nq = (size_t)tq * H * R, npe = (size_t)tq * H * dr, nc = (size_t)tkv * W,
           ni = (size_t)tq * ns;
    float *ql = kf_malloc(nq * 4), *qp = kf_malloc(npe * 4 + 4), *cache = kf_malloc(nc * 4),
          *orc = kf_malloc(nq * 4), *alt = kf_malloc(nq * 4);
    int32_t *idx = kf_malloc(ni * 4), *idx2 = kf_malloc(ni * 4);
    for (size_t i = 0; i < nq; i++) ql[i] = kf_uni(seed ^ 1, i) * vscale;
    for (size_t i = 0; i < npe; i++) qp[i] = kf_uni(seed ^ 2, i) * vscale;
    for (size_t i = 0; i < nc; i++) cache[i] = kf_uni(seed ^ 3, i);
    int n_valid[3] = {0, 0, 0};
    for (int32_t i = 0; i < tq; i++) {
        int32_t own = tkv - tq + i;
        for (int32_t s = 0; s < ns; s++) {
            int32_t v = gen_entry(style[i], seed ^ (uint64_t)(i + 7), s, tkv, own, ns);
            idx[(size_t)i * ns + s] = v;
            n_valid[i] += v >= 0;
        }
        /* the same multiset, valid entries reversed and moved to the front, -1 padded */
        int32_t m = 0;
        for (int32_t s = ns - 1; s >= 0; s--)
            if (idx[(size_t)i * ns + s] >= 0) idx2[(size_t)i * ns + m++] = idx[(size_t)i * ns + s];
        while (m < ns) idx2[(size_t)i * ns + m++] = -1;
    }
#define TUPLE "n_head %d kv_rank %d d_rope %d t_q %d t_kv %d n_slots %d scale %g styles %d %d %d"
#define TARGS H, R, dr, tq, tkv, ns, (double)scale, style[0], style[1], style[2 < tq ? 2 : 0]
    oracle_attn_gathered_f32(ql, dr ? qp : NULL, cache, idx, orc, H, R, dr, tq, ns, scale);
    oracle_attn_gathered_f32(ql, dr ? qp : NULL, cache, idx2, alt, H, R, dr, tq, ns, scale);
    double *atol = kf_malloc(nq * sizeof *atol);
    mla_tol_attn_gathered_bounds(ql, dr ? qp : NULL, cache, idx, H, R, dr, tq, ns, scale, 0, 0, atol);
    mla_tol tol = mla_tol_exact();
    tol.cls = MLA_TOL_ATTN;
    tol.atol_elem = atol;
    for (int32_t i = 0; i < tq; i++)
        if (n_valid[i] == 0)
            for (size_t e = (size_t)i * H * R; e < (size_t)(i + 1) * H * R; e++)
                FUZZ_ASSERT_MSG(kf_bits(orc[e]) == 0u,
                                "oracle: query %d has no valid entry but o_lat[%d][%zu][%zu] = %a "
                                "(want +0); " TUPLE, i, i, (e / (size_t)R) % (size_t)H,
                                e % (size_t)R, (double)orc[e], TARGS);
    mla_cmp_result cr = mla_compare_f32(alt, orc, nq, &tol);
    FUZZ_ASSERT_MSG(cr.pass && !cr.n_nan_mismatch,
                    "oracle: reordering the list moved o_lat[%zu] from %a to %a (|diff| %g > "
                    "bound %g); " TUPLE, cr.worst_index, (double)cr.ref_worst, (double)cr.got_worst,
                    cr.worst_abs, cr.worst_bound, TARGS);
    if (!kf_have_gpu()) {
        int rc = memra_mla_attn_gathered_f32(ql, dr ? qp : NULL, cache, idx, alt, H, R, dr, tq, ns,
                                             scale, NULL);
        KF_ASSERT_CUDA_BAND(rc, TUPLE, TARGS);
    } else {
        float *dql = kf_dev_from(ql, nq * 4), *dqp = kf_dev_from(qp, npe * 4),
              *dc = kf_dev_from(cache, nc * 4), *dout = kf_dev(nq * 4);
        int32_t *di = kf_dev_from(idx, ni * 4);
        kf_poison(dout, nq * 4);
        int rc = memra_mla_attn_gathered_f32(dql, dr ? dqp : NULL, dc, di, dout, H, R, dr, tq, ns,
                                             scale, NULL);
        FUZZ_ASSERT_MSG(rc == 0, "attn_gathered returned %d; " TUPLE, rc, TARGS);
        kf_download(alt, dout, nq * 4);
        for (int32_t i = 0; i < tq; i++)
            if (n_valid[i] == 0)
                for (size_t e = (size_t)i * H * R; e < (size_t)(i + 1) * H * R; e++)
                    FUZZ_ASSERT_MSG(kf_bits(alt[e]) == 0u,
                                    "kernel: query %d has no valid entry but o_lat[%d][%zu][%zu] "
                                    "= %a (want +0, exactly); " TUPLE, i, i,
                                    (e / (size_t)R) % (size_t)H, e % (size_t)R, (double)alt[e],
                                    TARGS);
        cr = mla_compare_f32(alt, orc, nq, &tol);
        FUZZ_ASSERT_MSG(cr.pass && !cr.n_nan_mismatch,
                        "kernel vs oracle outside class attn: o_lat[%zu][%zu][%zu] kernel %a "
                        "oracle %a |diff| %g bound %g (%zu failing); " TUPLE,
                        cr.worst_index / ((size_t)H * R), cr.worst_index / (size_t)R % (size_t)H,
                        cr.worst_index % (size_t)R, (double)cr.got_worst, (double)cr.ref_worst,
                        cr.worst_abs, cr.worst_bound, cr.n_fail, TARGS);
        KF_CUDA(cudaFree(dql));
        KF_CUDA(cudaFree(dqp));
        KF_CUDA(cudaFree(dc));
        KF_CUDA(cudaFree(dout));
        KF_CUDA(cudaFree(di));
    }
    free(ql), free(qp), free(cache), free(orc), free(alt), free(idx), free(idx2), free(atol);
    return 0;
}
