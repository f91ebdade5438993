/* test_wgmma_model_gpu.c: the accumulator model (H16) that the wgmma door arm's class
 * (docs/tolerances.md "The wgmma door arm") rests on, checked on the GPU it is about, for the two
 * Hopper instructions of the arm (kernels/mla_wgmma.cuh): the logits' wgmma.m64n32k16 (A = q and
 * B = the tile, both from shared memory) and P . V's wgmma.m64n256k16 (A = P from registers, B =
 * the tile read N-major), both bf16 x bf16 into f32 accumulators. The class takes (H16) from the
 * bf16 arm (//tests:bf16_mma_model_gpu_test, mma.sync.m16n8k16): each k16 instruction adds 16
 * exact products (8 x 8 significant bits) to an f32 accumulator C, its result within
 * eps_m = 34u of the exact sum relative to |C| + sum |products| (17 terms at one ulp, 2u, each;
 * u = 2^-24), plus 2^-126 absolutely where a result or an operand lies below the normal range.
 * wgmma is another instruction on another datapath, so the model is measured for it here, not
 * assumed. Each test runs single instructions on host-made tiles, laid out with the arm's own
 * swizzle, descriptors and helpers (tests/lib/wgmma_mma_probe.cu; the probes cycle over every
 * k16 step and column half the arm addresses, with every byte outside the operands bf16 NaN),
 * and compares with the exact sum in double. For each instruction (__n32, __n256):
 *  fragment_layout_is_exact   small integers: every output bit-exact (the fragment layouts,
 *                             the swizzle and the descriptors, and that nothing is lost when
 *                             nothing needs rounding); for n32 also with scale-d 0 over NaN
 *                             accumulators (the arm's first k16 step ignores them);
 *  error_within_model         random tiles (20,000 for n32, 2,000 for n256: about 41 and 33
 *                             million outputs), exponents over 2^-6 .. 2^6 and a full-precision
 *                             C: max |D - exact| / (|C| + sum |p|) <= 34u (the measured maximum
 *                             and the share equal to RN(exact) are logged);
 *  cancellation_within_model  C = -(sum of the products) rounded to f32;
 *  subnormal_operands         bf16 subnormal operands times 1 and 2^100: each result within
 *                             2^-126 (1 + 2^-7) of exact (the class's abs_e), whether the tensor
 *                             cores keep or flush them (logged).
 * Without a usable GPU every test reports SKIPPED, never passed; so does a device other than
 * compute capability 9.0 (the probes are sm_90a code), saying so. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/lib/gpu_util.h"
#include "tests/lib/mla_fill.h"
#include "tests/lib/mma_model.h"
#include "tests/lib/wgmma_mma_probe.h"

#define U 0x1p-24
#define EPS_M_UNITS 34.0 /* (H16): 17 terms x one ulp (2u) each */
#define ABS_E (0x1p-126 * (1.0 + 1.0 / 128.0))

/* One instruction under test: D (64 x cols) = A (64 x 16) . B (16 x cols) + C, A row-major
 * [row][k], B's element (k, column j) at b[k * bk + j * bj] (each probe's own order). */
typedef int (*wg_probe_fn)(const float *a, const float *b, const float *c, float *d, int n);
typedef struct {
    const char *name; /* for the log */
    int cols;
    int bk, bj;
    wg_probe_fn run;
} wg_instr;

static const wg_instr WG_N32 = {"wgmma.m64n32k16 (A, B from shared memory)", 32, 1, 16,
                                wgmma_n32_probe};
static const wg_instr WG_N256 = {"wgmma.m64n256k16 (A from registers, B N-major)", 256, 256, 1,
                                 wgmma_n256_probe};

static size_t tile_b(const wg_instr *in) { return (size_t)16 * in->cols; }
static size_t tile_d(const wg_instr *in) { return (size_t)64 * in->cols; }

