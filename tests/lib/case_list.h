/* case_list.h: the golden cases, one list per family, and each stage's GPU checks.
 *
 * Everything that enumerates cases or stages is generated from these lists: the case table
 * (cases.c), the golden GPU suites (one Criterion test per (case, GPU check), named
 * <suite>/<case>__<check>, the name also a --filter and a known-failure ledger key), the oracle
 * suite (golden_oracle/<case>) and the k-pool identity suite (kpool_identities/fixture_<case>).
 *
 *   MLA_<FAMILY>_CASES(X)      X(case, stage set) for each case of the family, in table order;
 *   MLA_CASE_<case>            the case's row: model, seed, geometry (tests/lib/geometry.h
 *                              presets), stored rows;
 *   MLA_STAGE_SET_<set>(S, c)  S(c, stage) for each stage the case runs, in order;
 *   MLA_CHECKS_<stage>(V, c)   V(c, stage, check, variant) for each GPU check of the stage (the
 *                              variant is passed to the descriptor's gpu half).
 *
 * Adding a case: one MLA_<FAMILY>_CASES entry, one MLA_CASE_<case> row, `golden regen <case>`.
 * Adding a stage: its descriptor (stages_<family>.c), its MLA_CHECKS_<stage> line and its place
 * in a stage set (docs/adding-a-kernel.md).
 */
#ifndef MLA_TESTS_CASE_LIST_H
#define MLA_TESTS_CASE_LIST_H

/* ---- stage sets ----------------------------------------------------------------------------- */
#define MLA_STAGE_SET_dense(S, c)                                                                  \
    S(c, rope)                                                                                     \
    S(c, split_latent) S(c, append_latent) S(c, absorb_q) S(c, attn_absorbed) S(c, decompress_v)
#define MLA_STAGE_SET_dense_bf16(S, c)                                                             \
    MLA_STAGE_SET_dense(S, c) S(c, bf16_absorb) S(c, bf16_decompress)
#define MLA_STAGE_SET_rope_only(S, c) S(c, rope)
#define MLA_STAGE_SET_kpool(S, c)                                                                  \
    S(c, index_append_ring) S(c, pool_keys) S(c, score) S(c, select) S(c, attn_gathered)

/* ---- each stage's GPU checks ---------------------------------------------------------------- */
#define MLA_CHECKS_rope(V, c) V(c, rope, rope, 0)
#define MLA_CHECKS_split_latent(V, c) V(c, split_latent, split_latent, 0)
#define MLA_CHECKS_append_latent(V, c) V(c, append_latent, append_latent, 0)
#define MLA_CHECKS_absorb_q(V, c) V(c, absorb_q, absorb_q, 0)
/* attention: variant 0 the f32 launcher; 1 / 2 / 3 / 4 the MEMRA_MLA_TC_ATTN door's 3xTF32 /
 * TF32 / bf16 / wgmma arms (EXPERIMENTAL; within class attn plus the arm's arithmetic,
 * tests/lib/compare.h) */
#define MLA_CHECKS_attn_absorbed(V, c)                                                             \
    V(c, attn_absorbed, attn_absorbed, 0)                                                          \
    V(c, attn_absorbed, attn_absorbed_tc3xtf32, 1)                                                 \
    V(c, attn_absorbed, attn_absorbed_tctf32, 2)                                                   \
    V(c, attn_absorbed, attn_absorbed_tcbf16, 3) V(c, attn_absorbed, attn_absorbed_tcwgmma, 4)
#define MLA_CHECKS_decompress_v(V, c) V(c, decompress_v, decompress_v, 0)
/* variant 0: y f32, 1: y bf16 */
#define MLA_CHECKS_bf16_absorb(V, c)                                                               \
    V(c, bf16_absorb, bf16_absorb_f32, 0) V(c, bf16_absorb, bf16_absorb_bf16, 1)
#define MLA_CHECKS_bf16_decompress(V, c)                                                           \
    V(c, bf16_decompress, bf16_decompress_f32, 0) V(c, bf16_decompress, bf16_decompress_bf16, 1)
#define MLA_CHECKS_index_append_ring(V, c) V(c, index_append_ring, index_append_ring, 0)
#define MLA_CHECKS_pool_keys(V, c) V(c, pool_keys, pool_keys, 0)
#define MLA_CHECKS_score(V, c) V(c, score, score, 0)
#define MLA_CHECKS_select(V, c) V(c, select, select, 0)
#define MLA_CHECKS_attn_gathered(V, c)                                                             \
    V(c, attn_gathered, attn_gathered, 0)                                                          \
    V(c, attn_gathered, attn_gathered_tc3xtf32, 1)                                                 \
    V(c, attn_gathered, attn_gathered_tctf32, 2)                                                   \
    V(c, attn_gathered, attn_gathered_tcbf16, 3) V(c, attn_gathered, attn_gathered_tcwgmma, 4)

