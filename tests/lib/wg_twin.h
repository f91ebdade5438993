/* wg_twin.h: a scalar twin of the wgmma door arm's softmax, rescales, output and combine
 * (kernels/mla_attn_wg.cu, attn_tc_wg, and attn_combine_f32 of kernels/mla_attn.cu) for attention
 * inputs whose products the tensor cores take exactly, so the arm's output is predictable to the
 * bit (tc_attn_gpu/twin_exact__wgmma_*, tests/test_tc_attn_gpu.c). Written in the thirty-first
 * session; the arm's bytes equalled it on the H100 from the thirty-second.
 *
 * The inputs it is for: every logit's dot product exact (q and the cache in halves, so every
 * product and partial sum of K = 576 terms is a multiple of 1/4 below 2^10: exact in bf16 and in
 * any accumulator), and one carrier row per output column c, j(c): the cache's c_kv column c is 1
 * in row j(c) and 0 in every other row. Then in the arm's P . V every product of column c is 0
 * except P_j(c) * 1, so the accumulator of column c is 0 until the tile of j(c), then exactly
 * P_j(c) = bf16_rn(p_j(c)), then that times each later tile's alpha (one __fmul_rn a tile): every
 * rounding left is one the twin makes the same way with the same operations (CUDA's expf under
 * the same nvcc flags, __fadd_rn in the arm's tree order, __fmaf_rn, __fmul_rn, __fdiv_rn).
 *
 * The twin follows the arm's plan: chunks of cs slots (mla_attn_tcb_chunk_slots), 32-slot tiles
 * from the chunk's first slot, the causal walk (query i sees rows 0 ..= t_kv - t_q + i); per tile
 * and head row: the max over the valid logits, m' = max(m, tile max), alpha = expf(m - m') (1
 * while m' = -inf), m_ref = m' (0 while m' = -inf), p = expf(logit - m_ref) on a valid slot (0
 * else), the tile sum as the arm's threads form it (thread q of the quad sums its slots 2q, 2q+1,
 * 8+2q, 9+2q, 16+2q, 17+2q, 24+2q, 25+2q by a 3-level pairwise tree, then (S0 + S1) + (S2 + S3)),
 * l = fmaf(l, alpha, tile sum). With one chunk: o / l (0 for an empty walk, NaN for an infinite
 * max); with several: each chunk's partial rounded to bf16 (the arm's stores, since the
 * thirty-fifth session), the combine's weights w_c = expf(m_c - M) and its fmaf chains over the
 * chunks in ascending order, then o / L. */
#ifndef MLA_TESTS_WG_TWIN_H
#define MLA_TESTS_WG_TWIN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dot[t_q][n_head][t_kv]: each (query, head, row) logit's exact dot product (before the scale);
 * carrier[kv_rank]: the row j(c) of each output column, in 0 .. t_kv - 1; cs: the arm's chunk
 * slots (a multiple of 32). Writes out[t_q][n_head][kv_rank], the arm's output predicted to the
 * bit. Returns 0, or 10000 + cudaError_t. */
int wg_twin_absorbed(const float *dot, const int32_t *carrier, int32_t n_head, int32_t kv_rank,
                     int32_t t_q, int32_t t_kv, float scale, int64_t cs, float *out);

/* The same twin on the CPU (the same code, with the host's expf and IEEE single operations), for
 * the CPU test of the twin's plan against the oracle (//tests:wg_twin_test): the host's expf may
 * differ from CUDA's by an ulp, so its bytes are not the GPU twin's, only within the class.
 * Returns 0, or 1 when out of memory. */
int wg_twin_absorbed_host(const float *dot, const int32_t *carrier, int32_t n_head, int32_t kv_rank,
                          int32_t t_q, int32_t t_kv, float scale, int64_t cs, float *out);

/* The twin's inputs at glm5's width (64 heads, kv_rank 512, d_rope 64): q_lat, q_pe and the rope
 * columns from the Philox fill (seed, names "q_lat", "q_pe", "cache") rounded to halves in
 * [-1, 1]; the c_kv columns one-hot by column, column c 1 in its carrier row
 * j(c) = (61 c + 17) mod t_kv; dot[t_q][64][t_kv] the exact dot products (before the scale).
 * q_pe holds t_q 64 (64 + 1) elements, the spare as tc_attn_gpu_test's io_fill allocates it (so
 * its io_upload takes these buffers). Every pointer malloc'ed (wg_twin_inputs_free); returns 0, or
 * 1 when out of memory. */
typedef struct {
    float *q_lat, *q_pe, *cache, *dot;
    int32_t *carrier;
} wg_twin_in;
#define WG_TWIN_HEADS 64
#define WG_TWIN_RANK 512
#define WG_TWIN_ROPE 64
int wg_twin_inputs(int32_t t_q, int32_t t_kv, uint32_t seed, wg_twin_in *in);
void wg_twin_inputs_free(wg_twin_in *in);

#ifdef __cplusplus
}
#endif

#endif /* MLA_TESTS_WG_TWIN_H */
