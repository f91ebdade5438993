/* mla_door.h: the C home of the seed's two MLA doors (shared/seed/mla_ffi.rs) and their
 * engagement receipts.
 *
 *  - Decode split (MEMRA_MLA_DECODE_SPLIT=1, read per call, default off): absorb / decompress
 *    split each (token, head) block's output range over `split` blocks when the card would
 *    otherwise be block-starved. Pure launch geometry: bytes identical for every split.
 *  - Tensor-core prefill (MEMRA_MLA_TC_PREFILL=1, read per call, default off): at prefill
 *    widths (t_q >= MLA_TC_PREFILL_MIN_TQ) absorb / decompress run as one strided-batched bf16
 *    GEMM per call (memra_bf16_gemm_sb, one batch per head) instead of the f32 kernels. NOT
 *    bit-exact (class bf16_gemm); a cuBLASLt decline (2xxxx) falls back to the f32 path.
 *
 * Every door entry validates exactly as the launcher it replaces (same 4xxxx codes, same order),
 * then dispatches. @return 0, 10000 + cudaError_t, 30000 + cublasStatus_t (TC path only), or
 * the launcher's 4xxxx code.
 */
#ifndef MLA_DOOR_H
#define MLA_DOOR_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/mla.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The split policy with the environment flag passed in (testable without setenv):
 * engaged only when enabled, 0 < blocks < 1024; want = ceil(1024 / blocks), cap =
 * max(out_dim / 32, 1), split = min(want, cap).
 * @return the split (>= 2) when engaged, else 0. */
int32_t mla_decode_split_policy(int enabled, long blocks, int32_t out_dim);

/* mla_decode_split_policy with enabled = (getenv("MEMRA_MLA_DECODE_SPLIT") is exactly "1"),
 * read on every call (the rollback seam). @return the split, or 0 when not engaged. */
int32_t mla_decode_split_for(long blocks, int32_t out_dim);

/* Number of split-path dispatches since process start (the A/B receipt). The first one prints
 * one "[mla-decode-split] engaged ..." line on stderr. */
uint64_t mla_decode_split_dispatches(void);

/* absorb_q / decompress_v through the decode-split door: same arguments and contract as
 * memra_mla_absorb_q_f32 / memra_mla_decompress_v_f32, same bytes whether or not it engages. */
int mla_door_absorb_q_f32(const float *q_nope, const float *wk_b, float *q_lat, int32_t t_q,
                          int32_t n_head, int32_t d_nope, int32_t kv_rank, void *stream);
int mla_door_decompress_v_f32(const float *o_lat, const float *wv_b, float *out, int32_t t_q,
                              int32_t n_head, int32_t d_v, int32_t kv_rank, void *stream);

/* ------------------------------------------------------------ tensor-core prefill -------- */

/* The prefill width at and above which the TC door engages: below it the GEMM's M dimension
 * (t_q) is too thin for tensor-core tiles to beat the f32 kernels (decode and verify widths
 * stay on the bit-exact path). */
#define MLA_TC_PREFILL_MIN_TQ 64

/* 1 when MEMRA_MLA_TC_PREFILL is exactly "1" (read per call). */
int mla_tc_prefill_enabled(void);

/* Number of TC-path dispatches that ran the GEMM (declines that fell back are not counted).
 * The first prints one "[mla-tc-prefill] engaged ..." line on stderr. */
uint64_t mla_tc_prefill_dispatches(void);

/* absorb_q through the TC door. Arguments beyond the launcher's:
 *   wk_b_t_bf16  wk_b pre-converted and transposed per head: bf16 [n_head][kv_rank][d_nope]
 *                (mla_bf16_transpose_heads(wk_b, ., n_head, d_nope, kv_rank, stream));
 *   x_bf16       scratch of t_q * n_head * d_nope bf16 elements (q_nope converted here);
 *   ws, ws_bytes cuBLASLt workspace (ws may be NULL only with ws_bytes == 0).
 * Engages when mla_tc_prefill_enabled(), t_q >= MLA_TC_PREFILL_MIN_TQ and both wk_b_t_bf16 and
 * x_bf16 are non-NULL; otherwise (or on a 2xxxx decline) runs mla_door_absorb_q_f32.
 * Validation: mla_validate_absorb_q first (the f32 contract), then the GEMM's own. */
