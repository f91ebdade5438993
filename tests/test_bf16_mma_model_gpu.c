/* test_bf16_mma_model_gpu.c: the accumulator model (H16) and the operand conversion that the bf16
 * door arm's class (docs/tolerances.md "The bf16 door arm"; kernels/mla_door.h
 * mla_attn_tcb_arith) rests on, checked on the GPU it is about. One mma.sync.m16n8k16 bf16
 * instruction adds 16 exact products (8 x 8 significant bits) to an f32 accumulator C; (H16) says
 * its result is within eps_m = 34u of the exact sum, relative to |C| + sum |products| (17 terms
 * at one ulp, 2u, each; u = 2^-24), plus 2^-126 absolutely where a result or an operand lies
 * below the normal range. Each test runs single instructions on host-made tiles
 * (tests/lib/tf32_mma_probe.cu) and compares with the exact sum in double:
 *  fragment_layout_is_exact   small integers: every output bit-exact (the probe's fragment
 *                             layout, and that nothing is lost when nothing needs rounding);
 *  error_within_model         20,000 random tiles, exponents over 2^-6 .. 2^6 and a
 *                             full-precision C: max |D - exact| / (|C| + sum |p|) <= 34u (the
 *                             measured maximum and the share equal to RN(exact) are logged);
 *  cancellation_within_model  C = -(sum of the products) rounded to f32;
 *  subnormal_operands         bf16 subnormal operands times 1 and 2^100: each result within
 *                             2^-126 (1 + 2^-7) of exact (the class's abs_e), whether the tensor
 *                             cores keep or flush them (logged);
 *  conversion_rounds_to_nearest_even  cvt.rn.bf16x2.f32 as the door writes it, on 2^20 random
 *                             words and the edges (ties, NaN payloads, infinities, FLT_MAX,
 *                             subnormals): the oracle's round-to-nearest-even
 * (oracle_bf16_from_f32), a NaN stays a NaN. Without a usable GPU every test reports SKIPPED, never
 * passed. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oracle/mla_oracle.h"
#include "tests/lib/gpu_util.h"
#include "tests/lib/mla_fill.h"
#include "tests/lib/mma_model.h"
#include "tests/lib/tf32_mma_probe.h"

#define U 0x1p-24
#define EPS_M_UNITS 34.0 /* (H16): 17 terms x one ulp (2u) each */
#define ABS_E (0x1p-126 * (1.0 + 1.0 / 128.0))

static float u2f(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint32_t f2u(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* The oracle's round-to-nearest-even of f32 x to bf16 (oracle/mla_oracle.h), widened back. */
static float oracle_bf16_rne(float x) { return oracle_f32_from_bf16(oracle_bf16_from_f32(x)); }

static void run_tiles(const float *a, const float *b, const float *c, int n, mma_model_stats *st) {
    float *d = malloc((size_t)n * 128 * sizeof *d);
    cr_assert(d != NULL);
    int rc = bf16_mma_probe(a, b, c, d, n);
    cr_assert(rc == 0, "bf16_mma_probe: %d", rc);
    for (int p = 0; p < n; p++)
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 8; j++) {
                double exact = c[(size_t)p * 128 + i * 8 + j], scale = fabs(exact);
                for (int k = 0; k < 16; k++) {
                    double prod = (double)a[(size_t)p * 256 + i * 16 + k] *
                                  (double)b[(size_t)p * 128 + k * 8 + j];
                    exact += prod;
                    scale += fabs(prod);
                }
                mma_model_stats_add(st, d[(size_t)p * 128 + i * 8 + j], exact, scale, U);
            }
    free(d);
}

Test(bf16_mma_model, fragment_layout_is_exact, .timeout = 120) {
    GPU_REQUIRE();
    enum { N = 64 };
    float *a = malloc(N * 256 * 4), *b = malloc(N * 128 * 4), *c = malloc(N * 128 * 4),
          *d = malloc(N * 128 * 4);
    mla_fill_stream s = mla_fill_stream_init(1u, "bf16_layout");
    for (int e = 0; e < N * 256; e++) a[e] = (float)((int)(mla_fill_stream_u32(&s) % 33u) - 16);
    for (int e = 0; e < N * 128; e++) b[e] = (float)((int)(mla_fill_stream_u32(&s) % 33u) - 16);
    for (int e = 0; e < N * 128; e++) c[e] = (float)((int)(mla_fill_stream_u32(&s) % 1025u) - 512);
    cr_assert(bf16_mma_probe(a, b, c, d, N) == 0);
    long bad = 0;
    for (int p = 0; p < N; p++)
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 8; j++) {
                double x = c[p * 128 + i * 8 + j];
                for (int k = 0; k < 16; k++)
                    x += (double)a[p * 256 + i * 16 + k] * b[p * 128 + k * 8 + j];
                if ((float)x != d[p * 128 + i * 8 + j] && bad++ < 5)
                    cr_log_error("tile %d [%d][%d]: got %g, exact %g", p, i, j,
                                 (double)d[p * 128 + i * 8 + j], x);
            }
    cr_expect(bad == 0, "%ld of %d integer outputs differ (fragment layout or lost bits)", bad,
              N * 128);
    free(a), free(b), free(c), free(d);
}

