/* test_dense_gpu_goldens.c: every dense kernel stage of every dense golden case, on the GPU,
 * against the CPU oracle.
 *
 * One Criterion test per (case, GPU check), named dense_gpu/<case>__<check> and generated from
 * the case lists (tests/lib/case_list.h), so a failure line is also a filter:
 *   bazel test //tests:dense_gpu_goldens_test --test_arg=--filter='dense_gpu/glm5_decode__absorb_q'
 *   (GPU bundle: bin/dense_gpu_goldens_test --filter 'dense_gpu/glm5_decode__absorb_q')
 * Each test (mla_golden_gpu_check, tests/lib/stage_check.c):
 *  1. recomputes the case (inputs from the counter-based fill, oracle outputs) and checks that
 *     the stored golden rows and the manifest's full SHA-256 equal the oracle's outputs;
 *  2. runs the stage's GPU half (tests/lib/stages_dense.c) on the testbed: inputs in guarded
 *     device buffers, outputs poisoned; launch (rc 0), sync, guards, inputs unchanged, no poison
 *     left; a second launch with identical bytes; the output against the oracle's in its
 *     tolerance class (bit-exact classes by bytes and SHA-256, the others through the
 *     per-element bounds of docs/tolerances.md; never widened; NaN never passes).
 * Attention uses the any-walk bound (R = D = N + 1).
 * A failure prints the comparator's report (case, tensor, worst index, both values, the re-run
 * command) and writes a reproducer repro-dense_gpu-<case>__<check>-<tensor>.safetensors under
 * $TEST_UNDECLARED_OUTPUTS_DIR (else /tmp).
 * Without a usable GPU every test reports SKIPPED (GPU_REQUIRE), never passed.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mla.h"
#include "kernels/mla_status.h"
#include "oracle/mla_oracle.h"
#include "tests/lib/case.h"

#define GOLDEN_SUITE dense_gpu
#define GOLDEN_TARGET "dense_gpu_goldens_test"
#include "tests/lib/golden_suite.h"

MLA_DENSE_CASES(GOLDEN_CASE_TESTS)
/* The sanitizer cases (case_list.h: small, in memory, no fixture): <suite>/san_*. */
MLA_SANITIZE_DENSE_CASES(GOLDEN_CASE_TESTS)
/* <suite>/custom__*: the case $MLA_CUSTOM_CASE describes (tools/shrink.py); skipped when unset. */
GOLDEN_CUSTOM_TESTS(dense_bf16)

/* A call with bad arguments writes nothing: absorb_q_split with split out of range returns
 * 40023 and the poisoned output stays fully poisoned (and the valid call before it worked). */
