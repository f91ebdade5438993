/* test_tc_prefill_gpu.c: the MEMRA_MLA_TC_PREFILL door (kernels/mla_door.h) at the glm5_prefill
 * case (t_q = 128, 64 heads, kv_rank 512, d_nope 192, d_v 256).
 *
 *  - tc_prefill_gpu/glm5_prefill__absorb, __decompress: flag "1", t_q >= MLA_TC_PREFILL_MIN_TQ:
 *    the TC counter moves by one (the receipt), every output word is written, guards intact,
 *    inputs unchanged, two runs give identical bytes, the door's bf16 conversion of the input is
 *    oracle_bf16_from_f32's, and the result is within class bf16_gemm of the oracle's bf16
 *    reference (oracle_bf16_gemm_sb on the bf16-rounded inputs: the case's
 *    {absorb,decompress}_bf16_y_f32) under the per-element bounds mla_tol_bf16_gemm_bounds.
 *  - tc_prefill_gpu/below_threshold__*: flag "1" but t_q = MLA_TC_PREFILL_MIN_TQ - 1 (the first
 *    rows of the case): the door does not engage and the bytes equal the f32 launcher's.
 *  - tc_prefill_gpu/flag_off__*: t_q = 128 with the flag unset: no engagement, f32 bytes.
 *  - tc_prefill_gpu/bf16_prep_matches_host: mla_f32_to_bf16 (its 8-wide kernel, the scalar tail
 *    and, from an unaligned source, the scalar kernel alone) / mla_bf16_transpose_heads give the
 *    bytes of oracle_bf16_from_f32 (round-to-nearest-even), so the door's inputs are the oracle's.
 * Everything runs on the GPU testbed (tests/lib/testbed.h). Re-run one:
 *   bazel test //tests:tc_prefill_gpu_test --test_arg=--filter='tc_prefill_gpu/<name>'
 * A failing comparison prints the testbed's report (case glm5_prefill, the worst element
 * unravelled, both values, the re-run command) and writes
 * repro-tc_prefill_gpu-<name>-<tensor>.safetensors (kernel and reference outputs; inputs
 * regenerate from the case glm5_prefill) under $TEST_UNDECLARED_OUTPUTS_DIR (else /tmp).
 * Without a usable GPU every test reports SKIPPED.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mla.h"
#include "kernels/mla_door.h"
#include "oracle/mla_oracle.h"
#include "tests/lib/case.h"
#include "tests/lib/testbed_criterion.h"

#define TARGET "tc_prefill_gpu_test"
#define SUITE "tc_prefill_gpu"
#define WS_BYTES ((size_t)32 << 20)

/* One test's testbed and the case glm5_prefill, run by the oracle. */
typedef struct {
    tb t;
    mla_ctx ctx;
    const mla_geom *g;
} tc_fx;

static void fx_open(tc_fx *f, const char *test_name, const char *case_name) {
    memset(f, 0, sizeof *f);
    TB_CRITERION_INIT(&f->t, TARGET, SUITE, test_name);
    const mla_case *c = tb_case_run(&f->t, case_name, &f->ctx);
    f->g = &c->geom;
    if (f->g->t_q < MLA_TC_PREFILL_MIN_TQ)
        tb_failf(&f->t, 1, "%s: t_q %d is below the TC door", case_name, f->g->t_q);
}

/* One door call (absorb or decompress) over the first t_q rows of the case, into a freshly
 * poisoned buffer (the bf16 weights are prepared on the device by the door's helpers); checks
 * every buffer's guards, the inputs unchanged and the output fully written; returns the output
 * (host), the door's bf16 conversion of the input (its scratch, downloaded) and the TC counter
 * delta. what: e.g. "door run 1". */
typedef struct {
    float *out;
    uint64_t tc_delta;
    uint16_t *x_scratch;
} door_result;