/* ---- dense MLA core (suite dense_gpu) ------------------------------------------------------- */
#define MLA_DENSE_CASES(X)                                                                         \
    X(glm5_decode, dense)                                                                          \
    X(glm5_verify, dense)                                                                          \
    X(glm5_prefill, dense_bf16)                                                                    \
    X(glm5_rope_maxpos, rope_only)                                                                 \
    X(glm5_next_decode, dense)                                                                     \
    X(glm5_next_verify, dense)                                                                     \
    X(glm5_tp32_decode, dense)                                                                     \
    X(glm5_tp16_verify, dense)                                                                     \
    X(glm5_tp8_decode, dense)                                                                      \
    X(glm5_next_chunk37, dense)                                                                    \
    X(rope128_t5, dense)                                                                           \
    X(glm5_smallint_verify, dense)                                                                 \
    X(glm5_peaked_verify, dense)                                                                   \
    X(glm5_next_large_latent, dense)                                                               \
    X(glm5_next_subnormal_latent, dense)                                                           \
    X(glm5_tp8_nonfinite, dense)

#define MLA_CASE_glm5_decode                                                                       \
    .model = "glm5",                                                                               \
    .purpose = "glm5 decode step (t_q 1, 4096 rows): every dense stage at the production shape",   \
    .seed = 0x474c0501u, .geom = {MLA_GEOM_GLM5, .t_q = 1, .t_kv = 4096}
#define MLA_CASE_glm5_verify                                                                       \
    .model = "glm5",                                                                               \
    .purpose = "glm5 speculative verify (t_q 4): several queries over one causal cache",           \
    .seed = 0x474c0502u, .geom = {MLA_GEOM_GLM5, .t_q = 4, .t_kv = 4096}
#define MLA_CASE_glm5_prefill                                                                      \
    .model = "glm5",                                                                               \
    .purpose = "glm5 prefill (t_q = t_kv = 128) and the bf16 GEMM door of absorb / decompress",    \
    .seed = 0x474c0503u, .geom = {MLA_GEOM_GLM5, .t_q = 128, .t_kv = 128, .bf16 = 1},              \
    .n_stored_rows = 7, .stored_rows = {0, 1, 2, 63, 64, 126, 127}
/* rope at the largest positions of glm5 (202752) and glm5_next (1048576) */
#define MLA_CASE_glm5_rope_maxpos                                                                  \
    .model = "glm5",                                                                               \
    .purpose =                                                                                     \
        "rope at the largest glm5 and glm5_next positions: an inaccurate sin/cos at large angles", \
    .seed = 0x474c0504u,                                                                           \
    .geom = {.n_head = MLA_GLM5_N_HEAD,                                                            \
             .d_rope = MLA_GLM5_D_ROPE,                                                            \
             .rope_base = MLA_GLM5_ROPE_BASE,                                                      \
             .t_q = 8,                                                                             \
             .n_positions = 8,                                                                     \
             .positions = {202748, 202749, 202750, 202751, 1048572, 1048573, 1048574, 1048575}}
#define MLA_CASE_glm5_next_decode                                                                  \
    .model = "glm5_next", .purpose = "glm5_next (NoPE) decode: d_rope 0, q_pe unread",             \
    .seed = 0x474c0601u, .geom = {MLA_GEOM_GLM5_NEXT, .t_q = 1, .t_kv = 4096}
#define MLA_CASE_glm5_next_verify                                                                  \
    .model = "glm5_next", .purpose = "glm5_next (NoPE) verify (t_q 4)", .seed = 0x474c0602u,       \
    .geom = {MLA_GEOM_GLM5_NEXT, .t_q = 4, .t_kv = 4096}

/* Tensor-parallel head counts: GLM-5's 64 heads sharded over 2, 4 and 8 ranks. */
#define MLA_CASE_glm5_tp32_decode                                                                  \
    .model = "glm5", .purpose = "tensor-parallel rank of 32 heads: another head tiling than 64",   \
    .seed = 0x474c0521u, .geom = {MLA_GEOM_GLM5_HEADS(32), .t_q = 1, .t_kv = 4096}
#define MLA_CASE_glm5_tp16_verify                                                                  \
    .model = "glm5", .purpose = "tensor-parallel rank of 16 heads at verify width",                \
    .seed = 0x474c0522u, .geom = {MLA_GEOM_GLM5_HEADS(16), .t_q = 4, .t_kv = 4096}
#define MLA_CASE_glm5_tp8_decode                                                                   \
    .model = "glm5", .purpose = "tensor-parallel rank of 8 heads: one head tile, many chunks",     \
    .seed = 0x474c0523u, .geom = {MLA_GEOM_GLM5_HEADS(8), .t_q = 1, .t_kv = 4096}
/* A 37-query prefill chunk starting mid-cache (rows 963..999 of 1000): t_q no multiple of any
 * tile, between 5 and 127. */
#define MLA_CASE_glm5_next_chunk37                                                                 \
    .model = "glm5_next",                                                                          \
    .purpose = "a 37-query prefill chunk starting mid-cache: t_q no multiple of any tile",         \
    .seed = 0x474c0621u, .geom = {MLA_GEOM_GLM5_NEXT, .t_q = 37, .t_kv = 1000},                    \
    .n_stored_rows = 5, .stored_rows = {0, 1, 17, 35, 36}
/* d_rope 128 (the maximum; theta 1e4, as in other MLA models), 16 heads, t_q 5 mid-cache. */
#define MLA_CASE_rope128_t5                                                                        \
    .model = "synthetic", .purpose = "d_rope 128 (the maximum) with 16 heads at t_q 5",            \
    .seed = 0x474c0701u,                                                                           \
    .geom = {.n_head = 16,                                                                         \
             .kv_rank = 512,                                                                       \
             .d_rope = 128,                                                                        \
             .d_nope = 128,                                                                        \
             .d_v = 128,                                                                           \
             .t_q = 5,                                                                             \
             .t_kv = 1000,                                                                         \
             .rope_base = 1e4f,                                                                    \
             .scale = MLA_GLM5_SCALE}

