/* geometry.h: the model geometries, in one place. Every golden case, GPU suite, benchmark and fuzz
 * seed builds its shapes and scales from these presets; adding a geometry is one preset here, one
 * case row (tests/lib/cases.c) and a `golden regen`.
 *
 * From the public model configurations (transformers' glm_moe_dsa and glm5_next; DESIGN.md §3):
 *
 *                     glm5 (MLA + DSA)          glm5_next (NoPE + k-pool DSA)
 *   n_head            64                        64
 *   kv_rank           512                       512
 *   d_rope            64 (theta 1e6)            0 (NoPE)
 *   d_nope            192                       256
 *   d_v               256                       256
 *   softmax scale     1/sqrt(256)               1/sqrt(256)
 *   indexer           32 heads x 128            32 heads x 128
 *   k-pool            pool 1, top 2048          pool 4, top 512 pools, always_tail (width 2051)
 *   max positions     202752                    1048576
 *
 * The shipped long-context k-pool shape: 1M cached rows, 512-query prefill chunks at the
 * glm5_next indexer (262144 pools).
 *
 * Header only, C and C++ (the benchmarks are .cu). Three forms of one set of numbers:
 *  - MLA_<MODEL>_<FIELD> constants;
 *  - MLA_GEOM_<MODEL> / MLA_INDEXER_<MODEL>: designated-initializer lists for static C tables
 *    (the case table), e.g. { MLA_GEOM_GLM5, .t_q = 1, .t_kv = 4096 };
 *  - mla_geom_glm5(t_q, t_kv) and friends: an mla_geom value, for code in either language.
 */
#ifndef MLA_TESTS_GEOMETRY_H
#define MLA_TESTS_GEOMETRY_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The geometry of one case (dense fields, then the k-pool indexer's). Zero fields are unused. */
typedef struct {
    /* dense MLA core */
    int32_t n_head, kv_rank, d_rope, d_nope, d_v;
    int32_t t_q, t_kv; /* query i sits at cache row t_kv - t_q + i */
    float rope_base;
    float scale;  /* softmax scale */
    int32_t bf16; /* 1: also run the bf16 GEMM stages (absorb + decompress) */
    /* explicit rope positions (rope-only cases); 0 = derived as t_kv - t_q + i */
    int32_t n_positions;
    int32_t positions[16];
    /* DSA k-pool indexer (for the indexer cases) */
    int32_t idx_heads, idx_dim, pool, select_k, width, always_tail, first_pos, n_pools;
    float qk_scale, head_scale;
    /* k-pool indexer state plane: 0 = flat (t_kv rows); > 0 = a ring of state_rows rows (a
     * multiple of pool) filled by the append schedule mla_kpool_ring_chunk, pool keys built
     * incrementally (pool_begin) after each chunk. */
    int32_t state_rows;
    /* indexer fill scales: idx_gate ~ U(-gate_scale, gate_scale), idx_ape ~ U(-ape_scale,
     * ape_scale); 0 = the defaults (MLA_KPOOL_GATE_SCALE, 1). Large values make an unguarded
     * exp in the pool-key softmax overflow. */
    float gate_scale, ape_scale;
    /* 1: the exact stages' inputs use the small-integer fill (integers in [-4, 4] times a power
     * of two: every sum exact in any order), weights scaled by 1/8 instead of 1/sqrt(fan_in). */
    int32_t small_int;
    /* k-pool edge-case inputs (stages_kpool.c); 0 = the chained pipeline.
     * select_scores 1: the select stage ranks its own score plane, the input sel_score
     *   [t_q][n_pools] (the realistic fill of "sel_score" x 1 with the special-value overlay
     *   kpool_special_score: NaN of either sign and any payload, +-inf, +0 / -0, three exact
     *   tie levels; the pools a query cannot see hold such values too), not the score output.
     * gather_idx 1: attn_gathered walks the explicit list gather_idx [t_q][width] (recorded in
     *   the manifest as "values"; kpool_gather_pattern: query i of kind i % 4: all -1 (o_lat
     *   +0), sparse rows with -1 between them, three rows repeated, one row repeated with -1
     *   between), not the select output. */
    int32_t select_scores, gather_idx;
    /* idx_repeat R > 0: a repeated context (a prompt whose content repeats, padding): rows r >= R
     * of the indexer rows idx_k and idx_gate are copies of row r % R (a multiple of pool), so
     * every pool key recurs every R / pool pools and the scores tie in groups: the select_k cut
     * falls inside a tie group, which the pool index breaks (docs/kpool.md). 0 = the fill. */
    int32_t idx_repeat;
    /* The latent inputs (kv, cache) are filled times latent_scale (0 = 1). A power of two with
     * the softmax scale divided by it: every product and sum of the dense stages scales exactly
     * (no overflow or underflow in f32), so the classes' bounds scale with them, while a kernel
     * that squares a latent, keeps an f16 / absolute-epsilon intermediate or clamps overflows. */
    float latent_scale;
    /* 1: the dense stages' inputs carry NaN, +-inf, -0 and subnormals at fixed elements (the
     * overlay of tests/lib/stages_dense.c dense_nonfinite_overlay, restated by
     * tools/golden/mla_golden.py); their propagation is the contract's (kernels/mla.h). */
    int32_t nonfinite;
} mla_geom;