static door_result run_door(tc_fx *f, int absorb, int32_t t_q, const char *what) {
    tb *t = &f->t;
    const mla_geom *g = f->g;
    int32_t H = g->n_head, R = g->kv_rank, hd = absorb ? g->d_nope : g->d_v;
    int32_t in_w = absorb ? g->d_nope : R, out_w = absorb ? R : g->d_v;
    const char *in_name = absorb ? "q_nope" : "o_lat", *w_name = absorb ? "wk_b" : "wv_b";
    const mla_tensor *in = tb_tensor(t, &f->ctx, in_name), *w = tb_tensor(t, &f->ctx, w_name);
    size_t n_in = (size_t)t_q * H * in_w, n_out = (size_t)t_q * H * out_w;
    size_t n_w = (size_t)H * hd * R;
    gpu_buf bi = gpu_buf_from_host(in->data, n_in * 4), bw = gpu_buf_from_host(w->data, n_w * 4);
    gpu_buf bwb = gpu_buf_alloc(n_w * 2), bx = gpu_buf_alloc(n_in * 2);
    gpu_buf bws = gpu_buf_alloc(WS_BYTES), bo = gpu_buf_alloc(n_out * 4);
    int rc = absorb ? mla_bf16_transpose_heads(bw.ptr, bwb.ptr, H, hd, R, NULL)
                    : mla_f32_to_bf16(bw.ptr, bwb.ptr, (int64_t)n_w, NULL);
    tb_launched(t, rc,
                absorb ? "bf16 weight preparation (mla_bf16_transpose_heads)"
                       : "bf16 weight preparation (mla_f32_to_bf16)");
    uint64_t before = mla_tc_prefill_dispatches();
    rc = absorb ? mla_door_tc_absorb_q(bi.ptr, bw.ptr, bwb.ptr, bo.ptr, bx.ptr, bws.ptr, WS_BYTES,
                                       t_q, H, hd, R, NULL)
                : mla_door_tc_decompress_v(bi.ptr, bw.ptr, bwb.ptr, bo.ptr, bx.ptr, bws.ptr,
                                           WS_BYTES, t_q, H, hd, R, NULL);
    tb_launched(t, rc, absorb ? "mla_door_tc_absorb_q" : "mla_door_tc_decompress_v");
    door_result res;
    res.tc_delta = mla_tc_prefill_dispatches() - before;
    tb_input_untouched(t, &bi, in->data, in_name);
    tb_input_untouched(t, &bw, w->data, w_name);
    tb_expectf(t, gpu_buf_guards_intact(&bwb),
               "%s: a guard band of the bf16 weights was "
               "overwritten",
               what);
    tb_expectf(t, gpu_buf_guards_intact(&bws), "%s wrote outside the cuBLASLt workspace", what);
    res.x_scratch = tb_output(t, &bx, "x_bf16 (scratch)", what, 0);
    res.out = tb_output(t, &bo, absorb ? "q_lat" : "out", what, 1);
    gpu_buf_free(&bi);
    gpu_buf_free(&bw);
    gpu_buf_free(&bwb);
    gpu_buf_free(&bx);
    gpu_buf_free(&bws);
    gpu_buf_free(&bo);
    return res;
}

/* The f32 launcher over the first t_q rows (output fully written, guards intact). */
static float *run_f32(tc_fx *f, int absorb, int32_t t_q) {
    tb *t = &f->t;
    const mla_geom *g = f->g;
    int32_t H = g->n_head, R = g->kv_rank, hd = absorb ? g->d_nope : g->d_v;
    const mla_tensor *in = tb_tensor(t, &f->ctx, absorb ? "q_nope" : "o_lat");
    const mla_tensor *w = tb_tensor(t, &f->ctx, absorb ? "wk_b" : "wv_b");
    size_t n_in = (size_t)t_q * H * (absorb ? hd : R), n_out = (size_t)t_q * H * (absorb ? R : hd);
    gpu_buf bi = gpu_buf_from_host(in->data, n_in * 4);
    gpu_buf bw = gpu_buf_from_host(w->data, (size_t)H * hd * R * 4);
    gpu_buf bo = gpu_buf_alloc(n_out * 4);
    int rc = absorb ? memra_mla_absorb_q_f32(bi.ptr, bw.ptr, bo.ptr, t_q, H, hd, R, NULL)
                    : memra_mla_decompress_v_f32(bi.ptr, bw.ptr, bo.ptr, t_q, H, hd, R, NULL);
    tb_launched(t, rc,
                absorb ? "the f32 launcher (memra_mla_absorb_q_f32)"
                       : "the f32 launcher (memra_mla_decompress_v_f32)");
    float *out = tb_output(t, &bo, absorb ? "q_lat" : "out", "the f32 launcher", 1);
    gpu_buf_free(&bi);
    gpu_buf_free(&bw);
    gpu_buf_free(&bo);
    return out;
}