/* The small-integer fill on every exact stage (split, append, absorb, decompress): sums exact
 * in any order, so a wrong index or a dropped term is the only way to differ. */
#define MLA_CASE_glm5_smallint_verify                                                              \
    .model = "glm5",                                                                               \
    .purpose =                                                                                     \
        "small-integer fill on the exact dense stages: only a wrong index or term can differ",     \
    .seed = 0x474c0541u, .geom = {MLA_GEOM_GLM5, .t_q = 4, .t_kv = 512, .small_int = 1}

/* Peaked and wide softmax: the softmax scale 48 times glm5's puts |logits| up to ~90 (mixed
 * signs; measured with the Python reader: every query has heads with a weight of 1.0 and heads
 * whose f32 exp(l - max) underflows to 0, and two (query, head) pairs have their best row in the
 * last row tile of the walk). A missing or stale running-max rescale, or an exp not taken
 * relative to the running max, is far outside class attn here; the gentle cases (|logit| < 3)
 * hide it. */
#define MLA_CASE_glm5_peaked_verify                                                                \
    .model = "glm5",                                                                               \
    .purpose = "peaked / wide softmax: scale 48x, |logit| to ~90, weights 1 to f32 underflow, "    \
               "a late max",                                                                       \
    .seed = 0x474c0551u,                                                                           \
    .geom = {MLA_GEOM_GLM5_DIMS(MLA_GLM5_N_HEAD), .scale = 48.0f * MLA_GLM5_SCALE, .t_q = 4,       \
             .t_kv = 1024}

/* Large-magnitude latents: kv and cache filled times 2^100 (|values| up to ~1.3e30) and the
 * softmax scale divided by 2^100, so the logits are glm5_next's and every f32 product and sum
 * of the dense stages is an exact power-of-two scaling (o_lat, out ~1e30): a kernel that squares
 * a latent (overflow at 1.8e19), keeps an f16 intermediate (65504) or an absolute epsilon fails. */
#define MLA_CASE_glm5_next_large_latent                                                            \
    .model = "glm5_next",                                                                          \
    .purpose =                                                                                     \
        "large latents: kv / cache x 2^100, softmax scale / 2^100, exact power-of-two scaling",    \
    .seed = 0x474c0651u,                                                                           \
    .geom = {MLA_GEOM_GLM5_NEXT_DIMS(MLA_GLM5_NEXT_N_HEAD),                                        \
             .scale = MLA_GLM5_NEXT_SCALE * 0x1p-100f, .latent_scale = 0x1p100f, .t_q = 2,         \
             .t_kv = 512}

/* Subnormal latents: kv and cache filled times 2^-128 (every |value| < 2^-126, on the 2^-149
 * grid) and the softmax scale times 2^128, so the logits are glm5_next's while every product of
 * a latent underflows: the copies must keep the subnormal bytes (no flush to zero), attention's
 * products lose up to 2^-150 each (the underflow terms of class attn, docs/tolerances.md), and
 * o_lat / out are subnormal. */
#define MLA_CASE_glm5_next_subnormal_latent                                                        \
    .model = "glm5_next",                                                                          \
    .purpose = "subnormal latents: kv / cache x 2^-128, softmax scale x 2^128, nothing flushed",   \
    .seed = 0x474c0653u,                                                                           \
    .geom = {MLA_GEOM_GLM5_NEXT_DIMS(MLA_GLM5_NEXT_N_HEAD),                                        \
             .scale = 0x1p124f, /* MLA_GLM5_NEXT_SCALE (2^-4) x 2^128 */                           \
             .latent_scale = 0x1p-128f, .t_q = 2, .t_kv = 512}

/* NaN, +-inf, -0 and subnormal inputs at fixed elements (stages_dense.c dense_nonfinite_overlay):
 * the copies keep every byte, absorb / decompress propagate by IEEE rules in the oracle's fmaf
 * order, rope gives NaN / +-inf pairs, and attention's (query, head) rows with a NaN or +-inf
 * logit are all NaN (kernels/mla.h) while the other rows stay under their class. The 8-head
 * shard keeps the outputs small; the last query alone sees the NaN cache row. */
#define MLA_CASE_glm5_tp8_nonfinite                                                                \
    .model = "glm5",                                                                               \
    .purpose = "NaN, +-inf, -0 and subnormal inputs: propagation per the contract, 8 heads",       \
    .seed = 0x474c0652u, .geom = {MLA_GEOM_GLM5_HEADS(8), .t_q = 4, .t_kv = 256, .nonfinite = 1}

/* ---- DSA k-pool indexer (suite kpool_gpu) --------------------------------------------------- */
/* Stored rows: the big idx_state / pool_keys planes keep a few rows; the manifest has the full
 * SHA-256; the GPU tests recompute the full tensors. */
