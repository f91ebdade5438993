/* decode_chain.c: the decode-step chains (decode_chain.h): the table, the inputs, and the oracle
 * of each chain tensor, built from oracle/ only. */
#include "tests/lib/decode_chain.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mla.h"
#include "oracle/mla_oracle.h"

/* The stage descriptors whose outputs' classes the chain tensors have (stages_*.c). */
extern const mla_stage mla_stage_split_latent, mla_stage_rope, mla_stage_append_latent,
    mla_stage_index_append_ring, mla_stage_pool_keys, mla_stage_score, mla_stage_select,
    mla_stage_absorb_q, mla_stage_attn_absorbed, mla_stage_attn_gathered, mla_stage_decompress_v;

/* ------------------------------------------------------------------ the chains ------------- */
/* The indexer of a chain: H heads x D, pool, select_k, width, always_tail, a ring of RING rows. */
#define DC_INDEXER(H, D, POOL, SEL, WIDTH, TAIL, RING, HEAD_SCALE)                                 \
    .idx_heads = (H), .idx_dim = (D), .pool = (POOL), .select_k = (SEL), .width = (WIDTH),         \
    .always_tail = (TAIL), .state_rows = (RING), .qk_scale = MLA_INDEXER_QK_SCALE,                 \
    .head_scale = (HEAD_SCALE)

/* The glm5 / glm5_next head geometry and indexer (dim, heads, pool, always_tail) with a short
 * cache; select_k scaled down (glm5: 128 of ~300 rows; glm5_next: 32 of ~75 pools) so the
 * gathered walk differs from the dense one. The san_ chains (sanitizer tier): 3 heads, a
 * 4 x 16 indexer, a 16-row ring, a few dozen rows. */
static const dc_chain k_chains[] = {
    {"glm5",
     "glm5",
     "glm5 decode, 3 steps from 300 cached rows (ring of 128 rows wraps)",
     {MLA_GEOM_GLM5, .t_q = 1, .t_kv = 300,
      DC_INDEXER(MLA_INDEXER_HEADS, MLA_INDEXER_DIM, MLA_GLM5_POOL, 128, 128, MLA_GLM5_ALWAYS_TAIL,
                 128, MLA_INDEXER_HEAD_SCALE)},
     3,
     0xDC0C0501u},
    {"glm5_next",
     "glm5_next",
     "glm5_next (NoPE) decode, 3 steps from 301 rows: a tail pool completes at step 2",
     {MLA_GEOM_GLM5_NEXT, .t_q = 1, .t_kv = 301,
      DC_INDEXER(MLA_INDEXER_HEADS, MLA_INDEXER_DIM, MLA_GLM5_NEXT_POOL, 32, 32 * 4 + 3,
                 MLA_GLM5_NEXT_ALWAYS_TAIL, 128, MLA_INDEXER_HEAD_SCALE)},
     3,
     0xDC0C0601u},
    {"glm5_next_verify",
     "glm5_next",
     "glm5_next verify steps of 2 tokens, 3 steps from 258 rows (ring of 64 rows)",
     {MLA_GEOM_GLM5_NEXT, .t_q = 2, .t_kv = 258,
      DC_INDEXER(MLA_INDEXER_HEADS, MLA_INDEXER_DIM, MLA_GLM5_NEXT_POOL, 16, 16 * 4 + 3,
                 MLA_GLM5_NEXT_ALWAYS_TAIL, 64, MLA_INDEXER_HEAD_SCALE)},
     3,
     0xDC0C0602u},
    {"san_glm5",
     "glm5",
     "sanitizer: glm5 dims at 3 heads, 2 steps from 24 rows",
     {MLA_GEOM_GLM5_HEADS(3), .t_q = 1, .t_kv = 24,
      DC_INDEXER(4, 16, MLA_GLM5_POOL, 8, 8, MLA_GLM5_ALWAYS_TAIL, 16, 0.5f)},
     2,
     0xDC0CA501u},
    {"san_glm5_next",
     "glm5_next",
     "sanitizer: glm5_next at 3 heads, 2 steps of 2 from 21 rows",
     {.n_head = 3,
      .kv_rank = MLA_GLM5_NEXT_KV_RANK,
      .d_rope = 0,
      .d_nope = MLA_GLM5_NEXT_D_NOPE,
      .d_v = MLA_GLM5_NEXT_D_V,
      .rope_base = MLA_GLM5_NEXT_ROPE_BASE,
      .scale = MLA_GLM5_NEXT_SCALE,
      .t_q = 2,
      .t_kv = 21,
      DC_INDEXER(4, 16, MLA_GLM5_NEXT_POOL, 2, 2 * 4 + 3, MLA_GLM5_NEXT_ALWAYS_TAIL, 16, 0.5f)},
     2,
     0xDC0CA601u},
};

