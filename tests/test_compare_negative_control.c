/* test_compare_negative_control.c: proof that the comparator can fail. One element moved by one
 * ulp fails `exact` and a tolerance class with a bound below that ulp; NaN never passes against
 * a number (in every class, either side); a -inf mask mismatch fails every class; the report
 * names the worst element. The testbed's byte check against the oracle (TB_BYTES_NAN_ANY) fails
 * on -0 vs +0 and ignores NaN payloads; GPU vs GPU (TB_BYTES) counts the payloads too. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mla.h"
#include "kernels/mla_door.h"
#include "tests/lib/compare.h"
#include "tests/lib/mla_fill.h"
#include "tests/lib/testbed.h"

#define N 4096

static float *filled(void) {
    float *x = malloc(N * sizeof *x);
    mla_fill_host_f32(x, N, MLA_FILL_REALISTIC, 7u, "negative_control", 1.0f);
    return x;
}

static mla_tol tiny(mla_tol_class c) {
    mla_tol t = mla_tol_for_class(c, 1.0);
    t.atol = 1e-12; /* far below one ulp of values ~U(-1, 1) */
    return t;
}

Test(compare_negative_control, identical_passes) {
    float *a = filled(), *b = filled();
    mla_tol t = mla_tol_exact();
    mla_cmp_result r = mla_compare_f32(a, b, N, &t);
    cr_expect(r.pass && r.n_diff == 0 && r.max_ulp == 0);
    free(a);
    free(b);
}

Test(compare_negative_control, one_ulp_fails_exact_and_tiny_class) {
    float *ref = filled(), *got = filled();
    mla_perturb_ulp_f32(got, 1234, 1);
    cr_assert(memcmp(ref, got, N * sizeof(float)) != 0);
    mla_tol t = mla_tol_exact();
    mla_cmp_result r = mla_compare_f32(got, ref, N, &t);
    cr_expect(!r.pass, "exact passed a one-ulp change");
    cr_expect(r.n_diff == 1 && r.n_fail == 1 && r.max_ulp == 1 && r.worst_index == 1234);
    for (int c = MLA_TOL_ROPE; c < MLA_TOL_CLASS_COUNT; c++) {
        mla_tol tt = tiny((mla_tol_class)c);
        r = mla_compare_f32(got, ref, N, &tt);
        cr_expect(!r.pass, "class %s with a tiny bound passed a one-ulp change",
                  mla_tol_class_name((mla_tol_class)c));
        /* and the same class with a generous bound passes it: the control is meaningful */
        tt.atol = 1e-3;
        r = mla_compare_f32(got, ref, N, &tt);
        cr_expect(r.pass, "class %s with atol 1e-3 failed a one-ulp change",
                  mla_tol_class_name((mla_tol_class)c));
    }
    /* per-element bound form */
    double *bound = calloc(N, sizeof *bound);
    mla_tol te = tiny(MLA_TOL_ATTN);
    te.atol_elem = bound;
    r = mla_compare_f32(got, ref, N, &te);
    cr_expect(!r.pass && r.worst_index == 1234);
    free(bound);
    free(ref);
    free(got);
}

Test(compare_negative_control, sign_of_zero_is_a_difference_under_exact) {
    float a = 0.0f, b = -0.0f;
    mla_tol t = mla_tol_exact();
    cr_expect(!mla_compare_f32(&a, &b, 1, &t).pass);
}

Test(compare_negative_control, bf16_one_ulp) {
    uint16_t ref[64], got[64];
    for (int i = 0; i < 64; i++) ref[i] = got[i] = (uint16_t)(0x3f80 + i);
    mla_perturb_ulp_bf16(got, 5, -1);
    mla_tol t = mla_tol_exact();
    mla_cmp_result r = mla_compare_bf16(got, ref, 64, &t);
    cr_expect(!r.pass && r.max_ulp == 1 && r.worst_index == 5);
    cr_expect(mla_ulp_bf16(0x0000, 0x8000) == 0 && mla_ulp_bf16(0x0001, 0x8001) == 2);
}

