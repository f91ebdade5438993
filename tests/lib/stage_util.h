/* stage_util.h: shorthands of the stage files (stages_dense.c, stages_kpool.c); not a public
 * header. */
#ifndef MLA_TESTS_STAGE_UTIL_H
#define MLA_TESTS_STAGE_UTIL_H

#include <stdint.h>

/* The running case's geometry, inside an oracle half (mla_ctx *ctx in scope). */
#define G (&ctx->c->geom)
/* A shape literal: SHAPE(t_q, n_head, kv_rank). */
#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

#endif /* MLA_TESTS_STAGE_UTIL_H */