/* The device's name, after skipping unless it is compute capability 9.0. */
static const char *wg_require(void) {
    static char name[256];
    int major = 0, minor = 0;
    GPU_REQUIRE();
    const int rc = wgmma_probe_device(&major, &minor, name, sizeof name);
    cr_assert(rc == 0, "wgmma_probe_device: %d", rc);
    if (major != 9 || minor != 0)
        cr_skip_test("wgmma probes are sm_90a code (compute capability 9.0: H100, H200); %s is "
                     "%d.%d",
                     name, major, minor);
    return name;
}

/* where probe p sits among the arm's descriptors (tests/lib/wgmma_mma_probe.h) */
static void wg_where(const wg_instr *in, int p, char *buf, size_t len) {
    if (in->cols == 32)
        snprintf(buf, len, "tile %d (k16 step %d)", p, WGMMA_N32_KS(p));
    else
        snprintf(buf, len, "tile %d (k16 step %d, columns %d..)", p, WGMMA_N256_J(p),
                 256 * WGMMA_N256_HALF(p));
}

/* exact (double) A . B + c of output (i, j) of probe p, and |c| + sum |products| */
static double wg_exact(const wg_instr *in, const float *a, const float *b, double c, int p, int i,
                       int j, double *scale) {
    const float *A = a + (size_t)p * 1024 + i * 16, *B = b + (size_t)p * tile_b(in) + j * in->bj;
    double x = c, s = fabs(c);
    for (int k = 0; k < 16; k++) {
        const double prod = (double)A[k] * (double)B[k * in->bk];
        x += prod;
        s += fabs(prod);
    }
    *scale = s;
    return x;
}

static void *xmalloc(size_t bytes) {
    void *p = malloc(bytes);
    cr_assert(p != NULL, "malloc(%zu)", bytes);
    return p;
}

static void run_tiles(const wg_instr *in, const float *a, const float *b, const float *c, int n,
                      mma_model_stats *st) {
    float *d = xmalloc((size_t)n * tile_d(in) * sizeof *d);
    const int rc = in->run(a, b, c, d, n);
    cr_assert(rc == 0, "%s probe: %d", in->name, rc);
    for (int p = 0; p < n; p++)
        for (int i = 0; i < 64; i++)
            for (int j = 0; j < in->cols; j++) {
                const size_t o = (size_t)p * tile_d(in) + (size_t)i * in->cols + j;
                double scale;
                const double exact = wg_exact(in, a, b, c[o], p, i, j, &scale);
                mma_model_stats_add(st, d[o], exact, scale, U);
            }
    free(d);
}

/* Small integers: A, B in [-16, 16], C in [-512, 512] (or no C: scale-d 0), so every exact sum is
 * an f32 and every output must equal it. */
static void layout_is_exact(const wg_instr *in, int with_c) {
    enum { N = 72 }; /* each n32 k16 step twice, each n256 descriptor 18 times */
    float *a = xmalloc((size_t)N * 1024 * 4), *b = xmalloc(N * tile_b(in) * 4),
          *c = xmalloc(N * tile_d(in) * 4), *d = xmalloc(N * tile_d(in) * 4);
    mla_fill_stream s = mla_fill_stream_init(1u, "wgmma_layout");
    for (size_t e = 0; e < (size_t)N * 1024; e++)
        a[e] = (float)((int)(mla_fill_stream_u32(&s) % 33u) - 16);
    for (size_t e = 0; e < N * tile_b(in); e++)
        b[e] = (float)((int)(mla_fill_stream_u32(&s) % 33u) - 16);
    for (size_t e = 0; e < N * tile_d(in); e++)
        c[e] = with_c ? (float)((int)(mla_fill_stream_u32(&s) % 1025u) - 512) : 0.0f;
    const int rc = in->run(a, b, with_c ? c : NULL, d, N);
    cr_assert(rc == 0, "%s probe: %d", in->name, rc);
    long bad = 0;
    for (int p = 0; p < N; p++)
        for (int i = 0; i < 64; i++)
            for (int j = 0; j < in->cols; j++) {
                const size_t o = (size_t)p * tile_d(in) + (size_t)i * in->cols + j;
                double scale;
                const double x = wg_exact(in, a, b, c[o], p, i, j, &scale);
                if ((float)x != d[o] && bad++ < 5) {
                    char where[64];
                    wg_where(in, p, where, sizeof where);
                    cr_log_error("%s%s, %s [%d][%d]: got %g, exact %g", in->name,
                                 with_c ? "" : " scale-d 0", where, i, j, (double)d[o], x);
                }
            }
    cr_expect(bad == 0,
              "%s%s: %ld of %zu integer outputs differ (fragment layout, swizzle, "
              "descriptor or lost bits)",
              in->name, with_c ? "" : " scale-d 0", bad, N * tile_d(in));
    free(a), free(b), free(c), free(d);
}

