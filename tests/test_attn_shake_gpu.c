/* attn_shake_gpu_test: the split attention walk's empty partials, checked against a build that
 * writes them late (docs/mutation.md, "the shake build").
 *
 * This binary links //kernels:mla_kernels_shake: mla_attn.cu compiled with -DMLA_SHAKE_ATTN, in
 * which attn_walk_f32 writes an empty partial (a chunk with none of the query's slots) 100 us
 * late. Every result is the product build's: an empty partial's writes are its own rows of the
 * workspace, and only their time moves. A write past those rows would land on the next rows
 * after their own block wrote them, not before (as the product build's block order almost
 * always has it): the H200 mutate passes of 2026-12-01 had the zeroing loop's bound one past
 * kv_rank survive every check, the stray zero always overwritten by the partial it hit.
 *
 * The case makes such a write change the output. 3 heads, kv_rank 130 (not a multiple of 4: the
 * zeroing's last float4 group is partial), d_rope 2, t_q 2, causal, t_kv chosen so that the
 * plan's last chunk (mla_attn_chunk_slots, kernels/mla.h) holds no slot of query 0 and exactly
 * one of query 1: row t_kv - 1. That row is planted to dominate query 1 head 0's softmax (its
 * latent 4x that head's q_lat, so the logit is about 15 above the rest), so the last chunk's
 * partial is nearly all of that head's output. Query 0's empty partial ends at head 2's row; the
 * next float of the workspace is query 1 head 0's column 0 in the same chunk. The check: the
 * output within class attn of the oracle (the bounds of the stated walk, mla_attn_walk).
 *
 * empty_partial_nan_ws__<arm>: the shake build also fills the split walk's workspace with NaN
 * (0xFF bytes) before each walk. A walk that leaves any part of a partial unwritten then hands
 * the combine a NaN, and the combine's weight of an empty partial (0) does not remove it
 * (fmaf(0, NaN, o) is NaN). The product build's pool workspace holds finite stale values, so
 * there such a partial is invisible: the twenty-fifth session's mutant 83f5c17762 (the bf16
 * door's empty-chunk zero loop at twice its stride, half of the partial unwritten) survived
 * every check. One case an arm (the f32 launcher and the door's four arms, each called
 * directly), at 8 heads (a partial head tile for every arm), kv_rank 128 + d_rope 64 (512 + 64
 * for the wgmma arm, which covers glm5's width only), t_q 2,
 * with t_kv chosen on the arm's own chunk plan so that its last chunk holds no slot of query 0.
 * The check: the output within the arm's class of the oracle (its stated walk and arithmetic,
 * tests/lib/tc_attn.h), so a NaN anywhere fails.
 * Without a usable GPU the test reports SKIPPED (GPU_REQUIRE), never passed. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mla.h"
#include "kernels/mla_door.h"
#include "oracle/mla_oracle.h"
#include "tests/lib/compare.h"
#include "tests/lib/geometry.h"
#include "tests/lib/gpu_util.h"
#include "tests/lib/mla_fill.h"
#include "tests/lib/tc_attn.h"
#include "tests/lib/testbed_criterion.h"

#define TARGET "attn_shake_gpu_test"
#define SUITE "attn_shake"
#define SEED 0xA77A5E1Cu

enum { H = 3, R = 130, DR = 2, TQ = 2 };

/* The chunk plan arm tc's launcher uses (kernels/mla_attn.cu at_plan): the bf16 and wgmma arms
 * the bf16 arm's (mla_attn_tcb_chunk_slots), the f32 launcher (tc 0) and the tf32 and 3xtf32 arms
 * the f32 arm's. */
static int64_t arm_chunk_slots(int tc, int32_t n_head, int32_t kv_rank, int32_t t_q, int64_t w) {
    return tc_attn_is_bf16(tc) ? mla_attn_tcb_chunk_slots(n_head, t_q, w)
                               : mla_attn_chunk_slots(n_head, kv_rank, t_q, w);
}

/* The first t_kv in [lo, 20000) whose arm-tc plan starts its last chunk at query 0's length
 * (t_kv - t_q + 1), so that query 0's block there is an empty partial; 0 if none. *cs and *n_ch:
 * that plan's chunk slots and chunks. */
