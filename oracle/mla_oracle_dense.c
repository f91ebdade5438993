/* mla_oracle_dense.c: the CPU oracle of the dense MLA launchers and the bf16 GEMM
 * (oracle/mla_oracle.h). Naive loops in a fixed order; built with -ffp-contract=off and no
 * fast-math, so every expression below is evaluated exactly as written. */
#include "oracle/mla_oracle.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------- rope ---------- */

/* DESIGN.md section 2: e = f32(2j) / f32(d_rope), p = f32(pow(base, e)) computed in double and
 * rounded once, inv_freq = 1.0f / p. Each line is one f32 rounding. */
float oracle_rope_inv_freq(int32_t j, int32_t d_rope, float base) {
    float e = (float)(2 * j) / (float)d_rope;
    float p = (float)pow((double)base, (double)e);
    return 1.0f / p;
}

float oracle_rope_angle(int32_t pos, int32_t j, int32_t d_rope, float base) {
    return (float)pos * oracle_rope_inv_freq(j, d_rope, base);
}

void oracle_rope_interleaved_f32(float *x, int32_t n_pos, int32_t n_vec, int32_t d_rope,
                                 const int32_t *positions, float base) {
    if (d_rope == 0) return;
    for (int32_t p = 0; p < n_pos; p++) {
        for (int32_t j = 0; j < d_rope / 2; j++) {
            /* The angle depends on (p, j) only: shared by every vector of the position. */
            double theta = (double)oracle_rope_angle(positions[p], j, d_rope, base);
            double c = cos(theta);
            double s = sin(theta);
            for (int32_t v = 0; v < n_vec; v++) {
                float *pair = x + ((int64_t)p * n_vec + v) * d_rope + 2 * j;
                double x0 = (double)pair[0];
                double x1 = (double)pair[1];
                pair[0] = (float)(x0 * c - x1 * s);
                pair[1] = (float)(x0 * s + x1 * c);
            }
        }
    }
}

/* ----------------------------------------------------------------------- copies ---------- */

void oracle_split_latent_f32(const float *kv, float *c_kv, float *k_pe, int32_t t, int32_t kv_rank,
                             int32_t d_rope) {
    int64_t width = (int64_t)kv_rank + d_rope;
    for (int64_t i = 0; i < t; i++) {
        memcpy(c_kv + i * kv_rank, kv + i * width, (size_t)kv_rank * sizeof(float));
        if (d_rope > 0)
            memcpy(k_pe + i * d_rope, kv + i * width + kv_rank, (size_t)d_rope * sizeof(float));
    }
}

void oracle_append_latent_f32(float *cache, const float *c_kv, const float *k_pe, int32_t slot,
                              int32_t t, int32_t kv_rank, int32_t d_rope) {
    int64_t width = (int64_t)kv_rank + d_rope;
    for (int64_t i = 0; i < t; i++) {
        float *row = cache + ((int64_t)slot + i) * width;
        memcpy(row, c_kv + i * kv_rank, (size_t)kv_rank * sizeof(float));
        if (d_rope > 0) memcpy(row + kv_rank, k_pe + i * d_rope, (size_t)d_rope * sizeof(float));
    }
}

/* ------------------------------------------------------------ absorb / decompress -------- */

/* q_lat[i][h][r] = sum_d q_nope[i][h][d] * wk_b[h][d][r]: acc = 0.0f, then
 * acc = fmaf(q_nope[i][h][d], wk_b[h][d][r], acc) for d ascending (mla.h, bit-exact). */
void oracle_absorb_q_f32(const float *q_nope, const float *wk_b, float *q_lat, int32_t t_q,
                         int32_t n_head, int32_t d_nope, int32_t kv_rank) {
    for (int64_t i = 0; i < t_q; i++) {
        for (int64_t h = 0; h < n_head; h++) {
            const float *qn = q_nope + (i * n_head + h) * d_nope;
            const float *w = wk_b + h * d_nope * kv_rank;
            float *out = q_lat + (i * n_head + h) * kv_rank;
            for (int64_t r = 0; r < kv_rank; r++) {
                float acc = 0.0f;
                for (int64_t d = 0; d < d_nope; d++) acc = fmaf(qn[d], w[d * kv_rank + r], acc);
                out[r] = acc;
            }
        }
    }
}