size_t dc_chain_count(void) { return sizeof k_chains / sizeof k_chains[0]; }
const dc_chain *dc_chain_at(size_t i) { return i < dc_chain_count() ? &k_chains[i] : NULL; }
const dc_chain *dc_chain_find(const char *name) {
    for (size_t i = 0; i < dc_chain_count(); i++)
        if (strcmp(k_chains[i].name, name) == 0) return &k_chains[i];
    return NULL;
}

/* ------------------------------------------------------------------ tensors ---------------- */
static const dc_tensor_info k_tensors[DC_N_TENSORS] = {
    [DC_C_KV] = {"c_kv", "split_latent", &mla_stage_split_latent, 0},
    [DC_K_PE_RAW] = {"k_pe_raw", "split_latent", &mla_stage_split_latent, 1},
    [DC_Q_PE] = {"q_pe", "rope", &mla_stage_rope, 0},
    [DC_K_PE] = {"k_pe", "rope", &mla_stage_rope, 0},
    [DC_CACHE] = {"cache", "append_latent", &mla_stage_append_latent, 0},
    [DC_IDX_STATE] = {"idx_state", "index_append_ring", &mla_stage_index_append_ring, 0},
    [DC_POOL_KEYS] = {"pool_keys", "pool_keys", &mla_stage_pool_keys, 0},
    [DC_SCORE] = {"score", "score", &mla_stage_score, 0},
    [DC_IDX] = {"idx", "select", &mla_stage_select, 0},
    [DC_Q_LAT] = {"q_lat", "absorb_q", &mla_stage_absorb_q, 0},
    [DC_O_LAT] = {"o_lat", "attn_absorbed", &mla_stage_attn_absorbed, 0},
    [DC_O_LAT_GATHERED] = {"o_lat_gathered", "attn_gathered", &mla_stage_attn_gathered, 0},
    [DC_OUT] = {"out", "decompress_v", &mla_stage_decompress_v, 0},
    [DC_OUT_GATHERED] = {"out_gathered", "decompress_v", &mla_stage_decompress_v, 0},
};

const dc_tensor_info *dc_tensor(dc_tensor_id id) { return &k_tensors[id]; }
mla_tol_class dc_class(dc_tensor_id id) {
    return k_tensors[id].desc->outputs[k_tensors[id].output].tol;
}
int dc_nan_any(dc_tensor_id id) {
    return k_tensors[id].desc->outputs[k_tensors[id].output].nan_any;
}

int dc_present(const dc_chain *c, dc_tensor_id id) {
    if (id == DC_K_PE_RAW || id == DC_Q_PE || id == DC_K_PE) return c->g.d_rope > 0;
    return 1;
}

int32_t dc_slot(const dc_chain *c, int32_t s) { return c->g.t_kv + s * c->g.t_q; }
int32_t dc_rows_after(const dc_chain *c, int32_t s) { return dc_slot(c, s + 1); }
int32_t dc_pools_after(const dc_chain *c, int32_t s) { return dc_rows_after(c, s) / c->g.pool; }

