/* cases.c: the golden case table, its stages, regeneration and verification. See cases.h. */
#include "tests/lib/case.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "oracle/mla_oracle.h"

/* ------------------------------------------------------------------ context ---------------- */
int mla_ctx_fail(mla_ctx *ctx, const char *fmt, ...) {
    int n = snprintf(ctx->err, sizeof ctx->err, "case %s, stage %s: ", ctx->c ? ctx->c->name : "?",
                     ctx->stage ? ctx->stage : "?");
    if (n < 0 || (size_t)n >= sizeof ctx->err) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->err + n, sizeof ctx->err - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

void mla_ctx_free(mla_ctx *ctx) {
    for (size_t i = 0; i < ctx->n; i++) free(ctx->t[i].data);
    free(ctx->t);
    ctx->t = NULL;
    ctx->n = ctx->cap = 0;
}

mla_tensor *mla_ctx_get(mla_ctx *ctx, const char *name) {
    for (size_t i = 0; i < ctx->n; i++)
        if (strcmp(ctx->t[i].name, name) == 0) return &ctx->t[i];
    return NULL;
}

static size_t numel_of(int ndim, const int64_t *shape) {
    size_t n = 1;
    for (int i = 0; i < ndim; i++) n *= (size_t)shape[i];
    return n;
}

static mla_tensor *new_tensor(mla_ctx *ctx, const char *name, st_dtype dtype, int ndim,
                              const int64_t *shape) {
    if (mla_ctx_get(ctx, name)) {
        mla_ctx_fail(ctx, "tensor '%s' registered twice", name);
        return NULL;
    }
    if (strlen(name) >= sizeof ctx->t[0].name || ndim > ST_MAX_DIMS) {
        mla_ctx_fail(ctx, "bad tensor name or rank '%s'", name);
        return NULL;
    }
    if (ctx->n == ctx->cap) {
        size_t nc = ctx->cap ? 2 * ctx->cap : 16;
        mla_tensor *nt = realloc(ctx->t, nc * sizeof *nt);
        if (!nt) {
            mla_ctx_fail(ctx, "out of memory");
            return NULL;
        }
        ctx->t = nt;
        ctx->cap = nc;
    }
    mla_tensor *t = &ctx->t[ctx->n];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->dtype = dtype;
    t->ndim = ndim;
    memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
    t->nbytes = numel_of(ndim, shape) * st_dtype_size(dtype);
    t->data = calloc(t->nbytes ? t->nbytes : 1, 1);
    if (!t->data) {
        mla_ctx_fail(ctx, "out of memory (%zu bytes for '%s')", t->nbytes, name);
        return NULL;
    }
    t->stage = ctx->stage;
    ctx->n++;
    return t;
}

/* Fills buf with elements 0..n-1 of `name` (four elements per Philox call). */
static void fill_f32(float *buf, size_t n, mla_fill_kind kind, uint32_t seed, const char *name,
                     float scale) {
    uint32_t h = mla_fill_name_hash(name);
    philox4x32_key_t k = {{seed, h}};
    for (size_t b = 0; b < n; b += 4) {
        uint64_t blk = (uint64_t)b >> 2;
        philox4x32_ctr_t c = {{(uint32_t)blk, (uint32_t)(blk >> 32), 0u, 0u}};
        philox4x32_ctr_t r = philox4x32(c, k);
        for (size_t l = 0; l < 4 && b + l < n; l++) {
            uint32_t w = r.v[l];
            float v;
            if (kind == MLA_FILL_SMALL_INT)
                v = (float)((int32_t)(w % 9u) - 4) * scale;
            else
                v = ((float)((int32_t)(w >> 8) - (int32_t)(1 << 23)) * 0x1p-23f) * scale;
            buf[b + l] = v;
        }
    }
}

const float *mla_ctx_input_f32(mla_ctx *ctx, const char *name, int ndim, const int64_t *shape,
                               mla_fill_kind kind, float scale) {
    mla_tensor *t = mla_ctx_get(ctx, name);
    if (t) { /* shared by several stages: must be the same tensor */
        if (t->is_output || t->dtype != ST_F32 || t->ndim != ndim || t->fill != kind ||
            t->fill_scale != scale || memcmp(t->shape, shape, (size_t)ndim * sizeof *shape)) {
            mla_ctx_fail(ctx, "input '%s' requested with a different definition", name);
            return NULL;
        }
        return t->data;
    }
    t = new_tensor(ctx, name, ST_F32, ndim, shape);
    if (!t) return NULL;
    t->fill = kind;
    t->fill_scale = scale;
    fill_f32(t->data, t->nbytes / 4, kind, ctx->c->seed, name, scale);
    return t->data;
}

int32_t *mla_ctx_input_i32(mla_ctx *ctx, const char *name, int ndim, const int64_t *shape) {
    mla_tensor *t = new_tensor(ctx, name, ST_I32, ndim, shape);
    if (!t) return NULL;
    t->fill = MLA_FILL_EXPLICIT;
    t->fill_scale = 0.0f;
    return t->data;
}

void *mla_ctx_output(mla_ctx *ctx, const char *name, st_dtype dtype, int ndim,
                     const int64_t *shape, mla_tol_class tol) {
    mla_tensor *t = new_tensor(ctx, name, dtype, ndim, shape);
    if (!t) return NULL;
    t->is_output = 1;
    t->tol = tol;
    return t->data;
}

static const float *need_f32(mla_ctx *ctx, const char *name) {
    mla_tensor *t = mla_ctx_get(ctx, name);
    if (!t || t->dtype != ST_F32) {
        mla_ctx_fail(ctx, "needs f32 tensor '%s' from an earlier stage", name);
        return NULL;
    }
    return t->data;
}

/* ------------------------------------------------------------------ dense stages ----------- */
#define G (&ctx->c->geom)
#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})
#define NDIM(...) ((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))

/* Fill scales: activations and cache rows ~ U(-1, 1), weights ~ U(-1, 1) / sqrt(fan_in). */
static float w_scale(int32_t fan_in) { return (float)(1.0 / sqrt((double)fan_in)); }

static int stage_rope(mla_ctx *ctx) {
    if (G->d_rope == 0) return 0; /* NoPE: nothing to rotate */
    int32_t n_pos = G->n_positions ? G->n_positions : G->t_q;
    int64_t pshape[1] = {n_pos};
    int32_t *pos = mla_ctx_input_i32(ctx, "positions", 1, pshape);
    if (!pos) return -1;
    for (int32_t i = 0; i < n_pos; i++)
        pos[i] = G->n_positions ? G->positions[i] : G->t_kv - G->t_q + i;
    const int64_t shape[3] = {n_pos, G->n_head, G->d_rope};
    const float *raw = mla_ctx_input_f32(ctx, "q_pe_raw", 3, shape, MLA_FILL_REALISTIC, 1.0f);
    if (!raw) return -1;
    float *q_pe = mla_ctx_output(ctx, "q_pe", ST_F32, 3, shape, MLA_TOL_ROPE);
    if (!q_pe) return -1;
    memcpy(q_pe, raw, numel_of(3, shape) * sizeof(float));
    oracle_rope_interleaved_f32(q_pe, n_pos, G->n_head, G->d_rope, pos, G->rope_base);
    return 0;
}

static int stage_split_latent(mla_ctx *ctx) {
    int32_t w = G->kv_rank + G->d_rope;
    const float *kv = mla_ctx_input_f32(ctx, "kv", 2, SHAPE(G->t_q, w), MLA_FILL_REALISTIC, 1.0f);
    if (!kv) return -1;
    float *c_kv = mla_ctx_output(ctx, "c_kv", ST_F32, 2, SHAPE(G->t_q, G->kv_rank), MLA_TOL_EXACT);
    if (!c_kv) return -1;
    float *k_pe = NULL;
    if (G->d_rope > 0) {
        k_pe = mla_ctx_output(ctx, "k_pe", ST_F32, 2, SHAPE(G->t_q, G->d_rope), MLA_TOL_EXACT);
        if (!k_pe) return -1;
    }
    oracle_split_latent_f32(kv, c_kv, k_pe, G->t_q, G->kv_rank, G->d_rope);
    return 0;
}

/* The appended rows land at slot t_kv - t_q of the generated cache; only those rows are an
 * output ("cache_rows"); the rest of the cache is unchanged by contract. */
static int stage_append_latent(mla_ctx *ctx) {
    int32_t w = G->kv_rank + G->d_rope, slot = G->t_kv - G->t_q;
    const float *c_kv = need_f32(ctx, "c_kv");
    const float *k_pe = G->d_rope > 0 ? need_f32(ctx, "k_pe") : NULL;
    if (!c_kv || (G->d_rope > 0 && !k_pe)) return -1;
    const float *cache =
        mla_ctx_input_f32(ctx, "cache", 2, SHAPE(G->t_kv, w), MLA_FILL_REALISTIC, 1.0f);
    if (!cache) return -1;
    float *rows = mla_ctx_output(ctx, "cache_rows", ST_F32, 2, SHAPE(G->t_q, w), MLA_TOL_EXACT);
    if (!rows) return -1;
    size_t n = (size_t)G->t_kv * (size_t)w;
    float *tmp = malloc(n * sizeof *tmp);
    if (!tmp) return mla_ctx_fail(ctx, "out of memory");
    memcpy(tmp, cache, n * sizeof *tmp);
    oracle_append_latent_f32(tmp, c_kv, k_pe, slot, G->t_q, G->kv_rank, G->d_rope);
    memcpy(rows, tmp + (size_t)slot * (size_t)w, (size_t)G->t_q * (size_t)w * sizeof *tmp);
    free(tmp);
    return 0;
}

static int stage_absorb_q(mla_ctx *ctx) {
    const float *q_nope =
        mla_ctx_input_f32(ctx, "q_nope", 3, SHAPE(G->t_q, G->n_head, G->d_nope),
                          MLA_FILL_REALISTIC, 1.0f);
    const float *wk_b =
        mla_ctx_input_f32(ctx, "wk_b", 3, SHAPE(G->n_head, G->d_nope, G->kv_rank),
                          MLA_FILL_REALISTIC, w_scale(G->d_nope));
    if (!q_nope || !wk_b) return -1;
    float *q_lat = mla_ctx_output(ctx, "q_lat", ST_F32, 3, SHAPE(G->t_q, G->n_head, G->kv_rank),
                                  MLA_TOL_EXACT);
    if (!q_lat) return -1;
    oracle_absorb_q_f32(q_nope, wk_b, q_lat, G->t_q, G->n_head, G->d_nope, G->kv_rank);
    return 0;
}

/* Inputs: q_lat = absorb_q's output, q_pe = rope's output, cache = the generated cache. */
static int stage_attn_absorbed(mla_ctx *ctx) {
    int32_t w = G->kv_rank + G->d_rope;
    const float *q_lat = need_f32(ctx, "q_lat");
    const float *q_pe = G->d_rope > 0 ? need_f32(ctx, "q_pe") : NULL;
    if (!q_lat || (G->d_rope > 0 && !q_pe)) return -1;
    const float *cache =
        mla_ctx_input_f32(ctx, "cache", 2, SHAPE(G->t_kv, w), MLA_FILL_REALISTIC, 1.0f);
    if (!cache) return -1;
    float *o_lat = mla_ctx_output(ctx, "o_lat", ST_F32, 3, SHAPE(G->t_q, G->n_head, G->kv_rank),
                                  MLA_TOL_ATTN);
    if (!o_lat) return -1;
    oracle_attn_absorbed_f32(q_lat, q_pe, cache, o_lat, G->n_head, G->kv_rank, G->d_rope, G->t_q,
                             G->t_kv, G->scale);
    return 0;
}

static int stage_decompress_v(mla_ctx *ctx) {
    const float *o_lat = need_f32(ctx, "o_lat");
    const float *wv_b = mla_ctx_input_f32(ctx, "wv_b", 3, SHAPE(G->n_head, G->d_v, G->kv_rank),
                                          MLA_FILL_REALISTIC, w_scale(G->kv_rank));
    if (!o_lat || !wv_b) return -1;
    float *out = mla_ctx_output(ctx, "out", ST_F32, 3, SHAPE(G->t_q, G->n_head, G->d_v),
                                MLA_TOL_EXACT);
    if (!out) return -1;
    oracle_decompress_v_f32(o_lat, wv_b, out, G->t_q, G->n_head, G->d_v, G->kv_rank);
    return 0;
}

/* bf16 GEMM absorb: x = bf16(q_nope) viewed [t][H][d_nope] (x_rs = H*d_nope, x_bs = d_nope),
 * w = bf16(wk_b) transposed per head to [kv_rank][d_nope], y [t][H][kv_rank] f32 and bf16. */
static int stage_bf16_absorb(mla_ctx *ctx) {
    int32_t t = G->t_q, H = G->n_head, dn = G->d_nope, R = G->kv_rank;
    const float *q_nope = need_f32(ctx, "q_nope"), *wk_b = need_f32(ctx, "wk_b");
    if (!q_nope || !wk_b) return -1;
    size_t nx = (size_t)t * H * dn, nw = (size_t)H * R * dn;
    uint16_t *x = malloc(nx * 2), *w = malloc(nw * 2);
    float *y32 = mla_ctx_output(ctx, "absorb_bf16_y_f32", ST_F32, 3, SHAPE(t, H, R),
                                MLA_TOL_BF16_GEMM);
    uint16_t *y16 = mla_ctx_output(ctx, "absorb_bf16_y_bf16", ST_BF16, 3, SHAPE(t, H, R),
                                   MLA_TOL_BF16_GEMM);
    if (!x || !w || !y32 || !y16) {
        free(x);
        free(w);
        return y32 && y16 ? mla_ctx_fail(ctx, "out of memory") : -1;
    }
    for (size_t i = 0; i < nx; i++) x[i] = oracle_bf16_from_f32(q_nope[i]);
    for (int32_t h = 0; h < H; h++)
        for (int32_t r = 0; r < R; r++)
            for (int32_t d = 0; d < dn; d++)
                w[((size_t)h * R + r) * dn + d] =
                    oracle_bf16_from_f32(wk_b[((size_t)h * dn + d) * R + r]);
    oracle_bf16_gemm_sb(w, x, y32, t, R, dn, (int64_t)H * dn, dn, (int64_t)H * R, R, H, 0);
    oracle_bf16_gemm_sb(w, x, y16, t, R, dn, (int64_t)H * dn, dn, (int64_t)H * R, R, H, 1);
    free(x);
    free(w);
    return 0;
}

/* bf16 GEMM decompress: x = bf16(o_lat) [t][H][kv_rank], w = bf16(wv_b) [H][d_v][kv_rank],
 * y [t][H][d_v] f32 and bf16. */
static int stage_bf16_decompress(mla_ctx *ctx) {
    int32_t t = G->t_q, H = G->n_head, dv = G->d_v, R = G->kv_rank;
    const float *o_lat = need_f32(ctx, "o_lat"), *wv_b = need_f32(ctx, "wv_b");
    if (!o_lat || !wv_b) return -1;
    size_t nx = (size_t)t * H * R, nw = (size_t)H * dv * R;
    uint16_t *x = malloc(nx * 2), *w = malloc(nw * 2);
    float *y32 = mla_ctx_output(ctx, "decompress_bf16_y_f32", ST_F32, 3, SHAPE(t, H, dv),
                                MLA_TOL_BF16_GEMM);
    uint16_t *y16 = mla_ctx_output(ctx, "decompress_bf16_y_bf16", ST_BF16, 3, SHAPE(t, H, dv),
                                   MLA_TOL_BF16_GEMM);
    if (!x || !w || !y32 || !y16) {
        free(x);
        free(w);
        return y32 && y16 ? mla_ctx_fail(ctx, "out of memory") : -1;
    }
    for (size_t i = 0; i < nx; i++) x[i] = oracle_bf16_from_f32(o_lat[i]);
    for (size_t i = 0; i < nw; i++) w[i] = oracle_bf16_from_f32(wv_b[i]);
    oracle_bf16_gemm_sb(w, x, y32, t, dv, R, (int64_t)H * R, R, (int64_t)H * dv, dv, H, 0);
    oracle_bf16_gemm_sb(w, x, y16, t, dv, R, (int64_t)H * R, R, (int64_t)H * dv, dv, H, 1);
    free(x);
    free(w);
    return 0;
}

/* ------------------------------------------------------------------ k-pool stages ---------- */
/* Indexer inputs: idx_k, idx_gate [t_kv][idx_dim] (the rows [k | gate] appended to the state),
 * idx_ape [pool][idx_dim], idx_q [t_q][heads][idx_dim], idx_hw [t_q][heads]. Fill scales: k, q,
 * ape ~ U(-1, 1); gate ~ U(-4, 4) so the pool softmax is far from uniform; hw ~ U(-1, 1) (head
 * weights of either sign, so scores are a signed mix and rarely tie). */
#define KPOOL_GATE_SCALE 4.0f

static int kpool_rows_inputs(mla_ctx *ctx, const float **k, const float **gate) {
    *k = mla_ctx_input_f32(ctx, "idx_k", 2, SHAPE(G->t_kv, G->idx_dim), MLA_FILL_REALISTIC, 1.0f);
    *gate = mla_ctx_input_f32(ctx, "idx_gate", 2, SHAPE(G->t_kv, G->idx_dim), MLA_FILL_REALISTIC,
                              KPOOL_GATE_SCALE);
    return *k && *gate ? 0 : -1;
}

/* index_append_ring: the state plane [k | gate] after appending every t_kv row.
 * Flat (state_rows == 0): two calls, rows 0..t_kv-t_q-1 (the cached prefix) then the t_q rows
 * of the queries at slot t_kv - t_q; output idx_state [t_kv][2 idx_dim].
 * Ring (state_rows > 0): the chunks of mla_kpool_ring_chunk at slot = logical row (the call
 * wraps it mod state_rows); output idx_state [state_rows][2 idx_dim], the ring's final content. */
static int stage_index_append_ring(mla_ctx *ctx) {
    const float *k, *gate;
    if (kpool_rows_inputs(ctx, &k, &gate)) return -1;
    int32_t d = G->idx_dim, rows = G->state_rows ? G->state_rows : G->t_kv;
    float *plane = mla_ctx_output(ctx, "idx_state", ST_F32, 2, SHAPE(rows, 2 * d), MLA_TOL_EXACT);
    if (!plane) return -1;
    if (G->state_rows == 0) {
        int32_t pre = G->t_kv - G->t_q;
        if (pre > 0) oracle_index_append_ring_f32(plane, k, gate, 0, pre, d, d, 0);
        oracle_index_append_ring_f32(plane, k + (size_t)pre * d, gate + (size_t)pre * d, pre,
                                     G->t_q, d, d, 0);
        return 0;
    }
    int32_t done = 0;
    for (int32_t ck = 0; done < G->t_kv; ck++) {
        int32_t n = mla_kpool_ring_chunk(ck, done, G->t_kv, G->state_rows, G->pool);
        oracle_index_append_ring_f32(plane, k + (size_t)done * d, gate + (size_t)done * d, done,
                                     n, d, d, G->state_rows);
        done += n;
    }
    return 0;
}

/* pool_keys [n_pools][idx_dim], class pool_key. Flat: one full build over idx_state. Ring: the
 * append schedule replayed on a ring with an incremental build (pool_begin = the pools complete
 * before the chunk) after each chunk; the result must equal the flat full build bit for bit
 * (docs/kpool.md), else the stage fails. */
static int stage_pool_keys(mla_ctx *ctx) {
    int32_t d = G->idx_dim, np = G->n_pools, pool = G->pool;
    const float *ape = mla_ctx_input_f32(ctx, "idx_ape", 2, SHAPE(pool, d), MLA_FILL_REALISTIC,
                                         1.0f);
    const float *state = need_f32(ctx, "idx_state");
    if (!ape || !state) return -1;
    if ((int64_t)np * pool > G->t_kv) return mla_ctx_fail(ctx, "n_pools * pool > t_kv");
    float *keys = mla_ctx_output(ctx, "pool_keys", ST_F32, 2, SHAPE(np, d), MLA_TOL_POOL_KEY);
    if (!keys) return -1;
    if (G->state_rows == 0) {
        oracle_kpool_pool_keys_f32(state, ape, keys, 0, np, pool, d, 0);
        return 0;
    }
    const float *k, *gate;
    if (kpool_rows_inputs(ctx, &k, &gate)) return -1;
    size_t wrow = (size_t)2 * d;
    float *ring = calloc((size_t)G->state_rows * wrow, sizeof *ring);
    float *flat = calloc((size_t)G->t_kv * wrow, sizeof *flat);
    float *full = calloc((size_t)np * d + 1, sizeof *full);
    if (!ring || !flat || !full) {
        free(ring), free(flat), free(full);
        return mla_ctx_fail(ctx, "out of memory");
    }
    int32_t done = 0, built = 0;
    for (int32_t ck = 0; done < G->t_kv; ck++) {
        int32_t n = mla_kpool_ring_chunk(ck, done, G->t_kv, G->state_rows, pool);
        oracle_index_append_ring_f32(ring, k + (size_t)done * d, gate + (size_t)done * d, done, n,
                                     d, d, G->state_rows);
        done += n;
        int32_t now = done / pool < np ? done / pool : np;
        oracle_kpool_pool_keys_f32(ring, ape, keys, built, now, pool, d, G->state_rows);
        built = now;
    }
    oracle_index_append_ring_f32(flat, k, gate, 0, G->t_kv, d, d, 0);
    oracle_kpool_pool_keys_f32(flat, ape, full, 0, np, pool, d, 0);
    int same = built == np && memcmp(full, keys, (size_t)np * d * sizeof *keys) == 0;
    int ring_same = memcmp(ring, state, (size_t)G->state_rows * wrow * sizeof *ring) == 0;
    free(ring), free(flat), free(full);
    if (!ring_same) return mla_ctx_fail(ctx, "the replayed ring differs from idx_state");
    if (!same)
        return mla_ctx_fail(ctx, "oracle: incremental ring build (%d of %d pools) differs from "
                            "the flat full build", built, np);
    return 0;
}

/* score [t_q][n_pools], class exact (the six-step sequence, -inf on pools not yet complete). */
static int stage_kpool_score(mla_ctx *ctx) {
    int32_t d = G->idx_dim, H = G->idx_heads;
    const float *q = mla_ctx_input_f32(ctx, "idx_q", 3, SHAPE(G->t_q, H, d), MLA_FILL_REALISTIC,
                                       1.0f);
    const float *hw = mla_ctx_input_f32(ctx, "idx_hw", 2, SHAPE(G->t_q, H), MLA_FILL_REALISTIC,
                                        1.0f);
    const float *keys = need_f32(ctx, "pool_keys");
    if (!q || !hw || !keys) return -1;
    float *score = mla_ctx_output(ctx, "score", ST_F32, 2, SHAPE(G->t_q, G->n_pools),
                                  MLA_TOL_EXACT);
    if (!score) return -1;
    oracle_kpool_score_f32(q, keys, hw, score, G->t_q, H, d, G->n_pools, G->pool, G->first_pos,
                           G->qk_scale, G->head_scale);
    return 0;
}

/* idx [t_q][width] int32, class exact. */
static int stage_kpool_select(mla_ctx *ctx) {
    const float *score = need_f32(ctx, "score");
    if (!score) return -1;
    int32_t *idx = mla_ctx_output(ctx, "idx", ST_I32, 2, SHAPE(G->t_q, G->width), MLA_TOL_EXACT);
    if (!idx) return -1;
    oracle_kpool_select_f32(score, idx, G->t_q, G->n_pools, G->pool, G->select_k, G->width,
                            G->first_pos, G->always_tail);
    return 0;
}

/* attn_gathered at the dense geometry over the selected rows: q_lat [t_q][n_head][kv_rank],
 * q_pe [t_q][n_head][d_rope] (glm5 only), cache [t_kv][kv_rank + d_rope] generated; idx = the
 * select output, n_slots = width. o_lat_gathered [t_q][n_head][kv_rank], class attn. */
static int stage_attn_gathered(mla_ctx *ctx) {
    int32_t w = G->kv_rank + G->d_rope;
    const float *q_lat = mla_ctx_input_f32(ctx, "q_lat", 3, SHAPE(G->t_q, G->n_head, G->kv_rank),
                                           MLA_FILL_REALISTIC, 1.0f);
    const float *q_pe = NULL;
    if (G->d_rope > 0) {
        q_pe = mla_ctx_input_f32(ctx, "q_pe", 3, SHAPE(G->t_q, G->n_head, G->d_rope),
                                 MLA_FILL_REALISTIC, 1.0f);
        if (!q_pe) return -1;
    }
    const float *cache =
        mla_ctx_input_f32(ctx, "cache", 2, SHAPE(G->t_kv, w), MLA_FILL_REALISTIC, 1.0f);
    mla_tensor *it = mla_ctx_get(ctx, "idx");
    if (!q_lat || !cache) return -1;
    if (!it || it->dtype != ST_I32) return mla_ctx_fail(ctx, "needs the select output 'idx'");
    float *o = mla_ctx_output(ctx, "o_lat_gathered", ST_F32, 3,
                              SHAPE(G->t_q, G->n_head, G->kv_rank), MLA_TOL_ATTN);
    if (!o) return -1;
    oracle_attn_gathered_f32(q_lat, q_pe, cache, it->data, o, G->n_head, G->kv_rank, G->d_rope,
                             G->t_q, G->width, G->scale);
    return 0;
}

/* ------------------------------------------------------------------ the table -------------- */
#define DENSE_STAGES                                                                          \
    {"rope", stage_rope}, {"split_latent", stage_split_latent},                               \
        {"append_latent", stage_append_latent}, {"absorb_q", stage_absorb_q},                 \
        {"attn_absorbed", stage_attn_absorbed}, {                                             \
        "decompress_v", stage_decompress_v                                                    \
    }

#define GLM5_GEOM(TQ, TKV)                                                                    \
    .n_head = 64, .kv_rank = 512, .d_rope = 64, .d_nope = 192, .d_v = 256, .t_q = (TQ),       \
    .t_kv = (TKV), .rope_base = 1e6f, .scale = 0.0625f
#define GLM5_NEXT_GEOM(TQ, TKV)                                                               \
    .n_head = 64, .kv_rank = 512, .d_rope = 0, .d_nope = 256, .d_v = 256, .t_q = (TQ),        \
    .t_kv = (TKV), .rope_base = 1e6f, .scale = 0.0625f

/* The k-pool cases: indexer 32 heads x 128, qk_scale = 128^-0.5, head_scale = 32^-0.5;
 * n_pools = floor(t_kv / pool); queries at rows first_pos + i = t_kv - t_q + i. */
#define KPOOL_STAGES                                                                          \
    {"index_append_ring", stage_index_append_ring}, {"pool_keys", stage_pool_keys},           \
        {"score", stage_kpool_score}, {"select", stage_kpool_select}, {                      \
        "attn_gathered", stage_attn_gathered                                                  \
    }
#define KPOOL_IDX(TQ, TKV, POOL, SEL, WIDTH, TAIL)                                            \
    .idx_heads = 32, .idx_dim = 128, .pool = (POOL), .select_k = (SEL), .width = (WIDTH),     \
    .always_tail = (TAIL), .first_pos = (TKV) - (TQ), .n_pools = (TKV) / (POOL),              \
    .qk_scale = 0.08838834764831845f, .head_scale = 0.17677669529663688f
#define GLM5_KPOOL(TQ, TKV) GLM5_GEOM(TQ, TKV), KPOOL_IDX(TQ, TKV, 1, 2048, 2048, 0)
#define GLM5_NEXT_KPOOL(TQ, TKV) GLM5_NEXT_GEOM(TQ, TKV), KPOOL_IDX(TQ, TKV, 4, 512, 2051, 1)

static const mla_case k_cases[] = {
    {"glm5_decode", "glm5", {GLM5_GEOM(1, 4096)}, 0x474c0501u, {DENSE_STAGES}, 0, {0}},
    {"glm5_verify", "glm5", {GLM5_GEOM(4, 4096)}, 0x474c0502u, {DENSE_STAGES}, 0, {0}},
    {"glm5_prefill",
     "glm5",
     {GLM5_GEOM(128, 128), .bf16 = 1},
     0x474c0503u,
     {DENSE_STAGES, {"bf16_absorb", stage_bf16_absorb},
      {"bf16_decompress", stage_bf16_decompress}},
     7,
     {0, 1, 2, 63, 64, 126, 127}},
    {"glm5_rope_maxpos",
     "glm5",
     {.n_head = 64, .d_rope = 64, .rope_base = 1e6f, .t_q = 8, .n_positions = 8,
      .positions = {202748, 202749, 202750, 202751, 1048572, 1048573, 1048574, 1048575}},
     0x474c0504u,
     {{"rope", stage_rope}},
     0,
     {0}},
    {"glm5_next_decode", "glm5_next", {GLM5_NEXT_GEOM(1, 4096)}, 0x474c0601u, {DENSE_STAGES}, 0,
     {0}},
    {"glm5_next_verify", "glm5_next", {GLM5_NEXT_GEOM(4, 4096)}, 0x474c0602u, {DENSE_STAGES}, 0,
     {0}},
    /* k-pool indexer (stored rows: the big idx_state / pool_keys planes keep a few rows; the
     * manifest has the full SHA-256; the GPU tests recompute the full tensors). */
    {"glm5_kpool_decode", "glm5", {GLM5_KPOOL(1, 8192)}, 0x474c0511u, {KPOOL_STAGES}, 8,
     {0, 1, 2, 3, 2047, 4096, 8190, 8191}},
    {"glm5_kpool_verify", "glm5", {GLM5_KPOOL(4, 8192)}, 0x474c0512u, {KPOOL_STAGES}, 8,
     {0, 1, 2, 3, 2047, 4096, 8190, 8191}},
    {"glm5_next_kpool_decode", "glm5_next", {GLM5_NEXT_KPOOL(1, 8195)}, 0x474c0611u,
     {KPOOL_STAGES}, 6, {0, 1, 2, 1024, 2046, 2047}},
    {"glm5_next_kpool_verify", "glm5_next", {GLM5_NEXT_KPOOL(4, 8195)}, 0x474c0612u,
     {KPOOL_STAGES}, 6, {0, 1, 2, 1024, 2046, 2047}},
    {"glm5_next_kpool_ring", "glm5_next", {GLM5_NEXT_KPOOL(3, 8194), .state_rows = 4096},
     0x474c0613u, {KPOOL_STAGES}, 6, {0, 1, 2, 1024, 2046, 2047}},
};

size_t mla_case_count(void) { return sizeof k_cases / sizeof k_cases[0]; }
const mla_case *mla_case_at(size_t i) { return i < mla_case_count() ? &k_cases[i] : NULL; }
const mla_case *mla_case_find(const char *name) {
    for (size_t i = 0; i < mla_case_count(); i++)
        if (strcmp(k_cases[i].name, name) == 0) return &k_cases[i];
    return NULL;
}

/* Geometry fields recorded in the manifest (non-zero ones) and checked by verify. */
typedef struct {
    const char *name;
    size_t off;
    int is_float;
} geom_field;
#define GI(f) {#f, offsetof(mla_geom, f), 0}
#define GF(f) {#f, offsetof(mla_geom, f), 1}
static const geom_field k_geom_fields[] = {
    GI(n_head), GI(kv_rank), GI(d_rope), GI(d_nope), GI(d_v), GI(t_q), GI(t_kv), GF(rope_base),
    GF(scale), GI(bf16), GI(n_positions), GI(idx_heads), GI(idx_dim), GI(pool), GI(select_k),
    GI(width), GI(always_tail), GI(first_pos), GI(n_pools), GF(qk_scale), GF(head_scale),
    GI(state_rows),
};
static double geom_value(const mla_geom *g, const geom_field *f) {
    const char *p = (const char *)g + f->off;
    if (f->is_float) {
        float v;
        memcpy(&v, p, sizeof v);
        return (double)v;
    }
    int32_t v;
    memcpy(&v, p, sizeof v);
    return (double)v;
}

/* ------------------------------------------------------------------ running ---------------- */
int mla_case_run(const mla_case *c, mla_ctx *ctx) {
    memset(ctx, 0, sizeof *ctx);
    ctx->c = c;
    for (int s = 0; s < MLA_MAX_STAGES && c->stages[s].fn; s++) {
        ctx->stage = c->stages[s].name;
        if (c->stages[s].fn(ctx) != 0) {
            if (!ctx->err[0]) mla_ctx_fail(ctx, "failed");
            return -1;
        }
    }
    ctx->stage = NULL;
    for (size_t i = 0; i < ctx->n; i++) mla_sha256(ctx->t[i].data, ctx->t[i].nbytes, ctx->t[i].sha256);
    return 0;
}

int mla_case_output_rows(const mla_case *c, const mla_tensor *t, const int64_t **rows) {
    *rows = NULL;
    if (!t->is_output || c->n_stored_rows == 0 || t->nbytes <= MLA_STORE_ALL_BYTES || t->ndim < 1)
        return 0;
    for (int i = 0; i < c->n_stored_rows; i++)
        if (c->stored_rows[i] >= t->shape[0]) return 0;
    *rows = c->stored_rows;
    return c->n_stored_rows;
}

/* Gathers rows of t into a fresh buffer (caller frees). */
static void *gather_rows(const mla_tensor *t, const int64_t *rows, int n_rows, size_t *nbytes) {
    size_t row_bytes = t->nbytes / (size_t)(t->shape[0] ? t->shape[0] : 1);
    *nbytes = row_bytes * (size_t)n_rows;
    char *buf = malloc(*nbytes ? *nbytes : 1);
    if (!buf) return NULL;
    for (int i = 0; i < n_rows; i++)
        memcpy(buf + (size_t)i * row_bytes, (const char *)t->data + (size_t)rows[i] * row_bytes,
               row_bytes);
    return buf;
}

static char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

static int build_mf_case(const mla_case *c, const mla_ctx *ctx, const char *command,
                         mla_mf_case *mc) {
    memset(mc, 0, sizeof *mc);
    char file[256];
    snprintf(file, sizeof file, "%s.safetensors", c->name);
    mc->name = xstrdup(c->name);
    mc->model = xstrdup(c->model);
    mc->command = xstrdup(command ? command : "");
    mc->file = xstrdup(file);
    mc->seed = c->seed;
    mc->generator_version = MLA_FILL_VERSION;
    size_t ng = sizeof k_geom_fields / sizeof k_geom_fields[0];
    mc->geometry = calloc(ng, sizeof *mc->geometry);
    mc->inputs = calloc(ctx->n ? ctx->n : 1, sizeof *mc->inputs);
    mc->outputs = calloc(ctx->n ? ctx->n : 1, sizeof *mc->outputs);
    if (!mc->name || !mc->model || !mc->command || !mc->file || !mc->geometry || !mc->inputs ||
        !mc->outputs)
        return -1;
    for (size_t i = 0; i < ng; i++) {
        double v = geom_value(&c->geom, &k_geom_fields[i]);
        if (v == 0.0) continue;
        mc->geometry[mc->n_geometry].key = xstrdup(k_geom_fields[i].name);
        mc->geometry[mc->n_geometry].value = v;
        if (!mc->geometry[mc->n_geometry++].key) return -1;
    }
    for (size_t i = 0; i < ctx->n; i++) {
        const mla_tensor *t = &ctx->t[i];
        if (!t->is_output) {
            mla_mf_input *in = &mc->inputs[mc->n_inputs++];
            in->name = xstrdup(t->name);
            in->dtype = t->dtype;
            in->ndim = t->ndim;
            memcpy(in->shape, t->shape, sizeof in->shape);
            in->fill_kind = xstrdup(mla_fill_kind_name(t->fill));
            in->fill_scale = (double)t->fill_scale;
            memcpy(in->sha256, t->sha256, 32);
            if (!in->name || !in->fill_kind) return -1;
        } else {
            mla_mf_output *o = &mc->outputs[mc->n_outputs++];
            o->name = xstrdup(t->name);
            o->dtype = t->dtype;
            o->ndim = t->ndim;
            memcpy(o->shape, t->shape, sizeof o->shape);
            o->stage = xstrdup(t->stage ? t->stage : "");
            o->tolerance = xstrdup(mla_tol_class_name(t->tol));
            memcpy(o->sha256, t->sha256, 32);
            if (!o->name || !o->stage || !o->tolerance) return -1;
            const int64_t *rows;
            int nr = mla_case_output_rows(c, t, &rows);
            if (nr > 0) {
                o->has_stored_rows = 1;
                o->stored_rows = malloc((size_t)nr * sizeof *o->stored_rows);
                if (!o->stored_rows) return -1;
                memcpy(o->stored_rows, rows, (size_t)nr * sizeof *rows);
                o->n_stored_rows = (size_t)nr;
            }
        }
    }
    return 0;
}

int mla_golden_regen(const mla_case *c, const char *dir, const char *command, mla_manifest *m,
                     size_t *bytes_written, char *err, size_t errlen) {
    mla_ctx ctx;
    if (mla_case_run(c, &ctx) != 0) {
        snprintf(err, errlen, "%s", ctx.err);
        mla_ctx_free(&ctx);
        return -1;
    }
    int rc = -1;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.safetensors", dir, c->name);
    st_writer w;
    st_writer_init(&w);
    void *bufs[64];
    int nbufs = 0;
    char gv[32];
    snprintf(gv, sizeof gv, "%d", MLA_FILL_VERSION);
    st_writer_meta(&w, "case", c->name);
    st_writer_meta(&w, "model", c->model);
    st_writer_meta(&w, "generator_version", gv);
    st_writer_meta(&w, "command", command ? command : "");
    mla_mf_case mc;
    memset(&mc, 0, sizeof mc);
    for (size_t i = 0; i < ctx.n; i++) {
        mla_tensor *t = &ctx.t[i];
        if (!t->is_output) continue;
        const int64_t *rows;
        int nr = mla_case_output_rows(c, t, &rows);
        const void *data = t->data;
        int64_t shape[ST_MAX_DIMS];
        memcpy(shape, t->shape, sizeof shape);
        if (nr > 0) {
            if (nbufs == 64) {
                snprintf(err, errlen, "case %s: too many subset outputs", c->name);
                goto done;
            }
            size_t nb;
            void *g = gather_rows(t, rows, nr, &nb);
            if (!g) {
                snprintf(err, errlen, "case %s: out of memory", c->name);
                goto done;
            }
            bufs[nbufs++] = g;
            data = g;
            shape[0] = nr;
            char key[128], val[512];
            int off = 0;
            for (int r = 0; r < nr && off < (int)sizeof val - 24; r++)
                off += snprintf(val + off, sizeof val - (size_t)off, "%s%lld", r ? "," : "",
                                (long long)rows[r]);
            snprintf(key, sizeof key, "stored_rows.%s", t->name);
            st_writer_meta(&w, key, val);
        }
        if (st_writer_add(&w, t->name, t->dtype, t->ndim, shape, data) != 0) {
            snprintf(err, errlen, "case %s: cannot add tensor %s", c->name, t->name);
            goto done;
        }
    }
    if (st_writer_write(&w, path, err, errlen) != 0) goto done;
    if (bytes_written) {
        FILE *fp = fopen(path, "rb");
        *bytes_written = 0;
        if (fp) {
            fseek(fp, 0, SEEK_END);
            *bytes_written = (size_t)ftell(fp);
            fclose(fp);
        }
    }
    if (build_mf_case(c, &ctx, command, &mc) != 0 || mla_manifest_put_case(m, &mc) != 0) {
        snprintf(err, errlen, "case %s: out of memory building the manifest entry", c->name);
        goto done;
    }
    rc = 0;
done:
    mla_mf_case_free(&mc);
    for (int i = 0; i < nbufs; i++) free(bufs[i]);
    st_writer_free(&w);
    mla_ctx_free(&ctx);
    return rc;
}

/* ------------------------------------------------------------------ verify ----------------- */
static void shape_str(char *buf, size_t n, int ndim, const int64_t *shape) {
    int off = snprintf(buf, n, "[");
    for (int i = 0; i < ndim && off > 0 && (size_t)off < n; i++)
        off += snprintf(buf + off, n - (size_t)off, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (off > 0 && (size_t)off < n) snprintf(buf + off, n - (size_t)off, "]");
}

static int same_shape(int na, const int64_t *a, int nb, const int64_t *b) {
    return na == nb && memcmp(a, b, (size_t)na * sizeof *a) == 0;
}

#define PROBLEM(...)                                                                          \
    do {                                                                                      \
        fprintf(report, "FAIL: case %s: ", c->name);                                          \
        fprintf(report, __VA_ARGS__);                                                         \
        fprintf(report, "\n");                                                                \
        problems++;                                                                           \
    } while (0)

int mla_golden_verify(const mla_case *c, const char *dir, const mla_manifest *m, FILE *report,
                      const char *rerun_cmd) {
    int problems = 0;
    char hex1[65], hex2[65], s1[128], s2[128];
    const mla_mf_case *mc = mla_manifest_find(m, c->name);
    if (!mc) {
        PROBLEM("not in the manifest (run: golden regen --dir %s %s)", dir, c->name);
        if (rerun_cmd) fprintf(report, "  re-run: %s\n", rerun_cmd);
        return problems;
    }
    if (mc->generator_version != MLA_FILL_VERSION)
        PROBLEM("manifest generator_version %d, this build generates version %d",
                mc->generator_version, MLA_FILL_VERSION);
    if (mc->seed != c->seed) PROBLEM("manifest seed %u, case table seed %u", mc->seed, c->seed);
    if (strcmp(mc->model, c->model) != 0)
        PROBLEM("manifest model '%s', case table model '%s'", mc->model, c->model);
    size_t ng = sizeof k_geom_fields / sizeof k_geom_fields[0];
    for (size_t i = 0; i < ng; i++) {
        double v = geom_value(&c->geom, &k_geom_fields[i]), mv = 0.0;
        for (size_t k = 0; k < mc->n_geometry; k++)
            if (strcmp(mc->geometry[k].key, k_geom_fields[i].name) == 0) mv = mc->geometry[k].value;
        if (v != mv)
            PROBLEM("geometry %s: manifest %.9g, case table %.9g", k_geom_fields[i].name, mv, v);
    }
    for (size_t k = 0; k < mc->n_geometry; k++) {
        int known = 0;
        for (size_t i = 0; i < ng; i++) known |= strcmp(mc->geometry[k].key, k_geom_fields[i].name) == 0;
        if (!known) PROBLEM("manifest geometry field '%s' is unknown", mc->geometry[k].key);
    }

    mla_ctx ctx;
    if (mla_case_run(c, &ctx) != 0) {
        PROBLEM("recomputation failed: %s", ctx.err);
        mla_ctx_free(&ctx);
        return problems;
    }

    /* inputs */
    for (size_t i = 0; i < ctx.n; i++) {
        const mla_tensor *t = &ctx.t[i];
        if (t->is_output) continue;
        const mla_mf_input *in = mla_mf_find_input(mc, t->name);
        if (!in) {
            PROBLEM("input %s is not in the manifest", t->name);
            continue;
        }
        shape_str(s1, sizeof s1, in->ndim, in->shape);
        shape_str(s2, sizeof s2, t->ndim, t->shape);
        if (!same_shape(in->ndim, in->shape, t->ndim, t->shape) || in->dtype != t->dtype)
            PROBLEM("input %s: manifest %s %s, recomputed %s %s", t->name, st_dtype_name(in->dtype),
                    s1, st_dtype_name(t->dtype), s2);
        if (strcmp(in->fill_kind, mla_fill_kind_name(t->fill)) != 0 ||
            (float)in->fill_scale != t->fill_scale)
            PROBLEM("input %s: manifest fill %s x %.9g, case table fill %s x %.9g", t->name,
                    in->fill_kind, in->fill_scale, mla_fill_kind_name(t->fill),
                    (double)t->fill_scale);
        if (memcmp(in->sha256, t->sha256, 32) != 0) {
            mla_sha256_hex(in->sha256, hex1);
            mla_sha256_hex(t->sha256, hex2);
            PROBLEM("input %s: sha256 mismatch (manifest %s, regenerated %s): the generator or "
                    "the fill changed", t->name, hex1, hex2);
        }
    }
    for (size_t k = 0; k < mc->n_inputs; k++) {
        const mla_tensor *t = mla_ctx_get(&ctx, mc->inputs[k].name);
        if (!t || t->is_output) PROBLEM("manifest input %s is not produced by the case", mc->inputs[k].name);
    }

    /* outputs */
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, mc->file);
    st_file sf;
    char err[ST_ERR_LEN];
    int have_file = st_read_file(path, &sf, err, sizeof err) == 0;
    if (!have_file) PROBLEM("cannot load fixture: %s", err);
    for (size_t i = 0; i < ctx.n; i++) {
        const mla_tensor *t = &ctx.t[i];
        if (!t->is_output) continue;
        const mla_mf_output *o = mla_mf_find_output(mc, t->name);
        if (!o) {
            PROBLEM("output %s is not in the manifest", t->name);
            continue;
        }
        shape_str(s1, sizeof s1, o->ndim, o->shape);
        shape_str(s2, sizeof s2, t->ndim, t->shape);
        if (!same_shape(o->ndim, o->shape, t->ndim, t->shape) || o->dtype != t->dtype) {
            PROBLEM("output %s: manifest %s %s, recomputed %s %s", t->name, st_dtype_name(o->dtype),
                    s1, st_dtype_name(t->dtype), s2);
            continue;
        }
        if (strcmp(o->tolerance, mla_tol_class_name(t->tol)) != 0)
            PROBLEM("output %s: manifest tolerance class %s, case table %s", t->name, o->tolerance,
                    mla_tol_class_name(t->tol));
        if (memcmp(o->sha256, t->sha256, 32) != 0) {
            mla_sha256_hex(o->sha256, hex1);
            mla_sha256_hex(t->sha256, hex2);
            PROBLEM("output %s: full-tensor sha256 mismatch (manifest %s, recomputed %s)", t->name,
                    hex1, hex2);
        }
        if (!have_file) continue;
        const st_tensor *st = st_find(&sf, t->name);
        if (!st) {
            PROBLEM("output %s is missing from %s", t->name, path);
            continue;
        }
        const int64_t *rows = o->has_stored_rows ? o->stored_rows : NULL;
        int nr = o->has_stored_rows ? (int)o->n_stored_rows : 0;
        int64_t want[ST_MAX_DIMS];
        memcpy(want, t->shape, sizeof want);
        if (rows) want[0] = nr;
        if (st->dtype != t->dtype || !same_shape(st->ndim, st->shape, t->ndim, want)) {
            shape_str(s1, sizeof s1, st->ndim, st->shape);
            shape_str(s2, sizeof s2, t->ndim, want);
            PROBLEM("output %s in %s is %s %s, expected %s %s", t->name, path,
                    st_dtype_name(st->dtype), s1, st_dtype_name(t->dtype), s2);
            continue;
        }
        size_t nb = t->nbytes;
        void *ref = t->data, *tmp = NULL;
        if (rows) {
            tmp = gather_rows(t, rows, nr, &nb);
            if (!tmp) {
                PROBLEM("out of memory");
                continue;
            }
            ref = tmp;
        }
        /* stored values vs recomputed, bitwise (the golden IS the oracle). */
        mla_tol tol = mla_tol_exact();
        mla_cmp_result r;
        int ok;
        size_t esz = st_dtype_size(t->dtype);
        if (t->dtype == ST_F32) {
            float *got = malloc(nb ? nb : 1);
            memcpy(got, st->data, nb); /* the mapped bytes may be unaligned */
            r = mla_compare_f32(got, ref, nb / 4, &tol);
            free(got);
            ok = r.pass;
        } else if (t->dtype == ST_BF16) {
            uint16_t *got = malloc(nb ? nb : 1);
            memcpy(got, st->data, nb);
            r = mla_compare_bf16(got, ref, nb / 2, &tol);
            free(got);
            ok = r.pass;
        } else {
            ok = memcmp(st->data, ref, nb) == 0;
            memset(&r, 0, sizeof r);
            if (!ok) {
                size_t k = 0;
                while (k < nb && ((const char *)st->data)[k] == ((const char *)ref)[k]) k++;
                r.worst_index = k / (esz ? esz : 1);
            }
        }
        if (!ok) {
            problems++;
            char tname[4400];
            snprintf(tname, sizeof tname, "%s (stored in %s%s)", t->name, path,
                     rows ? ", stored rows only; indices are into the stored subset" : "");
            int64_t sshape[ST_MAX_DIMS];
            memcpy(sshape, want, sizeof sshape);
            if (t->dtype == ST_F32 || t->dtype == ST_BF16)
                mla_cmp_report(report, c->name, tname, t->ndim, sshape, &r, &tol, rerun_cmd);
            else
                fprintf(report, "FAIL: case %s, tensor %s: stored %s values differ from element "
                        "%zu\n  re-run: %s\n", c->name, tname, st_dtype_name(t->dtype),
                        r.worst_index, rerun_cmd ? rerun_cmd : "");
        }
        free(tmp);
    }
    if (have_file) {
        for (size_t k = 0; k < sf.n_tensors; k++) {
            const mla_tensor *t = mla_ctx_get(&ctx, sf.tensors[k].name);
            if (!t || !t->is_output)
                PROBLEM("%s holds tensor %s that the case does not produce", path, sf.tensors[k].name);
        }
        st_free(&sf);
    }
    for (size_t k = 0; k < mc->n_outputs; k++) {
        const mla_tensor *t = mla_ctx_get(&ctx, mc->outputs[k].name);
        if (!t || !t->is_output)
            PROBLEM("manifest output %s is not produced by the case", mc->outputs[k].name);
    }
    if (problems && rerun_cmd) fprintf(report, "  re-run case %s: %s\n", c->name, rerun_cmd);
    mla_ctx_free(&ctx);
    return problems;
}
