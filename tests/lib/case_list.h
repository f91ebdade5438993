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
#define MLA_CHECKS_attn_absorbed(V, c) V(c, attn_absorbed, attn_absorbed, 0)
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
#define MLA_CHECKS_attn_gathered(V, c) V(c, attn_gathered, attn_gathered, 0)

/* ---- dense MLA core (suite dense_gpu) ------------------------------------------------------- */
#define MLA_DENSE_CASES(X)                                                                         \
    X(glm5_decode, dense)                                                                          \
    X(glm5_verify, dense)                                                                          \
    X(glm5_prefill, dense_bf16)                                                                    \
    X(glm5_rope_maxpos, rope_only)                                                                 \
    X(glm5_next_decode, dense)                                                                     \
    X(glm5_next_verify, dense)

#define MLA_CASE_glm5_decode                                                                       \
    .model = "glm5", .seed = 0x474c0501u, .geom = {MLA_GEOM_GLM5, .t_q = 1, .t_kv = 4096}
#define MLA_CASE_glm5_verify                                                                       \
    .model = "glm5", .seed = 0x474c0502u, .geom = {MLA_GEOM_GLM5, .t_q = 4, .t_kv = 4096}
#define MLA_CASE_glm5_prefill                                                                      \
    .model = "glm5", .seed = 0x474c0503u,                                                          \
    .geom = {MLA_GEOM_GLM5, .t_q = 128, .t_kv = 128, .bf16 = 1}, .n_stored_rows = 7,               \
    .stored_rows = {0, 1, 2, 63, 64, 126, 127}
/* rope at the largest positions of glm5 (202752) and glm5_next (1048576) */
#define MLA_CASE_glm5_rope_maxpos                                                                  \
    .model = "glm5", .seed = 0x474c0504u,                                                          \
    .geom = {.n_head = MLA_GLM5_N_HEAD,                                                            \
             .d_rope = MLA_GLM5_D_ROPE,                                                            \
             .rope_base = MLA_GLM5_ROPE_BASE,                                                      \
             .t_q = 8,                                                                             \
             .n_positions = 8,                                                                     \
             .positions = {202748, 202749, 202750, 202751, 1048572, 1048573, 1048574, 1048575}}
#define MLA_CASE_glm5_next_decode                                                                  \
    .model = "glm5_next", .seed = 0x474c0601u, .geom = {MLA_GEOM_GLM5_NEXT, .t_q = 1, .t_kv = 4096}
#define MLA_CASE_glm5_next_verify                                                                  \
    .model = "glm5_next", .seed = 0x474c0602u, .geom = {MLA_GEOM_GLM5_NEXT, .t_q = 4, .t_kv = 4096}

/* ---- DSA k-pool indexer (suite kpool_gpu) --------------------------------------------------- */
/* Stored rows: the big idx_state / pool_keys planes keep a few rows; the manifest has the full
 * SHA-256; the GPU tests recompute the full tensors. */
#define MLA_KPOOL_CASES(X)                                                                         \
    X(glm5_kpool_decode, kpool)                                                                    \
    X(glm5_kpool_verify, kpool)                                                                    \
    X(glm5_next_kpool_decode, kpool)                                                               \
    X(glm5_next_kpool_verify, kpool)                                                               \
    X(glm5_next_kpool_ring, kpool)

#define MLA_CASE_glm5_kpool_decode                                                                 \
    .model = "glm5", .seed = 0x474c0511u,                                                          \
    .geom = {MLA_GEOM_GLM5, .t_q = 1, .t_kv = 8192, MLA_INDEXER_GLM5(1, 8192)},                    \
    .n_stored_rows = 8, .stored_rows = {0, 1, 2, 3, 2047, 4096, 8190, 8191}
#define MLA_CASE_glm5_kpool_verify                                                                 \
    .model = "glm5", .seed = 0x474c0512u,                                                          \
    .geom = {MLA_GEOM_GLM5, .t_q = 4, .t_kv = 8192, MLA_INDEXER_GLM5(4, 8192)},                    \
    .n_stored_rows = 8, .stored_rows = {0, 1, 2, 3, 2047, 4096, 8190, 8191}
/* t_kv 8195: the last query has an incomplete tail pool */
#define MLA_CASE_glm5_next_kpool_decode                                                            \
    .model = "glm5_next", .seed = 0x474c0611u,                                                     \
    .geom = {MLA_GEOM_GLM5_NEXT, .t_q = 1, .t_kv = 8195, MLA_INDEXER_GLM5_NEXT(1, 8195)},          \
    .n_stored_rows = 6, .stored_rows = {0, 1, 2, 1024, 2046, 2047}
#define MLA_CASE_glm5_next_kpool_verify                                                            \
    .model = "glm5_next", .seed = 0x474c0612u,                                                     \
    .geom = {MLA_GEOM_GLM5_NEXT, .t_q = 4, .t_kv = 8195, MLA_INDEXER_GLM5_NEXT(4, 8195)},          \
    .n_stored_rows = 6, .stored_rows = {0, 1, 2, 1024, 2046, 2047}
/* through a 4096-row tail ring, pool keys built incrementally */
#define MLA_CASE_glm5_next_kpool_ring                                                              \
    .model = "glm5_next", .seed = 0x474c0613u,                                                     \
    .geom = {MLA_GEOM_GLM5_NEXT, .t_q = 3, .t_kv = 8194, MLA_INDEXER_GLM5_NEXT(3, 8194),           \
             .state_rows = 4096},                                                                  \
    .n_stored_rows = 6, .stored_rows = {0, 1, 2, 1024, 2046, 2047}

#endif /* MLA_TESTS_CASE_LIST_H */