int mla_door_tc_absorb_q(const float *q_nope, const float *wk_b, const uint16_t *wk_b_t_bf16,
                         float *q_lat, uint16_t *x_bf16, void *ws, size_t ws_bytes, int32_t t_q,
                         int32_t n_head, int32_t d_nope, int32_t kv_rank, void *stream);

/* decompress_v through the TC door. Arguments beyond the launcher's:
 *   wv_b_bf16    wv_b converted as is: bf16 [n_head][d_v][kv_rank] (mla_f32_to_bf16);
 *   x_bf16       scratch of t_q * n_head * kv_rank bf16 elements (o_lat converted here);
 *   ws, ws_bytes as above. Engagement and fallback as mla_door_tc_absorb_q. */
int mla_door_tc_decompress_v(const float *o_lat, const float *wv_b, const uint16_t *wv_b_bf16,
                             float *out, uint16_t *x_bf16, void *ws, size_t ws_bytes, int32_t t_q,
                             int32_t n_head, int32_t d_v, int32_t kv_rank, void *stream);

/* bf16 preparation (kernels/mla_gemm_bf16.cu), round-to-nearest-even, NaN kept (quiet):
 * mla_f32_to_bf16: dst[e] = bf16(src[e]) for e < n.
 * mla_bf16_transpose_heads: dst[b][c][r] = bf16(src[b][r][c]), src [batch][rows][cols].
 * @return 0, 40021 (n / extent < 1), 40024 (count over INT32_MAX), 40020 (NULL),
 *         40012 (grid ceiling), or 10000 + cudaError_t. */
int mla_f32_to_bf16(const float *src, uint16_t *dst, int64_t n, void *stream);
int mla_bf16_transpose_heads(const float *src, uint16_t *dst, int32_t batch, int32_t rows,
                             int32_t cols, void *stream);

/* --------------------------------------------------------- tensor-core attention -------- */

/* MEMRA_MLA_TC_ATTN, read per call, default off (kernels/mla_attn.cu; docs/performance.md;
 * docs/tolerances.md). The outputs are NOT the f32 arm's bytes.
 *  - "3xtf32": the f32 arm (tiles of 16, its softmax, its P . V fmaf chains and its combine) with
 *    the logits as 3xTF32 mma.sync (x = hi + lo, hi truncated to TF32, lo = x - hi), a fresh
 *    accumulator per 16 logit columns; bound: class attn under mla_attn_walk plus
 *    MLA_ATTN_ARITH_3XTF32's logit term (P . V adds none).
 *  - "tf32" (the door arm): its own kernel (attn_tc_f32, 2026-12-01 fourth session): per block a
 *    query's 32-head tile with its q in TF32 registers, row tiles of MLA_TC_ATTN_TILE = 32 slots
 *    double-buffered with cp.async, the logits as single-pass TF32 mma.sync (each warp one
 *    eighth of the k8 steps in one accumulator, the 8 partials added in f32), the online softmax
 *    in f32, and P . V accumulated by mma.sync into the output registers after their f32 rescale.
 *    Its stated walk is mla_attn_tc_walk and its arithmetic mla_attn_tc_arith (below).
 *  - "bf16" (the second door arm, attn_tc_bf16): the tf32 arm's walk over 64-head tiles with bf16
 *    operands, its own plan and class (mla_attn_tcb_chunk_slots, mla_attn_tcb_arith, below).
 *  - "wgmma" (the third door arm, attn_tc_wg in kernels/mla_attn_wg.cu, sm_90a): the bf16 arm's
 *    operands and plan on Hopper's warpgroup MMAs, its partials bf16 (since the thirty-fifth
 *    session; the combine's bf16 form), its class its own
 *    (mla_attn_tcw_arith, below). Covered: kv_rank 512 with d_rope 64, a 16-byte aligned cache,
 *    on a device where its sm_90a kernel loads with the registers its warp specialisation assumes
 *    (else, e.g. in a build whose gencode override dropped sm_90a, the door declines).
 * Both rest on the accumulator model (H) of docs/tolerances.md, measured on the H200 by
 * //tests:tf32_mma_model_gpu_test. Special values (NaN, +-inf, in q or the cache) give the
 * oracle's NaN and infinity positions in both, on rare paths (a TF32 conversion reads a NaN with
 * only low payload bits as an infinity; a 3xTF32 split of an infinity has a NaN low part):
 * docs/tolerances.md, tc_attn_gpu/<edge>__<arm>. */
