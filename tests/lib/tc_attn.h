/* tc_attn.h: the tensor-core attention arms of the MEMRA_MLA_TC_ATTN door (kernels/mla_door.h)
 * as every check states them: which shapes the arms cover, and the walk and arithmetic each
 * arm's bound adds to class attn (docs/tolerances.md). One statement for the stage files
 * (tests/lib/stages_dense.c, stages_kpool.c), tests/test_tc_attn_gpu.c and
 * fuzz/gathered_indices.c. Arms are named by the tc argument of mla_attn_*_tc_f32: 1 (tf32, the
 * door arm), 2 (bf16, the 64-head door arm), 3 (3xtf32) or 4 (wgmma, the bf16 arm's operands on
 * Hopper's warpgroup MMAs, kernels/mla_attn_wg.cu). It restates the kernel's rule rather
 * than calling it, so a kernel that engages (or declines) where the rule says otherwise fails the
 * receipt checks. */
#ifndef MLA_TESTS_TC_ATTN_H
#define MLA_TESTS_TC_ATTN_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/mla.h"
#include "kernels/mla_door.h"
#include "tests/lib/compare.h"

#define TC_ATTN_TF32 1
#define TC_ATTN_BF16 2
#define TC_ATTN_3XTF32 3
#define TC_ATTN_WGMMA 4

/* The door's flag value that selects arm tc. */
static inline const char *tc_attn_flag(int tc) {
    return tc == TC_ATTN_WGMMA    ? "wgmma"
           : tc == TC_ATTN_3XTF32 ? "3xtf32"
           : tc == TC_ATTN_BF16   ? "bf16"
                                  : "tf32";
}

/* Whether arm tc rounds its operands (q, the cache, P) to bf16 (the bf16 and wgmma arms), not
 * TF32. */
static inline int tc_attn_is_bf16(int tc) { return tc == TC_ATTN_BF16 || tc == TC_ATTN_WGMMA; }

/* Whether arm tc covers a call (kernels/mla_door.h), each with a 16-byte aligned cache (the
 * device pointer the call gets) and kv_rank a multiple of 64 up to 512 (8 warps of P . V
 * columns): the tf32 and 3xtf32 arms (the 32-head tile) kv_rank + d_rope a multiple of 8 up to
 * MLA_TC_ATTN_MAX_WIDTH; the bf16 arm (the 64-head tile) a multiple of 32 up to
 * MLA_TC_BF16_MAX_WIDTH; the wgmma arm exactly kv_rank 512 with d_rope 64 (glm5's width). */
static inline int tc_attn_covers(int tc, int32_t kv_rank, int32_t d_rope, const void *cache) {
    const int32_t width = kv_rank + d_rope;
    if (tc == TC_ATTN_WGMMA) return kv_rank == 512 && d_rope == 64 && ((uintptr_t)cache & 15) == 0;
    const int base =
        kv_rank > 0 && kv_rank % 64 == 0 && kv_rank <= 512 && ((uintptr_t)cache & 15) == 0;
    if (tc == TC_ATTN_BF16) return base && width % 32 == 0 && width <= MLA_TC_BF16_MAX_WIDTH;
    return base && width % 8 == 0 && width <= MLA_TC_ATTN_MAX_WIDTH;
}

/* The walk arm tc states: the tf32, bf16 and wgmma arms' (mla_attn_tc_walk: row tiles of 32);
 * the 3xtf32 arm and the f32 launcher (tc 0) the f32 arm's (mla_attn_walk, kernels/mla.h). */
static inline mla_attn_walk_fn tc_attn_walk(int tc) {
    return tc == TC_ATTN_TF32 || tc_attn_is_bf16(tc) ? mla_attn_tc_walk : mla_attn_walk;
}

/* Arm tc's arithmetic terms for a call of this shape (w_max: t_kv, or a gathered list's slots);
 * NULL for the f32 launcher (tc 0). The tf32, bf16 and wgmma arms' depend on their chunk plans
 * (mla_attn_tc_arith, mla_attn_tcb_arith, mla_attn_tcw_arith), so they are written into *buf. */
static inline const mla_attn_arith *tc_attn_arith(int tc, int32_t n_head, int32_t kv_rank,
                                                  int32_t d_rope, int32_t t_q, int64_t w_max,
                                                  mla_attn_arith *buf) {
    if (tc == TC_ATTN_3XTF32) return &MLA_ATTN_ARITH_3XTF32;
    if (tc != TC_ATTN_TF32 && !tc_attn_is_bf16(tc)) return NULL;
    buf->abs_e = buf->dot_inst = buf->pv_inst = buf->part_rel = 0.0;
    if (tc == TC_ATTN_WGMMA)
        mla_attn_tcw_arith(n_head, kv_rank, d_rope, t_q, w_max, &buf->dot_rel, &buf->pv_rel,
                           &buf->abs_e, &buf->dot_inst, &buf->pv_inst, &buf->part_rel);
    else if (tc == TC_ATTN_BF16)
        mla_attn_tcb_arith(n_head, kv_rank, d_rope, t_q, w_max, &buf->dot_rel, &buf->pv_rel,
                           &buf->abs_e, &buf->dot_inst, &buf->pv_inst);
    else
        mla_attn_tc_arith(n_head, kv_rank, d_rope, t_q, w_max, &buf->dot_rel, &buf->pv_rel);
    return buf;
}

#endif /* MLA_TESTS_TC_ATTN_H */