Test(compare_negative_control, nan_never_passes) {
    float *ref = filled(), *got = filled();
    got[17] = NAN;
    for (int c = 0; c < MLA_TOL_CLASS_COUNT; c++) {
        mla_tol t = mla_tol_for_class((mla_tol_class)c, 1e30); /* huge bound */
        mla_cmp_result r = mla_compare_f32(got, ref, N, &t);
        cr_expect(!r.pass, "class %s passed a NaN result", mla_tol_class_name((mla_tol_class)c));
        cr_expect(r.n_nan_mismatch == 1 && r.worst_index == 17 && r.max_ulp == MLA_ULP_INF);
        /* NaN in the reference, number in the result */
        r = mla_compare_f32(ref, got, N, &t);
        cr_expect(!r.pass, "class %s passed a number against a NaN reference",
                  mla_tol_class_name((mla_tol_class)c));
    }
    /* exact: any NaN equals any NaN */
    float qa = NAN, qb = -NAN;
    mla_tol t = mla_tol_exact();
    cr_expect(mla_compare_f32(&qa, &qb, 1, &t).pass);
    free(ref);
    free(got);
}

Test(compare_negative_control, inf_mask_mismatch_fails) {
    float ref[8] = {1, 2, -INFINITY, 4, -INFINITY, 6, 7, 8};
    float got[8];
    memcpy(got, ref, sizeof got);
    for (int c = 0; c < MLA_TOL_CLASS_COUNT; c++) {
        mla_tol t = mla_tol_for_class((mla_tol_class)c, 1e30);
        cr_expect(mla_compare_f32(got, ref, 8, &t).pass, "matching masks failed");
        got[2] = -3.0e38f; /* a finite value where the mask says -inf */
        mla_cmp_result r = mla_compare_f32(got, ref, 8, &t);
        cr_expect(!r.pass && r.n_inf_mismatch == 1 && r.worst_index == 2,
                  "class %s passed a -inf mask mismatch", mla_tol_class_name((mla_tol_class)c));
        got[2] = -INFINITY;
        got[5] = -INFINITY; /* a mask where the reference has a value */
        r = mla_compare_f32(got, ref, 8, &t);
        cr_expect(!r.pass && r.worst_index == 5);
        got[5] = 6;
        got[4] = INFINITY; /* wrong-sign infinity */
        cr_expect(!mla_compare_f32(got, ref, 8, &t).pass);
        got[4] = -INFINITY;
    }
}

Test(compare_negative_control, report_names_the_worst_element) {
    float *ref = filled(), *got = filled();
    mla_perturb_ulp_f32(got, 100, 3);
    mla_tol t = mla_tol_exact();
    mla_cmp_result r = mla_compare_f32(got, ref, N, &t);
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    const int64_t shape[2] = {64, 64};
    mla_cmp_report(fp, "neg_case", "neg_tensor", 2, shape, &r, &t, "golden verify neg_case");
    fclose(fp);
    cr_expect(strstr(buf, "FAIL") && strstr(buf, "neg_case") && strstr(buf, "neg_tensor") &&
                  strstr(buf, "[1][36]") && strstr(buf, "ulp 3") &&
                  strstr(buf, "re-run: golden verify neg_case"),
              "report:\n%s", buf);
    free(buf);
    free(ref);
    free(got);
}

/* The attention walk the kernels state (kernels/mla.h): its values, and a bound that catches an
 * error the any-walk bound (R = D = N + 1) lets through. */
Test(compare_negative_control, stated_walk_values) {
    static const struct {
        int64_t n, w, r, d;
    } want[] = {{1, 1, 1, 3},
                {16, 16, 1, 18},
                {17, 17, 2, 19},
                {4096, 4096, 256, 273},
                {10, 4096, 10, 21},
                {0, 64, 0, 1},
                {202752, 202752, 12672, 12689}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        int64_t r = -1, d = -1;
        mla_attn_walk(want[i].n, want[i].w, &r, &d);
        cr_expect(r == want[i].r && d == want[i].d,
                  "mla_attn_walk(N %lld, W %lld) = R %lld D %lld, docs say R %lld D %lld",
                  (long long)want[i].n, (long long)want[i].w, (long long)r, (long long)d,
                  (long long)want[i].r, (long long)want[i].d);
    }
}

/* The tf32 door arm's stated walk (kernels/mla_door.h): tiles of 32, 6 in-tile roundings of the
 * denominator (docs/tolerances.md, "The tf32 door arm as rebuilt"). */
