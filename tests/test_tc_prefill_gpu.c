/* test_tc_prefill_gpu.c: the MEMRA_MLA_TC_PREFILL door (kernels/mla_door.h) at the glm5_prefill
 * case (t_q = 128, 64 heads, kv_rank 512, d_nope 192, d_v 256).
 *
 *  - tc_prefill_gpu/glm5_prefill__absorb, __decompress: flag "1", t_q >= MLA_TC_PREFILL_MIN_TQ:
 *    the TC counter moves by one (the receipt), every output word is written, guards intact,
 *    two runs give identical bytes, and the result is within class bf16_gemm of the oracle's
 *    bf16 reference (oracle_bf16_gemm_sb on the bf16-rounded inputs: the case's
 *    {absorb,decompress}_bf16_y_f32) under the per-element bounds mla_tol_bf16_gemm_bounds.
 *  - tc_prefill_gpu/below_threshold__*: flag "1" but t_q = MLA_TC_PREFILL_MIN_TQ - 1 (the first
 *    rows of the case): the door does not engage and the bytes equal the f32 launcher's.
 *  - tc_prefill_gpu/flag_off__*: t_q = 128 with the flag unset: no engagement, f32 bytes.
 *  - tc_prefill_gpu/bf16_prep_matches_host: mla_f32_to_bf16 / mla_bf16_transpose_heads give the
 *    bytes of oracle_bf16_from_f32 (round-to-nearest-even), so the door's inputs are the oracle's.
 * Re-run one: bazel test //tests:tc_prefill_gpu_test --test_arg=--filter='tc_prefill_gpu/<name>'
 * Failures print mla_cmp_report and write repro-tc_prefill_gpu-<name>.safetensors (kernel and
 * reference outputs; inputs regenerate from the case glm5_prefill) under
 * $TEST_UNDECLARED_OUTPUTS_DIR (else /tmp). Without a usable GPU every test reports SKIPPED.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mla.h"
#include "kernels/mla_door.h"
#include "kernels/mla_status.h"
#include "oracle/mla_oracle.h"
#include "tests/lib/gpu_util.h"
#include "tests/lib/case.h"
#include "tests/lib/compare.h"
#include "tests/lib/safetensors.h"

#define WS_BYTES ((size_t)32 << 20)

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    cr_assert(p != NULL, "out of memory (%zu bytes)", n);
    return p;
}

typedef struct {
    mla_ctx ctx;
    const mla_geom *g;
    char name[96], rerun[400];
} tc_fx;

static void fx_open(tc_fx *f, const char *test_name) {
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", test_name);
    snprintf(f->rerun, sizeof f->rerun,
             "bazel test //tests:tc_prefill_gpu_test --test_arg=--filter='tc_prefill_gpu/%s'"
             "   (GPU bundle: bin/tc_prefill_gpu_test --filter 'tc_prefill_gpu/%s')",
             test_name, test_name);
    const mla_case *c = mla_case_find("glm5_prefill");
    cr_assert(c != NULL, "case glm5_prefill is not in the case table");
    f->g = &c->geom;
    cr_assert(f->g->t_q >= MLA_TC_PREFILL_MIN_TQ, "glm5_prefill t_q %d is below the TC door",
              f->g->t_q);
    int rc = mla_case_run(c, &f->ctx);
    cr_assert(rc == 0, "mla_case_run(glm5_prefill): %s", f->ctx.err);
}

static const mla_tensor *tensor(tc_fx *f, const char *name) {
    const mla_tensor *t = mla_ctx_get(&f->ctx, name);
    cr_assert(t != NULL, "glm5_prefill has no tensor %s", name);
    return t;
}

static void write_repro(tc_fx *f, const int64_t *shape, const float *got, const float *ref) {
    const char *dir = getenv("TEST_UNDECLARED_OUTPUTS_DIR");
    if (!dir || !*dir) dir = "/tmp";
    char path[4096], err[ST_ERR_LEN];
    snprintf(path, sizeof path, "%s/repro-tc_prefill_gpu-%s.safetensors", dir, f->name);
    st_writer w;
    st_writer_init(&w);
    st_writer_meta(&w, "case", "glm5_prefill");
    st_writer_meta(&w, "test", f->name);
    st_writer_meta(&w, "rerun", f->rerun);
    st_writer_add(&w, "kernel", ST_F32, 3, shape, got);
    st_writer_add(&w, "reference", ST_F32, 3, shape, ref);
    if (st_writer_write(&w, path, err, sizeof err) == 0)
        fprintf(stderr, "tc_prefill_gpu/%s: reproducer written: %s\n", f->name, path);
    st_writer_free(&w);
}

static void check_cmp(tc_fx *f, const char *what, const int64_t *shape, const float *got,
                      const float *ref, size_t n, const double *atol) {
    mla_tol tol = mla_tol_exact();
    if (atol) {
        tol.cls = MLA_TOL_BF16_GEMM;
        tol.atol_elem = atol;
    }
    mla_cmp_result r = mla_compare_f32(got, ref, n, &tol);
    if (!atol && memcmp(got, ref, n * 4) != 0) r.pass = 0; /* bytes, -0 / NaN payload too */
    if (r.n_nan_mismatch) r.pass = 0;
    if (r.pass) return;
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    mla_cmp_report(fp, "glm5_prefill", what, 3, shape, &r, &tol, f->rerun);
    fclose(fp);
    write_repro(f, shape, got, ref);
    cr_expect(0, "tc_prefill_gpu/%s:\n%s", f->name, buf);
    free(buf);
}