/* out[i][h][v] = sum_r wv_b[h][v][r] * o_lat[i][h][r]: acc = 0.0f, then
 * acc = fmaf(wv_b[h][v][r], o_lat[i][h][r], acc) for r ascending (mla.h, bit-exact). */
void oracle_decompress_v_f32(const float *o_lat, const float *wv_b, float *out, int32_t t_q,
                             int32_t n_head, int32_t d_v, int32_t kv_rank) {
    for (int64_t i = 0; i < t_q; i++) {
        for (int64_t h = 0; h < n_head; h++) {
            const float *ol = o_lat + (i * n_head + h) * kv_rank;
            float *o = out + (i * n_head + h) * d_v;
            for (int64_t v = 0; v < d_v; v++) {
                const float *w = wv_b + (h * d_v + v) * kv_rank;
                float acc = 0.0f;
                for (int64_t r = 0; r < kv_rank; r++) acc = fmaf(w[r], ol[r], acc);
                o[v] = acc;
            }
        }
    }
}

/* --------------------------------------------------------------------- attention --------- */

/* Softmax attention of one (query, head) over the cache rows rows[0..n) (n >= 1), everything
 * in double, one rounding per output:
 *   l_j = scale * (q_lat . c_kv_j + q_pe . k_pe_j),  m = max_j l_j,
 *   o[r] = (sum_j exp(l_j - m) * c_kv_j[r]) / (sum_j exp(l_j - m)).
 * `rows` NULL means rows 0..n-1. logit[n] and acc[kv_rank] are scratch. */
static void attend_one(const float *ql, const float *qp, const float *cache, const int32_t *rows,
                       int64_t n, int32_t kv_rank, int32_t d_rope, float scale, double *logit,
                       double *acc, float *out) {
    int64_t width = (int64_t)kv_rank + d_rope;
    double m = -INFINITY;
    for (int64_t j = 0; j < n; j++) {
        const float *row = cache + (rows ? (int64_t)rows[j] : j) * width;
        double dot = 0.0;
        for (int32_t r = 0; r < kv_rank; r++) dot += (double)ql[r] * (double)row[r];
        for (int32_t r = 0; r < d_rope; r++) dot += (double)qp[r] * (double)row[kv_rank + r];
        logit[j] = (double)scale * dot;
        if (logit[j] > m) m = logit[j];
    }
    for (int32_t r = 0; r < kv_rank; r++) acc[r] = 0.0;
    double sum = 0.0;
    for (int64_t j = 0; j < n; j++) {
        const float *row = cache + (rows ? (int64_t)rows[j] : j) * width;
        double w = exp(logit[j] - m);
        sum += w;
        for (int32_t r = 0; r < kv_rank; r++) acc[r] += w * (double)row[r];
    }
    for (int32_t r = 0; r < kv_rank; r++) out[r] = (float)(acc[r] / sum);
}

static void *xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) abort(); /* the oracle has no error channel; running out of host memory is fatal */
    return p;
}

/* mla.h: query i sits at cache row t_kv - t_q + i and sees rows 0..=that row. */
void oracle_attn_absorbed_f32(const float *q_lat, const float *q_pe, const float *cache,
                              float *o_lat, int32_t n_head, int32_t kv_rank, int32_t d_rope,
                              int32_t t_q, int32_t t_kv, float scale) {
    double *logit = xmalloc((size_t)t_kv * sizeof(double));
    double *acc = xmalloc((size_t)kv_rank * sizeof(double));
    for (int64_t i = 0; i < t_q; i++) {
        int64_t n_rows = (int64_t)t_kv - t_q + i + 1;
        for (int64_t h = 0; h < n_head; h++) {
            int64_t qh = i * n_head + h;
            attend_one(q_lat + qh * kv_rank, d_rope > 0 ? q_pe + qh * d_rope : NULL, cache, NULL,
                       n_rows, kv_rank, d_rope, scale, logit, acc, o_lat + qh * kv_rank);
        }
    }
    free(acc);
    free(logit);
}