static int32_t t_kv_last_chunk_empty(int tc, int32_t n_head, int32_t kv_rank, int32_t t_q,
                                     int32_t lo, int64_t *cs, int64_t *n_ch) {
    for (int32_t tk = lo; tk < 20000; tk++) {
        *cs = arm_chunk_slots(tc, n_head, kv_rank, t_q, tk);
        *n_ch = (tk + *cs - 1) / *cs;
        if (*n_ch >= 2 && (*n_ch - 1) * *cs == (int64_t)tk - t_q + 1) return tk;
    }
    return 0;
}

/* Cache row t_kv - 1 (width K) made to dominate query 1 head 0's softmax: its latent 4x that
 * head's q_lat (kv_rank R, n_head H), so the logit stands well above the rest, and its column 0
 * set to +-2 (far from 0, the logit still dominant). */
static void plant_dominant_row(float *cache, const float *q_lat, int32_t t_kv, int32_t K, int32_t R,
                               int32_t H) {
    float *row = cache + (size_t)(t_kv - 1) * K;
    const float *q10 = q_lat + (size_t)(1 * H + 0) * R;
    for (int32_t c = 0; c < R; c++) row[c] = 4.0f * q10[c];
    row[0] = q10[0] >= 0.0f ? 2.0f : -2.0f;
}

Test(attn_shake, empty_partial_rows, .timeout = 300) {
    GPU_REQUIRE();
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, "empty_partial_rows");
    /* t_kv: the last chunk starts at query 0's length, t_kv - 1 */
    int64_t cs = 0, n_ch = 0;
    const int32_t T = t_kv_last_chunk_empty(0, H, R, TQ, 3000, &cs, &n_ch);
    cr_assert(T > 0, "no t_kv in [3000, 20000) puts query 1's last row alone in the last chunk");
    char cname[160];
    snprintf(cname, sizeof cname,
             "3 heads, kv_rank 130 + d_rope 2, t_q 2, t_kv %d: %lld chunks of %lld slots, the last "
             "empty for query 0",
             T, (long long)n_ch, (long long)cs);
    tb_set_case(&t, cname);
    const int32_t K = R + DR;
    const size_t nq = (size_t)TQ * H, no = nq * R, nc = (size_t)T * K;
    float *q_lat = tb_xmalloc(&t, no * 4), *q_pe = tb_xmalloc(&t, nq * DR * 4),
          *cache = tb_xmalloc(&t, nc * 4);
    mla_fill_host_f32(q_lat, no, MLA_FILL_REALISTIC, SEED, "q_lat", 1.0f);
    mla_fill_host_f32(q_pe, nq * DR, MLA_FILL_REALISTIC, SEED, "q_pe", 1.0f);
    mla_fill_host_f32(cache, nc, MLA_FILL_REALISTIC, SEED, "cache", 1.0f);
    plant_dominant_row(cache, q_lat, T, K, R, H); /* query 1's only row in the last chunk */
    const float scale = 0.08703883f;              /* 1 / sqrt(132) */
    gpu_buf bql = gpu_buf_from_host(q_lat, no * 4), bqp = gpu_buf_from_host(q_pe, nq * DR * 4),
            bca = gpu_buf_from_host(cache, nc * 4), bo = gpu_buf_alloc(no * 4);
    gpu_buf_poison(&bo);
    tb_launched(&t,
                memra_mla_attn_absorbed_f32(bql.ptr, bqp.ptr, bca.ptr, bo.ptr, H, R, DR, TQ, T,
                                            scale, NULL),
                "memra_mla_attn_absorbed_f32 (shake build)");
    float *got = tb_output(&t, &bo, "o_lat", "shake build", 1);
    tb_input_untouched(&t, &bca, cache, "cache");
    float *ref = tb_xmalloc(&t, no * 4);
    double *atol = tb_xmalloc(&t, no * sizeof *atol);
    oracle_attn_absorbed_f32(q_lat, q_pe, cache, ref, H, R, DR, TQ, T, scale);
    mla_tol_attn_bounds(q_lat, q_pe, cache, H, R, DR, TQ, T, scale, mla_attn_walk, atol);
    cr_log_info("query 1 head 0 column 0: oracle %.6g, shake build %.6g (tolerance %.3g)",
                (double)ref[(size_t)1 * H * R], (double)got[(size_t)1 * H * R],
                atol[(size_t)1 * H * R]);
    const int64_t shape[3] = {TQ, H, R};
    tb_compare(&t, "o_lat", ST_F32, 3, shape, got, "shake_build", ref, "oracle", MLA_TOL_ATTN, atol,
               0);
    free(q_lat), free(q_pe), free(cache), free(got), free(ref), free(atol);
    gpu_buf_free(&bql), gpu_buf_free(&bqp), gpu_buf_free(&bca), gpu_buf_free(&bo);
}