/* ---- the numbers ---------------------------------------------------------------------------- */
#define MLA_GLM5_N_HEAD 64
#define MLA_GLM5_KV_RANK 512
#define MLA_GLM5_D_ROPE 64
#define MLA_GLM5_D_NOPE 192
#define MLA_GLM5_D_V 256
#define MLA_GLM5_ROPE_BASE 1e6f
#define MLA_GLM5_SCALE 0.0625f /* 1 / sqrt(256) */
#define MLA_GLM5_MAX_POS 202752

#define MLA_GLM5_NEXT_N_HEAD 64
#define MLA_GLM5_NEXT_KV_RANK 512
#define MLA_GLM5_NEXT_D_ROPE 0
#define MLA_GLM5_NEXT_D_NOPE 256
#define MLA_GLM5_NEXT_D_V 256
#define MLA_GLM5_NEXT_ROPE_BASE 1e6f /* unused (NoPE); recorded so the manifest says so */
#define MLA_GLM5_NEXT_SCALE 0.0625f
#define MLA_GLM5_NEXT_MAX_POS 1048576

/* The DSA indexer: 32 heads x 128, qk_scale = 128^-0.5, head_scale = 32^-0.5. */
#define MLA_INDEXER_HEADS 32
#define MLA_INDEXER_DIM 128
#define MLA_INDEXER_QK_SCALE 0.08838834764831845f
#define MLA_INDEXER_HEAD_SCALE 0.17677669529663688f
/* glm5: plain DSA (pool 1), top 2048 tokens. */
#define MLA_GLM5_POOL 1
#define MLA_GLM5_SELECT_K 2048
#define MLA_GLM5_WIDTH 2048
#define MLA_GLM5_ALWAYS_TAIL 0
/* glm5_next: 512 pools of 4, the query's incomplete pool always kept: width 512 * 4 + 3. */
#define MLA_GLM5_NEXT_POOL 4
#define MLA_GLM5_NEXT_SELECT_K 512
#define MLA_GLM5_NEXT_WIDTH 2051
#define MLA_GLM5_NEXT_ALWAYS_TAIL 1

/* The shipped long-context shape (glm5_next indexer). */
#define MLA_LONGCTX_ROWS 1048576
#define MLA_LONGCTX_T_Q 512
#define MLA_LONGCTX_N_POOLS (MLA_LONGCTX_ROWS / MLA_GLM5_NEXT_POOL)
#define MLA_LONGCTX_FIRST_POS (MLA_LONGCTX_ROWS - MLA_LONGCTX_T_Q)

