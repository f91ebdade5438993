/* score_identity: aborts when a k-pool score differs between the fast kernel, the reference
 * kernel and the oracle (class exact: bitwise, NaN == NaN), or when the oracle differs from a
 * restatement of the six-step rounding sequence of kernels/mla.h (fmaf chain over c, rn product
 * by qk_scale, relu with NaN and -0 passing, rn product hw * head_scale, rn product, rn sum over
 * h ascending; -inf where the pool is not yet complete).
 *
 * Parameters (from the input's end): t_q 1..3, heads 1..64, d 1..256, n_pools, pool 1..64,
 * first_pos (any valid), qk_scale / head_scale (picked or raw), value generator (uniform, small
 * integers, wide exponents with overflow, NaN / inf / -0 sprinkled; Philox fill and streams of
 * tests/lib/mla_fill.h keyed by the drawn seed and the tensor's name). Work is capped so a
 * 2-minute run does thousands of executions. With a device every launch goes through the fuzz
 * testbed (fuzz/fuzz_gpu.h): it also aborts when a launch fails, a kernel writes outside score
 * (guard bands), leaves a score word unwritten (poison) or modifies an input. Without a device
 * the launchers must return the CUDA band (n_pools 0: 0, nothing launched). */
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

#include "fuzz/fuzz_gpu.h"
#include "fuzz/fuzz_helpers.h"
#include "kernels/mla.h"
#include "oracle/mla_oracle.h"
#include "tests/lib/mla_fill.h"
#include "tests/lib/testbed.h"

FUZZ_TARGET_NAME("score_identity");

/* Tensor `name` (n elements) under value generator `kind`: the Philox fill, or per element the
 * stream (seed, name) read from its words w[] (2n of them: a sprinkled uniform value takes a
 * second draw, as mla_fill_stream_uniform does). */
FUZZ_HOT static void gen_from(float *x, size_t n, int kind, const uint32_t *words) {
    size_t k = 0; /* the stream's next element */
    for (size_t i = 0; i < n; i++) {
        uint32_t w = words[k++];
        if (kind == 2) { /* wide exponents: products and sums overflow / underflow */
            uint32_t e = ((w >> 23) & 0xFFu) % 254u + 1u;
            x[i] = fuzz_f32_of_bits((w & 0x807FFFFFu) | (e << 23));
            continue;
        }
        uint32_t r = w % 100u; /* NaN / inf / -0 / +0 sprinkled among uniform values */
        if (r == 0)
            x[i] = NAN;
        else if (r == 1)
            x[i] = INFINITY;
        else if (r == 2)
            x[i] = -INFINITY;
        else if (r < 8)
            x[i] = -0.0f;
        else if (r < 12)
            x[i] = 0.0f;
        else
            x[i] = fuzz_uniform_of_word(words[k++], -1.0f, 1.0f);
    }
}

static void gen(tb *t, float *x, size_t n, int kind, uint32_t seed, const char *name) {
    if (kind == 0) { /* uniform on the 2^24-point grid of [-1, 1) */
        fuzz_fill_f32(x, n, MLA_FILL_REALISTIC, seed, name, 1.0f);
        return;
    }
    if (kind == 1) { /* integers -4..4 */
        fuzz_fill_f32(x, n, MLA_FILL_SMALL_INT, seed, name, 1.0f);
        return;
    }
    uint32_t *words = fuzz_alloc(t, 2 * n * 4);
    fuzz_fill_words(words, 2 * n, seed, name);
    gen_from(x, n, kind, words);
}

