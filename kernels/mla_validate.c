/* mla_validate.c: host-side argument validation (see mla_validate.h and the order in mla.h).
 * Plain C, no CUDA: pointers are compared, never dereferenced. */
#include "kernels/mla_validate.h"

#include <math.h>

#include "kernels/mla_status.h"

#define I32_MAX 2147483647LL

/* Non-negative products saturate instead of overflowing: any product past 2^62 is "too big"
 * for every check below, so saturating keeps the comparisons exact and the code UB-free for
 * every int32 argument. */
static long long mul(long long a, long long b) {
    if (a <= 0 || b <= 0) return 0;
    return a > (1LL << 62) / b ? (1LL << 62) : a * b;
}
static long long mul3(long long a, long long b, long long c) { return mul(mul(a, b), c); }

/* Evaluate a check; return its code on failure. */
#define CHECK(cond, code)                                                                          \
    do {                                                                                           \
        if (!(cond)) return (code);                                                                \
    } while (0)

/* Element count fits a 32-bit index. */
#define FITS32(count) CHECK((long long)(count) <= I32_MAX, MLA_E_INDEX_OVERFLOW)

/* [a, a + an) and [b, b + bn) bytes overlap (NULL or empty ranges never overlap). */
static int overlap(const void *a, long long an, const void *b, long long bn) {
    if (!a || !b || an <= 0 || bn <= 0) return 0;
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b; /* differences: no pointer overflow */
    return x >= y ? x - y < (unsigned long long)bn : y - x < (unsigned long long)an;
}

#define NO_ALIAS(out, out_bytes, in, in_bytes)                                                     \
    CHECK(!overlap((out), (out_bytes), (in), (in_bytes)), MLA_E_ALIAS)