Test(compare_negative_control, stated_tc_walk_values) {
    static const struct {
        int64_t n, w, r, d;
    } want[] = {{1, 1, 1, 3},           {6, 6, 1, 8},       {32, 32, 1, 8}, {33, 33, 2, 9},
                {4096, 4096, 128, 135}, {10, 4096, 10, 17}, {0, 64, 0, 1}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        int64_t r = -1, d = -1;
        mla_attn_tc_walk(want[i].n, want[i].w, &r, &d);
        cr_expect(r == want[i].r && d == want[i].d,
                  "mla_attn_tc_walk(N %lld, W %lld) = R %lld D %lld, docs say R %lld D %lld",
                  (long long)want[i].n, (long long)want[i].w, (long long)r, (long long)d,
                  (long long)want[i].r, (long long)want[i].d);
    }
}

/* The wgmma door arm's stated arithmetic (kernels/mla_door.h mla_attn_tcw_arith;
 * docs/tolerances.md "The wgmma door arm"): the bf16 arm's terms with the logits' KI = K / 16
 * (one accumulator over all of K), not the bf16 arm's ceil(K / 16 / 8). glm5 decode 32K: K 576,
 * KI 36, chunks of 256 slots (PI 16); kv_rank 128 + d_rope 64, 5 heads, t_q 2 over 300 rows:
 * KI 12, chunks of 32 slots (PI 2). Since the thirty-fifth session the split walk's partials are
 * bf16: part_rel 2^-8 and pv_inst PI + n_chunks (128 and 10 chunks); one chunk (t_kv 30): 0 and
 * PI. */
Test(compare_negative_control, stated_wgmma_arith_values) {
    const double u = 0x1p-24, bf = 0x1p-7 + 0x1p-16;
    static const struct {
        int32_t n_head, kv_rank, d_rope, t_q;
        int64_t w_max;
        double ki, pi, ki_bf16, chunks;
    } want[] = {{64, 512, 64, 1, 32768, 36, 16, 5, 128},
                {5, 128, 64, 2, 300, 12, 2, 2, 10},
                {5, 128, 64, 2, 30, 12, 2, 2, 1}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        double dr, pr, ae, di, pinst, part, bdr, bpr, bae, bdi, bpi;
        mla_attn_tcw_arith(want[i].n_head, want[i].kv_rank, want[i].d_rope, want[i].t_q,
                           want[i].w_max, &dr, &pr, &ae, &di, &pinst, &part);
        mla_attn_tcb_arith(want[i].n_head, want[i].kv_rank, want[i].d_rope, want[i].t_q,
                           want[i].w_max, &bdr, &bpr, &bae, &bdi, &bpi);
        const double K = want[i].kv_rank + want[i].d_rope;
        cr_expect(fabs(dr - (bf + want[i].ki * 34.0 * u)) < 1e-18, "dot_rel %.17g, docs KI %g", dr,
                  want[i].ki);
        cr_expect(fabs(bdr - (bf + want[i].ki_bf16 * 34.0 * u)) < 1e-18,
                  "the bf16 arm's dot_rel %.17g, docs KI %g", bdr, want[i].ki_bf16);
        cr_expect(pr == bpr && fabs(pr - (bf + want[i].pi * 34.0 * u)) < 1e-18,
                  "pv_rel %.17g (bf16 arm %.17g), docs PI %g", pr, bpr, want[i].pi);
        cr_expect(ae == bae && ae == 0x1p-126 * (1.0 + 1.0 / 128.0), "abs_e %g", ae);
        const double split = want[i].chunks > 1;
        cr_expect(di == K + want[i].ki && pinst == want[i].pi + split * want[i].chunks &&
                      bpi == want[i].pi,
                  "dot_inst %g pv_inst %g (bf16 arm %g), docs PI %g, chunks %g", di, pinst, bpi,
                  want[i].pi, want[i].chunks);
        cr_expect(part == split * 0x1p-8, "part_rel %g with %g chunks", part, want[i].chunks);
    }
}