static void engaged(const char *test_name, const char *case_name, int absorb) {
    GPU_REQUIRE();
    tc_fx f;
    fx_open(&f, test_name, case_name);
    tb *tt = &f.t;
    const mla_geom *g = f.g;
    int32_t t = g->t_q, H = g->n_head, R = g->kv_rank;
    int32_t nn = absorb ? R : g->d_v, k = absorb ? g->d_nope : R;
    unsetenv("MEMRA_MLA_DECODE_SPLIT");
    setenv("MEMRA_MLA_TC_PREFILL", "1", 1);
    door_result a = run_door(&f, absorb, t, "door run 1");
    door_result b = run_door(&f, absorb, t, "door run 2");
    unsetenv("MEMRA_MLA_TC_PREFILL");
    tb_expectf(tt, a.tc_delta == 1 && b.tc_delta == 1,
               "MEMRA_MLA_TC_PREFILL=1 at t_q %d: the TC counter moved by %llu and %llu, want 1 "
               "each (the GEMM did not run: declined or not engaged)",
               t, (unsigned long long)a.tc_delta, (unsigned long long)b.tc_delta);
    const int64_t shape[3] = {t, H, nn};
    tb_compare(tt, absorb ? "q_lat_run_to_run" : "out_run_to_run", ST_F32, 3, shape, b.out, "run2",
               a.out, "run1", MLA_TOL_EXACT, NULL, 1);

    const mla_tensor *x32 = tb_tensor(tt, &f.ctx, absorb ? "q_nope" : "o_lat");
    const mla_tensor *w32 = tb_tensor(tt, &f.ctx, absorb ? "wk_b" : "wv_b");
    const mla_tensor *ref =
        tb_tensor(tt, &f.ctx, absorb ? "absorb_bf16_y_f32" : "decompress_bf16_y_f32");
    size_t ny = (size_t)t * H * nn;
    mla_bf16_gemm ops; /* the door's operands, exactly as the case's bf16 stages build them */
    if (mla_bf16_gemm_operands(g, absorb, x32->data, w32->data, &ops))
        tb_failf(tt, 1, "out of host memory");
    uint16_t *x = ops.x, *w = ops.w;
    const int64_t xshape[3] = {t, H, k};
    tb_compare(tt, "x_bf16", ST_BF16, 3, xshape, a.x_scratch, "door_scratch", x,
               "oracle_bf16_from_f32", MLA_TOL_EXACT, NULL, 1);
    double *atol = tb_xmalloc(tt, ny * sizeof *atol);
    mla_tol_bf16_gemm_bounds(w, x, NULL, t, nn, k, (int64_t)H * k, k, (int64_t)H * nn, nn, H, 0,
                             atol);
    /* class bf16_gemm (the tensor's own, from its stage descriptor), per-element bounds */
    tb_against_oracle(tt, &f.ctx, ref, a.out, "tc_door", atol);
    free(atol);
    free(x);
    free(w);
    free(a.out);
    free(b.out);
    free(a.x_scratch);
    free(b.x_scratch);
    mla_ctx_free(&f.ctx);
}

/* The door must not engage: flag on below the threshold, or flag off at t = 128. */
static void not_engaged(const char *test_name, const char *case_name, int absorb, int flag_on,
                        int32_t t_q) {
    GPU_REQUIRE();
    tc_fx f;
    fx_open(&f, test_name, case_name);
    unsetenv("MEMRA_MLA_DECODE_SPLIT");
    if (flag_on)
        setenv("MEMRA_MLA_TC_PREFILL", "1", 1);
    else
        unsetenv("MEMRA_MLA_TC_PREFILL");
    door_result a = run_door(&f, absorb, t_q, "door");
    unsetenv("MEMRA_MLA_TC_PREFILL");
    tb_expectf(&f.t, a.tc_delta == 0, "flag %s, t_q %d (threshold %d): the TC door engaged",
               flag_on ? "on" : "off", t_q, MLA_TC_PREFILL_MIN_TQ);
    float *ref = run_f32(&f, absorb, t_q);
    int32_t nn = absorb ? f.g->kv_rank : f.g->d_v;
    const int64_t shape[3] = {t_q, f.g->n_head, nn};
    tb_compare(&f.t, absorb ? "q_lat" : "out", ST_F32, 3, shape, a.out, "door_not_engaged", ref,
               "f32_launcher", MLA_TOL_EXACT, NULL, 1);
    free(ref);
    free(a.out);
    free(a.x_scratch);
    mla_ctx_free(&f.ctx);
}

Test(tc_prefill_gpu, glm5_prefill__absorb, .timeout = 300) {
    engaged("glm5_prefill__absorb", "glm5_prefill", 1);
}
Test(tc_prefill_gpu, glm5_prefill__decompress, .timeout = 300) {
    engaged("glm5_prefill__decompress", "glm5_prefill", 0);
}
Test(tc_prefill_gpu, below_threshold__absorb, .timeout = 300) {
    not_engaged("below_threshold__absorb", "glm5_prefill", 1, 1, MLA_TC_PREFILL_MIN_TQ - 1);
}
Test(tc_prefill_gpu, below_threshold__decompress, .timeout = 300) {
    not_engaged("below_threshold__decompress", "glm5_prefill", 0, 1, MLA_TC_PREFILL_MIN_TQ - 1);
}
Test(tc_prefill_gpu, flag_off__absorb, .timeout = 300) {
    not_engaged("flag_off__absorb", "glm5_prefill", 1, 0, 128);
}
Test(tc_prefill_gpu, flag_off__decompress, .timeout = 300) {
    not_engaged("flag_off__decompress", "glm5_prefill", 0, 0, 128);
}