/* attn_absorbed over idx[i][0..n_slots): negative entries skipped, repeats counted once per
 * occurrence (they are simply listed twice), no valid entry -> zeros. */
void oracle_attn_gathered_f32(const float *q_lat, const float *q_pe, const float *cache,
                              const int32_t *idx, float *o_lat, int32_t n_head, int32_t kv_rank,
                              int32_t d_rope, int32_t t_q, int32_t n_slots, float scale) {
    int32_t *rows = xmalloc((size_t)n_slots * sizeof(int32_t));
    double *logit = xmalloc((size_t)n_slots * sizeof(double));
    double *acc = xmalloc((size_t)kv_rank * sizeof(double));
    for (int64_t i = 0; i < t_q; i++) {
        int64_t n = 0;
        for (int64_t s = 0; s < n_slots; s++) {
            int32_t row = idx[i * n_slots + s];
            if (row >= 0) rows[n++] = row;
        }
        for (int64_t h = 0; h < n_head; h++) {
            int64_t qh = i * n_head + h;
            float *out = o_lat + qh * kv_rank;
            if (n == 0) {
                for (int32_t r = 0; r < kv_rank; r++) out[r] = 0.0f;
                continue;
            }
            attend_one(q_lat + qh * kv_rank, d_rope > 0 ? q_pe + qh * d_rope : NULL, cache, rows, n,
                       kv_rank, d_rope, scale, logit, acc, out);
        }
    }
    free(acc);
    free(logit);
    free(rows);
}

/* -------------------------------------------------------------------------- bf16 ---------- */

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Round to nearest, ties to even, on the upper 16 bits; overflow rounds to +-inf as IEEE
 * requires. A NaN keeps its sign and top payload bits and is made quiet (bit 6 of the bf16). */
uint16_t oracle_bf16_from_f32(float f) {
    uint32_t u = f32_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x0040u);
    uint32_t lsb = (u >> 16) & 1u;
    return (uint16_t)((u + 0x7FFFu + lsb) >> 16);
}

float oracle_f32_from_bf16(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* y_b[i][j] = sum_kk x_b[i][kk] * w_b[j][kk]. Each bf16 product is exact in double (8 + 8
 * significant bits); the k-term sum runs in double, kk ascending, and is rounded once to f32
 * (then once more to bf16 when y_is_bf16). */
void oracle_bf16_gemm_sb(const uint16_t *w_bf16, const uint16_t *x_bf16, void *y, int32_t m,
                         int32_t n, int32_t k, int64_t x_rs, int64_t x_bs, int64_t y_rs,
                         int64_t y_bs, int32_t batch, int32_t y_is_bf16) {
    for (int64_t b = 0; b < batch; b++) {
        const uint16_t *wb = w_bf16 + b * n * k;
        for (int64_t i = 0; i < m; i++) {
            const uint16_t *xr = x_bf16 + b * x_bs + i * x_rs;
            for (int64_t j = 0; j < n; j++) {
                const uint16_t *wr = wb + j * k;
                double acc = 0.0;
                for (int64_t kk = 0; kk < k; kk++)
                    acc +=
                        (double)oracle_f32_from_bf16(xr[kk]) * (double)oracle_f32_from_bf16(wr[kk]);
                float v = (float)acc;
                int64_t at = b * y_bs + i * y_rs + j;
                if (y_is_bf16)
                    ((uint16_t *)y)[at] = oracle_bf16_from_f32(v);
                else
                    ((float *)y)[at] = v;
            }
        }
    }
}
