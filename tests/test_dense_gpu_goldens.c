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
