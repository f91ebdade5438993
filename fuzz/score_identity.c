/* score_identity: aborts when a k-pool score differs between the fast kernel, the reference
 * kernel and the oracle (class exact: bitwise, NaN == NaN), or when the oracle differs from a
 * restatement of the six-step rounding sequence of kernels/mla.h (fmaf chain over c, rn product
 * by qk_scale, relu with NaN and -0 passing, rn product hw * head_scale, rn product, rn sum over
 * h ascending; -inf where the pool is not yet complete).
 *
 * Parameters (from the input's end): t_q 1..3, heads 1..64, d 1..256, n_pools, pool 1..64,
 * first_pos (any valid), qk_scale / head_scale (picked or raw), value generator (uniform, small
 * integers, wide exponents with overflow, NaN / inf / -0 sprinkled). Work is capped so a 2-minute
 * run does thousands of executions. Without a device the launchers must return the CUDA band. */
/* The restatement below must not be contracted into fused multiply-adds. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_helpers.h"
#include "fuzz/kpool_fuzz_util.h"
#include "kernels/mla.h"
#include "oracle/mla_oracle.h"

FUZZ_TARGET_NAME("score_identity");

static float gen(int kind, uint64_t seed, uint64_t i) {
    uint64_t w = kf_word(seed, i);
    switch (kind) {
    case 0: return kf_uni(seed, i);
    case 1: return (float)((int)(w % 9u) - 4);
    case 2: { /* wide exponents: products and sums overflow / underflow */
        uint32_t e = (uint32_t)((w >> 8) % 254u) + 1u;
        return kf_from_bits((uint32_t)(w & 0x80000000u) | (e << 23) | (uint32_t)(w >> 41));
    }
    default: {
        uint32_t r = (uint32_t)(w % 100u);
        if (r == 0) return NAN;
        if (r == 1) return INFINITY;
        if (r == 2) return -INFINITY;
        if (r < 8) return -0.0f;
        if (r < 12) return 0.0f;
        return kf_uni(seed, i);
    }
    }
}

/* The six steps, restated. */
static void restate(const float *q, const float *key, const float *hw, float *score, int32_t tq,
                    int32_t H, int32_t d, int32_t np, int32_t pool, int32_t fp, float qs, float hs) {
    for (int32_t i = 0; i < tq; i++)
        for (int32_t p = 0; p < np; p++) {
            float *out = &score[(size_t)i * np + p];
            if ((int64_t)(p + 1) * pool - 1 > (int64_t)fp + i) {
                *out = -INFINITY;
                continue;
            }
            float acc = 0.0f;
            for (int32_t h = 0; h < H; h++) {
                const float *qv = q + ((size_t)i * H + h) * d, *kv = key + (size_t)p * d;
                float dot = 0.0f;
                for (int32_t c = 0; c < d; c++) dot = fmaf(qv[c], kv[c], dot);
                float s = dot * qs;
                float r = s < 0.0f ? 0.0f : s;
                float w = hw[(size_t)i * H + h] * hs;
                float t = w * r;
                acc = acc + t;
            }
            *out = acc;
        }
}

static int same(float a, float b) { return (a != a && b != b) || kf_bits(a) == kf_bits(b); }

