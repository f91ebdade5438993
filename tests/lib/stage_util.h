/* stage_util.h: shorthands of the stage files (stages_dense.c, stages_kpool.c); not a public
 * header. */
#ifndef MLA_TESTS_STAGE_UTIL_H
#define MLA_TESTS_STAGE_UTIL_H

#include <stdint.h>

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

#endif /* MLA_TESTS_STAGE_UTIL_H */