/* One arm (tc; 0: the f32 launcher) at NH heads (8 or 5: a partial head tile on every arm; 64: the
 * wgmma arm's whole tile), t_q 2, the first t_kv from lo whose plan leaves the last chunk empty
 * for query 0. plant: row t_kv - 1, query 1's only row in the last chunk, made to dominate query 1
 * head 0's softmax (as empty_partial_rows), so that a stray write wiping that chunk's partial
 * changes the output. */
static void run_arm(const char *test, int tc, int32_t lo, int plant, int32_t NH) {
    enum { NDR = 64, NTQ = 2 };
    const int32_t NR = tc == TC_ATTN_WGMMA ? 512 : 128; /* the wgmma arm covers glm5's width */
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, test);
    /* t_kv: the arm's last chunk starts at query 0's length, t_kv - 1 (so query 0's block there
     * is an empty partial, and query 1's holds its last row) */
    int64_t cs = 0, n_ch = 0;
    const int32_t T = t_kv_last_chunk_empty(tc, NH, NR, NTQ, lo, &cs, &n_ch);
    cr_assert(T > 0, "no t_kv in [%d, 20000) leaves the %s plan's last chunk empty for query 0", lo,
              tc ? tc_attn_flag(tc) : "f32");
    char cname[300];
    snprintf(cname, sizeof cname,
             "%s, %d heads, kv_rank %d + d_rope 64, t_q 2, t_kv %d: %lld chunks of %lld slots, "
             "the last empty for query 0%s, the workspace NaN-filled (shake build)",
             tc ? tc_attn_flag(tc) : "f32 launcher", NH, NR, T, (long long)n_ch, (long long)cs,
             plant ? ", query 1's row there dominant for head 0" : "");
    tb_set_case(&t, cname);
    const int32_t K = NR + NDR;
    const size_t nq = (size_t)NTQ * NH, no = nq * NR, nc = (size_t)T * K;
    float *q_lat = tb_xmalloc(&t, no * 4), *q_pe = tb_xmalloc(&t, nq * NDR * 4),
          *cache = tb_xmalloc(&t, nc * 4);
    mla_fill_host_f32(q_lat, no, MLA_FILL_REALISTIC, SEED, "q_lat", 1.0f);
    mla_fill_host_f32(q_pe, nq * NDR, MLA_FILL_REALISTIC, SEED, "q_pe", 1.0f);
    mla_fill_host_f32(cache, nc, MLA_FILL_REALISTIC, SEED, "cache", 1.0f);
    if (plant) plant_dominant_row(cache, q_lat, T, K, NR, NH);
    const float scale = MLA_GLM5_SCALE;
    gpu_buf bql = gpu_buf_from_host(q_lat, no * 4), bqp = gpu_buf_from_host(q_pe, nq * NDR * 4),
            bca = gpu_buf_from_host(cache, nc * 4), bo = gpu_buf_alloc(no * 4);
    cr_assert(!tc || tc_attn_covers(tc, NR, NDR, bca.ptr), "the %s arm does not cover the case",
              tc_attn_flag(tc));
    gpu_buf_poison(&bo);
    const int rc = tc ? mla_attn_absorbed_tc_f32(bql.ptr, bqp.ptr, bca.ptr, bo.ptr, NH, NR, NDR,
                                                 NTQ, T, scale, tc, NULL)
                      : memra_mla_attn_absorbed_f32(bql.ptr, bqp.ptr, bca.ptr, bo.ptr, NH, NR, NDR,
                                                    NTQ, T, scale, NULL);
    tb_launched(&t, rc,
                tc ? "mla_attn_absorbed_tc_f32 (shake build)"
                   : "memra_mla_attn_absorbed_f32 (shake build)");
    float *got = tb_output(&t, &bo, "o_lat", "shake build", 1);
    tb_input_untouched(&t, &bca, cache, "cache");
    float *ref = tb_xmalloc(&t, no * 4);
    double *atol = tb_xmalloc(&t, no * sizeof *atol);
    oracle_attn_absorbed_f32(q_lat, q_pe, cache, ref, NH, NR, NDR, NTQ, T, scale);
    mla_attn_arith ab;
    const mla_attn_arith *ar = tc_attn_arith(tc, NH, NR, NDR, NTQ, T, &ab);
    mla_tol_attn_bounds_arith(q_lat, q_pe, cache, NH, NR, NDR, NTQ, T, scale, tc_attn_walk(tc), ar,
                              atol);
    size_t n_nan = 0;
    for (size_t e = 0; e < no; e++) n_nan += got[e] != got[e];
    cr_log_info("%s: %zu NaN outputs of %zu (0 expected: the oracle is finite)", cname, n_nan, no);
    const int64_t shape[3] = {NTQ, NH, NR};
    tb_compare(&t, "o_lat", ST_F32, 3, shape, got, "shake_build", ref, "oracle", MLA_TOL_ATTN, atol,
               0);
    free(q_lat), free(q_pe), free(cache), free(got), free(ref), free(atol);
    gpu_buf_free(&bql), gpu_buf_free(&bqp), gpu_buf_free(&bca), gpu_buf_free(&bo);
}

