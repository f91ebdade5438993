/* test_wg_twin.c: the CPU check of the wgmma arm's scalar twin (tests/lib/wg_twin.h), which
 * tc_attn_gpu/twin_exact__wgmma_* compare the arm's bytes with on the GPU. Here the same twin code
 * runs on the CPU (the host's expf) on the same inputs (wg_twin_inputs) and must be within
 * 2^-8 + 2^-12 relative of the oracle with one chunk (the bf16 rounding of the one weight each
 * output has, see check()), 2^-7 + 2^-16 + 2^-12 with several (and of its bf16 partial): a twin
 * whose plan were wrong (a chunk, a causal length, a carrier, the combine's weights) would miss by
 * far more. Also: the inputs are what the GPU case assumes (halves, one carrier per column, the dot
 * products exact against a double sum), and the twin's output is not degenerate. Geometries: the
 * GPU cases' three (decode 32K is the slowest here, about a second of oracle). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mla.h"
#include "kernels/mla_door.h"
#include "oracle/mla_oracle.h"
#include "tests/lib/geometry.h"
#include "tests/lib/wg_twin.h"

#define SEED 0x7CA77Eu /* tc_attn_gpu_test's */

static void check(int32_t t_q, int32_t t_kv) {
    const int32_t H = WG_TWIN_HEADS, R = WG_TWIN_RANK, DR = WG_TWIN_ROPE, K = R + DR;
    const size_t nq = (size_t)t_q * H, no = nq * R;
    wg_twin_in in;
    cr_assert_eq(wg_twin_inputs(t_q, t_kv, SEED, &in), 0);
    /* the inputs: halves, one carrier per column, the dot products exact */
    for (int32_t c = 0; c < R; c++) {
        int ones = 0;
        for (int64_t r = 0; r < t_kv; r++) {
            const float v = in.cache[r * K + c];
            cr_assert(v == 0.0f || (v == 1.0f && r == in.carrier[c]), "cache[%lld][%d] = %g",
                      (long long)r, c, v);
            ones += v == 1.0f;
        }
        cr_assert_eq(ones, 1, "column %d has %d carriers", c, ones);
    }
    for (size_t qh = 0; qh < nq; qh += 7)
        for (int64_t r = 0; r < t_kv; r += 13) {
            double acc = 0.0;
            for (int32_t k = 0; k < R; k++)
                acc += (double)in.q_lat[qh * R + k] * in.cache[r * K + k];
            for (int32_t k = 0; k < DR; k++)
                acc += (double)in.q_pe[qh * DR + k] * in.cache[r * K + R + k];
            cr_assert(acc == (double)in.dot[qh * t_kv + r] && acc == rint(4.0 * acc) / 4.0,
                      "dot[%zu][%lld] = %.9g, the double sum %.17g", qh, (long long)r,
                      in.dot[qh * t_kv + r], acc);
        }
    const int64_t cs = mla_attn_tcb_chunk_slots(H, t_q, t_kv);
    float *twin = malloc(no * sizeof *twin), *ref = malloc(no * sizeof *ref);
    cr_assert(twin && ref);
    cr_assert_eq(
        wg_twin_absorbed_host(in.dot, in.carrier, H, R, t_q, t_kv, MLA_GLM5_SCALE, cs, twin), 0);
    oracle_attn_absorbed_f32(in.q_lat, in.q_pe, in.cache, ref, H, R, DR, t_q, t_kv, MLA_GLM5_SCALE);
    /* On these inputs output c is one weight over the denominator: the oracle's
     * exp(s_j(c) - M) / sum exp(s - M), the twin's bf16_rn(p_j(c)) times its alphas over l (or the
     * combine's). bf16_rn moves p by at most 2^-8 relative, and with several chunks the partial
     * (that weight times its alphas) is rounded to bf16 once more on its way to the combine
     * (since the thirty-fifth session): (1 + 2^-8)^2 - 1 = 2^-7 + 2^-16. Everything else on both
     * sides is f32 (a few expf, sums of at most 32K terms, chains of at most 128 fmaf), far below
     * 2^-12 in these sums of positive terms. So |twin - oracle| <= (2^-8 + 2^-12) |oracle| with
     * one chunk and (2^-7 + 2^-16 + 2^-12) |oracle| with several, and the twin is 0 exactly where
     * the oracle is (a carrier the query cannot see). The wgmma class itself is no
     * check here: its bound scales with V's column maxima (1), about 0.35, while the outputs are
     * 1e-5 .. 0.07. A twin with a wrong chunk, tile, causal length, carrier or combine weight is
     * off by far more than 2^-8. */
    const int split = (t_kv + cs - 1) / cs > 1;
    const double rel = (split ? 0x1p-7 + 0x1p-16 : 0x1p-8) + 0x1p-12;
    size_t bad = 0, nonzero = 0, first = 0;
    double worst = 0.0;
    for (size_t e = 0; e < no; e++) {
        const double d = fabs((double)twin[e] - ref[e]), r = fabs((double)ref[e]);
        nonzero += twin[e] != 0.0f;
        const int ok = ref[e] == 0.0f ? twin[e] == 0.0f : d <= rel * r;
        if (!ok && bad++ == 0) first = e;
        if (r > 0 && d / r > worst) worst = d / r;
    }
    cr_expect_eq(bad, 0,
                 "t_q %d, t_kv %d: %zu of %zu twin outputs off the oracle by more than %.9g "
                 "relative; first [%zu]: twin %.9g, oracle %.9g",
                 t_q, t_kv, bad, no, rel, first, twin[first], ref[first]);
    cr_expect(4 * nonzero > no, "t_q %d, t_kv %d: only %zu of %zu twin outputs nonzero", t_q, t_kv,
              nonzero, no);
    cr_log_info("t_q %d, t_kv %d: largest |twin - oracle| / |oracle| %.3g (bound %.3g)", t_q, t_kv,
                worst, rel);
    free(twin), free(ref);
    wg_twin_inputs_free(&in);
}

Test(wg_twin, decode_32k, .timeout = 300) { check(1, 32768); }
Test(wg_twin, verify, .timeout = 300) { check(4, 4099); }
Test(wg_twin, one_chunk, .timeout = 300) { check(2, 30); }