#define MLA_KPOOL_CASES(X)                                                                         \
    X(glm5_kpool_decode, kpool)                                                                    \
    X(glm5_kpool_verify, kpool)                                                                    \
    X(glm5_next_kpool_decode, kpool)                                                               \
    X(glm5_next_kpool_verify, kpool)                                                               \
    X(glm5_next_kpool_ring, kpool)                                                                 \
    X(glm5_kpool_idx16, kpool)                                                                     \
    X(glm5_next_kpool_idx64, kpool)                                                                \
    X(glm5_next_kpool_gate, kpool)                                                                 \
    X(glm5_next_kpool_smallint, kpool)                                                             \
    X(glm5_kpool_select_special, kpool)                                                            \
    X(glm5_next_kpool_select_few, kpool)                                                           \
    X(glm5_next_kpool_mask, kpool)                                                                 \
    X(glm5_kpool_pool7_notail, kpool)                                                              \
    X(glm5_next_kpool_pool64, kpool)                                                               \
    X(glm5_kpool_gather_edges, kpool)                                                              \
    X(glm5_kpool_sampled, kpool)

#define MLA_CASE_glm5_kpool_decode                                                                 \
    .model = "glm5", .purpose = "glm5 DSA indexer decode (pool 1, top 2048 of 8192 rows)",         \
    .seed = 0x474c0511u,                                                                           \
    .geom = {MLA_GEOM_GLM5, .t_q = 1, .t_kv = 8192, MLA_INDEXER_GLM5(1, 8192)},                    \
    .n_stored_rows = 8, .stored_rows = {0, 1, 2, 3, 2047, 4096, 8190, 8191}
#define MLA_CASE_glm5_kpool_verify                                                                 \
    .model = "glm5", .purpose = "glm5 DSA indexer at verify width (t_q 4)", .seed = 0x474c0512u,   \
    .geom = {MLA_GEOM_GLM5, .t_q = 4, .t_kv = 8192, MLA_INDEXER_GLM5(4, 8192)},                    \
    .n_stored_rows = 8, .stored_rows = {0, 1, 2, 3, 2047, 4096, 8190, 8191}
/* t_kv 8195: the last query has an incomplete tail pool */
#define MLA_CASE_glm5_next_kpool_decode                                                            \
    .model = "glm5_next",                                                                          \
    .purpose =                                                                                     \
        "glm5_next k-pool decode (pool 4, 512 pools, always_tail) with an incomplete tail pool",   \
    .seed = 0x474c0611u,                                                                           \
    .geom = {MLA_GEOM_GLM5_NEXT, .t_q = 1, .t_kv = 8195, MLA_INDEXER_GLM5_NEXT(1, 8195)},          \
    .n_stored_rows = 6, .stored_rows = {0, 1, 2, 1024, 2046, 2047}
#define MLA_CASE_glm5_next_kpool_verify                                                            \
    .model = "glm5_next",                                                                          \
    .purpose = "glm5_next k-pool verify (t_q 4) with an incomplete tail pool",                     \
    .seed = 0x474c0612u,                                                                           \
    .geom = {MLA_GEOM_GLM5_NEXT, .t_q = 4, .t_kv = 8195, MLA_INDEXER_GLM5_NEXT(4, 8195)},          \
    .n_stored_rows = 6, .stored_rows = {0, 1, 2, 1024, 2046, 2047}
/* through a 4096-row tail ring, pool keys built incrementally */
#define MLA_CASE_glm5_next_kpool_ring                                                              \
    .model = "glm5_next",                                                                          \
    .purpose = "the indexer state through a 4096-row tail ring, pool keys built incrementally",    \
    .seed = 0x474c0613u,                                                                           \
    .geom = {MLA_GEOM_GLM5_NEXT, .t_q = 3, .t_kv = 8194, MLA_INDEXER_GLM5_NEXT(3, 8194),           \
             .state_rows = 4096},                                                                  \
    .n_stored_rows = 6, .stored_rows = {0, 1, 2, 1024, 2046, 2047}

/* 16 indexer heads, 5003 pools (no multiple of any score tile), t_q 5. */
#define MLA_CASE_glm5_kpool_idx16                                                                  \
    .model = "glm5", .purpose = "16 indexer heads and 5003 pools (no multiple of any score tile)", \
    .seed = 0x474c0531u,                                                                           \
    .geom = {MLA_GEOM_GLM5, .t_q = 5, .t_kv = 5003,                                                \
             MLA_INDEXER_HEADS_OF(16, 5, 5003, MLA_GLM5_POOL, MLA_GLM5_SELECT_K, MLA_GLM5_WIDTH,   \
                                  MLA_GLM5_ALWAYS_TAIL)},                                          \
    .n_stored_rows = 6, .stored_rows = {0, 1, 2, 2500, 5001, 5002}
/* 64 indexer heads at glm5_next's pool 4 (1024 pools and a tail pool). */
#define MLA_CASE_glm5_next_kpool_idx64                                                             \
    .model = "glm5_next", .purpose = "64 indexer heads at pool 4", .seed = 0x474c0631u,            \
    .geom = {MLA_GEOM_GLM5_NEXT, .t_q = 2, .t_kv = 4099,                                           \
             MLA_INDEXER_HEADS_OF(64, 2, 4099, MLA_GLM5_NEXT_POOL, MLA_GLM5_NEXT_SELECT_K,         \
                                  MLA_GLM5_NEXT_WIDTH, MLA_GLM5_NEXT_ALWAYS_TAIL)},                \
    .n_stored_rows = 6, .stored_rows = {0, 1, 2, 1024, 2046, 2047}