/* The six steps, restated. */
FUZZ_HOT static void restate(const float *q, const float *key, const float *hw, float *score,
                             int32_t tq, int32_t H, int32_t d, int32_t np, int32_t pool, int32_t fp,
                             float qs, float hs) {
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

int fuzz_one_input(const uint8_t *data, size_t size) {
    tb *t = fuzz_tb_begin(data, size);
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
    static const float SC[] = {0.08838834764831845f,
                               0.17677669529663688f,
                               1.0f,
                               0.5f,
                               -1.0f,
                               1e-30f,
                               1e30f,
                               0.0f,
                               -0.0f,
                               3.0f};
    float qs = fuzz_range(&p, 0, 3) ? FUZZ_PICK(&p, SC) : fuzz_f32_of_bits(fuzz_u32(&p));
    float hs = fuzz_range(&p, 0, 3) ? FUZZ_PICK(&p, SC) : fuzz_f32_of_bits(fuzz_u32(&p));
    if (!isfinite(qs)) qs = 1.0f; /* non-finite scales are a contract error (40035) */
    if (!isfinite(hs)) hs = 1.0f;
    int kq = (int)fuzz_range(&p, 0, 3), kk = (int)fuzz_range(&p, 0, 3);
    int kh = (int)fuzz_range(&p, 0, 3);
    uint32_t seed = fuzz_u32(&p);
    seed ^= fuzz_u32(&p); /* 8 bytes, as the seed always took: other draws keep their bytes */
    fuzz_tb_casef(t,
                  "t_q %d heads %d d %d n_pools %d pool %d first_pos %d qk_scale %a "
                  "head_scale %a gens q%d k%d hw%d seed 0x%08X",
                  tq, H, d, np, pool, fp, (double)qs, (double)hs, kq, kk, kh, seed);

    size_t nq = (size_t)tq * H * d, nk = (size_t)np * d, nh = (size_t)tq * H;
    size_t ns = (size_t)tq * np;
    fuzz_buf *dq = fuzz_in(t, "q", nq * 4), *dk = fuzz_in(t, "pool_keys", nk * 4);
    fuzz_buf *dh = fuzz_in(t, "hw", nh * 4);
    float *q = dq->host, *key = dk->host, *hw = dh->host;
    float *orc = fuzz_alloc(t, ns * 4), *re = fuzz_alloc(t, ns * 4);
    gen(t, q, nq, kq, seed, "q");
    gen(t, key, nk, kk, seed, "pool_keys");
    gen(t, hw, nh, kh, seed, "hw");
    oracle_kpool_score_f32(q, key, hw, orc, tq, H, d, np, pool, fp, qs, hs);
    restate(q, key, hw, re, tq, H, d, np, pool, fp, qs, hs);
    const int64_t shape[2] = {tq, np};
    /* class exact: bitwise, any NaN equal to any NaN */
    tb_compare(t, "score", ST_F32, 2, shape, orc, "oracle", re, "restated six steps", MLA_TOL_EXACT,
               NULL, 0);
    if (fuzz_gpu_enabled()) {
        if (np > 0) {
            fuzz_buf *ds[2]; /* one freshly poisoned score per kernel */
            ds[0] = fuzz_out(t, "score", ns * 4, "score (fast kernel)", 1);
            ds[1] = fuzz_out(t, "score", ns * 4, "score_ref (reference kernel)", 1);
            fuzz_gpu_upload(t);
            for (int r = 0; r < 2; r++)
                fuzz_launched(t,
                              (r ? memra_mla_kpool_score_ref_f32
                                 : memra_mla_kpool_score_f32)(dq->dev, dk->dev, dh->dev, ds[r]->dev,
                                                              tq, H, d, np, pool, fp, qs, hs, NULL),
                              ds[r]->what);
            fuzz_gpu_check(t);
            for (int r = 0; r < 2; r++)
                tb_compare(t, "score", ST_F32, 2, shape, ds[r]->got,
                           r ? "reference kernel" : "fast kernel", orc, "oracle", MLA_TOL_EXACT,
                           NULL, 0);
            /* bytes (NaN payloads included) */
            tb_compare(t, "score", ST_F32, 2, shape, ds[0]->got, "fast kernel", ds[1]->got,
                       "reference kernel", MLA_TOL_EXACT, NULL, 1);
        }
    } else if (fuzz_no_device()) {
        int rc = memra_mla_kpool_score_f32(q, key, hw, re, tq, H, d, np, pool, fp, qs, hs, NULL);
        if (np > 0)
            FUZZ_ASSERT_CUDA_BAND(t, rc, "score");
        else
            FUZZ_TB_ASSERT(t, rc == 0, "score: n_pools 0 must return 0 (got %d)", rc);
        rc = memra_mla_kpool_score_ref_f32(q, key, hw, re, tq, H, d, np, pool, fp, qs, hs, NULL);
        if (np > 0)
            FUZZ_ASSERT_CUDA_BAND(t, rc, "score_ref");
        else
            FUZZ_TB_ASSERT(t, rc == 0, "score_ref: n_pools 0 must return 0 (got %d)", rc);
    }
    return 0;
}