#define MLA_TC_ATTN_DECLINED (-1) /* internal: the TC arm does not cover the shape */
#define MLA_TC_ATTN_TILE 32       /* the tf32 arm's row tile */
/* the tf32 arm's kv_rank + d_rope ceiling: 10 k8 steps per warp */
#define MLA_TC_ATTN_MAX_WIDTH 640

/* The tf32 arm's walk, as mla_attn_walk (kernels/mla.h) states the f32 arm's: R = the alpha of
 * each later tile of the term's chunk plus the combine weight; D = the f32 roundings into the
 * denominator inside the term's tile (a 4-term sequential sum per thread, then a 3-level
 * butterfly over 8 lanes: 6), one merge per later tile (l = fmaf(l, alpha, tile sum); for the
 * numerator the rescale multiply O * alpha) and one per chunk in the combine. The numerator's
 * in-tile accumulation is the tensor cores' (mla_attn_tc_arith's pv_rel). */
static inline void mla_attn_tc_walk(int64_t n_terms, int64_t n_slots, int64_t *R, int64_t *D) {
    mla_attn_walk_of(n_terms, n_slots, MLA_TC_ATTN_TILE, 6, R, D);
}

/* The tf32 arm's arithmetic beyond class attn (docs/tolerances.md, "The tf32 door arm"), for a
 * call of this shape (w_max = t_kv, or n_slots), as relative terms:
 *   dot_rel = 2^-10 + 2^-22 (both operands rounded to TF32) + KI * 18u, KI the k8 steps one warp
 *             accumulates in one mma accumulator (ceil(K / 8 / 8), K = kv_rank + d_rope);
 *   pv_rel  = 2^-10 + 2^-22 + PI * 18u, PI the mma instructions one output accumulator takes in
 *             a chunk: 4 per row tile of 32 over the plan's chunk (mla_attn_chunk_slots, capped
 *             at w_max), each erring by up to 18u of |C| + sum |products| under model (H).
 * u = 2^-24. */
static inline void mla_attn_tc_arith(int32_t n_head, int32_t kv_rank, int32_t d_rope, int32_t t_q,
                                     int64_t w_max, double *dot_rel, double *pv_rel) {
    const double u = 1.0 / 16777216.0, tf = 1.0 / 1024.0 + 1.0 / 4194304.0;
    const int64_t nks = (kv_rank + d_rope) / 8, ki = (nks + 7) / 8;
    int64_t rows = mla_attn_chunk_slots(n_head, kv_rank, t_q, w_max);
    if (rows > w_max) rows = w_max;
    const int64_t pi = (rows + MLA_TC_ATTN_TILE - 1) / MLA_TC_ATTN_TILE * (MLA_TC_ATTN_TILE / 8);
    *dot_rel = tf + (double)ki * 18.0 * u;
    *pv_rel = tf + (double)pi * 18.0 * u;
}