/* Pool-key gate ~ U(-300, 300) and ape ~ U(-100, 100): an unguarded exp(gate + ape) overflows
 * (exp(89) is inf in f32); the pool softmax must subtract its max first. */
#define MLA_CASE_glm5_next_kpool_gate                                                              \
    .model = "glm5_next",                                                                          \
    .purpose = "pool-key gate / ape so large that an unguarded exp overflows",                     \
    .seed = 0x474c0632u, .geom = {MLA_GEOM_GLM5_NEXT,   .t_q = 1,                                  \
                                  .t_kv = 2051,         MLA_INDEXER_GLM5_NEXT(1, 2051),            \
                                  .gate_scale = 300.0f, .ape_scale = 100.0f},                      \
    .n_stored_rows = 6, .stored_rows = {0, 1, 2, 256, 510, 511}

/* The small-integer fill on the indexer's exact stages (ring append, score, select) over a
 * repeated context (idx_repeat 80: the indexer rows repeat every 80 rows, 20 pools): 1024 visible
 * pools for select_k 512, each query's scores take 20 distinct values in tie groups of 51 or 52
 * pools, and the cut falls inside one (50 of a group of 51 kept, by lowest pool index; verified
 * by tools/golden/mla_golden_test.py). Bite: SELECT_TIE_FLIP (docs/fixtures-that-bite.md). */
#define MLA_CASE_glm5_next_kpool_smallint                                                          \
    .model = "glm5_next",                                                                          \
    .purpose =                                                                                     \
        "small-integer fill over a repeated context: scores tie in groups of ~51 pools and "       \
        "the select_k cut falls inside one (ties broken by pool index)",                           \
    .seed = 0x474c0641u,                                                                           \
    .geom = {MLA_GEOM_GLM5_NEXT, .t_q = 2,        .t_kv = 4099, MLA_INDEXER_GLM5_NEXT(2, 4099),    \
             .small_int = 1,     .idx_repeat = 80},                                                \
    .n_stored_rows = 6, .stored_rows = {0, 1, 2, 1024, 2046, 2047}

/* Edge cases of selection and gathered attention ("fixtures that bite"). Small caches at the
 * real indexer (32 x 128) and the tp8 head shard (8 heads) of the dense stages, so each fixture
 * stays small; the geometry fields select_scores / gather_idx are in tests/lib/geometry.h.
 *  glm5_kpool_select_special  select over its own score plane (select_scores): NaN of either
 *      sign and any payload, +-inf, +0 / -0, three exact tie levels; 2597..2600 candidates for
 *      select_k 2048, the cut inside the -0.75 tie group (ties broken by pool index).
 *  glm5_next_kpool_select_few the same overlay with 10..11 candidates for select_k 512: every
 *      candidate kept (NaN, -inf, +-0 included); the pool query 42 cannot see holds +inf.
 *  glm5_next_kpool_mask       pool 4, t_q 5 over 68 rows: queries 63..66 cannot see pool 16
 *      (score -inf there), tails of 0..3 rows, 16..17 candidates for select_k 512.
 *  glm5_kpool_pool7_notail    pool 7 (not a power of two), always_tail 0, select_k 4 of 8..9
 *      pools; query 61 cannot see pool 8; width exactly select_k * pool + pool - 1.
 *  glm5_next_kpool_pool64     pool 64 (the maximum), always_tail 1: query 1086 cannot see pool
 *      16 and has a 63-row tail (width 319 filled exactly), 1087 none, 1088 one row.
 *  glm5_kpool_gather_edges    attn_gathered over the explicit list gather_idx: a query with
 *      every entry -1 (o_lat +0), sparse rows with -1 between them, three rows repeated, one
 *      row repeated; 2048 slots. */
#define MLA_CASE_glm5_kpool_select_special                                                         \
    .model = "glm5",                                                                               \
    .purpose =                                                                                     \
        "select over NaN (any sign / payload), +-inf, +-0 and exact ties; the cut in a tie",       \
    .seed = 0x474c0571u,                                                                           \
    .geom = {MLA_GEOM_GLM5_HEADS(8), .t_q = 4, .t_kv = 2600, MLA_INDEXER_GLM5(4, 2600),            \
             .select_scores = 1},                                                                  \
    .n_stored_rows = 6, .stored_rows = {0, 1, 2, 1300, 2598, 2599}
#define MLA_CASE_glm5_next_kpool_select_few                                                        \
    .model = "glm5_next",                                                                          \
    .purpose = "fewer visible pools than select_k, NaN / inf / +-0 among them: all kept, -1 pad",  \
    .seed = 0x474c06ceu,                                                                           \
    .geom = {MLA_GEOM_GLM5_NEXT_HEADS(8), .t_q = 4, .t_kv = 46, MLA_INDEXER_GLM5_NEXT(4, 46),      \
             .select_scores = 1}
#define MLA_CASE_glm5_next_kpool_mask                                                              \
    .model = "glm5_next",                                                                          \
    .purpose = "the -inf visibility mask at pool 4: early queries cannot see the last pool",       \
    .seed = 0x474c0672u,                                                                           \
    .geom = {MLA_GEOM_GLM5_NEXT_HEADS(8), .t_q = 5, .t_kv = 68, MLA_INDEXER_GLM5_NEXT(5, 68)}