/* Host bf16 operands of the door's GEMM, exactly as the case's bf16 stages build them. */
static uint16_t *host_x_bf16(const float *x, size_t n) {
    uint16_t *b = xmalloc(n * 2);
    for (size_t i = 0; i < n; i++) b[i] = oracle_bf16_from_f32(x[i]);
    return b;
}

static uint16_t *host_wk_t_bf16(const float *wk_b, int32_t H, int32_t dn, int32_t R) {
    uint16_t *w = xmalloc((size_t)H * R * dn * 2);
    for (int32_t h = 0; h < H; h++)
        for (int32_t r = 0; r < R; r++)
            for (int32_t d = 0; d < dn; d++)
                w[((size_t)h * R + r) * dn + d] =
                    oracle_bf16_from_f32(wk_b[((size_t)h * dn + d) * R + r]);
    return w;
}

/* One door call (absorb or decompress) over the first t_q rows of the case, into a freshly
 * poisoned buffer; returns the output (host) and the TC counter delta. The bf16 weights are
 * prepared on the device by the door's helpers. */
typedef struct {
    float *out;
    uint64_t tc_delta;
    int guards_ok;
    size_t poison_left;
    uint16_t *x_scratch; /* the door's bf16 conversion of the input, downloaded */
} door_result;

static door_result run_door(tc_fx *f, int absorb, int32_t t_q) {
    const mla_geom *g = f->g;
    int32_t H = g->n_head, R = g->kv_rank, hd = absorb ? g->d_nope : g->d_v;
    int32_t in_w = absorb ? g->d_nope : R, out_w = absorb ? R : g->d_v;
    const mla_tensor *in = tensor(f, absorb ? "q_nope" : "o_lat");
    const mla_tensor *w = tensor(f, absorb ? "wk_b" : "wv_b");
    size_t n_in = (size_t)t_q * H * in_w, n_out = (size_t)t_q * H * out_w;
    size_t n_w = (size_t)H * hd * R;
    gpu_buf bi = gpu_buf_from_host(in->data, n_in * 4), bw = gpu_buf_from_host(w->data, n_w * 4);
    gpu_buf bwb = gpu_buf_alloc(n_w * 2), bx = gpu_buf_alloc(n_in * 2), bws = gpu_buf_alloc(WS_BYTES);
    gpu_buf bo = gpu_buf_alloc(n_out * 4);
    int rc = absorb ? mla_bf16_transpose_heads(bw.ptr, bwb.ptr, H, hd, R, NULL)
                    : mla_f32_to_bf16(bw.ptr, bwb.ptr, (int64_t)n_w, NULL);
    cr_assert(rc == 0, "tc_prefill_gpu/%s: bf16 weight preparation returned %d (%s)\n  re-run: %s",
              f->name, rc, mla_status_message(rc), f->rerun);
    uint64_t before = mla_tc_prefill_dispatches();
    rc = absorb ? mla_door_tc_absorb_q(bi.ptr, bw.ptr, bwb.ptr, bo.ptr, bx.ptr, bws.ptr, WS_BYTES,
                                       t_q, H, hd, R, NULL)
                : mla_door_tc_decompress_v(bi.ptr, bw.ptr, bwb.ptr, bo.ptr, bx.ptr, bws.ptr,
                                           WS_BYTES, t_q, H, hd, R, NULL);
    if (rc == 0) rc = gpu_sync();
    cr_assert(rc == 0, "tc_prefill_gpu/%s: mla_door_tc_%s returned %d (%s)\n  re-run: %s", f->name,
              absorb ? "absorb_q" : "decompress_v", rc, mla_status_message(rc), f->rerun);
    door_result res;
    res.tc_delta = mla_tc_prefill_dispatches() - before;
    res.guards_ok = gpu_buf_guards_intact(&bo) && gpu_buf_guards_intact(&bi) &&
                    gpu_buf_guards_intact(&bw) && gpu_buf_guards_intact(&bwb) &&
                    gpu_buf_guards_intact(&bx) && gpu_buf_guards_intact(&bws);
    res.poison_left = gpu_buf_count_poison(&bo);
    res.out = xmalloc(n_out * 4);
    gpu_buf_download(&bo, res.out, n_out * 4);
    res.x_scratch = xmalloc(n_in * 2);
    gpu_buf_download(&bx, res.x_scratch, n_in * 2);
    gpu_buf_free(&bi);
    gpu_buf_free(&bw);
    gpu_buf_free(&bwb);
    gpu_buf_free(&bx);
    gpu_buf_free(&bws);
    gpu_buf_free(&bo);
    return res;
}

