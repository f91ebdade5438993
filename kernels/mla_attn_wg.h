/* mla_attn_wg.h (internal, CUDA C++): the wgmma door arm's kernel (kernels/mla_attn_wg.cu,
 * built for sm_90a) as kernels/mla_attn.cu launches it: MEMRA_MLA_TC_ATTN=wgmma, tc 4 of
 * mla_attn_*_tc_f32 (kernels/mla_door.h). The arm runs on the bf16 arm's chunk plan, its own
 * workspace (the partials [n_chunks][n_qh][kv_rank] as bf16, then (m, l, flags) [n_chunks][n_qh][3]
 * as f32) and the combine's bf16 form, which mla_attn.cu launches. */
#ifndef MLA_ATTN_WG_H
#define MLA_ATTN_WG_H

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "kernels/mla_attn_walk.cuh"

/* Bytes of q's bf16 64-head tile (64 x 576 bf16, the walk's shared-memory layout): the plan's
 * workspace holds one per tile (t_q * n_hg) with several chunks (qb, below). */
#define MLA_ATTN_WG_Q_BYTES 73728

/* The shapes the arm covers (else the door falls back to the f32 launcher): kv_rank 512 with
 * d_rope 64 (glm5's width, 576: the kernel's layouts are constants) and a 16-byte aligned cache
 * (each cache row, 2304 bytes, is one bulk copy). q_lat and q_pe may be only 4-byte aligned. */
static inline bool mla_attn_wg_covers(int32_t kv_rank, int32_t d_rope, const float *cache) {
    return kv_rank == 512 && d_rope == 64 && (((uintptr_t)cache) & 15) == 0;
}

/* The dynamic shared-memory opt-in of both walks' kernels (once per device, by at_ensure_attrs),
 * after checking that they are the real sm_90a kernels with the register count their setmaxnreg
 * split assumes; where they are not (a build whose gencode override compiled the __trap() stub,
 * a device without their image) it sets nothing, returns success, and mla_attn_wg_ready() is
 * false on that device, so the door declines. */
cudaError_t mla_attn_wg_set_attrs(void);
bool mla_attn_wg_ready(void);

/* Launches the walk: blocks = n_chunks * t_q * n_hg (chunk-major, as the bf16 arm), 384 threads;
 * ws_o / ws_ml the plan's workspace (NULL with one chunk: the block writes o_lat), the partial O
 * as bf16 (the plan's bf16_o). Walk is walk_causal or walk_list (both instantiated in
 * mla_attn_wg.cu). qb: NULL (one chunk: each block loads q in f32), or t_q * n_hg tiles of
 * MLA_ATTN_WG_Q_BYTES in the workspace, 16-byte aligned: q prepared in bf16 once by a kernel
 * launched first (attn_wg_qprep), then copied into each block by one bulk copy. */
template <class Walk>
void mla_attn_wg_launch(unsigned blocks, const float *q_lat, const float *q_pe, const float *cache,
                        Walk walk, float *o_lat, __nv_bfloat16 *ws_o, float *ws_ml, int32_t n_head,
                        int32_t t_q, float scale, int32_t n_hg, int64_t chunk_slots,
                        int32_t n_chunks, uint8_t *qb, cudaStream_t st);

#endif /* MLA_ATTN_WG_H */