#define MLA_CASE_glm5_kpool_pool7_notail                                                           \
    .model = "glm5",                                                                               \
    .purpose = "pool 7 (not a power of two) with always_tail 0: no tail rows, one pool hidden",    \
    .seed = 0x474c0572u,                                                                           \
    .geom = {MLA_GEOM_GLM5_HEADS(8), .t_q = 3, .t_kv = 64, MLA_INDEXER_OF(3, 64, 7, 4, 34, 0)}
#define MLA_CASE_glm5_next_kpool_pool64                                                            \
    .model = "glm5_next",                                                                          \
    .purpose = "pool 64 (the maximum), always_tail 1: a hidden pool, tails of 63, 0 and 1 rows",   \
    .seed = 0x474c0673u,                                                                           \
    .geom = {MLA_GEOM_GLM5_NEXT_HEADS(8), .t_q = 3, .t_kv = 1089,                                  \
             MLA_INDEXER_OF(3, 1089, 64, 4, 319, 1)},                                              \
    .n_stored_rows = 5, .stored_rows = {0, 1, 544, 1087, 1088}
/* Rows long enough for the radix select's sampled route (SEL_SAMPLE_MIN,
 * kernels/mla_kpool_select.h: 65,536 visible pools), the launcher's arm at the shipped shape, which
 * no other stored case reaches (8,192 pools at most): 66,000 pools at pool 1, t_q 2 (65,999 and
 * 66,000 visible), the real indexer, the 8-head dense shard for attn_gathered; the scores are the
 * scorer's (realistic), so both rows settle on the route. */
#define MLA_CASE_glm5_kpool_sampled                                                                \
    .model = "glm5",                                                                               \
    .purpose = "66,000 pools: the radix select's sampled route (>= 65,536 visible pools)",         \
    .seed = 0x474c0581u,                                                                           \
    .geom = {MLA_GEOM_GLM5_HEADS(8), .t_q = 2, .t_kv = 66000, MLA_INDEXER_GLM5(2, 66000)},         \
    .n_stored_rows = 6, .stored_rows = {0, 1, 2, 33000, 65998, 65999}
#define MLA_CASE_glm5_kpool_gather_edges                                                           \
    .model = "glm5",                                                                               \
    .purpose = "gathered attention: an all -1 list (+0), -1 between entries, repeated rows",       \
    .seed = 0x474c0573u,                                                                           \
    .geom = {MLA_GEOM_GLM5_HEADS(8), .t_q = 4, .t_kv = 64, MLA_INDEXER_GLM5(4, 64),                \
             .gather_idx = 1}

/* ---- sanitizer cases (compute-sanitizer's case set; in memory, no fixture) ------------------
 * Small shapes that still reach every kernel and every code path inside it, so memcheck,
 * racecheck, initcheck and synccheck finish in minutes. Each suite's tests on them are named
 * <suite>/san_* (the sanitizer tier's filter, tools/sanitize_set.tsv). What each case reaches:
 *  san_dense_a   glm5 dims at 3 heads (a partial 32-head tile), t_q 2 over 100 rows: the split
 *                walk (4 chunks) + combine, HT 32, float4 rows (576); absorb / decompress with
 *                several column tiles and double-buffered slabs; rope d_rope 64; the bf16 GEMMs.
 *  san_dense_b   NoPE, kv_rank 522 > 512: HT 8 with scalar rows (522), one chunk (t_kv 20);
 *                d_nope 5 / d_v 7: single-buffer decompress slab, scalar (kv_rank % 4 != 0).
 *  san_dense_c   t_q == t_kv == 5 (prefill), kv_rank 129 + d_rope 2: HT 32 scalar rows (131);
 *                d_v 300 > 256: decompress column tiles; rope at base 1e4.
 *  san_dense_d   41 heads, kv_rank 520 + d_rope 8: HT 8 float4 rows (528), a partial 8-head tile.
 *  san_rope_max  rope only, d_rope 128 (the maximum) at positions 0 and 1048575.
 *  san_prefill   the TC prefill door's threshold shape at 2 heads: t_q = t_kv = 64, bf16 GEMMs.
 *  san_dense_e   one decode query over 4224 rows at 2 heads: the split walk's most chunks (132,
 *                one wave), more than attn_combine's 128 threads, so its chunk loops take a
 *                second step (a mutant striding past chunks 128..131 survived every other case).
 *  san_dense_f   t_q 3 (token groups of 4), d_nope 200, kv_rank 264: absorb's bulk arm at
 *                TT 4 with its ring refilled (13 chunks of 16 rows for 12 stages, the last of 8)
 *                and a block of 8 columns beside one of 256; decompress at TT 4.
 *  san_kpool_a   pool 1, t_q 3: score arm 1 x 256 with the key tile resident and float4 (d 128).
 *  san_kpool_b   pool 3 (not a power of two), t_q 6, always_tail: score arm 8 x 128, d 7
 *                (resident, scalar); gathered HT 8 scalar rows (526).
 *  san_kpool_c   pool 4, t_q 64: score arm 128 x 128, d 132 (streamed key tiles, float4);
 *                gathered HT 8 with float4 rows (520), split walk.
 *  san_kpool_d   9100 pools all tying (qk_scale 0: every visible score +0): more tying
 *                candidates than SEL_CAP (8192), so the radix select takes its ordered
 *                fallback (a small select_k keeps select_ref's rounds cheap under racecheck);
 *                score d 130 (streamed, scalar).
 *  san_kpool_ring pool 4 through a 128-row ring (wraps), incremental pool keys; tail pool.
 *  san_kpool_e   8200 pools (over SEL_REF_SORT_CAP: select_ref takes rounds, with no shared
 *                sort buffer) and a chunk at the start of the cache (first_pos 0): queries
 *                that see 1 and 2 pools (memcheck: the sort path must not be entered). */