Test(bf16_mma_model, error_within_model, .timeout = 300) {
    GPU_REQUIRE();
    enum { N = 20000 };
    float *a = malloc((size_t)N * 256 * 4), *b = malloc((size_t)N * 128 * 4),
          *c = malloc((size_t)N * 128 * 4);
    mla_fill_stream s = mla_fill_stream_init(2u, "bf16_model");
    for (size_t e = 0; e < (size_t)N * 256; e++) a[e] = mla_fill_stream_bf16(&s, -6, 6);
    for (size_t e = 0; e < (size_t)N * 128; e++) b[e] = mla_fill_stream_bf16(&s, -6, 6);
    for (size_t e = 0; e < (size_t)N * 128; e++) /* full 24-bit C, magnitudes 2^-12 .. 2^13 */
        c[e] = mla_fill_stream_f32_bits(&s, -12, 13);
    mma_model_stats st = {0};
    run_tiles(a, b, c, N, &st);
    cr_log_info("bf16 mma.sync m16n8k16 over %ld outputs: max error %.3f u of |C| + sum |p| "
                "(model: %.0f u); %.2f%% equal to the exact sum rounded to nearest",
                st.n, st.max_units, EPS_M_UNITS, 100.0 * (double)st.n_rn / (double)st.n);
    cr_expect(st.max_units <= EPS_M_UNITS,
              "measured %.3f u > the model's %.0f u: docs/tolerances.md (H16) does not hold, and "
              "the bf16 door's class derived from it is invalid",
              st.max_units, EPS_M_UNITS);
    free(a), free(b), free(c);
}

Test(bf16_mma_model, cancellation_within_model, .timeout = 120) {
    GPU_REQUIRE();
    enum { N = 2000 };
    float *a = malloc(N * 256 * 4), *b = malloc(N * 128 * 4), *c = malloc(N * 128 * 4);
    mla_fill_stream s = mla_fill_stream_init(3u, "bf16_cancel");
    for (int e = 0; e < N * 256; e++) a[e] = mla_fill_stream_bf16(&s, -4, 4);
    for (int e = 0; e < N * 128; e++) b[e] = mla_fill_stream_bf16(&s, -4, 4);
    for (int p = 0; p < N; p++)
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 8; j++) {
                double x = 0;
                for (int k = 0; k < 16; k++)
                    x += (double)a[p * 256 + i * 16 + k] * b[p * 128 + k * 8 + j];
                c[p * 128 + i * 8 + j] = (float)-x;
            }
    mma_model_stats st = {0};
    run_tiles(a, b, c, N, &st);
    cr_log_info("cancellation: max error %.3f u of |C| + sum |p|", st.max_units);
    cr_expect(st.max_units <= EPS_M_UNITS, "%.3f u", st.max_units);
    free(a), free(b), free(c);
}