/* The f32 launcher over the first t_q rows. */
static float *run_f32(tc_fx *f, int absorb, int32_t t_q) {
    const mla_geom *g = f->g;
    int32_t H = g->n_head, R = g->kv_rank, hd = absorb ? g->d_nope : g->d_v;
    const mla_tensor *in = tensor(f, absorb ? "q_nope" : "o_lat");
    const mla_tensor *w = tensor(f, absorb ? "wk_b" : "wv_b");
    size_t n_in = (size_t)t_q * H * (absorb ? hd : R), n_out = (size_t)t_q * H * (absorb ? R : hd);
    gpu_buf bi = gpu_buf_from_host(in->data, n_in * 4);
    gpu_buf bw = gpu_buf_from_host(w->data, (size_t)H * hd * R * 4);
    gpu_buf bo = gpu_buf_alloc(n_out * 4);
    int rc = absorb ? memra_mla_absorb_q_f32(bi.ptr, bw.ptr, bo.ptr, t_q, H, hd, R, NULL)
                    : memra_mla_decompress_v_f32(bi.ptr, bw.ptr, bo.ptr, t_q, H, hd, R, NULL);
    if (rc == 0) rc = gpu_sync();
    cr_assert(rc == 0, "tc_prefill_gpu/%s: the f32 launcher returned %d (%s)\n  re-run: %s",
              f->name, rc, mla_status_message(rc), f->rerun);
    float *out = xmalloc(n_out * 4);
    gpu_buf_download(&bo, out, n_out * 4);
    gpu_buf_free(&bi);
    gpu_buf_free(&bw);
    gpu_buf_free(&bo);
    return out;
}

