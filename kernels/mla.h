/* mla.h: the C-ABI host launchers of the MLA forward and the DSA k-pool indexer.
 *
 * Exactly the sixteen symbols of the seed's `extern "C"` block (shared/seed/mla_ffi.rs), same
 * names, parameter order and C types; an engine links them from libmla_kernels.a.
 *
 * Common contract (every launcher):
 *  - All tensors are dense row-major f32 device buffers unless stated; indices are int32.
 *  - The host launcher validates every argument BEFORE touching the device (mla_validate.h has
 *    the same checks callable without a GPU). A call with bad arguments returns its 4xxxx code
 *    and writes nothing. Then it launches on `stream` (a cudaStream_t, NULL = legacy default
 *    stream) and returns the launch status: 0, or 10000 + cudaError_t (10035: no driver,
 *    10100: no device). Launches are asynchronous: a 0 means "enqueued without error".
 *  - Validation order is fixed, so exactly one code is defined for any argument tuple:
 *      1. extent signs, in parameter order (40022 for a negative offset / position / ring size
 *         that may be 0, 40021 for an extent that must be >= 1),
 *      2. the shape codes in the order listed per launcher,
 *      3. 0/1 flags (40036), then scalar values (40034 rope base, 40035 scales),
 *      4. 32-bit overflow of any tensor's element count or offset (40024),
 *      5. NULL pointers (40020), in parameter order, for every buffer the call reads or writes,
 *      6. aliasing (40028): an output range overlapping an input range (byte ranges computed
 *         from the shapes; in-place operands are the documented exception).
 *  - Outputs not named in a launcher's comment are never written.
 *  - Promises against the CPU oracle (oracle/mla_oracle.h) are stated per launcher: "bit-exact"
 *    means byte-identical output; "class X" names a tolerance class in docs/tolerances.md.
 */
#ifndef MLA_H
#define MLA_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/mla_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------- the attention walk ---------- */

/* The walk of attn_absorbed and attn_gathered is part of their contract: class attn
 * (docs/tolerances.md) is evaluated with it, not with the looser any-walk R = D = N + 1. A query
 * with N valid terms over W walk slots (absorbed: W = N; gathered: W = n_slots, -1 entries
 * included) is walked in row tiles of MLA_ATTN_WALK_TILE slots, each a fresh accumulator merged
 * by one rescale, the chunks of a split walk combined in a fixed order:
 *   R = min(N, ceil(W / T))                  running-max rescales on any term's path;
 *   D = min(T, N) + min(N, ceil(W / T)) + 1  f32 additions into any one accumulator on it.
 * A kernel that changes its walk restates it here (kernels/mla_attn.cu asserts its row tile is
 * MLA_ATTN_WALK_TILE); the suites then bound the new walk. */
#define MLA_ATTN_WALK_TILE 16
/* The form every stated walk takes: row tiles of `tile` slots, at most `in_tile` f32 roundings
 * into an accumulator inside a term's tile, one merge per later tile, one in the combine. */
static inline void mla_attn_walk_of(int64_t n_terms, int64_t n_slots, int64_t tile, int64_t in_tile,
                                    int64_t *R, int64_t *D) {
    const int64_t tiles = (n_slots + tile - 1) / tile;
    const int64_t r = n_terms < tiles ? n_terms : tiles;
    *R = r;
    *D = (n_terms < in_tile ? n_terms : in_tile) + r + 1;
}
static inline void mla_attn_walk(int64_t n_terms, int64_t n_slots, int64_t *R, int64_t *D) {
    mla_attn_walk_of(n_terms, n_slots, MLA_ATTN_WALK_TILE, MLA_ATTN_WALK_TILE, R, D);
}

/* The chunk plan of the walk (kernels/mla_attn.cu, a function of the shape only, never of the
 * device): each query's walk of W <= w_max slots (w_max = t_kv or n_slots) is cut into chunks of
 * the returned number of slots (a multiple of MLA_ATTN_WALK_TILE), combined in ascending order.
 * Blocks of a head tile of 32 heads (kv_rank <= 512, else 8) x one query; about 132 blocks (one
 * per SM of an H200), at least 32 slots and at most 256 chunks. The tensor-core door arm's
 * arithmetic bound depends on it (kernels/mla_door.h, mla_attn_tc_arith). */