static void error_within_model(const wg_instr *in, int n, const char *device) {
    float *a = xmalloc((size_t)n * 1024 * 4), *b = xmalloc(n * tile_b(in) * 4),
          *c = xmalloc(n * tile_d(in) * 4);
    mla_fill_stream s = mla_fill_stream_init(2u, in->cols == 32 ? "wgmma_n32" : "wgmma_n256");
    for (size_t e = 0; e < (size_t)n * 1024; e++) a[e] = mla_fill_stream_bf16(&s, -6, 6);
    for (size_t e = 0; e < n * tile_b(in); e++) b[e] = mla_fill_stream_bf16(&s, -6, 6);
    for (size_t e = 0; e < n * tile_d(in); e++) /* full 24-bit C, magnitudes 2^-12 .. 2^13 */
        c[e] = mla_fill_stream_f32_bits(&s, -12, 13);
    mma_model_stats st = {0};
    run_tiles(in, a, b, c, n, &st);
    cr_log_info("%s on %s over %ld outputs: max error %.3f u of |C| + sum |p| (model: %.0f u); "
                "%.2f%% equal to the exact sum rounded to nearest",
                in->name, device, st.n, st.max_units, EPS_M_UNITS,
                100.0 * (double)st.n_rn / (double)st.n);
    cr_expect(st.max_units <= EPS_M_UNITS,
              "%s: measured %.3f u > the model's %.0f u: docs/tolerances.md (H16) does not hold "
              "for it, and the wgmma door arm's class derived from it is invalid",
              in->name, st.max_units, EPS_M_UNITS);
    free(a), free(b), free(c);
}

static void cancellation_within_model(const wg_instr *in, int n) {
    float *a = xmalloc((size_t)n * 1024 * 4), *b = xmalloc(n * tile_b(in) * 4),
          *c = xmalloc(n * tile_d(in) * 4);
    mla_fill_stream s =
        mla_fill_stream_init(3u, in->cols == 32 ? "wgmma_n32_cancel" : "wgmma_n256_cancel");
    for (size_t e = 0; e < (size_t)n * 1024; e++) a[e] = mla_fill_stream_bf16(&s, -4, 4);
    for (size_t e = 0; e < n * tile_b(in); e++) b[e] = mla_fill_stream_bf16(&s, -4, 4);
    for (int p = 0; p < n; p++)
        for (int i = 0; i < 64; i++)
            for (int j = 0; j < in->cols; j++) {
                double scale;
                c[(size_t)p * tile_d(in) + (size_t)i * in->cols + j] =
                    (float)-wg_exact(in, a, b, 0.0, p, i, j, &scale);
            }
    mma_model_stats st = {0};
    run_tiles(in, a, b, c, n, &st);
    cr_log_info("%s cancellation: max error %.3f u of |C| + sum |p|", in->name, st.max_units);
    cr_expect(st.max_units <= EPS_M_UNITS, "%s: %.3f u", in->name, st.max_units);
    free(a), free(b), free(c);
}

/* Row i of A: one subnormal bf16 (a multiple of 2^-133 below 2^-126) at k = i % 16, the rest 0;
 * B: column j's k-th element 1 or 2^100, or (in the other half of the probes) a subnormal too. */