Test(dense_gpu, bad_arguments_write_nothing, .timeout = 120) {
    GPU_REQUIRE();
    tb tt;
    TB_CRITERION_INIT(&tt, GOLDEN_TARGET, "dense_gpu", "bad_arguments_write_nothing");
    const int32_t t = 1, H = 4, dn = 8, R = 64, dv = 16;
    float *q = tb_xmalloc(&tt, (size_t)t * H * dn * 4),
          *wk = tb_xmalloc(&tt, (size_t)H * dn * R * 4);
    float *ol = tb_xmalloc(&tt, (size_t)t * H * R * 4),
          *wv = tb_xmalloc(&tt, (size_t)H * dv * R * 4);
    mla_fill_host_f32(q, (size_t)t * H * dn, MLA_FILL_REALISTIC, 7u, "q_nope", 1.0f);
    mla_fill_host_f32(wk, (size_t)H * dn * R, MLA_FILL_REALISTIC, 7u, "wk_b", 0.25f);
    mla_fill_host_f32(ol, (size_t)t * H * R, MLA_FILL_REALISTIC, 7u, "o_lat", 1.0f);
    mla_fill_host_f32(wv, (size_t)H * dv * R, MLA_FILL_REALISTIC, 7u, "wv_b", 0.125f);
    gpu_buf bq = gpu_buf_from_host(q, (size_t)t * H * dn * 4);
    gpu_buf bwk = gpu_buf_from_host(wk, (size_t)H * dn * R * 4);
    gpu_buf bol = gpu_buf_from_host(ol, (size_t)t * H * R * 4);
    gpu_buf bwv = gpu_buf_from_host(wv, (size_t)H * dv * R * 4);
    gpu_buf out = gpu_buf_alloc((size_t)t * H * R * 4);
    gpu_buf outv = gpu_buf_alloc((size_t)t * H * dv * 4);
    struct {
        const char *what;
        int rc, want;
        gpu_buf *o;
    } calls[] = {
        {"absorb_q_split split = 0",
         memra_mla_absorb_q_split_f32(bq.ptr, bwk.ptr, out.ptr, t, H, dn, R, 0, NULL), 40023, &out},
        {"absorb_q_split split = kv_rank + 1",
         memra_mla_absorb_q_split_f32(bq.ptr, bwk.ptr, out.ptr, t, H, dn, R, R + 1, NULL), 40023,
         &out},
        {"absorb_q_split split = -1",
         memra_mla_absorb_q_split_f32(bq.ptr, bwk.ptr, out.ptr, t, H, dn, R, -1, NULL), 40023,
         &out},
        {"absorb_q kv_rank = 1025",
         memra_mla_absorb_q_f32(bq.ptr, bwk.ptr, out.ptr, t, H, dn, 1025, NULL), 40002, &out},
        {"absorb_q q_lat aliases wk_b",
         memra_mla_absorb_q_f32(bq.ptr, bwk.ptr, (float *)bwk.ptr, t, H, dn, R, NULL), 40028, &out},
        {"decompress_v_split split = d_v + 1",
         memra_mla_decompress_v_split_f32(bol.ptr, bwv.ptr, outv.ptr, t, H, dv, R, dv + 1, NULL),
         40023, &outv},
        {"decompress_v NULL wv_b",
         memra_mla_decompress_v_f32(bol.ptr, NULL, outv.ptr, t, H, dv, R, NULL), 40020, &outv},
    };
    tb_launched(&tt, 0, "the buffer uploads");
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        tb_expectf(&tt, calls[i].rc == calls[i].want, "%s: returned %d (%s), want %d (%s)",
                   calls[i].what, calls[i].rc, mla_status_message(calls[i].rc), calls[i].want,
                   mla_status_message(calls[i].want));
    tb_expectf(&tt, gpu_buf_count_poison(&out) == out.bytes / 4 && gpu_buf_guards_intact(&out),
               "a refused absorb call wrote to q_lat (%zu of %zu words still poisoned)",
               gpu_buf_count_poison(&out), out.bytes / 4);
    tb_expectf(&tt, gpu_buf_count_poison(&outv) == outv.bytes / 4 && gpu_buf_guards_intact(&outv),
               "a refused decompress call wrote to out");
    /* wk_b was the aliased "output" of a refused call: still the input bytes. */
    float *h = tb_xmalloc(&tt, (size_t)H * dn * R * 4);
    gpu_buf_download(&bwk, h, (size_t)H * dn * R * 4);
    tb_expectf(&tt, memcmp(h, wk, (size_t)H * dn * R * 4) == 0,
               "a refused aliasing call wrote into wk_b");
    /* The same buffers with a valid split do work (the check is not vacuous). */
    int rc = memra_mla_absorb_q_split_f32(bq.ptr, bwk.ptr, out.ptr, t, H, dn, R, 2, NULL);
    tb_launched(&tt, rc, "the valid split call");
    float *got = tb_xmalloc(&tt, out.bytes), *ref = tb_xmalloc(&tt, out.bytes);
    gpu_buf_download(&out, got, out.bytes);
    oracle_absorb_q_f32(q, wk, ref, t, H, dn, R);
    tb_expectf(&tt, memcmp(got, ref, out.bytes) == 0,
               "the valid split call differs from the oracle");
    free(got);
    free(ref);
    free(h);
    free(q);
    free(wk);
    free(ol);
    free(wv);
    gpu_buf_free(&bq);
    gpu_buf_free(&bwk);
    gpu_buf_free(&bol);
    gpu_buf_free(&bwv);
    gpu_buf_free(&out);
    gpu_buf_free(&outv);
}

/* dense_gpu/san_exact_alloc__absorb_q and san_exact_alloc__decompress_v (thirty-eighth session):
 * each launcher and its split twin (split 16) on inputs and output in allocations of exactly
 * their size (gpu_exact_*: no guard band), output poisoned, against the oracle's bytes (class
 * exact, TB_BYTES_NAN_ANY) with every output word written. Under memcheck (the sanitizer tier's
 * attn_products part, and the mutation pass's stage set) a read past q_nope, wk_b, o_lat or wv_b
 * is out of bounds, which the guarded buffers of the san_ cases hide (GPU_GUARD_BYTES). Why: the
 * H200 pass of the thirty-eighth session left absorb_q_reg_f32's q load one element long
 * (`tid + u * NT <= DN`: thread 192 reads q_nope one past its head, past the allocation for the
 * last head) alive through memcheck, and no sanitizer case reached that arm at all (it runs at
 * t_q 1 and d_nope 192 only: the san_ cases have t_q 2 there). The geometries reach each arm of
 * both stages (kernels/mla_dense.cu): glm5 decode (absorb_q_reg_f32, decompress_v_flat_f32),
 * glm5 verify t_q 2 (the bulk arm at TT 2, the flat arm), glm5_next decode (d_nope 256: the bulk
 * arm), a short prefill t_q 5 (the general arms, TT 8) and kv_rank 520 at decode (the reg arm's
 * partial column block, the general decompress arm). */