int mla_validate_rope_interleaved(const float *x, int32_t n_pos, int32_t n_vec, int32_t d_rope,
                                  const int32_t *positions, float base) {
    CHECK(n_pos >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(n_vec >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(d_rope >= 0, MLA_E_NEGATIVE_ARG);
    CHECK(d_rope % 2 == 0, MLA_E_ODD_ROPE);
    CHECK(d_rope <= MLA_MAX_ROPE, MLA_E_ROPE_TOO_BIG);
    if (d_rope == 0) return MLA_OK; /* NoPE: a no-op, nothing is read */
    CHECK(isfinite(base) && base > 0.0f, MLA_E_BAD_ROPE_BASE);
    long long nx = mul3(n_pos, n_vec, d_rope);
    FITS32(nx);
    CHECK(x != NULL, MLA_E_NULL_POINTER);
    CHECK(positions != NULL, MLA_E_NULL_POINTER);
    NO_ALIAS(x, nx * 4, positions, (long long)n_pos * 4);
    return MLA_OK;
}

int mla_validate_split_latent(const float *kv, const float *c_kv, const float *k_pe, int32_t t,
                              int32_t kv_rank, int32_t d_rope) {
    CHECK(t >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(kv_rank >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(d_rope >= 0, MLA_E_NEGATIVE_ARG);
    long long w = (long long)kv_rank + d_rope;
    FITS32(mul(t, w));
    CHECK(kv != NULL, MLA_E_NULL_POINTER);
    CHECK(c_kv != NULL, MLA_E_NULL_POINTER);
    CHECK(d_rope == 0 || k_pe != NULL, MLA_E_NULL_POINTER);
    long long kv_b = (long long)t * w * 4, c_b = (long long)t * kv_rank * 4,
              pe_b = (long long)t * d_rope * 4;
    NO_ALIAS(c_kv, c_b, kv, kv_b);
    NO_ALIAS(k_pe, pe_b, kv, kv_b);
    NO_ALIAS(c_kv, c_b, k_pe, pe_b);
    return MLA_OK;
}

int mla_validate_append_latent(const float *cache, const float *c_kv, const float *k_pe,
                               int32_t slot, int32_t t, int32_t kv_rank, int32_t d_rope) {
    CHECK(slot >= 0, MLA_E_NEGATIVE_ARG);
    CHECK(t >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(kv_rank >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(d_rope >= 0, MLA_E_NEGATIVE_ARG);
    long long w = (long long)kv_rank + d_rope;
    FITS32(mul((long long)slot + t, w));
    CHECK(cache != NULL, MLA_E_NULL_POINTER);
    CHECK(c_kv != NULL, MLA_E_NULL_POINTER);
    CHECK(d_rope == 0 || k_pe != NULL, MLA_E_NULL_POINTER);
    const float *rows = cache + (long long)slot * w;
    long long rows_b = (long long)t * w * 4;
    NO_ALIAS(rows, rows_b, c_kv, (long long)t * kv_rank * 4);
    NO_ALIAS(rows, rows_b, k_pe, (long long)t * d_rope * 4);
    return MLA_OK;
}

/* absorb_q and decompress_v share a shape: in[t][h][k_in] x w[h][*] -> out[t][h][n_out]. */
static int validate_head_matvec(const float *in, const float *w, const float *out, int32_t t_q,
                                int32_t n_head, int32_t head_dim, int32_t kv_rank, int32_t split,
                                int is_absorb) {
    CHECK(t_q >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(n_head >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(head_dim >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(kv_rank >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(kv_rank <= MLA_MAX_RANK, MLA_E_RANK_TOO_BIG);
    CHECK(head_dim <= MLA_MAX_HEAD_DIM, MLA_E_HEAD_DIM_TOO_BIG);
    int32_t out_dim = is_absorb ? kv_rank : head_dim;
    CHECK(split >= 1 && split <= out_dim, MLA_E_SPLIT_RANGE);
    long long in_dim = is_absorb ? head_dim : kv_rank;
    long long n_in = mul3(t_q, n_head, in_dim);
    long long n_w = mul3(n_head, head_dim, kv_rank);
    long long n_out = mul3(t_q, n_head, out_dim);
    FITS32(n_in);
    FITS32(n_w);
    FITS32(n_out);
    CHECK(in != NULL, MLA_E_NULL_POINTER);
    CHECK(w != NULL, MLA_E_NULL_POINTER);
    CHECK(out != NULL, MLA_E_NULL_POINTER);
    NO_ALIAS(out, n_out * 4, in, n_in * 4);
    NO_ALIAS(out, n_out * 4, w, n_w * 4);
    return MLA_OK;
}

int mla_validate_absorb_q(const float *q_nope, const float *wk_b, const float *q_lat, int32_t t_q,
                          int32_t n_head, int32_t d_nope, int32_t kv_rank, int32_t split) {
    return validate_head_matvec(q_nope, wk_b, q_lat, t_q, n_head, d_nope, kv_rank, split, 1);
}

int mla_validate_decompress_v(const float *o_lat, const float *wv_b, const float *out, int32_t t_q,
                              int32_t n_head, int32_t d_v, int32_t kv_rank, int32_t split) {
    return validate_head_matvec(o_lat, wv_b, out, t_q, n_head, d_v, kv_rank, split, 0);
}

/* The shared part of attn_absorbed / attn_gathered after their own extent checks. */
static int validate_attn_common(const float *q_lat, const float *q_pe, const float *cache,
                                const float *o_lat, int32_t n_head, int32_t kv_rank, int32_t d_rope,
                                int32_t t_q, long long cache_rows, float scale, const int32_t *idx,
                                long long idx_count) {
    CHECK(isfinite(scale), MLA_E_BAD_SCALE);
    long long w = (long long)kv_rank + d_rope;
    long long n_q = mul3(t_q, n_head, kv_rank);
    long long n_pe = mul3(t_q, n_head, d_rope);
    FITS32(n_q);
    FITS32(n_pe);
    FITS32(mul(cache_rows, w));
    FITS32(idx_count);
    CHECK(q_lat != NULL, MLA_E_NULL_POINTER);
    CHECK(d_rope == 0 || q_pe != NULL, MLA_E_NULL_POINTER);
    CHECK(cache != NULL, MLA_E_NULL_POINTER);
    CHECK(idx_count == 0 || idx != NULL, MLA_E_NULL_POINTER);
    CHECK(o_lat != NULL, MLA_E_NULL_POINTER);
    NO_ALIAS(o_lat, n_q * 4, q_lat, n_q * 4);
    if (d_rope > 0) NO_ALIAS(o_lat, n_q * 4, q_pe, n_pe * 4);
    NO_ALIAS(o_lat, n_q * 4, cache, cache_rows * w * 4);
    NO_ALIAS(o_lat, n_q * 4, idx, idx_count * 4);
    return MLA_OK;
}

int mla_validate_attn_absorbed(const float *q_lat, const float *q_pe, const float *cache,
                               const float *o_lat, int32_t n_head, int32_t kv_rank, int32_t d_rope,
                               int32_t t_q, int32_t t_kv, float scale) {
    CHECK(n_head >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(kv_rank >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(d_rope >= 0, MLA_E_NEGATIVE_ARG);
    CHECK(t_q >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(t_kv >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(d_rope % 2 == 0, MLA_E_ODD_ROPE);
    CHECK(kv_rank <= MLA_MAX_RANK, MLA_E_RANK_TOO_BIG);
    CHECK(d_rope <= MLA_MAX_ROPE, MLA_E_ROPE_TOO_BIG);
    CHECK(t_q <= t_kv, MLA_E_TQ_GT_TKV);
    return validate_attn_common(q_lat, q_pe, cache, o_lat, n_head, kv_rank, d_rope, t_q, t_kv,
                                scale, NULL, 0);
}

int mla_validate_attn_gathered(const float *q_lat, const float *q_pe, const float *cache,
                               const int32_t *idx, const float *o_lat, int32_t n_head,
                               int32_t kv_rank, int32_t d_rope, int32_t t_q, int32_t n_slots,
                               float scale) {
    CHECK(n_head >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(kv_rank >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(d_rope >= 0, MLA_E_NEGATIVE_ARG);
    CHECK(t_q >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(n_slots >= 0, MLA_E_NEGATIVE_ARG);
    CHECK(n_slots != 0, MLA_E_EMPTY_GATHER);
    CHECK(d_rope % 2 == 0, MLA_E_ODD_ROPE);
    CHECK(kv_rank <= MLA_MAX_RANK, MLA_E_RANK_TOO_BIG);
    CHECK(d_rope <= MLA_MAX_ROPE, MLA_E_ROPE_TOO_BIG);
    /* The cache length is not an argument: only the pointer is checked; its extent for the
     * alias check is taken as one row (the caller guarantees the listed rows exist). */
    return validate_attn_common(q_lat, q_pe, cache, o_lat, n_head, kv_rank, d_rope, t_q, 1, scale,
                                idx, (long long)t_q * n_slots);
}

int mla_validate_index_append_ring(const float *plane, const float *a, const float *b, int32_t slot,
                                   int32_t t, int32_t wa, int32_t wb, int32_t rows) {
    CHECK(slot >= 0, MLA_E_NEGATIVE_ARG);
    CHECK(t >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(wa >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(wb >= 0, MLA_E_NEGATIVE_ARG);
    CHECK(rows >= 0, MLA_E_NEGATIVE_ARG);
    CHECK(rows == 0 || t <= rows, MLA_E_RING_SELF_OVERLAP);
    long long w = (long long)wa + wb;
    long long plane_rows = rows ? (long long)rows : (long long)slot + t;
    FITS32((long long)slot + t);
    FITS32(mul(plane_rows, w));
    FITS32(mul(t, w));
    CHECK(plane != NULL, MLA_E_NULL_POINTER);
    CHECK(a != NULL, MLA_E_NULL_POINTER);
    CHECK(wb == 0 || b != NULL, MLA_E_NULL_POINTER);
    /* The written rows may wrap: check the whole ring (or the flat written range). */
    const float *lo = rows ? plane : plane + (long long)slot * w;
    long long span = rows ? plane_rows * w * 4 : (long long)t * w * 4;
    NO_ALIAS(lo, span, a, (long long)t * wa * 4);
    NO_ALIAS(lo, span, b, (long long)t * wb * 4);
    return MLA_OK;
}

int mla_validate_kpool_pool_keys(const float *state, const float *ape, const float *pool_keys,
                                 int32_t pool_begin, int32_t n_pools, int32_t pool, int32_t d,
                                 int32_t state_rows) {
    CHECK(pool_begin >= 0, MLA_E_NEGATIVE_ARG);
    CHECK(n_pools >= 0, MLA_E_NEGATIVE_ARG);
    CHECK(state_rows >= 0, MLA_E_NEGATIVE_ARG);
    CHECK(pool >= 1 && pool <= MLA_MAX_POOL, MLA_E_POOL_RANGE);
    CHECK(d >= 1, MLA_E_INDEX_DIM);
    CHECK(d <= MLA_MAX_INDEX_DIM, MLA_E_INDEX_DIM_TOO_BIG);
    CHECK(pool_begin <= n_pools, MLA_E_POOL_BEGIN_RANGE);
    CHECK(state_rows % pool == 0, MLA_E_RING_NOT_POOL_MULTIPLE);
    CHECK(state_rows == 0 || (long long)pool_begin * pool >= (long long)n_pools * pool - state_rows,
          MLA_E_RING_OVERWRITTEN);
    long long total_rows = mul(n_pools, pool);
    long long state_n = mul3(state_rows ? (long long)state_rows : total_rows, 2, d);
    FITS32(total_rows);
    FITS32(state_n);
    FITS32(mul(n_pools, d));
    CHECK(state != NULL, MLA_E_NULL_POINTER);
    CHECK(ape != NULL, MLA_E_NULL_POINTER);
    CHECK(pool_keys != NULL, MLA_E_NULL_POINTER);
    long long keys_b = (long long)n_pools * d * 4;
    NO_ALIAS(pool_keys, keys_b, state, state_n * 4);
    NO_ALIAS(pool_keys, keys_b, ape, (long long)pool * d * 4);
    return MLA_OK;
}

/* 40031: the last query would see a complete pool that is not listed (its row reaches the last
 * row of pool n_pools), so its candidate set would silently lose rows. */
static int query_beyond_pools(int32_t t_q, int32_t n_pools, int32_t pool, int32_t first_pos) {
    return (long long)first_pos + t_q - 1 >= ((long long)n_pools + 1) * pool - 1;
}

int mla_validate_kpool_score(const float *q, const float *pool_keys, const float *hw,
                             const float *score, int32_t t_q, int32_t heads, int32_t d,
                             int32_t n_pools, int32_t pool, int32_t first_pos, float qk_scale,
                             float head_scale) {
    CHECK(t_q >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(n_pools >= 0, MLA_E_NEGATIVE_ARG);
    CHECK(first_pos >= 0, MLA_E_NEGATIVE_ARG);
    CHECK(heads >= 1 && heads <= MLA_MAX_INDEX_HEADS, MLA_E_INDEX_HEADS_RANGE);
    CHECK(d >= 1, MLA_E_INDEX_DIM);
    CHECK(d <= MLA_MAX_INDEX_DIM, MLA_E_INDEX_DIM_TOO_BIG);
    CHECK(pool >= 1 && pool <= MLA_MAX_POOL, MLA_E_POOL_RANGE);
    CHECK((long long)t_q * n_pools <= MLA_MAX_GRID_X, MLA_E_GRID_CONTRACT);
    CHECK(!query_beyond_pools(t_q, n_pools, pool, first_pos), MLA_E_QUERY_BEYOND_POOLS);
    CHECK(isfinite(qk_scale) && isfinite(head_scale), MLA_E_BAD_SCALE);
    long long n_q = mul3(t_q, heads, d), n_k = mul(n_pools, d), n_hw = mul(t_q, heads),
              n_s = mul(t_q, n_pools);
    FITS32(n_q);
    FITS32(n_k);
    FITS32(n_s);
    FITS32((long long)first_pos + t_q);
    CHECK(q != NULL, MLA_E_NULL_POINTER);
    CHECK(pool_keys != NULL, MLA_E_NULL_POINTER);
    CHECK(hw != NULL, MLA_E_NULL_POINTER);
    CHECK(score != NULL, MLA_E_NULL_POINTER);
    NO_ALIAS(score, n_s * 4, q, n_q * 4);
    NO_ALIAS(score, n_s * 4, pool_keys, n_k * 4);
    NO_ALIAS(score, n_s * 4, hw, n_hw * 4);
    return MLA_OK;
}

int mla_validate_kpool_select(const float *score, const int32_t *idx, int32_t t_q, int32_t n_pools,
                              int32_t pool, int32_t select_k, int32_t width, int32_t first_pos,
                              int32_t always_tail) {
    CHECK(t_q >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(n_pools >= 0, MLA_E_NEGATIVE_ARG);
    CHECK(select_k >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(width >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(first_pos >= 0, MLA_E_NEGATIVE_ARG);
    CHECK(pool >= 1 && pool <= MLA_MAX_POOL, MLA_E_POOL_RANGE);
    CHECK((long long)t_q * n_pools <= MLA_MAX_GRID_X, MLA_E_GRID_CONTRACT);
    CHECK((long long)width >= (long long)select_k * pool + pool - 1, MLA_E_WIDTH_TOO_NARROW);
    CHECK(always_tail == 0 || always_tail == 1, MLA_E_BAD_FLAG);
    CHECK(always_tail || first_pos >= pool - 1, MLA_E_EMPTY_CANDIDATES);
    CHECK(!query_beyond_pools(t_q, n_pools, pool, first_pos), MLA_E_QUERY_BEYOND_POOLS);
    long long n_s = mul(t_q, n_pools), n_i = mul(t_q, width);
    FITS32(n_s);
    FITS32(n_i);
    FITS32((long long)first_pos + t_q);
    CHECK(score != NULL || n_s == 0, MLA_E_NULL_POINTER);
    CHECK(idx != NULL, MLA_E_NULL_POINTER);
    NO_ALIAS(idx, n_i * 4, score, n_s * 4);
    return MLA_OK;
}

int mla_validate_bf16_gemm_sb(const void *w_bf16, const void *x_bf16, const void *y, int32_t m,
                              int32_t n, int32_t k, int64_t x_rs, int64_t x_bs, int64_t y_rs,
                              int64_t y_bs, int32_t batch, int32_t y_is_bf16, const void *ws,
                              size_t ws_bytes) {
    CHECK(m >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(n >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(k >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(batch >= 1, MLA_E_NONPOSITIVE_EXTENT);
    CHECK(y_is_bf16 == 0 || y_is_bf16 == 1, MLA_E_BAD_FLAG);
    CHECK(x_rs >= k && y_rs >= n && x_bs >= 0 && y_bs >= 0, MLA_E_GEMM_STRIDE);
    const long long lim = 1LL << 62;
    /* One past the last element each operand touches (each factor < 2^31, strides bounded
     * first so the products cannot overflow). */
    CHECK(x_rs < lim / m && y_rs < lim / m && x_bs < lim / batch && y_bs < lim / batch,
          MLA_E_INDEX_OVERFLOW);
    long long x_end = (long long)(batch - 1) * x_bs + (long long)(m - 1) * x_rs + k;
    long long y_end = (long long)(batch - 1) * y_bs + (long long)(m - 1) * y_rs + n;
    long long w_end = mul3(batch, n, k);
    CHECK(x_end < lim && y_end < lim && w_end < lim, MLA_E_INDEX_OVERFLOW);
    CHECK(w_bf16 != NULL, MLA_E_NULL_POINTER);
    CHECK(x_bf16 != NULL, MLA_E_NULL_POINTER);
    CHECK(y != NULL, MLA_E_NULL_POINTER);
    CHECK(ws != NULL || ws_bytes == 0, MLA_E_NULL_POINTER);
    long long y_b = mul(y_end, y_is_bf16 ? 2 : 4);
    NO_ALIAS(y, y_b, w_bf16, mul(w_end, 2));
    NO_ALIAS(y, y_b, x_bf16, mul(x_end, 2));
    NO_ALIAS(y, y_b, ws, (long long)ws_bytes);
    return MLA_OK;
}