size_t dc_shape(const dc_chain *c, dc_tensor_id id, int32_t s, int *ndim, int64_t shape[3],
                st_dtype *dt) {
    const mla_geom *g = &c->g;
    int64_t t = g->t_q, W = g->kv_rank + g->d_rope;
    *dt = id == DC_IDX ? ST_I32 : ST_F32;
    *ndim = 2;
    shape[2] = 1;
    switch (id) {
    case DC_C_KV: shape[0] = t, shape[1] = g->kv_rank; break;
    case DC_K_PE_RAW:
    case DC_K_PE: shape[0] = t, shape[1] = g->d_rope; break;
    case DC_Q_PE: *ndim = 3, shape[0] = t, shape[1] = g->n_head, shape[2] = g->d_rope; break;
    case DC_CACHE: shape[0] = dc_rows_after(c, s), shape[1] = W; break;
    case DC_IDX_STATE: shape[0] = g->state_rows, shape[1] = 2 * (int64_t)g->idx_dim; break;
    case DC_POOL_KEYS: shape[0] = dc_pools_after(c, s), shape[1] = g->idx_dim; break;
    case DC_SCORE: shape[0] = t, shape[1] = dc_pools_after(c, s); break;
    case DC_IDX: shape[0] = t, shape[1] = g->width; break;
    case DC_Q_LAT:
    case DC_O_LAT:
    case DC_O_LAT_GATHERED:
        *ndim = 3, shape[0] = t, shape[1] = g->n_head, shape[2] = g->kv_rank;
        break;
    case DC_OUT:
    case DC_OUT_GATHERED: *ndim = 3, shape[0] = t, shape[1] = g->n_head, shape[2] = g->d_v; break;
    default: shape[0] = shape[1] = 0; break;
    }
    return (size_t)(shape[0] * shape[1] * shape[2]) * 4;
}

/* ------------------------------------------------------------------ inputs ----------------- */
static float *fill(size_t n, uint32_t seed, const char *name, float scale) {
    float *p = malloc((n ? n : 1) * sizeof *p);
    if (p) mla_fill_host_f32(p, n, MLA_FILL_REALISTIC, seed, name, scale);
    return p;
}

void dc_inputs_free(dc_inputs *in) {
    free(in->cache_prefix), free(in->kv), free(in->q_nope), free(in->q_pe_raw), free(in->wk_b);
    free(in->wv_b), free(in->idx_k), free(in->idx_gate), free(in->idx_ape), free(in->idx_q);
    free(in->idx_hw), free(in->positions);
    memset(in, 0, sizeof *in);
}