/* The sanitizer tier's cases: the same checks on san_prefill (t_q = t_kv = 64, 2 heads). */
Test(tc_prefill_gpu, san_prefill__absorb, .timeout = 300) {
    engaged("san_prefill__absorb", "san_prefill", 1);
}
Test(tc_prefill_gpu, san_prefill__decompress, .timeout = 300) {
    engaged("san_prefill__decompress", "san_prefill", 0);
}
Test(tc_prefill_gpu, san_below_threshold__absorb, .timeout = 300) {
    not_engaged("san_below_threshold__absorb", "san_prefill", 1, 1, MLA_TC_PREFILL_MIN_TQ - 1);
}
Test(tc_prefill_gpu, san_flag_off__decompress, .timeout = 300) {
    not_engaged("san_flag_off__decompress", "san_prefill", 0, 0, 64);
}

/* The device bf16 helpers round like the oracle, including ties, NaN, infinities and -0. */
Test(tc_prefill_gpu, bf16_prep_matches_host, .timeout = 120) {
    GPU_REQUIRE();
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, "bf16_prep_matches_host");
    const int32_t B = 3, rows = 5, cols = 7;
    size_t n = (size_t)B * rows * cols;
    float *src = tb_xmalloc(&t, n * 4);
    mla_fill_host_f32(src, n, MLA_FILL_REALISTIC, 0xBF16u, "bf16_src", 3.0f);
    const uint32_t special[] = {0x3F808000u /* tie, even down */,
                                0x3F818000u /* tie, up */,
                                0x7F800000u,
                                0xFF800000u,
                                0x80000000u,
                                0x7FC00001u,
                                0x7F7FFFFFu /* rounds to inf */,
                                0x00000001u};
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        memcpy(&src[i * 3], &special[i], 4);
    gpu_buf bs = gpu_buf_from_host(src, n * 4), bd = gpu_buf_alloc(n * 2),
            bt = gpu_buf_alloc(n * 2);
    tb_launched(&t, mla_f32_to_bf16(bs.ptr, bd.ptr, (int64_t)n, NULL), "mla_f32_to_bf16");
    /* n = 105: the 8-wide kernel's 13 groups and the scalar tail; from src + 1 (4-byte aligned
     * only) the scalar kernel alone */
    gpu_buf bu = gpu_buf_alloc((n - 1) * 2);
    tb_launched(&t, mla_f32_to_bf16((const float *)bs.ptr + 1, bu.ptr, (int64_t)n - 1, NULL),
                "mla_f32_to_bf16 (unaligned source)");
    tb_launched(&t, mla_bf16_transpose_heads(bs.ptr, bt.ptr, B, rows, cols, NULL),
                "mla_bf16_transpose_heads");
    tb_input_untouched(&t, &bs, src, "src");
    /* guards intact and every output word written */
    uint16_t *d = tb_output(&t, &bd, "bf16", "mla_f32_to_bf16", 1);
    uint16_t *tt = tb_output(&t, &bt, "bf16_transposed", "mla_bf16_transpose_heads", 1);
    uint16_t *du = tb_output(&t, &bu, "bf16_unaligned", "mla_f32_to_bf16 (unaligned source)", 1);
    for (size_t i = 0; i < n; i++) {
        uint16_t want = oracle_bf16_from_f32(src[i]);
        uint32_t bits;
        memcpy(&bits, &src[i], 4);
        for (int pass = 0; pass < 2; pass++) {
            if (pass && i == 0) continue; /* the unaligned call starts at src[1] */
            const uint16_t got = pass ? du[i - 1] : d[i];
            int nan_both = (want & 0x7F80u) == 0x7F80u && (want & 0x7Fu) &&
                           (got & 0x7F80u) == 0x7F80u && (got & 0x7Fu);
            tb_expectf(&t, got == want || nan_both,
                       "mla_f32_to_bf16%s[%zu]: f32 0x%08X -> 0x%04X, oracle 0x%04X",
                       pass ? " (unaligned source)" : "", i, bits, got, want);
        }
    }
    for (int32_t b = 0; b < B; b++)
        for (int32_t r = 0; r < rows; r++)
            for (int32_t c = 0; c < cols; c++) {
                float v = src[((size_t)b * rows + r) * cols + c];
                uint16_t got = tt[((size_t)b * cols + c) * rows + r],
                         want = oracle_bf16_from_f32(v);
                tb_expectf(&t,
                           got == want || (isnan(v) && (got & 0x7F80u) == 0x7F80u && (got & 0x7Fu)),
                           "mla_bf16_transpose_heads dst[%d][%d][%d] = 0x%04X, oracle 0x%04X", b, c,
                           r, got, want);
            }
    free(src);
    free(d);
    free(tt);
    free(du);
    gpu_buf_free(&bs);
    gpu_buf_free(&bd);
    gpu_buf_free(&bt);
    gpu_buf_free(&bu);
}