/* The rule itself for `tiles` head tiles x queries, chunks rounded up to a multiple of `round`
 * slots (the f32 walk's MLA_ATTN_WALK_TILE here; the bf16 door's 64-head plan,
 * mla_attn_tcb_chunk_slots in kernels/mla_door.h, uses its 32-slot row tile). */
static inline int64_t mla_attn_chunk_slots_of(int64_t tiles, int64_t w_max, int64_t round) {
    int64_t want = 132 / tiles;
    const int64_t by_len = (w_max + 31) / 32;
    if (want > by_len) want = by_len;
    if (want > 256) want = 256;
    if (want < 1) want = 1;
    const int64_t cs = (w_max + want - 1) / want;
    return (cs + round - 1) / round * round;
}
static inline int64_t mla_attn_chunk_slots(int32_t n_head, int32_t kv_rank, int32_t t_q,
                                           int64_t w_max) {
    const int64_t ht = kv_rank <= 512 ? 32 : 8;
    return mla_attn_chunk_slots_of((int64_t)t_q * ((n_head + ht - 1) / ht), w_max,
                                   MLA_ATTN_WALK_TILE);
}

/* ---------------------------------------------------------------- dense MLA core ----------- */

/* Interleaved ("NORM") RoPE, in place on x[n_pos][n_vec][d_rope]: pair (2j, 2j+1) of position p
 * rotated by theta = f32(positions[p]) * inv_freq[j], inv_freq[j] = 1.0f / f32(pow(base,
 * f32(2j) / f32(d_rope))) (DESIGN.md section 2; pow in double, rounded once), cos / sin accurate
 * on the f32 angle (never fast intrinsics). positions: int32[n_pos] (device), any value.
 * d_rope == 0 (NoPE) is a no-op returning 0 once the extents are valid: x and positions are not
 * read and may be NULL.
 * Shape codes: 40001 odd d_rope, 40003 d_rope > MLA_MAX_ROPE. Also 40021 (n_pos, n_vec < 1),
 * 40022 (d_rope < 0), 40034 (base not finite or <= 0), 40024, 40020, 40028 (x vs positions).
 * Promise: class rope. */
int memra_mla_rope_interleaved_f32(float *x, int32_t n_pos, int32_t n_vec, int32_t d_rope,
                                   const int32_t *positions, float base, void *stream);

/* kv[t][kv_rank + d_rope] -> c_kv[t][kv_rank], k_pe[t][d_rope]. Pure copies.
 * k_pe may be NULL when d_rope == 0. Codes: 40021 (t, kv_rank < 1), 40022 (d_rope < 0),
 * 40024, 40020, 40028 (c_kv or k_pe vs kv, c_kv vs k_pe). Promise: bit-exact. */
int memra_mla_split_latent_f32(const float *kv, float *c_kv, float *k_pe, int32_t t,
                               int32_t kv_rank, int32_t d_rope, void *stream);

/* cache rows slot..slot+t-1 (row width kv_rank + d_rope) <- [c_kv[i] | k_pe[i]].
 * c_kv[t][kv_rank], k_pe[t][d_rope] (may be NULL when d_rope == 0). The caller guarantees the
 * cache holds slot + t rows. Codes: 40022 (slot, d_rope < 0), 40021 (t, kv_rank < 1), 40024
 * ((slot + t) * width), 40020, 40028 (written cache rows vs c_kv / k_pe). Promise: bit-exact. */
int memra_mla_append_latent_f32(float *cache, const float *c_kv, const float *k_pe, int32_t slot,
                                int32_t t, int32_t kv_rank, int32_t d_rope, void *stream);

/* q_lat[i][h][r] = sum_d q_nope[i][h][d] * wk_b[h][d][r]: one fmaf chain per output element,
 * d ascending, starting from 0.0f. q_nope[t_q][n_head][d_nope], wk_b[n_head][d_nope][kv_rank],
 * q_lat[t_q][n_head][kv_rank]. Shape codes: 40002 kv_rank > MLA_MAX_RANK, 40037 d_nope >
 * MLA_MAX_HEAD_DIM. Also 40021, 40024, 40020, 40028 (q_lat vs q_nope / wk_b).
 * Promise: bit-exact. */
int memra_mla_absorb_q_f32(const float *q_nope, const float *wk_b, float *q_lat, int32_t t_q,
                           int32_t n_head, int32_t d_nope, int32_t kv_rank, void *stream);