/* One case an arm: <g>__<arm> runs run_arm(lo, plant, nh) on the f32 launcher and each door arm. */
#define SHAKE_ARM(g, arm, tc, lo, plant, nh)                                                       \
    Test(attn_shake, g##__##arm, .timeout = 300) {                                                 \
        GPU_REQUIRE();                                                                             \
        run_arm(#g "__" #arm, tc, lo, plant, nh);                                                  \
    }
#define SHAKE_ARMS(g, lo, plant, nh)                                                               \
    SHAKE_ARM(g, f32, 0, lo, plant, nh)                                                            \
    SHAKE_ARM(g, tf32, TC_ATTN_TF32, lo, plant, nh)                                                \
    SHAKE_ARM(g, 3xtf32, TC_ATTN_3XTF32, lo, plant, nh)                                            \
    SHAKE_ARM(g, bf16, TC_ATTN_BF16, lo, plant, nh)                                                \
    SHAKE_ARM(g, wgmma, TC_ATTN_WGMMA, lo, plant, nh)

SHAKE_ARMS(empty_partial_nan_ws, 2000, 0, 8)

/* empty_partial_nan_ws_64h__<arm> (thirty-third session): the same at 64 heads, glm5's count and
 * the wgmma arm's whole head tile (WG_HT). At 8 heads the head guard stops every write of the
 * empty partial's loops before the tile's last head, so their bounds one short of the tile,
 * `tid < WG_HT - 1` (the (m, l, flags) loop) and `e < WG_HT * WG_R - 1` (the zero loop), survived
 * both shake checks and the arm's cases (H100, call 2): head 63's flags, or its last float, left
 * NaN by the workspace's fill. Here that head exists, and a NaN reaches its output. */
SHAKE_ARMS(empty_partial_nan_ws_64h, 2000, 0, 64)

/* stray_rows__<arm> (thirty-second session): the split walk's writes outside the rows a block
 * owns, on every arm. Two mutants of the wgmma arm survived every check on the H100 (call 2):
 *  - the empty partial's (m, l, flags) loop one head past n_head: it writes (-inf, 0, 0) into
 *    the next query's head 0 of the same chunk, which that query's live block overwrote later in
 *    every run. The shake build now delays every arm's empty partial (mla_shake_empty_partial),
 *    and here the overwritten partial is query 1 head 0's dominant row: losing it changes the
 *    output far past the class;
 *  - the live block's partial row store one head past n_head: the last block's stray row lands
 *    in ws_ml and past the workspace's end, which memcheck did not report from a pool
 *    suballocation. The shake build allocates the workspace exactly (cudaMalloc), and this
 *    geometry is small (t_kv 225 on every arm's plan: 8 chunks of 32 slots, an ml region of
 *    3 * 8 * 16 = 384 floats), so the wgmma arm's 512-float stray row ends 512 bytes past the
 *    workspace, which memcheck of this binary (its small set is every case) reports. (The
 *    kv_rank 128 arms' stray row, 128 floats, stays inside ws_ml: there only the values can
 *    show it.) */
SHAKE_ARMS(stray_rows, 200, 1, 8)

/* stray_rows_5h__<arm>: the same at 5 heads. A thread of the wgmma arm's epilogue holds head rows
 * r0 and r0 + 8 with r0 in 0..7, 16..23, 32..39, 48..55, so a guard one head long reaches past
 * n_head only where n_head is one of those rows: the "hb" stores at 8 heads (stray_rows__wgmma),
 * the "ha" stores at 5 (here). At 8 heads the mutant "ha <= n_head" survived both shake checks
 * (thirty-second session, call 3): no thread holds row 8 as ha. 240 ml floats, a 512-float
 * stray row: 1088 bytes past the workspace's end. */
SHAKE_ARMS(stray_rows_5h, 200, 1, 5)
