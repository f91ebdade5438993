/* stage_util.h: shorthands of the stage files (stages_dense.c, stages_kpool.c); not a public
 * header. */
#ifndef MLA_TESTS_STAGE_UTIL_H
#define MLA_TESTS_STAGE_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "tests/lib/case.h"
#include "tests/lib/compare.h"
#include "tests/lib/tc_attn.h"
#include "tests/lib/testbed.h"

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

/* The tensor-core attention checks (variants 1 / 2 / 3 / 4 of attn_absorbed / attn_gathered,
 * tests/lib/case_list.h) name their arm by variant: 1 the 3xtf32 arm, 2 the tf32 arm, 3 the bf16
 * arm, 4 the wgmma arm, 0 the f32 launcher (tests/lib/tc_attn.h states each arm's coverage, walk
 * and arithmetic). */
static inline int tc_attn_of_variant(int variant) {
    return variant == 1   ? TC_ATTN_3XTF32
           : variant == 2 ? TC_ATTN_TF32
           : variant == 3 ? TC_ATTN_BF16
           : variant == 4 ? TC_ATTN_WGMMA
                          : 0;
}
/* The door's receipt over one call of arm tc (mla_tc_attn_dispatches() was `before`): one more
 * where the arm covers the call (tests/lib/tc_attn.h), else none. */
static inline void tc_attn_expect_receipt(tb *t, int tc, uint64_t before, const mla_geom *g,
                                          const void *cache) {
    const int want = tc_attn_covers(tc, g->kv_rank, g->d_rope, cache);
    const uint64_t moved = mla_tc_attn_dispatches() - before;
    tb_expectf(t, moved == (uint64_t)want,
               "MEMRA_MLA_TC_ATTN=%s: the receipt moved by %llu, expected %d", tc_attn_flag(tc),
               (unsigned long long)moved, want);
}

#endif /* MLA_TESTS_STAGE_UTIL_H */