/* out[i][h][v] = sum_r wv_b[h][v][r] * o_lat[i][h][r]: one fmaf chain per output element, r
 * ascending, from 0.0f. o_lat[t_q][n_head][kv_rank], wv_b[n_head][d_v][kv_rank],
 * out[t_q][n_head][d_v]. Shape codes: 40002 kv_rank > MLA_MAX_RANK, 40037 d_v >
 * MLA_MAX_HEAD_DIM. Also 40021, 40024, 40020, 40028. Promise: bit-exact. */
int memra_mla_decompress_v_f32(const float *o_lat, const float *wv_b, float *out, int32_t t_q,
                               int32_t n_head, int32_t d_v, int32_t kv_rank, void *stream);

/* Decode-split twin of memra_mla_absorb_q_f32: each (token, head) block's kv_rank outputs split
 * over `split` blocks. Same codes, plus 40023 split outside 1..=kv_rank (checked after the
 * shape codes). Promise: bytes identical to memra_mla_absorb_q_f32 for every split. The split
 * only shapes the launch; the decode arms of both twins (kernels/mla_dense.cu: absorb_q_reg_f32
 * at t_q 1 and d_nope 192, decompress_v_flat_f32 at t_q <= 4, kv_rank 512 and d_v >= 128), whose
 * grids already fill the card, launch the same for every split. */
int memra_mla_absorb_q_split_f32(const float *q_nope, const float *wk_b, float *q_lat, int32_t t_q,
                                 int32_t n_head, int32_t d_nope, int32_t kv_rank, int32_t split,
                                 void *stream);

/* Decode-split twin of memra_mla_decompress_v_f32 (split in 1..=d_v, else 40023).
 * Promise: bytes identical to memra_mla_decompress_v_f32 for every split. */
int memra_mla_decompress_v_split_f32(const float *o_lat, const float *wv_b, float *out, int32_t t_q,
                                     int32_t n_head, int32_t d_v, int32_t kv_rank, int32_t split,
                                     void *stream);

/* MQA over the latent cache. q_lat[t_q][n_head][kv_rank], q_pe[t_q][n_head][d_rope] (unread and
 * may be NULL when d_rope == 0), cache[t_kv][kv_rank + d_rope] (rows [c_kv | k_pe]),
 * o_lat[t_q][n_head][kv_rank]. Query i sits at cache row t_kv - t_q + i and sees rows 0..=that
 * row; logit_j = scale * (q_lat . c_kv_j + q_pe . k_pe_j); o_lat = softmax(logits) . c_kv.
 * Non-finite inputs: a (query, head) that sees a NaN or +-inf logit (from a NaN or infinite
 * element of its q_lat / q_pe row or of a visible cache row) gets an all-NaN o_lat row; the
 * other rows are unaffected (fixture glm5_tp8_nonfinite). The copies, rope and the fmaf chains
 * of absorb / decompress propagate NaN and +-inf by IEEE rules, in the oracle's order.
 * Shape codes: 40001 odd d_rope, 40002 kv_rank > MLA_MAX_RANK, 40003 d_rope > MLA_MAX_ROPE,
 * 40004 t_q > t_kv. Also 40021, 40022 (d_rope < 0), 40035 (scale not finite), 40024, 40020,
 * 40028 (o_lat vs q_lat / q_pe / cache). Promise: class attn.
 * walk: mla_attn_walk(N, N) (N = t_kv - t_q + i + 1): R = ceil(N / 16),
 * D = min(16, N) + ceil(N / 16) + 1. */
int memra_mla_attn_absorbed_f32(const float *q_lat, const float *q_pe, const float *cache,
                                float *o_lat, int32_t n_head, int32_t kv_rank, int32_t d_rope,
                                int32_t t_q, int32_t t_kv, float scale, void *stream);

/* ------------------------------------------------------------- DSA k-pool indexer ---------- */

/* Indexer rows [a[i] | b[i]] (a[t][wa], b[t][wb]) written at plane row (slot + i) mod rows;
 * rows == 0 is a flat plane (row slot + i). b may be NULL when wb == 0. The caller guarantees
 * the plane holds `rows` rows (ring) or slot + t rows (flat).
 * Codes: 40022 (slot, wb, rows < 0), 40021 (t, wa < 1), 40029 (rows > 0 and t > rows: one call
 * would write a ring row twice), 40024, 40020, 40028 (written plane range vs a / b).
 * Promise: bit-exact (pure copy). */
int memra_mla_index_append_ring_f32(float *plane, const float *a, const float *b, int32_t slot,
                                    int32_t t, int32_t wa, int32_t wb, int32_t rows, void *stream);

