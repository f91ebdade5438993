/* mla_oracle.h: the plain-C CPU oracle that defines the numeric truth of every launcher in
 * kernels/mla.h. Naive loops, fixed order, compiled with -ffp-contract=off and no fast-math;
 * shares no code with kernels/. Each function mirrors its launcher's argument order (host
 * pointers, no stream) and assumes arguments the launcher's validation accepts.
 *
 * Where a launcher promises "bit-exact", the oracle performs the same f32 operation sequence
 * (fmaf chains, round-to-nearest products and sums). Elsewhere it computes in double and rounds
 * once to f32; the kernel's distance to it is a tolerance class (docs/tolerances.md).
 */
#ifndef MLA_ORACLE_H
#define MLA_ORACLE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ dense MLA core --------- */

/* inv_freq[j] of the rope angle convention (DESIGN.md section 2):
 * e = f32(2j) / f32(d_rope) (f32 division), p = f32(pow((double)base, (double)e)),
 * inv_freq = 1.0f / p (f32 division). */
float oracle_rope_inv_freq(int32_t j, int32_t d_rope, float base);
/* theta = f32(pos) * inv_freq[j], one f32 rounding. */
float oracle_rope_angle(int32_t pos, int32_t j, int32_t d_rope, float base);

/* In place on x[n_pos][n_vec][d_rope]; cos / sin of the f32 angle in double, rotation in double,
 * one rounding to f32 per output. d_rope == 0: no-op. */
void oracle_rope_interleaved_f32(float *x, int32_t n_pos, int32_t n_vec, int32_t d_rope,
                                 const int32_t *positions, float base);

void oracle_split_latent_f32(const float *kv, float *c_kv, float *k_pe, int32_t t, int32_t kv_rank,
                             int32_t d_rope);
void oracle_append_latent_f32(float *cache, const float *c_kv, const float *k_pe, int32_t slot,
                              int32_t t, int32_t kv_rank, int32_t d_rope);

/* One fmaf chain per output, ascending index, from 0.0f (the kernels' promised sequence). */
void oracle_absorb_q_f32(const float *q_nope, const float *wk_b, float *q_lat, int32_t t_q,
                         int32_t n_head, int32_t d_nope, int32_t kv_rank);
void oracle_decompress_v_f32(const float *o_lat, const float *wv_b, float *out, int32_t t_q,
                             int32_t n_head, int32_t d_v, int32_t kv_rank);

/* Logits, softmax and the weighted sum in double; one rounding per output. */
void oracle_attn_absorbed_f32(const float *q_lat, const float *q_pe, const float *cache,
                              float *o_lat, int32_t n_head, int32_t kv_rank, int32_t d_rope,
                              int32_t t_q, int32_t t_kv, float scale);

/* bf16 helpers: round-to-nearest-even f32 -> bf16 (NaN stays NaN, quiet), exact bf16 -> f32. */
uint16_t oracle_bf16_from_f32(float f);
float oracle_f32_from_bf16(uint16_t b);

/* Reference of memra_bf16_gemm_sb: bf16 inputs widened exactly, products summed in double (k
 * ascending), one rounding to f32; with y_is_bf16 the f32 result is rounded once more to bf16
 * (what a f32-accumulating GEMM with a bf16 epilogue computes, up to accumulation order). */
void oracle_bf16_gemm_sb(const uint16_t *w_bf16, const uint16_t *x_bf16, void *y, int32_t m,
                         int32_t n, int32_t k, int64_t x_rs, int64_t x_bs, int64_t y_rs,
                         int64_t y_bs, int32_t batch, int32_t y_is_bf16);

/* ------------------------------------------------------------- DSA k-pool indexer ---------- */

void oracle_index_append_ring_f32(float *plane, const float *a, const float *b, int32_t slot,
                                  int32_t t, int32_t wa, int32_t wb, int32_t rows);

/* Softmax over the pool's slots in double (max-subtracted), weighted sum in double, one rounding
 * per key. Pools below pool_begin untouched. */
void oracle_kpool_pool_keys_f32(const float *state, const float *ape, float *pool_keys,
                                int32_t pool_begin, int32_t n_pools, int32_t pool, int32_t d,
                                int32_t state_rows);

/* The six-step f32 rounding sequence of mla.h, bit for bit; -inf on masked pools. */
void oracle_kpool_score_f32(const float *q, const float *pool_keys, const float *hw, float *score,
                            int32_t t_q, int32_t heads, int32_t d, int32_t n_pools, int32_t pool,
                            int32_t first_pos, float qk_scale, float head_scale);

/* The 32-bit order key whose ascending order is "score descending" (+0 == -0; every NaN after
 * -inf, all NaNs equal): NaN -> 0xFFFFFFFF, else ~ordered_bits(canonical(score)). */
uint32_t oracle_kpool_desc32(float score);

/* Selection as documented in mla.h (score desc, pool asc; rows ascending; tail; -1 pad). */
void oracle_kpool_select_f32(const float *score, int32_t *idx, int32_t t_q, int32_t n_pools,
                             int32_t pool, int32_t select_k, int32_t width, int32_t first_pos,
                             int32_t always_tail);

/* The allowed cache rows of the query at row `q_row` given its score row score_row[n_pools]:
 * writes the rows (ascending, then the tail; without -1 padding) to rows_out (capacity select_k *
 * pool + pool - 1) and returns their count. Equal to the non-negative prefix of select's idx row.
 */
int32_t oracle_kpool_allowed_tokens(const float *score_row, int32_t q_row, int32_t n_pools,
                                    int32_t pool, int32_t select_k, int32_t always_tail,
                                    int32_t *rows_out);

/* attn_absorbed over idx[i][0..n_slots) (negative entries skipped, repeats counted per
 * occurrence); a query with no valid entry gets zeros. Double accumulation, one rounding. */
void oracle_attn_gathered_f32(const float *q_lat, const float *q_pe, const float *cache,
                              const int32_t *idx, float *o_lat, int32_t n_head, int32_t kv_rank,
                              int32_t d_rope, int32_t t_q, int32_t n_slots, float scale);

#ifdef __cplusplus
}
#endif
#endif /* MLA_ORACLE_H */