static void engaged(const char *test_name, int absorb) {
    GPU_REQUIRE();
    tc_fx f;
    fx_open(&f, test_name);
    const mla_geom *g = f.g;
    int32_t t = g->t_q, H = g->n_head, R = g->kv_rank;
    int32_t nn = absorb ? R : g->d_v, k = absorb ? g->d_nope : R;
    unsetenv("MEMRA_MLA_DECODE_SPLIT");
    setenv("MEMRA_MLA_TC_PREFILL", "1", 1);
    door_result a = run_door(&f, absorb, t), b = run_door(&f, absorb, t);
    unsetenv("MEMRA_MLA_TC_PREFILL");
    cr_expect(a.tc_delta == 1 && b.tc_delta == 1,
              "tc_prefill_gpu/%s: MEMRA_MLA_TC_PREFILL=1 at t_q %d: the TC counter moved by %llu "
              "and %llu, want 1 each (the GEMM did not run: declined or not engaged)\n  re-run: %s",
              f.name, t, (unsigned long long)a.tc_delta, (unsigned long long)b.tc_delta, f.rerun);
    cr_expect(a.guards_ok && b.guards_ok,
              "tc_prefill_gpu/%s: a guard band (output, inputs, bf16 weights, scratch or "
              "workspace) was overwritten\n  re-run: %s", f.name, f.rerun);
    cr_expect(a.poison_left == 0, "tc_prefill_gpu/%s: %zu output words left unwritten\n"
              "  re-run: %s", f.name, a.poison_left, f.rerun);
    size_t ny = (size_t)t * H * nn;
    int64_t shape[3] = {t, H, nn};
    check_cmp(&f, "run 2 vs run 1 (run-to-run, exact)", shape, b.out, a.out, ny, NULL);

    const mla_tensor *x32 = tensor(&f, absorb ? "q_nope" : "o_lat");
    const mla_tensor *w32 = tensor(&f, absorb ? "wk_b" : "wv_b");
    const mla_tensor *ref = tensor(&f, absorb ? "absorb_bf16_y_f32" : "decompress_bf16_y_f32");
    size_t nx = (size_t)t * H * k;
    uint16_t *x = host_x_bf16(x32->data, nx);
    uint16_t *w = absorb ? host_wk_t_bf16(w32->data, H, g->d_nope, R)
                         : host_x_bf16(w32->data, (size_t)H * nn * k);
    cr_expect(memcmp(a.x_scratch, x, nx * 2) == 0,
              "tc_prefill_gpu/%s: the door's bf16 conversion of the input differs from "
              "oracle_bf16_from_f32\n  re-run: %s", f.name, f.rerun);
    double *atol = xmalloc(ny * sizeof *atol);
    mla_tol_bf16_gemm_bounds(w, x, NULL, t, nn, k, (int64_t)H * k, k, (int64_t)H * nn, nn, H, 0,
                             atol);
    check_cmp(&f, absorb ? "q_lat (TC) vs oracle bf16 reference" : "out (TC) vs oracle bf16 "
              "reference", shape, a.out, ref->data, ny, atol);
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
static void not_engaged(const char *test_name, int absorb, int flag_on, int32_t t_q) {
    GPU_REQUIRE();
    tc_fx f;
    fx_open(&f, test_name);
    unsetenv("MEMRA_MLA_DECODE_SPLIT");
    if (flag_on)
        setenv("MEMRA_MLA_TC_PREFILL", "1", 1);
    else
        unsetenv("MEMRA_MLA_TC_PREFILL");
    door_result a = run_door(&f, absorb, t_q);
    unsetenv("MEMRA_MLA_TC_PREFILL");
    cr_expect(a.tc_delta == 0,
              "tc_prefill_gpu/%s: flag %s, t_q %d (threshold %d): the TC door engaged\n"
              "  re-run: %s", f.name, flag_on ? "on" : "off", t_q, MLA_TC_PREFILL_MIN_TQ,
              f.rerun);
    cr_expect(a.guards_ok && a.poison_left == 0,
              "tc_prefill_gpu/%s: guard band overwritten or %zu words unwritten\n  re-run: %s",
              f.name, a.poison_left, f.rerun);
    float *ref = run_f32(&f, absorb, t_q);
    int32_t nn = absorb ? f.g->kv_rank : f.g->d_v;
    int64_t shape[3] = {t_q, f.g->n_head, nn};
    check_cmp(&f, "door (not engaged) vs f32 launcher, exact", shape, a.out, ref,
              (size_t)t_q * f.g->n_head * nn, NULL);
    free(ref);
    free(a.out);
    free(a.x_scratch);
    mla_ctx_free(&f.ctx);
}

Test(tc_prefill_gpu, glm5_prefill__absorb, .timeout = 300) {
    engaged("glm5_prefill__absorb", 1);
}
Test(tc_prefill_gpu, glm5_prefill__decompress, .timeout = 300) {
    engaged("glm5_prefill__decompress", 0);
}
Test(tc_prefill_gpu, below_threshold__absorb, .timeout = 300) {
    not_engaged("below_threshold__absorb", 1, 1, MLA_TC_PREFILL_MIN_TQ - 1);
}
Test(tc_prefill_gpu, below_threshold__decompress, .timeout = 300) {
    not_engaged("below_threshold__decompress", 0, 1, MLA_TC_PREFILL_MIN_TQ - 1);
}
Test(tc_prefill_gpu, flag_off__absorb, .timeout = 300) {
    not_engaged("flag_off__absorb", 1, 0, 128);
}
Test(tc_prefill_gpu, flag_off__decompress, .timeout = 300) {
    not_engaged("flag_off__decompress", 0, 0, 128);
}

/* The device bf16 helpers round like the oracle, including ties, NaN, infinities and -0. */
Test(tc_prefill_gpu, bf16_prep_matches_host, .timeout = 120) {
    GPU_REQUIRE();
    const char *rerun = "bazel test //tests:tc_prefill_gpu_test "
                        "--test_arg=--filter='tc_prefill_gpu/bf16_prep_matches_host'";
    const int32_t B = 3, rows = 5, cols = 7;
    size_t n = (size_t)B * rows * cols;
    float *src = xmalloc(n * 4);
    mla_fill_host_f32(src, n, MLA_FILL_REALISTIC, 0xBF16u, "bf16_src", 3.0f);
    const uint32_t special[] = {0x3F808000u /* tie, even down */, 0x3F818000u /* tie, up */,
                                0x7F800000u, 0xFF800000u, 0x80000000u, 0x7FC00001u,
                                0x7F7FFFFFu /* rounds to inf */, 0x00000001u};
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        memcpy(&src[i * 3], &special[i], 4);
    gpu_buf bs = gpu_buf_from_host(src, n * 4), bd = gpu_buf_alloc(n * 2),
            bt = gpu_buf_alloc(n * 2);
    int rc = mla_f32_to_bf16(bs.ptr, bd.ptr, (int64_t)n, NULL);
    cr_assert(rc == 0, "mla_f32_to_bf16: %d (%s)", rc, mla_status_message(rc));
    rc = mla_bf16_transpose_heads(bs.ptr, bt.ptr, B, rows, cols, NULL);
    cr_assert(rc == 0 && gpu_sync() == 0, "mla_bf16_transpose_heads: %d (%s)", rc,
              mla_status_message(rc));
    uint16_t *d = xmalloc(n * 2), *tt = xmalloc(n * 2);
    gpu_buf_download(&bd, d, n * 2);
    gpu_buf_download(&bt, tt, n * 2);
    for (size_t i = 0; i < n; i++) {
        uint16_t want = oracle_bf16_from_f32(src[i]);
        int nan_both = (want & 0x7F80u) == 0x7F80u && (want & 0x7Fu) &&
                       (d[i] & 0x7F80u) == 0x7F80u && (d[i] & 0x7Fu);
        uint32_t bits;
        memcpy(&bits, &src[i], 4);
        cr_expect(d[i] == want || nan_both,
                  "mla_f32_to_bf16[%zu]: f32 0x%08X -> 0x%04X, oracle 0x%04X\n  re-run: %s", i,
                  bits, d[i], want, rerun);
    }
    for (int32_t b = 0; b < B; b++)
        for (int32_t r = 0; r < rows; r++)
            for (int32_t c = 0; c < cols; c++) {
                float v = src[((size_t)b * rows + r) * cols + c];
                uint16_t got = tt[((size_t)b * cols + c) * rows + r],
                         want = oracle_bf16_from_f32(v);
                cr_expect(got == want || (isnan(v) && (got & 0x7F80u) == 0x7F80u && (got & 0x7Fu)),
                          "mla_bf16_transpose_heads dst[%d][%d][%d] = 0x%04X, oracle 0x%04X\n"
                          "  re-run: %s", b, c, r, got, want, rerun);
            }
    cr_expect(gpu_buf_guards_intact(&bd) && gpu_buf_guards_intact(&bt) &&
                  gpu_buf_count_poison(&bd) == 0 && gpu_buf_count_poison(&bt) == 0,
              "bf16 helpers: guard band overwritten or output words unwritten\n  re-run: %s",
              rerun);
    free(src);
    free(d);
    free(tt);
    gpu_buf_free(&bs);
    gpu_buf_free(&bd);
    gpu_buf_free(&bt);
}