typedef struct {
    const char *name;
    int32_t t, H, dn, R; /* dn: d_nope (absorb) or d_v (decompress) */
} dense_exact_geom;

static const dense_exact_geom DENSE_EXACT[] = {
    {"glm5 decode (t_q 1, d 192, kv_rank 512)", 1, 5, 192, 512},
    {"glm5 decode, d 256 (t_q 1, kv_rank 512)", 1, 5, 256, 512},
    {"glm5 verify (t_q 2, d 192)", 2, 5, 192, 512},
    {"short prefill (t_q 5, d 192)", 5, 3, 192, 512},
    {"decode, kv_rank 520 (a partial column block)", 1, 3, 192, 520},
};

static void dense_exact_run(tb *t, const dense_exact_geom *g, int decompress, int split) {
    char name[200];
    snprintf(name, sizeof name, "%s, %s, exact allocations%s", g->name,
             decompress ? "decompress_v" : "absorb_q", split ? ", split 16" : "");
    tb_set_case(t, name);
    /* absorb: x = q_nope[t][H][dn], w = wk_b[H][dn][R], y = q_lat[t][H][R];
     * decompress: x = o_lat[t][H][R], w = wv_b[H][dn][R], y = out[t][H][dn] */
    const size_t nx = (size_t)g->t * g->H * (decompress ? g->R : g->dn),
                 nw = (size_t)g->H * g->dn * g->R,
                 ny = (size_t)g->t * g->H * (decompress ? g->dn : g->R);
    float *x = tb_xmalloc(t, nx * 4), *w = tb_xmalloc(t, nw * 4), *ref = tb_xmalloc(t, ny * 4),
          *got = tb_xmalloc(t, ny * 4);
    uint32_t *poison = tb_xmalloc(t, ny * 4);
    mla_fill_host_f32(x, nx, MLA_FILL_REALISTIC, 0x5E0Au + (uint32_t)g->t, "x", 1.0f);
    mla_fill_host_f32(w, nw, MLA_FILL_REALISTIC, 0x5E0Bu + (uint32_t)g->R, "w", 0.25f);
    for (size_t e = 0; e < ny; e++) poison[e] = GPU_POISON_WORD;
    if (decompress)
        oracle_decompress_v_f32(x, w, ref, g->t, g->H, g->dn, g->R);
    else
        oracle_absorb_q_f32(x, w, ref, g->t, g->H, g->dn, g->R);
    void *dx = gpu_exact_from_host(x, nx * 4), *dw = gpu_exact_from_host(w, nw * 4),
         *dy = gpu_exact_from_host(poison, ny * 4);
    int rc;
    if (decompress)
        rc = split ? memra_mla_decompress_v_split_f32(dx, dw, dy, g->t, g->H, g->dn, g->R, 16, NULL)
                   : memra_mla_decompress_v_f32(dx, dw, dy, g->t, g->H, g->dn, g->R, NULL);
    else
        rc = split ? memra_mla_absorb_q_split_f32(dx, dw, dy, g->t, g->H, g->dn, g->R, 16, NULL)
                   : memra_mla_absorb_q_f32(dx, dw, dy, g->t, g->H, g->dn, g->R, NULL);
    tb_launched(t, rc,
                decompress ? "decompress_v on exact allocations" : "absorb_q on exact allocations");
    gpu_exact_download(dy, got, ny * 4);
    const size_t left = tb_count_poison(got, ny);
    tb_expectf(t, left == 0, "%zu of %zu output words left unwritten", left, ny);
    const int64_t shape[3] = {g->t, g->H, decompress ? g->dn : g->R};
    tb_compare(t, decompress ? "out" : "q_lat", ST_F32, 3, shape, got, "exact_alloc", ref, "oracle",
               MLA_TOL_EXACT, NULL, TB_BYTES_NAN_ANY);
    gpu_exact_free(dx), gpu_exact_free(dw), gpu_exact_free(dy);
    free(x), free(w), free(ref), free(got), free(poison);
}

static void dense_exact(const char *test, int decompress) {
    tb tt;
    TB_CRITERION_INIT(&tt, GOLDEN_TARGET, "dense_gpu", test);
    for (size_t k = 0; k < sizeof DENSE_EXACT / sizeof DENSE_EXACT[0]; k++)
        for (int split = 0; split < 2; split++)
            dense_exact_run(&tt, &DENSE_EXACT[k], decompress, split);
}

Test(dense_gpu, san_exact_alloc__absorb_q, .timeout = 300) {
    GPU_REQUIRE();
    dense_exact("san_exact_alloc__absorb_q", 0);
}

Test(dense_gpu, san_exact_alloc__decompress_v, .timeout = 300) {
    GPU_REQUIRE();
    dense_exact("san_exact_alloc__decompress_v", 1);
}