/* Pool keys for pools p in [pool_begin, n_pools), channel c < d:
 *   w_s = softmax_s(gate[p*pool+s][c] + ape[s][c]),  key[p][c] = sum_s w_s * k[p*pool+s][c].
 * state rows are [k | gate] (2d wide), row r at physical row (state_rows ? r % state_rows : r);
 * ape[pool][d]; pool_keys[n_pools][d]; rows of pools below pool_begin are left untouched.
 * Shape codes: 40010 pool outside 1..=MLA_MAX_POOL, 40017 d < 1, 40033 d > MLA_MAX_INDEX_DIM,
 * 40025 pool_begin > n_pools, 40016 state_rows % pool != 0, 40018 state_rows > 0 and a pool to
 * build has rows the ring already overwrote (pool_begin * pool < n_pools * pool - state_rows).
 * Also 40022 (pool_begin, n_pools, state_rows < 0), 40024, 40020, 40028.
 * Caller obligation the launcher cannot check (it is not told how many rows were appended):
 * every row of pools [pool_begin, n_pools) must still be in the ring, i.e. rows appended past
 * n_pools * pool (the incomplete tail pool) count too: appended_rows - state_rows <=
 * pool_begin * pool. 40018 enforces the part visible from the arguments (appended_rows taken as
 * n_pools * pool).
 * pool_begin == n_pools builds nothing and returns 0. Promise: class pool_key against the
 * oracle; bit-identical between flat and ring planes and between one full build and any
 * sequence of incremental builds. */
int memra_mla_kpool_pool_keys_f32(const float *state, const float *ape, float *pool_keys,
                                  int32_t pool_begin, int32_t n_pools, int32_t pool, int32_t d,
                                  int32_t state_rows, void *stream);

/* score[i][p] = sum_h (hw[i][h] * head_scale) * relu(qk_scale * (q[i][h] . key[p])), -inf where
 * pool p's last row (p+1)*pool - 1 is after the query's row first_pos + i.
 * q[t_q][heads][d], pool_keys[n_pools][d], hw[t_q][heads], score[t_q][n_pools].
 * The exact rounding sequence (oracle/mla_oracle.h, docs/kpool.md) is, per visible (i, p):
 *   acc = +0.0f; for h ascending {
 *     dot = +0.0f; for c ascending: dot = fmaf(q[i][h][c], key[p][c], dot);   (1)
 *     s = dot * qk_scale (rn);                                                  (2)
 *     r = (s < 0.0f) ? 0.0f : s;   (relu; NaN propagates)                       (3)
 *     w = hw[i][h] * head_scale (rn);                                           (4)
 *     t = w * r (rn);                                                           (5)
 *     acc = acc + t (rn); }                                                     (6)
 * Shape codes: 40011 heads outside 1..=1024, 40017 d < 1, 40033 d > MLA_MAX_INDEX_DIM,
 * 40010 pool range, 40012 t_q * n_pools > MLA_MAX_GRID_X, 40031 a query that would see a
 * complete pool that is not listed (first_pos + t_q - 1 >= (n_pools + 1) * pool - 1).
 * Also 40021 (t_q < 1), 40022 (n_pools, first_pos < 0), 40035 (qk_scale / head_scale not
 * finite), 40024, 40020, 40028. n_pools == 0 writes nothing and returns 0.
 * Promise: bit-exact (fast == reference == oracle); the fast kernel never materialises a
 * [t_q * heads, n_pools] plane. */
int memra_mla_kpool_score_f32(const float *q, const float *pool_keys, const float *hw, float *score,
                              int32_t t_q, int32_t heads, int32_t d, int32_t n_pools, int32_t pool,
                              int32_t first_pos, float qk_scale, float head_scale, void *stream);

/* The reference scorer (block per (query, pool), one thread per head, head sum walked by
 * thread 0): the definition memra_mla_kpool_score_f32 reproduces. Same contract. */
int memra_mla_kpool_score_ref_f32(const float *q, const float *pool_keys, const float *hw,
                                  float *score, int32_t t_q, int32_t heads, int32_t d,
                                  int32_t n_pools, int32_t pool, int32_t first_pos, float qk_scale,
                                  float head_scale, void *stream);