static void subnormal_operands(const wg_instr *in) {
    enum { N = 72 }; /* (p >> 2) & 1 picks B's kind: both kinds at every descriptor */
    float *a = calloc((size_t)N * 1024, 4), *b = calloc(N * tile_b(in), 4),
          *c = calloc(N * tile_d(in), 4), *d = xmalloc(N * tile_d(in) * 4);
    cr_assert(a && b && c);
    mla_fill_stream s = mla_fill_stream_init(4u, "wgmma_subnormal");
    for (int p = 0; p < N; p++) {
        for (int i = 0; i < 64; i++) {
            uint32_t m = 1u + mla_fill_stream_u32(&s) % 127u;
            a[(size_t)p * 1024 + i * 16 + i % 16] =
                (mla_fill_stream_u32(&s) & 1 ? -1.0f : 1.0f) * ldexpf((float)m, -133);
        }
        for (int k = 0; k < 16; k++)
            for (int j = 0; j < in->cols; j++)
                b[(size_t)p * tile_b(in) + k * in->bk + j * in->bj] =
                    (p >> 2) & 1 ? ldexpf(1.0f, 100 * (j & 1))
                                 : ldexpf((float)(1 + (j + k) % 127), -133);
    }
    const int rc = in->run(a, b, c, d, N);
    cr_assert(rc == 0, "%s probe: %d", in->name, rc);
    mma_subnormal_stats ss = {0};
    for (int p = 0; p < N; p++)
        for (int i = 0; i < 64; i++)
            for (int j = 0; j < in->cols; j++) {
                const size_t o = (size_t)p * tile_d(in) + (size_t)i * in->cols + j;
                double scale;
                mma_subnormal_stats_add(&ss, d[o], wg_exact(in, a, b, 0.0, p, i, j, &scale));
            }
    cr_log_info("%s subnormal operands: %ld of %ld tiny results exact (kept, not flushed); max "
                "abs error %g (abs_e %g); times 2^100: max loss / 2^100 %g",
                in->name, ss.kept, ss.n_small, ss.max_abs, ABS_E, ss.max_rel_big);
    cr_expect(ss.max_abs <= ABS_E, "%s: tiny results lost %g > abs_e %g", in->name, ss.max_abs,
              ABS_E);
    cr_expect(ss.max_rel_big <= ABS_E, "%s: a subnormal operand lost %g > abs_e %g (of 2^100)",
              in->name, ss.max_rel_big, ABS_E);
    free(a), free(b), free(c), free(d);
}

Test(wgmma_model_gpu, fragment_layout_is_exact__n32, .timeout = 120) {
    wg_require();
    layout_is_exact(&WG_N32, 1);
    layout_is_exact(&WG_N32, 0);
}
Test(wgmma_model_gpu, fragment_layout_is_exact__n256, .timeout = 120) {
    wg_require();
    layout_is_exact(&WG_N256, 1);
}
Test(wgmma_model_gpu, error_within_model__n32, .timeout = 300) {
    error_within_model(&WG_N32, 20000, wg_require());
}
Test(wgmma_model_gpu, error_within_model__n256, .timeout = 300) {
    error_within_model(&WG_N256, 2000, wg_require());
}
Test(wgmma_model_gpu, cancellation_within_model__n32, .timeout = 120) {
    wg_require();
    cancellation_within_model(&WG_N32, 2000);
}
Test(wgmma_model_gpu, cancellation_within_model__n256, .timeout = 120) {
    wg_require();
    cancellation_within_model(&WG_N256, 250);
}
Test(wgmma_model_gpu, subnormal_operands__n32, .timeout = 120) {
    wg_require();
    subnormal_operands(&WG_N32);
}
Test(wgmma_model_gpu, subnormal_operands__n256, .timeout = 120) {
    wg_require();
    subnormal_operands(&WG_N256);
}