/* ---- the bf16 door arm (MEMRA_MLA_TC_ATTN=bf16; kernels/mla_attn.cu attn_tc_bf16, 2026-12-03
 * twenty-third session; docs/tolerances.md "The bf16 door arm"). The tf32 arm's walk with a
 * 64-head tile: each cache tile is read once for all 64 heads of a glm5 query, and the logits
 * and P . V run as mma.sync.m16n8k16 with bf16 operands (q, the cache and P rounded to nearest
 * even) and f32 accumulators. Its class is its own, looser than the tf32 arm's by the operand
 * rounding (2^-8 relative an operand against 2^-11). Covered: kv_rank a multiple of 64 up to
 * 512, kv_rank + d_rope a multiple of 32 up to MLA_TC_BF16_MAX_WIDTH (the 64-head tile's shared
 * memory: two 32-slot f32 cache tiles and the 8 warps' partial logits), a 16-byte aligned cache. */
#define MLA_TC_BF16_MAX_WIDTH 576

/* The bf16 arm's chunk plan, as mla_attn_chunk_slots (kernels/mla.h) with 64-head tiles and
 * chunks a multiple of the 32-slot row tile: tiles = t_q ceil(n_head / 64), want = clamp(132 /
 * tiles, 1, min(256, ceil(w_max / 32))), C = roundup(ceil(w_max / want), 32). glm5 decode
 * (t_kv 32768): 128 chunks of 256 slots, one 64-head block each. */
static inline int64_t mla_attn_tcb_chunk_slots(int32_t n_head, int32_t t_q, int64_t w_max) {
    return mla_attn_chunk_slots_of((int64_t)t_q * ((n_head + 63) / 64), w_max, MLA_TC_ATTN_TILE);
}

/* The bf16 arm's walk is the tf32 arm's (mla_attn_tc_walk: row tiles of 32, a 4-term sum a
 * thread and a 3-level butterfly over the head's 8 threads into the denominator). Its arithmetic
 * beyond class attn (docs/tolerances.md, "The bf16 door arm"), for a call of this shape, under the
 * accumulator model (H16): one mma.sync.m16n8k16 bf16 instruction is within 34u of |C| + sum
 * |products| (17 terms), measured by //tests:bf16_mma_model_gpu_test:
 *   dot_rel = 2^-7 + 2^-16 (both operands rounded to bf16, 2^-8 each) + KI * 34u, KI the k16
 *             steps one warp accumulates in one accumulator (ceil(K / 16 / 8));
 *   pv_rel  = 2^-7 + 2^-16 + PI * 34u, PI = 2 per row tile of 32 over the bf16 plan's chunk
 *             (mla_attn_tcb_chunk_slots, capped at w_max);
 *   abs_e   = 2^-126 (1 + 2^-7): what an operand may lose below the normal range (rounded to a
 *             bf16 subnormal, or flushed), and what an mma result may lose if flushed; the bound
 *             adds |scale| abs_e (sum |q| + sum M + dot_inst) to the logit error and
 *             abs_e (N M_c + N + pv_inst) to column c of the output (N terms, M the column maxima);
 *   dot_inst = K + KI, pv_inst = PI. u = 2^-24. */
static inline void mla_attn_tcb_arith(int32_t n_head, int32_t kv_rank, int32_t d_rope, int32_t t_q,
                                      int64_t w_max, double *dot_rel, double *pv_rel, double *abs_e,
                                      double *dot_inst, double *pv_inst) {
    const double u = 1.0 / 16777216.0, bf = 1.0 / 128.0 + 1.0 / 65536.0;
    const int64_t K = (int64_t)kv_rank + d_rope, ki = (K / 16 + 7) / 8;
    int64_t rows = mla_attn_tcb_chunk_slots(n_head, t_q, w_max);
    if (rows > w_max) rows = w_max;
    const int64_t pi = (rows + MLA_TC_ATTN_TILE - 1) / MLA_TC_ATTN_TILE * (MLA_TC_ATTN_TILE / 16);
    *dot_rel = bf + (double)ki * 34.0 * u;
    *pv_rel = bf + (double)pi * 34.0 * u;
    *abs_e = 0x1p-126 * (1.0 + 1.0 / 128.0);
    *dot_inst = (double)(K + ki);
    *pv_inst = (double)pi;
}