/* ---- designated-initializer lists (C static tables) ----------------------------------------- */
#define MLA_GEOM_GLM5 MLA_GEOM_GLM5_HEADS(MLA_GLM5_N_HEAD)
/* glm5 with H heads per GPU: tensor parallelism shards the 64 heads over 2, 4 or 8 ranks. */
#define MLA_GEOM_GLM5_HEADS(H) MLA_GEOM_GLM5_DIMS(H), .scale = MLA_GLM5_SCALE
/* glm5's dimensions and rope base with H heads, the softmax scale left to the case (a case that
 * scales it names it once: designated initializers must not repeat a field). */
#define MLA_GEOM_GLM5_DIMS(H)                                                                      \
    .n_head = (H), .kv_rank = MLA_GLM5_KV_RANK, .d_rope = MLA_GLM5_D_ROPE,                         \
    .d_nope = MLA_GLM5_D_NOPE, .d_v = MLA_GLM5_D_V, .rope_base = MLA_GLM5_ROPE_BASE
#define MLA_GEOM_GLM5_NEXT MLA_GEOM_GLM5_NEXT_HEADS(MLA_GLM5_NEXT_N_HEAD)
/* glm5_next with H heads per GPU (tensor parallelism, as MLA_GEOM_GLM5_HEADS). */
#define MLA_GEOM_GLM5_NEXT_HEADS(H) MLA_GEOM_GLM5_NEXT_DIMS(H), .scale = MLA_GLM5_NEXT_SCALE
/* glm5_next's dimensions and rope base with H heads, the softmax scale left to the case. */
#define MLA_GEOM_GLM5_NEXT_DIMS(H)                                                                 \
    .n_head = (H), .kv_rank = MLA_GLM5_NEXT_KV_RANK, .d_rope = MLA_GLM5_NEXT_D_ROPE,               \
    .d_nope = MLA_GLM5_NEXT_D_NOPE, .d_v = MLA_GLM5_NEXT_D_V, .rope_base = MLA_GLM5_NEXT_ROPE_BASE
/* The indexer of a k-pool case whose queries are the last t_q of t_kv rows;
 * n_pools = floor(t_kv / pool). */
#define MLA_INDEXER_OF(TQ, TKV, POOL, SEL, WIDTH, TAIL)                                            \
    MLA_INDEXER_HEADS_OF(MLA_INDEXER_HEADS, TQ, TKV, POOL, SEL, WIDTH, TAIL)
/* The same with H in {16, 32, 64} indexer heads (other DSA models use 16 or 64); head_scale =
 * H^-0.5, exact in f32 for 16 and 64. */
#define MLA_INDEXER_HEADS_OF(H, TQ, TKV, POOL, SEL, WIDTH, TAIL)                                   \
    .idx_heads = (H), .idx_dim = MLA_INDEXER_DIM, .pool = (POOL), .select_k = (SEL),               \
    .width = (WIDTH), .always_tail = (TAIL), .first_pos = (TKV) - (TQ), .n_pools = (TKV) / (POOL), \
    .qk_scale = MLA_INDEXER_QK_SCALE,                                                              \
    .head_scale = (H) == 16   ? 0.25f                                                              \
                  : (H) == 32 ? MLA_INDEXER_HEAD_SCALE                                             \
                  : (H) == 64 ? 0.125f                                                             \
                              : NAN /* another H: state its scale (NaN is refused, 40035) */
#define MLA_INDEXER_GLM5(TQ, TKV)                                                                  \
    MLA_INDEXER_OF(TQ, TKV, MLA_GLM5_POOL, MLA_GLM5_SELECT_K, MLA_GLM5_WIDTH, MLA_GLM5_ALWAYS_TAIL)
#define MLA_INDEXER_GLM5_NEXT(TQ, TKV)                                                             \
    MLA_INDEXER_OF(TQ, TKV, MLA_GLM5_NEXT_POOL, MLA_GLM5_NEXT_SELECT_K, MLA_GLM5_NEXT_WIDTH,       \
                   MLA_GLM5_NEXT_ALWAYS_TAIL)

