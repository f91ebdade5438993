/* mla_validate.h: the host-side argument validation of every launcher in mla.h, in plain C,
 * callable without a GPU. Each function takes its launcher's arguments (minus the stream) and
 * returns 0 or the launcher's 4xxxx contract code, applying the checks in the order documented
 * in mla.h. It reads no buffer (pointers are compared, never dereferenced).
 * Every launcher calls its validator first and returns its code untouched.
 */
#ifndef MLA_VALIDATE_H
#define MLA_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

int mla_validate_rope_interleaved(const float *x, int32_t n_pos, int32_t n_vec, int32_t d_rope,
                                  const int32_t *positions, float base);
int mla_validate_split_latent(const float *kv, const float *c_kv, const float *k_pe, int32_t t,
                              int32_t kv_rank, int32_t d_rope);
int mla_validate_append_latent(const float *cache, const float *c_kv, const float *k_pe,
                               int32_t slot, int32_t t, int32_t kv_rank, int32_t d_rope);
int mla_validate_absorb_q(const float *q_nope, const float *wk_b, const float *q_lat, int32_t t_q,
                          int32_t n_head, int32_t d_nope, int32_t kv_rank,
                          int32_t split /* 1 for the unsplit launcher */);
int mla_validate_decompress_v(const float *o_lat, const float *wv_b, const float *out, int32_t t_q,
                              int32_t n_head, int32_t d_v, int32_t kv_rank,
                              int32_t split /* 1 for the unsplit launcher */);
int mla_validate_attn_absorbed(const float *q_lat, const float *q_pe, const float *cache,
                               const float *o_lat, int32_t n_head, int32_t kv_rank, int32_t d_rope,
                               int32_t t_q, int32_t t_kv, float scale);
int mla_validate_index_append_ring(const float *plane, const float *a, const float *b, int32_t slot,
                                   int32_t t, int32_t wa, int32_t wb, int32_t rows);
int mla_validate_kpool_pool_keys(const float *state, const float *ape, const float *pool_keys,
                                 int32_t pool_begin, int32_t n_pools, int32_t pool, int32_t d,
                                 int32_t state_rows);
int mla_validate_kpool_score(const float *q, const float *pool_keys, const float *hw,
                             const float *score, int32_t t_q, int32_t heads, int32_t d,
                             int32_t n_pools, int32_t pool, int32_t first_pos, float qk_scale,
                             float head_scale);
int mla_validate_kpool_select(const float *score, const int32_t *idx, int32_t t_q, int32_t n_pools,
                              int32_t pool, int32_t select_k, int32_t width, int32_t first_pos,
                              int32_t always_tail);
int mla_validate_attn_gathered(const float *q_lat, const float *q_pe, const float *cache,
                               const int32_t *idx, const float *o_lat, int32_t n_head,
                               int32_t kv_rank, int32_t d_rope, int32_t t_q, int32_t n_slots,
                               float scale);
int mla_validate_bf16_gemm_sb(const void *w_bf16, const void *x_bf16, const void *y, int32_t m,
                              int32_t n, int32_t k, int64_t x_rs, int64_t x_bs, int64_t y_rs,
                              int64_t y_bs, int32_t batch, int32_t y_is_bf16, const void *ws,
                              size_t ws_bytes);

#ifdef __cplusplus
}
#endif
#endif /* MLA_VALIDATE_H */
