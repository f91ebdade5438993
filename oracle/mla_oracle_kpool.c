/* mla_oracle_kpool.c: the CPU oracle of the DSA k-pool indexer launchers (oracle/mla_oracle.h,
 * docs/kpool.md). Naive loops in a fixed order; built with -ffp-contract=off and no fast-math,
 * so each f32 operation below is one round-to-nearest operation, exactly as written.
 * (oracle_attn_gathered_f32 lives in mla_oracle_dense.c beside the attention it reuses.) */
#include "oracle/mla_oracle.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void *xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) abort(); /* the oracle has no error channel; running out of host memory is fatal */
    return p;
}

/* Row (slot + i) mod rows of a ring plane, or slot + i of a flat one (rows == 0). */
void oracle_index_append_ring_f32(float *plane, const float *a, const float *b, int32_t slot,
                                  int32_t t, int32_t wa, int32_t wb, int32_t rows) {
    int64_t width = (int64_t)wa + wb;
    for (int64_t i = 0; i < t; i++) {
        int64_t row = (int64_t)slot + i;
        if (rows > 0) row %= rows;
        memcpy(plane + row * width, a + i * wa, (size_t)wa * sizeof(float));
        if (wb > 0) memcpy(plane + row * width + wa, b + i * wb, (size_t)wb * sizeof(float));
    }
}

/* key[p][c] = sum_s w_s * k[p*pool+s][c], w_s = softmax_s((double)gate[p*pool+s][c] +
 * (double)ape[s][c]); state rows [k | gate] (2d wide), logical row r at physical row
 * r % state_rows (state_rows > 0) or r. Max-subtracted softmax and sum in double, one rounding. */
void oracle_kpool_pool_keys_f32(const float *state, const float *ape, float *pool_keys,
                                int32_t pool_begin, int32_t n_pools, int32_t pool, int32_t d,
                                int32_t state_rows) {
    double *logit = xmalloc((size_t)pool * sizeof(double));
    for (int64_t p = pool_begin; p < n_pools; p++) {
        for (int64_t c = 0; c < d; c++) {
            double m = -INFINITY;
            for (int64_t s = 0; s < pool; s++) {
                int64_t row = p * pool + s;
                if (state_rows > 0) row %= state_rows;
                logit[s] = (double)state[row * 2 * d + d + c] + (double)ape[s * d + c];
                if (logit[s] > m) m = logit[s];
            }
            double num = 0.0, den = 0.0;
            for (int64_t s = 0; s < pool; s++) {
                int64_t row = p * pool + s;
                if (state_rows > 0) row %= state_rows;
                double w = exp(logit[s] - m);
                den += w;
                num += w * (double)state[row * 2 * d + c];
            }
            pool_keys[p * d + c] = (float)(num / den);
        }
    }
    free(logit);
}

/* A pool is visible to the query at cache row q when its last row (p+1)*pool - 1 is <= q. */
static int pool_visible(int64_t p, int64_t pool, int64_t q) { return (p + 1) * pool - 1 <= q; }

/* The six-step sequence of mla.h / docs/kpool.md, one f32 rounding per step. */
void oracle_kpool_score_f32(const float *q, const float *pool_keys, const float *hw, float *score,
                            int32_t t_q, int32_t heads, int32_t d, int32_t n_pools, int32_t pool,
                            int32_t first_pos, float qk_scale, float head_scale) {
    for (int64_t i = 0; i < t_q; i++) {
        int64_t q_row = (int64_t)first_pos + i;
        for (int64_t p = 0; p < n_pools; p++) {
            if (!pool_visible(p, pool, q_row)) {
                score[i * n_pools + p] = -INFINITY;
                continue;
            }
            const float *key = pool_keys + p * d;
            float acc = +0.0f;
            for (int64_t h = 0; h < heads; h++) {
                const float *qh = q + (i * heads + h) * d;
                float dot = +0.0f;
                for (int64_t c = 0; c < d; c++) dot = fmaf(qh[c], key[c], dot); /* (1) */
                float s = dot * qk_scale;                                       /* (2) */
                float r = (s < 0.0f) ? 0.0f : s;          /* (3) relu; NaN and -0 pass through */
                float w = hw[i * heads + h] * head_scale; /* (4) */
                float t = w * r;                          /* (5) */
                acc = acc + t;                            /* (6) */
            }
            score[i * n_pools + p] = acc;
        }
    }
}