/* ---- values (C and C++) --------------------------------------------------------------------- */
static inline mla_geom mla_geom_glm5(int32_t t_q, int32_t t_kv) {
    mla_geom g;
    memset(&g, 0, sizeof g);
    g.n_head = MLA_GLM5_N_HEAD, g.kv_rank = MLA_GLM5_KV_RANK, g.d_rope = MLA_GLM5_D_ROPE;
    g.d_nope = MLA_GLM5_D_NOPE, g.d_v = MLA_GLM5_D_V, g.rope_base = MLA_GLM5_ROPE_BASE;
    g.scale = MLA_GLM5_SCALE, g.t_q = t_q, g.t_kv = t_kv;
    return g;
}

static inline mla_geom mla_geom_glm5_next(int32_t t_q, int32_t t_kv) {
    mla_geom g;
    memset(&g, 0, sizeof g);
    g.n_head = MLA_GLM5_NEXT_N_HEAD, g.kv_rank = MLA_GLM5_NEXT_KV_RANK;
    g.d_rope = MLA_GLM5_NEXT_D_ROPE, g.d_nope = MLA_GLM5_NEXT_D_NOPE, g.d_v = MLA_GLM5_NEXT_D_V;
    g.rope_base = MLA_GLM5_NEXT_ROPE_BASE, g.scale = MLA_GLM5_NEXT_SCALE, g.t_q = t_q;
    g.t_kv = t_kv;
    return g;
}

/* Adds the indexer fields (queries at the last t_q of g->t_kv rows). */
static inline void mla_geom_set_indexer(mla_geom *g, int32_t pool, int32_t select_k, int32_t width,
                                        int32_t always_tail) {
    g->idx_heads = MLA_INDEXER_HEADS, g->idx_dim = MLA_INDEXER_DIM, g->pool = pool;
    g->select_k = select_k, g->width = width, g->always_tail = always_tail;
    g->first_pos = g->t_kv - g->t_q, g->n_pools = g->t_kv / pool;
    g->qk_scale = MLA_INDEXER_QK_SCALE, g->head_scale = MLA_INDEXER_HEAD_SCALE;
}

static inline mla_geom mla_geom_glm5_kpool(int32_t t_q, int32_t t_kv) {
    mla_geom g = mla_geom_glm5(t_q, t_kv);
    mla_geom_set_indexer(&g, MLA_GLM5_POOL, MLA_GLM5_SELECT_K, MLA_GLM5_WIDTH,
                         MLA_GLM5_ALWAYS_TAIL);
    return g;
}

static inline mla_geom mla_geom_glm5_next_kpool(int32_t t_q, int32_t t_kv) {
    mla_geom g = mla_geom_glm5_next(t_q, t_kv);
    mla_geom_set_indexer(&g, MLA_GLM5_NEXT_POOL, MLA_GLM5_NEXT_SELECT_K, MLA_GLM5_NEXT_WIDTH,
                         MLA_GLM5_NEXT_ALWAYS_TAIL);
    return g;
}

/* The shipped long-context indexer step: 1M rows, a 512-query chunk at the end. */
static inline mla_geom mla_geom_longctx_kpool(void) {
    return mla_geom_glm5_next_kpool(MLA_LONGCTX_T_Q, MLA_LONGCTX_ROWS);
}

/* ---- derived fill scales -------------------------------------------------------------------- */
/* Activations and cache rows ~ U(-1, 1); weights ~ U(-1, 1) / sqrt(fan_in) (rounded once to f32).
 */
static inline float mla_weight_scale(int32_t fan_in) { return (float)(1.0 / sqrt((double)fan_in)); }
/* The indexer gate ~ U(-4, 4), so the pool softmax is far from uniform. */
#define MLA_KPOOL_GATE_SCALE 4.0f

#ifdef __cplusplus
}
#endif
#endif /* MLA_TESTS_GEOMETRY_H */