int fuzz_one_input(const uint8_t *data, size_t size) {
    fuzz_producer p = fuzz_producer_init(data, size);
    int32_t tq = (int32_t)fuzz_range(&p, 1, 3);
    static const int32_t HEADS[] = {1, 2, 3, 32, 33, 64};
    static const int32_t DIMS[] = {1, 2, 3, 4, 31, 32, 33, 64, 127, 128, 129, 256};
    int32_t H = fuzz_range(&p, 0, 1) ? FUZZ_PICK(&p, HEADS) : (int32_t)fuzz_range(&p, 1, 64);
    int32_t d = fuzz_range(&p, 0, 1) ? FUZZ_PICK(&p, DIMS) : (int32_t)fuzz_range(&p, 1, 256);
    int32_t pool = fuzz_range(&p, 0, 1) ? FUZZ_PICK(&p, ((const int32_t[]){1, 4, 64}))
                                        : (int32_t)fuzz_range(&p, 1, 64);
    int64_t budget = 400000 / ((int64_t)tq * H * d); /* t_q * n_pools * heads * d <= 4e5 */
    int32_t np = (int32_t)fuzz_range(&p, 0, budget < 600 ? budget : 600);
    int64_t hi = ((int64_t)np + 1) * pool - 1 - tq;
    if (hi < 0) return 0;
    int32_t fp = (int32_t)(fuzz_range(&p, 0, 1) ? hi - fuzz_range(&p, 0, hi < 5 ? hi : 5)
                                                : fuzz_range(&p, 0, hi));
    static const float SC[] = {0.08838834764831845f, 0.17677669529663688f, 1.0f, 0.5f, -1.0f,
                               1e-30f, 1e30f, 0.0f, -0.0f, 3.0f};
    float qs = fuzz_range(&p, 0, 3) ? FUZZ_PICK(&p, SC) : kf_from_bits(fuzz_u32(&p));
    float hs = fuzz_range(&p, 0, 3) ? FUZZ_PICK(&p, SC) : kf_from_bits(fuzz_u32(&p));
    if (!isfinite(qs)) qs = 1.0f; /* non-finite scales are a contract error (40035) */
    if (!isfinite(hs)) hs = 1.0f;
    int kq = (int)fuzz_range(&p, 0, 3), kk = (int)fuzz_range(&p, 0, 3), kh = (int)fuzz_range(&p, 0, 3);
    uint64_t seed = ((uint64_t)fuzz_u32(&p) << 32) | fuzz_u32(&p);

    size_t nq = (size_t)tq * H * d, nk = (size_t)np * d, nh = (size_t)tq * H, ns = (size_t)tq * np;
    float *q = kf_malloc(nq * 4), *key = kf_malloc(nk * 4), *hw = kf_malloc(nh * 4),
          *orc = kf_malloc(ns * 4), *re = kf_malloc(ns * 4);
    for (size_t i = 0; i < nq; i++) q[i] = gen(kq, seed, i);
    for (size_t i = 0; i < nk; i++) key[i] = gen(kk, seed ^ 0x1111, i);
    for (size_t i = 0; i < nh; i++) hw[i] = gen(kh, seed ^ 0x2222, i);
    oracle_kpool_score_f32(q, key, hw, orc, tq, H, d, np, pool, fp, qs, hs);
    restate(q, key, hw, re, tq, H, d, np, pool, fp, qs, hs);
#define TUPLE "t_q %d heads %d d %d n_pools %d pool %d first_pos %d qk_scale %a head_scale %a " \
              "gens q%d k%d hw%d"
#define TARGS tq, H, d, np, pool, fp, (double)qs, (double)hs, kq, kk, kh
    for (size_t e = 0; e < ns; e++)
        FUZZ_ASSERT_MSG(same(orc[e], re[e]),
                        "oracle vs restated six steps: score[%zu][%zu] oracle %a (0x%08x), "
                        "restated %a (0x%08x); " TUPLE, e / (size_t)(np ? np : 1),
                        e % (size_t)(np ? np : 1), (double)orc[e], kf_bits(orc[e]),
                        (double)re[e], kf_bits(re[e]), TARGS);
    if (!kf_have_gpu()) {
        int rc = memra_mla_kpool_score_f32(q, key, hw, re, tq, H, d, np, pool, fp, qs, hs, NULL);
        if (np > 0) KF_ASSERT_CUDA_BAND(rc, TUPLE, TARGS);
        else FUZZ_ASSERT_MSG(rc == 0, "n_pools 0 must return 0 (got %d)", rc);
        rc = memra_mla_kpool_score_ref_f32(q, key, hw, re, tq, H, d, np, pool, fp, qs, hs, NULL);
        if (np > 0) KF_ASSERT_CUDA_BAND(rc, TUPLE, TARGS);
        else FUZZ_ASSERT_MSG(rc == 0, "n_pools 0 must return 0 (got %d)", rc);
    } else if (np > 0) {
        float *dq = kf_dev_from(q, nq * 4), *dk = kf_dev_from(key, nk * 4),
              *dh = kf_dev_from(hw, nh * 4), *ds = kf_dev(ns * 4), *fast = kf_malloc(ns * 4);
        for (int r = 0; r < 2; r++) {
            kf_poison(ds, ns * 4);
            int rc = (r ? memra_mla_kpool_score_ref_f32 : memra_mla_kpool_score_f32)(
                dq, dk, dh, ds, tq, H, d, np, pool, fp, qs, hs, NULL);
            FUZZ_ASSERT_MSG(rc == 0, "%s returned %d; " TUPLE, r ? "score_ref" : "score", rc, TARGS);
            float *got = r ? re : fast;
            kf_download(got, ds, ns * 4);
            for (size_t e = 0; e < ns; e++)
                FUZZ_ASSERT_MSG(same(got[e], orc[e]),
                                "%s vs oracle: score[%zu][%zu] kernel %a (0x%08x), oracle %a "
                                "(0x%08x); " TUPLE, r ? "reference kernel" : "fast kernel",
                                e / (size_t)np, e % (size_t)np, (double)got[e], kf_bits(got[e]),
                                (double)orc[e], kf_bits(orc[e]), TARGS);
        }
        FUZZ_ASSERT_MSG(memcmp(fast, re, ns * 4) == 0, "fast vs reference kernel bytes differ "
                        "(NaN payloads?); " TUPLE, TARGS);
        KF_CUDA(cudaFree(dq));
        KF_CUDA(cudaFree(dk));
        KF_CUDA(cudaFree(dh));
        KF_CUDA(cudaFree(ds));
        free(fast);
    }
    free(q), free(key), free(hw), free(orc), free(re);
    return 0;
}