/* ---- the wgmma door arm (MEMRA_MLA_TC_ATTN=wgmma; kernels/mla_attn_wg.cu attn_tc_wg, 2026-12-06
 * twenty-eighth session; docs/tolerances.md "The wgmma door arm"). The bf16 arm's operands (q,
 * the cache and P rounded to bf16 by cvt.rn), plan (mla_attn_tcb_chunk_slots), workspace layout
 * (its partials O bf16 since the thirty-fifth session), edge semantics and combine (its bf16
 * form); the logits as wgmma.m64n32k16 and P . V as wgmma.m64n256k16, f32
 * accumulators. Its walk is the tf32 arm's statement (mla_attn_tc_walk: row tiles of 32; inside
 * a tile a head's 32 weights go through a 3-level pairwise tree a thread and a 2-level butterfly
 * over 4 threads, 5 roundings, within the stated 6). Its arithmetic is the bf16 arm's form
 * (mla_attn_tcb_arith) with one difference: the logits of a head accumulate all K / 16 k16
 * steps in ONE accumulator (the bf16 arm splits them over 8 warps), so KI = K / 16 (36 at glm5's
 * 576): dot_rel = 2^-7 + 2^-16 + KI * 34u under the accumulator model (H16) for these two
 * instructions, measured by //tests:wgmma_model_gpu_test; pv_rel, abs_e and pv_inst as the bf16
 * arm's (2 k16 instructions per row tile of 32 into each output accumulator); dot_inst = K + KI.
 * Since the thirty-fifth session the split walk stores its partial O as bf16 (cvt.rn.bf16x2) and
 * the combine widens it back exactly: with n_chunks = ceil(w_max / chunk slots) > 1, part_rel =
 * 2^-8 (one rounding to nearest of 8 significant bits, relative to |O_c|; the class's tau becomes
 * tau + part_rel (1 + tau), tests/lib/compare.h) and pv_inst gains n_chunks (a partial below the
 * normal range loses at most 2^-134 < abs_e absolutely, and the combine's weights are <= 1 and
 * L >= 1); with one chunk O / l is stored in f32 and part_rel = 0. */
static inline void mla_attn_tcw_arith(int32_t n_head, int32_t kv_rank, int32_t d_rope, int32_t t_q,
                                      int64_t w_max, double *dot_rel, double *pv_rel, double *abs_e,
                                      double *dot_inst, double *pv_inst, double *part_rel) {
    const double u = 1.0 / 16777216.0;
    mla_attn_tcb_arith(n_head, kv_rank, d_rope, t_q, w_max, dot_rel, pv_rel, abs_e, dot_inst,
                       pv_inst);
    const int64_t K = (int64_t)kv_rank + d_rope, ki = K / 16, ki_bf16 = (K / 16 + 7) / 8;
    *dot_rel += (double)(ki - ki_bf16) * 34.0 * u;
    *dot_inst = (double)(K + ki);
    const int64_t cs = mla_attn_tcb_chunk_slots(n_head, t_q, w_max);
    const int64_t n_chunks = cs > 0 ? (w_max + cs - 1) / cs : 1;
    *part_rel = n_chunks > 1 ? 1.0 / 256.0 : 0.0;
    if (n_chunks > 1) *pv_inst += (double)n_chunks;
}

/* 1 ("tf32"), 2 ("bf16"), 3 ("3xtf32"), 4 ("wgmma") or 0 (unset, anything else), read per call. */
int mla_tc_attn_mode(void);

