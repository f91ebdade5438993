/* test_tf32_mma_model_gpu.c: the accumulator model (H) that the 3xTF32 attention analysis of
 * docs/tolerances.md rests on, checked on the GPU it is about. One mma.sync.m16n8k8 TF32
 * instruction adds 8 exact products (11 x 11 significant bits) to an f32 accumulator C; (H) says
 * its result is within eps_m = 18u of the exact sum, relative to |C| + sum |products|
 * (u = 2^-24). Each test runs single instructions on host-made tiles
 * (tests/lib/tf32_mma_probe.cu) and compares with the exact sum in double (the products are
 * exact in double, and the exponent spreads keep every sum exact there):
 *  fragment_layout_is_exact   small integers: every output bit-exact (the fragment layout of the
 *                             probe, and that nothing is lost when nothing needs rounding);
 *  error_within_model         20,000 random tiles with exponents spread over 2^-6 .. 2^6 and a
 *                             full-precision C: max |D - exact| / (|C| + sum |p|) <= 18u; the
 *                             measured maximum and the share of results equal to the exact sum
 *                             rounded to nearest (RN) are logged: they decide how tight the
 *                             3xTF32 bound can be made;
 *  small_addend_probe         C = 1 plus products summing to 2^-24 (1 + 2^-10): RN gives
 *                             1 + 2^-23, truncation 1; within the model either way, logged;
 *  cancellation_within_model  C = -(sum of the products) rounded to f32: the result is tiny and
 *                             must stay within the model.
 * Without a usable GPU every test reports SKIPPED, never passed. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/gpu_util.h"
#include "tests/lib/mla_fill.h"
#include "tests/lib/tf32_mma_probe.h"

#define U 0x1p-24
#define EPS_M_UNITS 18.0 /* (H): 9 terms x one ulp (2u) each */

/* A TF32-representable value: sign, 11 significant bits, exponent in [emin, emax]. */
static float tf32_value(mla_fill_stream *s, int emin, int emax) {
    uint32_t w = mla_fill_stream_u32(s);
    int e = emin + (int)(mla_fill_stream_u32(s) % (uint32_t)(emax - emin + 1));
    float m = 1.0f + (float)(w & 1023u) / 1024.0f; /* 11 significant bits */
    return ldexpf((w >> 31) ? -m : m, e);
}

typedef struct {
    double max_units; /* max |D - exact| / (|C| + sum |p|) / u */
    long n, n_rn;     /* outputs, outputs equal to RN(exact) */
    long n_zero_scale;
} model_stats;

/* Runs n tiles; accumulates the statistics of every output. */
static void run_tiles(const float *a, const float *b, const float *c, int n, model_stats *st) {
    float *d = malloc((size_t)n * 128 * sizeof *d);
    cr_assert(d != NULL);
    int rc = tf32_mma_probe(a, b, c, d, n);
    cr_assert(rc == 0, "tf32_mma_probe: %d", rc);
    for (int p = 0; p < n; p++)
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 8; j++) {
                double exact = c[(size_t)p * 128 + i * 8 + j], scale = fabs(exact);
                for (int k = 0; k < 8; k++) {
                    double prod = (double)a[(size_t)p * 128 + i * 8 + k] *
                                  (double)b[(size_t)p * 64 + k * 8 + j];
                    exact += prod;
                    scale += fabs(prod);
                }
                double got = d[(size_t)p * 128 + i * 8 + j];
                st->n++;
                st->n_rn += (float)exact == (float)got;
                if (scale == 0.0) {
                    st->n_zero_scale++;
                    cr_expect(got == 0.0, "zero inputs gave %a", got);
                    continue;
                }
                double units = fabs(got - exact) / scale / U;
                if (units > st->max_units) st->max_units = units;
            }
    free(d);
}