Test(compare_negative_control, stated_walk_catches_what_any_walk_passes) {
    enum { TKV = 4096, RANK = 64, H = 2 };
    float *q = malloc(H * RANK * sizeof *q), *cache = malloc((size_t)TKV * RANK * sizeof *cache);
    float *ref = malloc(H * RANK * sizeof *ref), *got = malloc(H * RANK * sizeof *got);
    double *any = malloc(H * RANK * sizeof *any), *stated = malloc(H * RANK * sizeof *stated);
    mla_fill_host_f32(q, H * RANK, MLA_FILL_REALISTIC, 7u, "q_lat", 1.0f);
    mla_fill_host_f32(cache, (size_t)TKV * RANK, MLA_FILL_REALISTIC, 7u, "cache", 1.0f);
    mla_fill_host_f32(ref, H * RANK, MLA_FILL_REALISTIC, 7u, "o_lat", 0.05f);
    mla_tol_attn_bounds(q, NULL, cache, H, RANK, 0, 1, TKV, 0.125f, NULL, any);
    mla_tol_attn_bounds(q, NULL, cache, H, RANK, 0, 1, TKV, 0.125f, mla_attn_walk, stated);
    int tighter = 1;
    for (int i = 0; i < H * RANK; i++) tighter &= stated[i] > 0 && stated[i] < any[i] / 4;
    cr_expect(tighter, "the stated walk's bound is not well below the any-walk bound at N 4096");
    /* a kernel off by the midpoint of the two bounds on one element */
    memcpy(got, ref, H * RANK * sizeof *got);
    got[37] = (float)((double)ref[37] + 0.5 * (stated[37] + any[37]));
    mla_tol t = mla_tol_for_class(MLA_TOL_ATTN, 1.0);
    t.atol_elem = any;
    mla_cmp_result r = mla_compare_f32(got, ref, H * RANK, &t);
    cr_expect(r.pass, "the any-walk bound should let the midpoint error through (it is the gap)");
    t.atol_elem = stated;
    r = mla_compare_f32(got, ref, H * RANK, &t);
    cr_expect(!r.pass && r.n_diff == 1, "the stated walk's bound passed an error beyond it");
    free(q), free(cache), free(ref), free(got), free(any), free(stated);
}

/* ---- the testbed's byte check ---- */
static char g_msg[8192];
static int g_fails;
static void capture(void *user, int fatal, const char *msg) {
    (void)user, (void)fatal;
    g_fails++;
    snprintf(g_msg, sizeof g_msg, "%s", msg);
}

static int bytes_check(const float *got, const float *ref, int64_t n, int mode) {
    tb t;
    tb_init(&t, "compare_negative_control_test", "compare_negative_control", "bytes", capture,
            NULL);
    t.no_repro = 1;
    g_fails = 0, g_msg[0] = 0;
    int64_t shape[1] = {n};
    return tb_compare(&t, "x", ST_F32, 1, shape, got, "kernel", ref, "oracle", MLA_TOL_EXACT, NULL,
                      mode);
}

/* The H200 run of 2026-12-01: absorb_q and decompress_v on glm5_tp8_nonfinite failed "bytes"
 * with "0 of 16384 elements differ": the kernel's canonical NaN 0x7FFFFFFF against the oracle's
 * propagated payload. NaN payloads are not part of the contract (docs/tolerances.md). */
Test(compare_negative_control, oracle_bytes_ignore_nan_payloads_not_zero_signs) {
    float ref[4] = {1.0f, 0.0f, 0.0f, 2.0f}, got[4];
    uint32_t qnan_payload = 0x7FC0DEADu, canonical = 0x7FFFFFFFu, neg_nan = 0xFFC00001u;
    memcpy(&ref[1], &qnan_payload, 4);
    memcpy(got, ref, sizeof got);
    memcpy(&got[1], &canonical, 4);
    cr_expect(bytes_check(got, ref, 4, TB_BYTES_NAN_ANY), "%s", g_msg);
    memcpy(&got[1], &neg_nan, 4); /* the sign of a NaN is no more part of it */
    cr_expect(bytes_check(got, ref, 4, TB_BYTES_NAN_ANY), "%s", g_msg);
    cr_expect(!bytes_check(got, ref, 4, TB_BYTES), "GPU vs GPU counts NaN payloads");
    memcpy(got, ref, sizeof got);
    got[2] = -0.0f; /* -0 against +0: equal as numbers, different bytes */
    cr_expect(!bytes_check(got, ref, 4, TB_BYTES_NAN_ANY));
    cr_expect(g_fails == 1 && strstr(g_msg, "first byte difference at element 2") &&
                  strstr(g_msg, "kernel 0x80000000") && strstr(g_msg, "oracle 0x00000000"),
              "%s", g_msg);
    cr_expect(!bytes_check(got, ref, 4, 0), "the exact class itself tells -0 from +0");
    memcpy(got, ref, sizeof got);
    got[1] = 3.0f; /* a number where the oracle has NaN never passes */
    cr_expect(!bytes_check(got, ref, 4, TB_BYTES_NAN_ANY));
}