/* Ascending order of this key == score descending; +0 and -0 equal; every NaN after -inf. */
uint32_t oracle_kpool_desc32(float score) {
    if (isnan(score)) return 0xFFFFFFFFu;
    if (score == 0.0f) score = 0.0f; /* canonical zero: -0 -> +0 */
    uint32_t u;
    memcpy(&u, &score, sizeof u);
    /* ordered_bits: unsigned ascending == float ascending (negatives reversed, sign flipped) */
    uint32_t ordered = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    return ~ordered;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The rows one query may attend to, in select order (docs/kpool.md):
 *  1. candidates: the visible pools p < min(n_pools, (q+1)/pool);
 *  2. rank them by the 64-bit key (desc32(score[p]) << 32) | p ascending (score descending,
 *     pool ascending; every key distinct, so the order is total) and keep the first select_k;
 *  3. the kept pools are expanded to their rows p*pool .. p*pool+pool-1, all rows in ascending
 *     order (pools are disjoint, so this is the kept pools sorted by index, then expanded);
 *  4. if always_tail: rows (q+1)/pool*pool .. q (the query's incomplete pool).
 * A full sort of the candidates: O(n log n), plain and obviously total. */
static int32_t allowed_rows(const float *score_row, int64_t q, int32_t n_pools, int32_t pool,
                            int32_t select_k, int32_t always_tail, uint64_t *keys,
                            int32_t *rows_out) {
    int64_t n_vis = (q + 1) / pool;
    if (n_vis > n_pools) n_vis = n_pools;
    if (n_vis < 0) n_vis = 0;
    for (int64_t p = 0; p < n_vis; p++)
        keys[p] = ((uint64_t)oracle_kpool_desc32(score_row[p]) << 32) | (uint64_t)p;
    qsort(keys, (size_t)n_vis, sizeof(uint64_t), cmp_u64);
    int64_t n_sel = n_vis < select_k ? n_vis : select_k;
    for (int64_t s = 0; s < n_sel; s++)
        keys[s] &= 0xFFFFFFFFu; /* keep the pool index: the rank has done its work */
    qsort(keys, (size_t)n_sel, sizeof(uint64_t), cmp_u64);
    int32_t n = 0;
    for (int64_t s = 0; s < n_sel; s++) {
        int64_t p = (int64_t)keys[s];
        for (int64_t r = 0; r < pool; r++) rows_out[n++] = (int32_t)(p * pool + r);
    }
    if (always_tail)
        for (int64_t r = (q + 1) / pool * pool; r <= q; r++) rows_out[n++] = (int32_t)r;
    return n;
}

void oracle_kpool_select_f32(const float *score, int32_t *idx, int32_t t_q, int32_t n_pools,
                             int32_t pool, int32_t select_k, int32_t width, int32_t first_pos,
                             int32_t always_tail) {
    uint64_t *keys = xmalloc((size_t)n_pools * sizeof(uint64_t));
    for (int64_t i = 0; i < t_q; i++) {
        int32_t *out = idx + i * width;
        int32_t n = allowed_rows(score + i * n_pools, (int64_t)first_pos + i, n_pools, pool,
                                 select_k, always_tail, keys, out);
        for (int32_t s = n; s < width; s++) out[s] = -1;
    }
    free(keys);
}

int32_t oracle_kpool_allowed_tokens(const float *score_row, int32_t q_row, int32_t n_pools,
                                    int32_t pool, int32_t select_k, int32_t always_tail,
                                    int32_t *rows_out) {
    uint64_t *keys = xmalloc((size_t)n_pools * sizeof(uint64_t));
    int32_t n =
        allowed_rows(score_row, q_row, n_pools, pool, select_k, always_tail, keys, rows_out);
    free(keys);
    return n;
}