/* Number of attention calls the TC arms ran (declines that fell back are not counted). The
 * first prints one "[mla-tc-attn] engaged ..." line on stderr. */
uint64_t mla_tc_attn_dispatches(void);

/* attn_absorbed / attn_gathered through the door: the launchers' arguments and validation
 * (same codes); the TC arm when mla_tc_attn_mode() and the shape is covered (tf32 and 3xtf32:
 * kv_rank a multiple of 64 up to 512, so the head tile is 32; (kv_rank + d_rope) % 8 == 0 and
 * kv_rank + d_rope <= MLA_TC_ATTN_MAX_WIDTH; a 16-byte aligned cache; bf16: as stated above
 * MLA_TC_BF16_MAX_WIDTH), else the launcher. */
int mla_door_attn_absorbed_f32(const float *q_lat, const float *q_pe, const float *cache,
                               float *o_lat, int32_t n_head, int32_t kv_rank, int32_t d_rope,
                               int32_t t_q, int32_t t_kv, float scale, void *stream);
int mla_door_attn_gathered_f32(const float *q_lat, const float *q_pe, const float *cache,
                               const int32_t *idx, float *o_lat, int32_t n_head, int32_t kv_rank,
                               int32_t d_rope, int32_t t_q, int32_t n_slots, float scale,
                               void *stream);

/* The TC arms themselves (kernels/mla_attn.cu; tc 1, 2, 3 or 4): the launchers' validation, then
 * MLA_TC_ATTN_DECLINED without launching where the shape is not covered. */
int mla_attn_absorbed_tc_f32(const float *q_lat, const float *q_pe, const float *cache,
                             float *o_lat, int32_t n_head, int32_t kv_rank, int32_t d_rope,
                             int32_t t_q, int32_t t_kv, float scale, int tc, void *stream);
int mla_attn_gathered_tc_f32(const float *q_lat, const float *q_pe, const float *cache,
                             const int32_t *idx, float *o_lat, int32_t n_head, int32_t kv_rank,
                             int32_t d_rope, int32_t t_q, int32_t n_slots, float scale, int tc,
                             void *stream);

/* ------------------------------------------------------ sampled radix selection -------- */

/* The radix select's sampled route (kernels/mla_kpool.cu; docs/performance.md) is the launcher's
 * default since 2026-12-01 (fourth session): for rows of at least 65,536 visible pools a
 * threshold from 1/16 of the row, then one collecting and counting pass; the rows it cannot
 * settle continue with the full passes in the same kernel (from level 1 when the pass resolved
 * the first digit, straight to the ordered pass when its bin holds one value). The bytes are
 * memra_mla_kpool_select_f32's by construction.
 * MEMRA_MLA_SELECT_SAMPLED=0 (read per call; anything else, or unset, keeps the default) is the
 * rollback seam: kpool_select through the door then runs every row's full passes. */
int mla_select_sampled_enabled(void);

/* kpool_select through the door: the launcher's arguments, validation and bytes. */
int mla_door_kpool_select_f32(const float *score, int32_t *idx, int32_t t_q, int32_t n_pools,
                              int32_t pool, int32_t select_k, int32_t width, int32_t first_pos,
                              int32_t always_tail, void *stream);

/* The radix select without the sampled route (the rollback arm), and the sampled route's device
 * receipts since process start: rows it settled (collected, or its bin one value), rows it
 * handed to the full passes (@return 0 or 10000 + cudaError_t). */
int mla_kpool_select_full_f32(const float *score, int32_t *idx, int32_t t_q, int32_t n_pools,
                              int32_t pool, int32_t select_k, int32_t width, int32_t first_pos,
                              int32_t always_tail, void *stream);
int mla_select_sampled_counts(uint64_t *hits, uint64_t *fallbacks);

#ifdef __cplusplus
}
#endif
#endif /* MLA_DOOR_H */