#define MLA_SANITIZE_DENSE_CASES(X)                                                                \
    X(san_dense_a, dense_bf16)                                                                     \
    X(san_dense_b, dense)                                                                          \
    X(san_dense_c, dense)                                                                          \
    X(san_dense_d, dense)                                                                          \
    X(san_rope_max, rope_only)                                                                     \
    X(san_prefill, dense_bf16)                                                                     \
    X(san_dense_e, dense)                                                                          \
    X(san_dense_f, dense)

#define MLA_CASE_san_dense_a                                                                       \
    .model = "glm5", .seed = 0x5A4E0001u,                                                          \
    .geom = {.n_head = 3,                                                                          \
             .kv_rank = 512,                                                                       \
             .d_rope = 64,                                                                         \
             .d_nope = 192,                                                                        \
             .d_v = 256,                                                                           \
             .t_q = 2,                                                                             \
             .t_kv = 100,                                                                          \
             .rope_base = MLA_GLM5_ROPE_BASE,                                                      \
             .scale = MLA_GLM5_SCALE,                                                              \
             .bf16 = 1}
#define MLA_CASE_san_dense_b                                                                       \
    .model = "glm5_next", .seed = 0x5A4E0002u,                                                     \
    .geom = {.n_head = 9,                                                                          \
             .kv_rank = 522,                                                                       \
             .d_rope = 0,                                                                          \
             .d_nope = 5,                                                                          \
             .d_v = 7,                                                                             \
             .t_q = 1,                                                                             \
             .t_kv = 20,                                                                           \
             .rope_base = MLA_GLM5_ROPE_BASE,                                                      \
             .scale = 0.1f}
#define MLA_CASE_san_dense_c                                                                       \
    .model = "synthetic", .seed = 0x5A4E0003u,                                                     \
    .geom = {.n_head = 2,                                                                          \
             .kv_rank = 129,                                                                       \
             .d_rope = 2,                                                                          \
             .d_nope = 8,                                                                          \
             .d_v = 300,                                                                           \
             .t_q = 5,                                                                             \
             .t_kv = 5,                                                                            \
             .rope_base = 1e4f,                                                                    \
             .scale = 0.2f}
#define MLA_CASE_san_dense_d                                                                       \
    .model = "synthetic", .seed = 0x5A4E0004u,                                                     \
    .geom = {.n_head = 41,                                                                         \
             .kv_rank = 520,                                                                       \
             .d_rope = 8,                                                                          \
             .d_nope = 16,                                                                         \
             .d_v = 16,                                                                            \
             .t_q = 1,                                                                             \
             .t_kv = 64,                                                                           \
             .rope_base = 1e4f,                                                                    \
             .scale = 0.05f}
#define MLA_CASE_san_dense_e                                                                       \
    .model = "synthetic", .seed = 0x5A4E0007u,                                                     \
    .geom = {.n_head = 2,                                                                          \
             .kv_rank = 64,                                                                        \
             .d_rope = 0,                                                                          \
             .d_nope = 8,                                                                          \
             .d_v = 8,                                                                             \
             .t_q = 1,                                                                             \
             .t_kv = 4224,                                                                         \
             .rope_base = 1e4f,                                                                    \
             .scale = 0.1f}
#define MLA_CASE_san_dense_f                                                                       \
    .model = "synthetic", .seed = 0x5A4E0008u,                                                     \
    .geom = {.n_head = 2,                                                                          \
             .kv_rank = 264,                                                                       \
             .d_rope = 0,                                                                          \
             .d_nope = 200,                                                                        \
             .d_v = 8,                                                                             \
             .t_q = 3,                                                                             \
             .t_kv = 16,                                                                           \
             .rope_base = 1e4f,                                                                    \
             .scale = 0.1f}
#define MLA_CASE_san_rope_max                                                                      \
    .model = "synthetic", .seed = 0x5A4E0005u,                                                     \
    .geom = {.n_head = 1,                                                                          \
             .d_rope = 128,                                                                        \
             .rope_base = 1e4f,                                                                    \
             .t_q = 2,                                                                             \
             .n_positions = 2,                                                                     \
             .positions = {0, 1048575}}
#define MLA_CASE_san_prefill                                                                       \
    .model = "glm5", .seed = 0x5A4E0006u,                                                          \
    .geom = {.n_head = 2,                                                                          \
             .kv_rank = 512,                                                                       \
             .d_rope = 64,                                                                         \
             .d_nope = 192,                                                                        \
             .d_v = 256,                                                                           \
             .t_q = 64,                                                                            \
             .t_kv = 64,                                                                           \
             .rope_base = MLA_GLM5_ROPE_BASE,                                                      \
             .scale = MLA_GLM5_SCALE,                                                              \
             .bf16 = 1}

#define MLA_SANITIZE_KPOOL_CASES(X)                                                                \
    X(san_kpool_a, kpool)                                                                          \
    X(san_kpool_b, kpool)                                                                          \
    X(san_kpool_c, kpool)                                                                          \
    X(san_kpool_d, kpool)                                                                          \
    X(san_kpool_ring, kpool)                                                                       \
    X(san_kpool_e, kpool)