int dc_inputs_make(const dc_chain *c, dc_inputs *in) {
    const mla_geom *g = &c->g;
    memset(in, 0, sizeof *in);
    /* the chain's own rules: every ring row written by the prefix, steps in the record */
    if (c->steps < 1 || c->steps > DC_MAX_STEPS || g->state_rows < g->pool ||
        g->state_rows % g->pool || g->state_rows > g->t_kv || g->t_q > g->state_rows)
        return -1;
    size_t W = (size_t)g->kv_rank + g->d_rope, T = (size_t)c->steps * g->t_q, H = g->n_head;
    size_t d = g->idx_dim, Hi = g->idx_heads;
    in->n_tokens = T;
    in->n_cache_prefix = (size_t)g->t_kv * W, in->n_kv = T * W;
    in->n_q_nope = T * H * g->d_nope, in->n_q_pe_raw = T * H * g->d_rope;
    in->n_wk_b = H * g->d_nope * g->kv_rank, in->n_wv_b = H * g->d_v * g->kv_rank;
    in->n_idx_rows = (size_t)g->t_kv + T, in->n_idx_ape = (size_t)g->pool * d;
    in->n_idx_q = T * Hi * d, in->n_idx_hw = T * Hi;
    /* activations, cache rows, indexer rows ~ U(-1, 1); weights / sqrt(fan_in); the gate
     * ~ U(-4, 4) (tests/lib/geometry.h) */
    in->cache_prefix = fill(in->n_cache_prefix, c->seed, "cache_prefix", 1.0f);
    in->kv = fill(in->n_kv, c->seed, "kv", 1.0f);
    in->q_nope = fill(in->n_q_nope, c->seed, "q_nope", 1.0f);
    in->q_pe_raw = g->d_rope ? fill(in->n_q_pe_raw, c->seed, "q_pe_raw", 1.0f) : NULL;
    in->wk_b = fill(in->n_wk_b, c->seed, "wk_b", mla_weight_scale(g->d_nope));
    in->wv_b = fill(in->n_wv_b, c->seed, "wv_b", mla_weight_scale(g->kv_rank));
    in->idx_k = fill(in->n_idx_rows * d, c->seed, "idx_k", 1.0f);
    in->idx_gate = fill(in->n_idx_rows * d, c->seed, "idx_gate", MLA_KPOOL_GATE_SCALE);
    in->idx_ape = fill(in->n_idx_ape, c->seed, "idx_ape", 1.0f);
    in->idx_q = fill(in->n_idx_q, c->seed, "idx_q", 1.0f);
    in->idx_hw = fill(in->n_idx_hw, c->seed, "idx_hw", 1.0f);
    in->positions = malloc(T * sizeof *in->positions);
    if (!in->cache_prefix || !in->kv || !in->q_nope || (g->d_rope && !in->q_pe_raw) || !in->wk_b ||
        !in->wv_b || !in->idx_k || !in->idx_gate || !in->idx_ape || !in->idx_q || !in->idx_hw ||
        !in->positions) {
        dc_inputs_free(in);
        return -1;
    }
    for (size_t i = 0; i < T; i++) in->positions[i] = g->t_kv + (int32_t)i;
    return 0;
}