Test(bf16_mma_model, subnormal_operands, .timeout = 120) {
    GPU_REQUIRE();
    enum { N = 64 };
    float *a = calloc(N * 256, 4), *b = calloc(N * 128, 4), *c = calloc(N * 128, 4);
    mla_fill_stream s = mla_fill_stream_init(4u, "bf16_subnormal");
    /* row i of A: one subnormal bf16 (a multiple of 2^-133 below 2^-126) at k = i, the rest 0;
     * B: column j's k-th element 1 or 2^100 (and, in half the probes, a subnormal too) */
    for (int p = 0; p < N; p++) {
        for (int i = 0; i < 16; i++) {
            uint32_t m = 1u + mla_fill_stream_u32(&s) % 127u;
            a[p * 256 + i * 16 + i] =
                (mla_fill_stream_u32(&s) & 1 ? -1.0f : 1.0f) * ldexpf((float)m, -133);
        }
        for (int k = 0; k < 16; k++)
            for (int j = 0; j < 8; j++)
                b[p * 128 + k * 8 + j] = (p & 1) ? ldexpf(1.0f, 100 * (j & 1))
                                                 : ldexpf((float)(1 + (j + k) % 127), -133);
    }
    float *d = malloc(N * 128 * 4);
    cr_assert(bf16_mma_probe(a, b, c, d, N) == 0);
    mma_subnormal_stats ss = {0};
    for (int p = 0; p < N; p++)
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 8; j++) {
                double exact = 0;
                for (int k = 0; k < 16; k++)
                    exact += (double)a[p * 256 + i * 16 + k] * b[p * 128 + k * 8 + j];
                mma_subnormal_stats_add(&ss, d[p * 128 + i * 8 + j], exact);
            }
    cr_log_info("subnormal operands: %ld of %ld tiny results exact (kept, not flushed); max abs "
                "error %g (abs_e %g); times 2^100: max loss / 2^100 %g",
                ss.kept, ss.n_small, ss.max_abs, ABS_E, ss.max_rel_big);
    cr_expect(ss.max_abs <= ABS_E, "tiny results lost %g > abs_e %g", ss.max_abs, ABS_E);
    cr_expect(ss.max_rel_big <= ABS_E, "a subnormal operand lost %g > abs_e %g (of 2^100)",
              ss.max_rel_big, ABS_E);
    free(a), free(b), free(c), free(d);
}

Test(bf16_mma_model, conversion_rounds_to_nearest_even, .timeout = 120) {
    GPU_REQUIRE();
    enum { NR = 1 << 20 };
    const uint32_t edges[] = {0x00000000u, 0x80000000u, 0x3F808000u, 0x3F818000u, 0x3F807FFFu,
                              0x3F808001u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F7F8000u, 0x7F7F7FFFu,
                              0x7F800000u, 0xFF800000u, 0x7F800001u, 0x7FC00000u, 0xFFFFFFFFu,
                              0x7F80FFFFu, 0x00000001u, 0x00008000u, 0x00018000u, 0x007FFFFFu,
                              0x80008001u, 0x00800000u};
    const int ne = (int)(sizeof edges / sizeof edges[0]), n = NR + ne;
    float *x = malloc((size_t)n * 4), *d = malloc((size_t)n * 4);
    mla_fill_stream s = mla_fill_stream_init(5u, "bf16_cvt");
    for (int e = 0; e < NR; e++) x[e] = u2f(mla_fill_stream_u32(&s));
    for (int e = 0; e < ne; e++) x[NR + e] = u2f(edges[e]);
    cr_assert(bf16_cvt_probe(x, d, n) == 0);
    long bad = 0;
    for (int e = 0; e < n; e++) {
        const float want = oracle_bf16_rne(x[e]);
        const int ok = isnan(x[e]) ? isnan(d[e]) : f2u(d[e]) == f2u(want);
        if (!ok && bad++ < 5)
            cr_log_error("x 0x%08x: device 0x%08x, oracle RNE 0x%08x", f2u(x[e]), f2u(d[e]),
                         f2u(want));
    }
    cr_expect(bad == 0, "%ld of %d conversions differ from round-to-nearest-even", bad, n);
    free(x), free(d);
}