/* Per query i (cache row q = first_pos + i): the visible pools are p < min(n_pools, (q+1)/pool).
 * The select_k best visible pools, ranked score descending then pool index ascending (+0 and
 * -0 tie; NaN ranks after every number, -inf included; ties broken by pool index), are expanded
 * to their cache rows, all rows listed in ascending order (the rank decides which pools are
 * kept, never where their rows land); then, if always_tail, the visible rows of the query's
 * incomplete pool ((q+1)/pool*pool .. q); then -1 up to width. score[t_q][n_pools],
 * idx[t_q][width] (int32). Shape codes: 40010 pool range, 40012 t_q * n_pools over the grid
 * contract, 40014 width < select_k*pool + pool - 1, 40036 always_tail not 0/1, 40013
 * always_tail == 0 while a query precedes the first complete pool (first_pos < pool - 1),
 * 40031 (as for scoring). Also 40021 (t_q, select_k, width < 1), 40022 (n_pools, first_pos
 * < 0), 40024, 40020, 40028. Promise: bit-exact (radix == reference == oracle). */
int memra_mla_kpool_select_f32(const float *score, int32_t *idx, int32_t t_q, int32_t n_pools,
                               int32_t pool, int32_t select_k, int32_t width, int32_t first_pos,
                               int32_t always_tail, void *stream);

/* The reference selection (a bitonic sort of the visible keys when there are at most 8192,
 * else select_k argmin rounds): the definition memra_mla_kpool_select_f32 reproduces. Same
 * contract. */
int memra_mla_kpool_select_ref_f32(const float *score, int32_t *idx, int32_t t_q, int32_t n_pools,
                                   int32_t pool, int32_t select_k, int32_t width, int32_t first_pos,
                                   int32_t always_tail, void *stream);

/* attn_absorbed over the cache rows listed in idx[i][0..n_slots) (one list per query, shared by
 * the heads); negative entries (the -1 padding) are skipped; repeated entries count once per
 * occurrence. The caller guarantees every non-negative entry is a row of `cache`. A query with
 * no valid entry gets o_lat = 0 (an empty softmax contributes nothing); a NaN or +-inf logit
 * makes the (query, head) row all NaN, as in attn_absorbed.
 * Shape codes: 40015 n_slots == 0, 40001, 40002, 40003. Also 40021 (n_head, kv_rank, t_q < 1),
 * 40022 (d_rope, n_slots < 0), 40035, 40024, 40020, 40028. Promise: class attn.
 * walk: mla_attn_walk(N, n_slots): R = min(N, ceil(n_slots / 16)),
 * D = min(16, N) + min(N, ceil(n_slots / 16)) + 1. */
int memra_mla_attn_gathered_f32(const float *q_lat, const float *q_pe, const float *cache,
                                const int32_t *idx, float *o_lat, int32_t n_head, int32_t kv_rank,
                                int32_t d_rope, int32_t t_q, int32_t n_slots, float scale,
                                void *stream);

/* ------------------------------------------------------------------ bf16 GEMM -------------- */

/* Strided-batched bf16 tensor-core GEMM through cuBLASLt, per batch b in 0..batch:
 *   y_b[m, n] = x_b[m, k] . w_b[n, k]^T, f32 accumulate, y f32 (y_is_bf16 == 0) or bf16 (1).
 * w_bf16: per-batch [n][k] row-major, batch stride n * k elements. x_bf16: row i of batch b at
 * element b * x_bs + i * x_rs; y likewise with y_rs / y_bs (elements of y's dtype).
 * ws / ws_bytes: cuBLASLt workspace (ws may be NULL only when ws_bytes == 0).
 * Codes: 40021 (m, n, k, batch < 1), 40036 (y_is_bf16 not 0/1), 40030 (x_rs < k, y_rs < n,
 * x_bs < 0, y_bs < 0), 40024 (an offset past 2^62), 40020, 40028 (y vs w / x);
 * 20000 + cublasStatus_t when cuBLASLt has no algorithm for the shape (the caller may fall
 * back); 30000 + cublasStatus_t for any other cuBLAS failure; 10000 + cudaError_t.
 * Promise: class bf16_gemm against the oracle's bf16 reference. */
int memra_bf16_gemm_sb(const void *w_bf16, const void *x_bf16, void *y, int32_t m, int32_t n,
                       int32_t k, int64_t x_rs, int64_t x_bs, int64_t y_rs, int64_t y_bs,
                       int32_t batch, int32_t y_is_bf16, void *ws, size_t ws_bytes, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* MLA_H */