/* The indexer of a sanitizer case: heads H x dim D, queries at the last t_q of t_kv rows. */
#define MLA_SAN_INDEXER_QK(TQ, TKV, H, D, POOL, SEL, WIDTH, TAIL, QK)                              \
    .idx_heads = (H), .idx_dim = (D), .pool = (POOL), .select_k = (SEL), .width = (WIDTH),         \
    .always_tail = (TAIL), .first_pos = (TKV) - (TQ), .n_pools = (TKV) / (POOL), .qk_scale = (QK), \
    .head_scale = MLA_INDEXER_HEAD_SCALE
#define MLA_SAN_INDEXER(TQ, TKV, H, D, POOL, SEL, WIDTH, TAIL)                                     \
    MLA_SAN_INDEXER_QK(TQ, TKV, H, D, POOL, SEL, WIDTH, TAIL, MLA_INDEXER_QK_SCALE)
#define MLA_CASE_san_kpool_a                                                                       \
    .model = "synthetic", .seed = 0x5A4E0101u,                                                     \
    .geom = {.n_head = 3,                                                                          \
             .kv_rank = 64,                                                                        \
             .d_rope = 8,                                                                          \
             .d_nope = 16,                                                                         \
             .d_v = 16,                                                                            \
             .t_q = 3,                                                                             \
             .t_kv = 300,                                                                          \
             .rope_base = 1e4f,                                                                    \
             .scale = 0.125f,                                                                      \
             MLA_SAN_INDEXER(3, 300, 3, 128, 1, 16, 16, 0)}
#define MLA_CASE_san_kpool_b                                                                       \
    .model = "synthetic", .seed = 0x5A4E0102u,                                                     \
    .geom = {.n_head = 9,                                                                          \
             .kv_rank = 520,                                                                       \
             .d_rope = 6,                                                                          \
             .d_nope = 16,                                                                         \
             .d_v = 16,                                                                            \
             .t_q = 6,                                                                             \
             .t_kv = 402,                                                                          \
             .rope_base = 1e4f,                                                                    \
             .scale = 0.05f,                                                                       \
             MLA_SAN_INDEXER(6, 402, 2, 7, 3, 20, 62, 1)}
#define MLA_CASE_san_kpool_c                                                                       \
    .model = "synthetic", .seed = 0x5A4E0103u,                                                     \
    .geom = {.n_head = 2,                                                                          \
             .kv_rank = 520,                                                                       \
             .d_rope = 0,                                                                          \
             .d_nope = 16,                                                                         \
             .d_v = 16,                                                                            \
             .t_q = 64,                                                                            \
             .t_kv = 600,                                                                          \
             .rope_base = 1e4f,                                                                    \
             .scale = 0.1f,                                                                        \
             MLA_SAN_INDEXER(64, 600, 2, 132, 4, 8, 35, 1)}
#define MLA_CASE_san_kpool_d                                                                       \
    .model = "synthetic", .seed = 0x5A4E0104u,                                                     \
    .geom = {.n_head = 2,                                                                          \
             .kv_rank = 64,                                                                        \
             .d_rope = 2,                                                                          \
             .d_nope = 16,                                                                         \
             .d_v = 16,                                                                            \
             .t_q = 1,                                                                             \
             .t_kv = 9100,                                                                         \
             .rope_base = 1e4f,                                                                    \
             .scale = 0.1f,                                                                        \
             MLA_SAN_INDEXER_QK(1, 9100, 1, 130, 1, 16, 16, 0, 0.0f)}
#define MLA_CASE_san_kpool_e                                                                       \
    .model = "synthetic", .seed = 0x5A4E0106u,                                                     \
    .geom = {.n_head = 2,                                                                          \
             .kv_rank = 32,                                                                        \
             .d_rope = 0,                                                                          \
             .d_nope = 8,                                                                          \
             .d_v = 8,                                                                             \
             .t_q = 2,                                                                             \
             .t_kv = 8200,                                                                         \
             .rope_base = 1e4f,                                                                    \
             .scale = 0.1f,                                                                        \
             .idx_heads = 1,                                                                       \
             .idx_dim = 8,                                                                         \
             .pool = 1,                                                                            \
             .select_k = 4,                                                                        \
             .width = 4,                                                                           \
             .always_tail = 0,                                                                     \
             .first_pos = 0,                                                                       \
             .n_pools = 8200,                                                                      \
             .qk_scale = MLA_INDEXER_QK_SCALE,                                                     \
             .head_scale = MLA_INDEXER_HEAD_SCALE}
#define MLA_CASE_san_kpool_ring                                                                    \
    .model = "glm5_next", .seed = 0x5A4E0105u,                                                     \
    .geom = {.n_head = 2,                                                                          \
             .kv_rank = 32,                                                                        \
             .d_rope = 0,                                                                          \
             .d_nope = 16,                                                                         \
             .d_v = 16,                                                                            \
             .t_q = 2,                                                                             \
             .t_kv = 302,                                                                          \
             .rope_base = 1e4f,                                                                    \
             .scale = 0.1f,                                                                        \
             MLA_SAN_INDEXER(2, 302, 2, 16, 4, 10, 43, 1),                                         \
             .state_rows = 128}

#endif /* MLA_TESTS_CASE_LIST_H */