void dc_run_free(dc_run *r) {
    for (int s = 0; s < DC_MAX_STEPS; s++)
        for (int i = 0; i < DC_N_TENSORS; i++) free(r->t[s][i]);
    free(r->prefix_ring), free(r->prefix_keys);
    memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------------ the oracle ------------- */
void dc_oracle_prefix(const dc_chain *c, const dc_inputs *in, float *ring, float *keys) {
    const mla_geom *g = &c->g;
    int32_t d = g->idx_dim, done = 0, built = 0;
    memset(ring, 0, (size_t)g->state_rows * 2 * d * sizeof *ring);
    for (int32_t ck = 0; done < g->t_kv; ck++) {
        int32_t n = mla_kpool_ring_chunk(ck, done, g->t_kv, g->state_rows, g->pool);
        oracle_index_append_ring_f32(ring, in->idx_k + (size_t)done * d,
                                     in->idx_gate + (size_t)done * d, done, n, d, d, g->state_rows);
        done += n;
        oracle_kpool_pool_keys_f32(ring, in->idx_ape, keys, built, done / g->pool, g->pool, d,
                                   g->state_rows);
        built = done / g->pool;
    }
}

/* The step-s tensor of r, or the state before step 0 (prefix) for the stateful ones. */
#define NEED(p)                                                                                    \
    do {                                                                                           \
        if (!(p)) return -1;                                                                       \
    } while (0)

int dc_oracle_tensor(const dc_chain *c, const dc_inputs *in, const dc_run *r, int32_t s,
                     dc_tensor_id id, void *out) {
    const mla_geom *g = &c->g;
    const void *const *cur = (const void *const *)r->t[s];
    int32_t t = g->t_q, W = g->kv_rank + g->d_rope, d = g->idx_dim, slot = dc_slot(c, s);
    int32_t L = dc_rows_after(c, s), np = dc_pools_after(c, s), np_prev = dc_pools_after(c, s - 1);
    size_t tok = (size_t)s * t; /* the step's first token in the per-token inputs */
    const float *q_pe = g->d_rope ? cur[DC_Q_PE] : NULL;
    switch (id) {
    case DC_C_KV:
    case DC_K_PE_RAW: {
        /* split_latent writes both; the one not asked for goes to scratch */
        size_t n_other = (size_t)t * (id == DC_C_KV ? g->d_rope : g->kv_rank);
        float *other = malloc((n_other ? n_other : 1) * sizeof *other);
        NEED(other);
        float *c_kv = id == DC_C_KV ? out : other, *k_pe = id == DC_C_KV ? other : out;
        oracle_split_latent_f32(in->kv + tok * W, c_kv, g->d_rope ? k_pe : NULL, t, g->kv_rank,
                                g->d_rope);
        free(other);
        return 0;
    }
    case DC_Q_PE: {
        size_t n = (size_t)t * g->n_head * g->d_rope;
        memcpy(out, in->q_pe_raw + tok * g->n_head * g->d_rope, n * sizeof(float));
        oracle_rope_interleaved_f32(out, t, g->n_head, g->d_rope, in->positions + tok,
                                    g->rope_base);
        return 0;
    }
    case DC_K_PE:
        NEED(cur[DC_K_PE_RAW]);
        memcpy(out, cur[DC_K_PE_RAW], (size_t)t * g->d_rope * sizeof(float));
        oracle_rope_interleaved_f32(out, t, 1, g->d_rope, in->positions + tok, g->rope_base);
        return 0;
    case DC_CACHE: {
        const float *prev = s ? r->t[s - 1][DC_CACHE] : in->cache_prefix;
        NEED(prev && cur[DC_C_KV] && (!g->d_rope || cur[DC_K_PE]));
        memcpy(out, prev, (size_t)slot * W * sizeof(float));
        oracle_append_latent_f32(out, cur[DC_C_KV], g->d_rope ? cur[DC_K_PE] : NULL, slot, t,
                                 g->kv_rank, g->d_rope);
        return 0;
    }
    case DC_IDX_STATE: {
        const float *prev = s ? r->t[s - 1][DC_IDX_STATE] : r->prefix_ring;
        NEED(prev);
        memcpy(out, prev, (size_t)g->state_rows * 2 * d * sizeof(float));
        oracle_index_append_ring_f32(out, in->idx_k + (size_t)slot * d,
                                     in->idx_gate + (size_t)slot * d, slot, t, d, d, g->state_rows);
        return 0;
    }
    case DC_POOL_KEYS: {
        const float *prev = s ? r->t[s - 1][DC_POOL_KEYS] : r->prefix_keys;
        NEED(prev && cur[DC_IDX_STATE]);
        memcpy(out, prev, (size_t)np_prev * d * sizeof(float));
        oracle_kpool_pool_keys_f32(cur[DC_IDX_STATE], in->idx_ape, out, np_prev, np, g->pool, d,
                                   g->state_rows);
        return 0;
    }
    case DC_SCORE:
        NEED(cur[DC_POOL_KEYS]);
        oracle_kpool_score_f32(in->idx_q + tok * g->idx_heads * d, cur[DC_POOL_KEYS],
                               in->idx_hw + tok * g->idx_heads, out, t, g->idx_heads, d, np,
                               g->pool, slot, g->qk_scale, g->head_scale);
        return 0;
    case DC_IDX:
        NEED(cur[DC_SCORE]);
        oracle_kpool_select_f32(cur[DC_SCORE], out, t, np, g->pool, g->select_k, g->width, slot,
                                g->always_tail);
        return 0;
    case DC_Q_LAT:
        oracle_absorb_q_f32(in->q_nope + tok * g->n_head * g->d_nope, in->wk_b, out, t, g->n_head,
                            g->d_nope, g->kv_rank);
        return 0;
    case DC_O_LAT:
        NEED(cur[DC_Q_LAT] && cur[DC_CACHE] && (!g->d_rope || q_pe));
        oracle_attn_absorbed_f32(cur[DC_Q_LAT], q_pe, cur[DC_CACHE], out, g->n_head, g->kv_rank,
                                 g->d_rope, t, L, g->scale);
        return 0;
    case DC_O_LAT_GATHERED:
        NEED(cur[DC_Q_LAT] && cur[DC_CACHE] && cur[DC_IDX] && (!g->d_rope || q_pe));
        oracle_attn_gathered_f32(cur[DC_Q_LAT], q_pe, cur[DC_CACHE], cur[DC_IDX], out, g->n_head,
                                 g->kv_rank, g->d_rope, t, g->width, g->scale);
        return 0;
    case DC_OUT:
    case DC_OUT_GATHERED: {
        const float *o = cur[id == DC_OUT ? DC_O_LAT : DC_O_LAT_GATHERED];
        NEED(o);
        oracle_decompress_v_f32(o, in->wv_b, out, t, g->n_head, g->d_v, g->kv_rank);
        return 0;
    }
    default: return -1;
    }
}

int dc_bounds(const dc_chain *c, const dc_inputs *in, const dc_run *r, int32_t s, dc_tensor_id id,
              double *atol) {
    const mla_geom *g = &c->g;
    const void *const *cur = (const void *const *)r->t[s];
    const float *q_pe = g->d_rope ? cur[DC_Q_PE] : NULL;
    size_t tok = (size_t)s * g->t_q;
    switch (dc_class(id)) {
    case MLA_TOL_EXACT: return 0;
    case MLA_TOL_ROPE:
        if (id == DC_Q_PE)
            mla_tol_rope_bounds(in->q_pe_raw + tok * g->n_head * g->d_rope,
                                (size_t)g->t_q * g->n_head * g->d_rope, atol);
        else
            mla_tol_rope_bounds(cur[DC_K_PE_RAW], (size_t)g->t_q * g->d_rope, atol);
        return 1;
    case MLA_TOL_POOL_KEY:
        mla_tol_pool_key_bounds(cur[DC_IDX_STATE], in->idx_ape, dc_pools_after(c, s - 1),
                                dc_pools_after(c, s), g->pool, g->idx_dim, g->state_rows, atol);
        return 1;
    case MLA_TOL_ATTN:
        /* the walk the launchers state (kernels/mla.h mla_attn_walk), as the stage GPU halves */
        if (id == DC_O_LAT)
            mla_tol_attn_bounds(cur[DC_Q_LAT], q_pe, cur[DC_CACHE], g->n_head, g->kv_rank,
                                g->d_rope, g->t_q, dc_rows_after(c, s), g->scale, mla_attn_walk,
                                atol);
        else
            mla_tol_attn_gathered_bounds(cur[DC_Q_LAT], q_pe, cur[DC_CACHE], cur[DC_IDX], g->n_head,
                                         g->kv_rank, g->d_rope, g->t_q, g->width, g->scale,
                                         mla_attn_walk, atol);
        return 1;
    default: return 0;
    }
}

int dc_oracle_chain(const dc_chain *c, const dc_inputs *in, dc_run *r) {
    const mla_geom *g = &c->g;
    memset(r, 0, sizeof *r);
    r->prefix_ring = malloc((size_t)g->state_rows * 2 * g->idx_dim * sizeof(float));
    r->prefix_keys = malloc(((size_t)(g->t_kv / g->pool) * g->idx_dim + 1) * sizeof(float));
    if (!r->prefix_ring || !r->prefix_keys) return -1;
    dc_oracle_prefix(c, in, r->prefix_ring, r->prefix_keys);
    for (int32_t s = 0; s < c->steps; s++)
        for (int id = 0; id < DC_N_TENSORS; id++) {
            if (!dc_present(c, id)) continue;
            int nd;
            int64_t shape[3];
            st_dtype dt;
            size_t nb = dc_shape(c, id, s, &nd, shape, &dt);
            r->t[s][id] = malloc(nb ? nb : 1);
            if (!r->t[s][id] || dc_oracle_tensor(c, in, r, s, id, r->t[s][id])) return -1;
        }
    return 0;
}

/* ------------------------------------------------------------------ the check -------------- */
static size_t n_elems(const int64_t *shape) { return (size_t)(shape[0] * shape[1] * shape[2]); }

/* One comparison in class cls; 1 when it passes. */
static int judge(tb *t, const char *tname, int nd, const int64_t *shape, st_dtype dt,
                 const void *got, const void *ref, const char *ref_name, mla_tol_class cls,
                 int nan_any, const double *atol) {
    return tb_compare(t, tname, dt, nd, shape, got, "gpu", ref, ref_name, cls, atol,
                      cls == MLA_TOL_EXACT && !nan_any ? TB_BYTES_NAN_ANY : 0);
}

static void note_fail(dc_verdict *v, int ok, int32_t s, dc_tensor_id id) {
    if (ok) return;
    if (v->n_failed++ == 0) v->first_step = s, v->first_id = id;
}

static void check_prefix(tb *t, const dc_chain *c, const dc_inputs *in, const dc_run *got,
                         const dc_run *oracle, dc_verdict *v) {
    const mla_geom *g = &c->g;
    int32_t d = g->idx_dim, np = g->t_kv / g->pool;
    int64_t rs[3] = {g->state_rows, 2 * (int64_t)d, 1}, ks[3] = {np, d, 1};
    int ok = judge(t, "prefix_idx_state", 2, rs, ST_F32, got->prefix_ring, oracle->prefix_ring,
                   "oracle", dc_class(DC_IDX_STATE), dc_nan_any(DC_IDX_STATE), NULL);
    note_fail(v, ok, -1, DC_IDX_STATE);
    /* bounds per pool over its own rows (the ring's early rows are gone): the flat prefix */
    float *flat = tb_xmalloc(t, (size_t)g->t_kv * 2 * d * sizeof *flat);
    double *atol = tb_xmalloc(t, (size_t)np * d * sizeof *atol);
    oracle_index_append_ring_f32(flat, in->idx_k, in->idx_gate, 0, g->t_kv, d, d, 0);
    mla_tol_pool_key_bounds(flat, in->idx_ape, 0, np, g->pool, d, 0, atol);
    ok = judge(t, "prefix_pool_keys", 2, ks, ST_F32, got->prefix_keys, oracle->prefix_keys,
               "oracle", dc_class(DC_POOL_KEYS), dc_nan_any(DC_POOL_KEYS), atol);
    note_fail(v, ok, -1, DC_POOL_KEYS);
    free(flat), free(atol);
}

/* The drift of one tensor from the oracle chain's, in the tensor's own units. */
static void drift_line(FILE *fp, const dc_chain *c, const dc_inputs *in, const dc_run *got,
                       const dc_run *oracle, int32_t s, dc_tensor_id id) {
    int nd;
    int64_t shape[3];
    st_dtype dt;
    dc_shape(c, id, s, &nd, shape, &dt);
    size_t n = n_elems(shape), nd_diff = 0;
    const void *a = got->t[s][id], *b = oracle->t[s][id];
    if (dt == ST_I32) {
        for (size_t i = 0; i < n; i++)
            nd_diff += ((const int32_t *)a)[i] != ((const int32_t *)b)[i];
        fprintf(fp, "  step %d %-15s %zu of %zu entries differ\n", s, dc_tensor(id)->tensor,
                nd_diff, n);
        return;
    }
    mla_tol exact = mla_tol_exact();
    mla_cmp_result r = mla_compare_f32(a, b, n, &exact);
    double worst = 0.0;
    double *atol = malloc(n * sizeof *atol);
    int bounded = atol && dc_bounds(c, in, oracle, s, id, atol);
    if (bounded) {
        const float *x = a, *y = b;
        for (size_t i = 0; i < n; i++) {
            double e = fabs((double)x[i] - (double)y[i]);
            if (atol[i] > 0 && e / atol[i] > worst) worst = e / atol[i];
        }
    }
    free(atol);
    fprintf(fp, "  step %d %-15s %zu of %zu differ, max |gpu - oracle chain| %.3g", s,
            dc_tensor(id)->tensor, r.n_diff, n, r.max_abs);
    if (bounded) fprintf(fp, " (%.3g of its %s bound)", worst, mla_tol_class_name(dc_class(id)));
    fprintf(fp, "\n");
}

dc_verdict dc_check_chain(tb *t, const dc_chain *c, const dc_inputs *in, const dc_run *got,
                          const dc_run *oracle, FILE *drift) {
    dc_verdict v;
    memset(&v, 0, sizeof v);
    check_prefix(t, c, in, got, oracle, &v);
    v.diverged = memcmp(got->prefix_ring, oracle->prefix_ring,
                        (size_t)c->g.state_rows * 2 * c->g.idx_dim * sizeof(float)) ||
                 memcmp(got->prefix_keys, oracle->prefix_keys,
                        (size_t)(c->g.t_kv / c->g.pool) * c->g.idx_dim * sizeof(float));
    if (v.diverged) v.div_step = -1, v.div_id = DC_POOL_KEYS;
    for (int32_t s = 0; s < c->steps; s++)
        for (int k = 0; k < DC_N_TENSORS; k++) {
            dc_tensor_id id = (dc_tensor_id)k;
            if (!dc_present(c, id)) continue;
            int nd;
            int64_t shape[3];
            st_dtype dt;
            size_t nb = dc_shape(c, id, s, &nd, shape, &dt);
            void *ref = tb_xmalloc(t, nb);
            if (!got->t[s][id] || dc_oracle_tensor(c, in, got, s, id, ref))
                tb_failf(t, 1, "chain %s step %d: the run lacks an input of %s", c->name, s,
                         dc_tensor(id)->tensor);
            double *atol = NULL;
            if (dc_class(id) != MLA_TOL_EXACT) {
                atol = tb_xmalloc(t, n_elems(shape) * sizeof *atol);
                dc_bounds(c, in, got, s, id, atol);
            }
            char tname[96];
            snprintf(tname, sizeof tname, "step%d_%s", s, dc_tensor(id)->tensor);
            int ok = judge(t, tname, nd, shape, dt, got->t[s][id], ref, "oracle_of_gpu_inputs",
                           dc_class(id), dc_nan_any(id), atol);
            note_fail(&v, ok, s, id);
            if (!v.diverged && memcmp(got->t[s][id], oracle->t[s][id], nb) != 0)
                v.diverged = 1, v.div_step = s, v.div_id = id;
            free(ref), free(atol);
        }
    if (drift) {
        fprintf(drift, "chain %s (%s): ", c->name, t->id);
        if (v.diverged)
            fprintf(drift, "the GPU chain leaves the oracle chain's bytes at %s%d %s (%s)\n",
                    v.div_step < 0 ? "prefix" : "step ", v.div_step < 0 ? 0 : v.div_step,
                    dc_tensor(v.div_id)->stage, dc_tensor(v.div_id)->tensor);
        else
            fprintf(drift, "the GPU chain equals the oracle chain, bytes, at every step\n");
        static const dc_tensor_id k_drift[] = {DC_SCORE,          DC_IDX, DC_O_LAT,
                                               DC_O_LAT_GATHERED, DC_OUT, DC_OUT_GATHERED};
        for (int32_t s = 0; s < c->steps; s++)
            for (size_t k = 0; k < sizeof k_drift / sizeof k_drift[0]; k++)
                drift_line(drift, c, in, got, oracle, s, k_drift[k]);
    }
    if (v.n_failed) {
        char where[32];
        if (v.first_step < 0)
            snprintf(where, sizeof where, "prefix");
        else
            snprintf(where, sizeof where, "step %d", v.first_step);
        tb_failf(t, 0,
                 "chain %s %s: first stage over its class: %s (%s); %d tensor comparison(s) over "
                 "their class in all (stage-local: each against the oracle of the GPU's own "
                 "inputs to that stage)",
                 c->name, where, dc_tensor(v.first_id)->stage, dc_tensor(v.first_id)->tensor,
                 v.n_failed);
    }
    return v;
}
