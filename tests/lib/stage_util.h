/* stage_util.h: shorthands of the stage files (stages_dense.c, stages_kpool.c); not a public
 * header. */
#ifndef MLA_TESTS_STAGE_UTIL_H
#define MLA_TESTS_STAGE_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "tests/lib/case.h"
#include "tests/lib/compare.h"

/* The running case's geometry, inside an oracle half (mla_ctx *ctx in scope). */
#define G (&ctx->c->geom)
/* A shape literal: SHAPE(t_q, n_head, kv_rank). */
#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

/* The fill of an exact stage's inputs and a weight's scale: the case's small-integer fill
 * (geometry small_int) or the realistic one (tests/lib/geometry.h). */
#define EXACT_FILL (G->small_int ? MLA_FILL_SMALL_INT : MLA_FILL_REALISTIC)
#define WEIGHT_SCALE(fan_in) (G->small_int ? 0.125f : mla_weight_scale(fan_in))
/* The latent inputs' (kv, cache) fill scale: geometry latent_scale, 0 = 1. */
#define LATENT_SCALE (G->latent_scale != 0.0f ? G->latent_scale : 1.0f)

/* The tensor-core attention checks (variants 1 / 2 of attn_absorbed / attn_gathered,
 * tests/lib/case_list.h): the door's flag, the arm's arithmetic for the bound, and whether the arm
 * covers the shape (kernels/mla_door.h). */
static inline const char *tc_attn_flag(int variant) { return variant == 1 ? "3xtf32" : "tf32"; }
/* The walk the arm states: the f32 arm's (kernels/mla.h) for the f32 and 3xTF32 arms, the tf32
 * arm's own (kernels/mla_door.h, mla_attn_tc_walk: row tiles of 32). */
static inline mla_attn_walk_fn tc_attn_walk(int variant) {
    return variant == 2 ? mla_attn_tc_walk : mla_attn_walk;
}
/* The arm's arithmetic terms for a call of this geometry (w_max: t_kv, or the slots of a
 * gathered list); NULL for the f32 arm. The tf32 arm's depend on the chunk plan
 * (kernels/mla_door.h, mla_attn_tc_arith), so they are written into *buf. */
static inline const mla_attn_arith *tc_attn_arith(int variant, const mla_geom *g, int64_t w_max,
                                                  mla_attn_arith *buf) {
    if (variant == 0) return NULL;
    if (variant == 1) return &MLA_ATTN_ARITH_3XTF32;
    mla_attn_tc_arith(g->n_head, g->kv_rank, g->d_rope, g->t_q, w_max, &buf->dot_rel, &buf->pv_rel);
    return buf;
}
static inline int tc_attn_covers(const mla_geom *g) {
    return g->kv_rank % 64 == 0 && g->kv_rank <= 512 && (g->kv_rank + g->d_rope) % 8 == 0;
}

#endif /* MLA_TESTS_STAGE_UTIL_H */