Test(tf32_mma_model, fragment_layout_is_exact, .timeout = 120) {
    GPU_REQUIRE();
    enum { N = 64 };
    float *a = malloc(N * 128 * 4), *b = malloc(N * 64 * 4), *c = malloc(N * 128 * 4),
          *d = malloc(N * 128 * 4);
    mla_fill_stream s = mla_fill_stream_init(1u, "tf32_layout");
    for (int e = 0; e < N * 128; e++) a[e] = (float)((int)(mla_fill_stream_u32(&s) % 33u) - 16);
    for (int e = 0; e < N * 64; e++) b[e] = (float)((int)(mla_fill_stream_u32(&s) % 33u) - 16);
    for (int e = 0; e < N * 128; e++) c[e] = (float)((int)(mla_fill_stream_u32(&s) % 1025u) - 512);
    cr_assert(tf32_mma_probe(a, b, c, d, N) == 0);
    long bad = 0;
    for (int p = 0; p < N; p++)
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 8; j++) {
                double x = c[p * 128 + i * 8 + j];
                for (int k = 0; k < 8; k++)
                    x += (double)a[p * 128 + i * 8 + k] * b[p * 64 + k * 8 + j];
                if ((float)x != d[p * 128 + i * 8 + j] && bad++ < 5)
                    cr_log_error("tile %d [%d][%d]: got %g, exact %g", p, i, j,
                                 (double)d[p * 128 + i * 8 + j], x);
            }
    cr_expect(bad == 0, "%ld of %d integer outputs differ (fragment layout or lost bits)", bad,
              N * 128);
    free(a), free(b), free(c), free(d);
}

Test(tf32_mma_model, error_within_model, .timeout = 300) {
    GPU_REQUIRE();
    enum { N = 20000 };
    float *a = malloc((size_t)N * 128 * 4), *b = malloc((size_t)N * 64 * 4),
          *c = malloc((size_t)N * 128 * 4);
    mla_fill_stream s = mla_fill_stream_init(2u, "tf32_model");
    for (size_t e = 0; e < (size_t)N * 128; e++) a[e] = tf32_value(&s, -6, 6);
    for (size_t e = 0; e < (size_t)N * 64; e++) b[e] = tf32_value(&s, -6, 6);
    for (size_t e = 0; e < (size_t)N * 128; e++) /* full 24-bit C, magnitudes 2^-12 .. 2^13 */
        c[e] = mla_fill_stream_f32_bits(&s, -12, 13);
    model_stats st = {0};
    run_tiles(a, b, c, N, &st);
    cr_log_info("TF32 mma.sync m16n8k8 over %ld outputs: max error %.3f u of |C| + sum |p| "
                "(model: %.0f u); %.2f%% equal to the exact sum rounded to nearest",
                st.n, st.max_units, EPS_M_UNITS, 100.0 * (double)st.n_rn / (double)st.n);
    cr_expect(st.max_units <= EPS_M_UNITS,
              "measured %.3f u > the model's %.0f u: docs/tolerances.md (H) does not hold, and the "
              "3xTF32 attention bound derived from it is invalid",
              st.max_units, EPS_M_UNITS);
    free(a), free(b), free(c);
}

Test(tf32_mma_model, small_addend_probe, .timeout = 120) {
    GPU_REQUIRE();
    float a[128] = {0}, b[64] = {0}, c[128], d[128];
    for (int e = 0; e < 128; e++) c[e] = 1.0f;
    /* row 0: a[0][0] * b[0][j] = 2^-24 (1 + 2^-10) for every column j */
    a[0] = 0x1p-12f * (1.0f + 0x1p-10f);
    for (int j = 0; j < 8; j++) b[j] = 0x1p-12f;
    cr_assert(tf32_mma_probe(a, b, c, d, 1) == 0);
    cr_log_info("C = 1 plus 2^-24 (1 + 2^-10): got 1 + %g u (RN: 2u, truncation: 0u)",
                ((double)d[0] - 1.0) / U);
    model_stats st = {0};
    run_tiles(a, b, c, 1, &st);
    cr_expect(st.max_units <= EPS_M_UNITS, "%.3f u", st.max_units);
}

Test(tf32_mma_model, cancellation_within_model, .timeout = 120) {
    GPU_REQUIRE();
    enum { N = 2000 };
    float *a = malloc(N * 128 * 4), *b = malloc(N * 64 * 4), *c = malloc(N * 128 * 4);
    mla_fill_stream s = mla_fill_stream_init(3u, "tf32_cancel");
    for (int e = 0; e < N * 128; e++) a[e] = tf32_value(&s, -4, 4);
    for (int e = 0; e < N * 64; e++) b[e] = tf32_value(&s, -4, 4);
    for (int p = 0; p < N; p++)
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 8; j++) {
                double x = 0;
                for (int k = 0; k < 8; k++)
                    x += (double)a[p * 128 + i * 8 + k] * b[p * 64 + k * 8 + j];
                c[p * 128 + i * 8 + j] = (float)-x;
            }
    model_stats st = {0};
    run_tiles(a, b, c, N, &st);
    cr_log_info("cancellation: max error %.3f u of |C| + sum |p|", st.max_units);
    cr_expect(st.max_units <= EPS_M_UNITS, "%.3f u", st.max_units);
    free(a), free(b), free(c);
}
