/* mla_attn_walk.cuh: the two cache walks of the attention kernels (kernels/mla_attn.cu, file
 * comment "the walk"): walk_causal for attn_absorbed, walk_list for attn_gathered. One
 * definition for every kernel that walks the cache (attn_walk_f32, attn_tc_f32, attn_tc_bf16 in
 * mla_attn.cu; attn_tc_wg in mla_attn_wg.cu), the test-only bite included. */
#ifndef MLA_ATTN_WALK_CUH
#define MLA_ATTN_WALK_CUH

#include <cuda_runtime.h>
#include <stdint.h>

/* attn_absorbed: query i sees rows 0 ..= t_kv - t_q + i, slot s is row s. */
struct walk_causal {
    /* the valid slots of any run of slots are a prefix of it, and their rows consecutive */
    static constexpr bool contiguous = true;
    int32_t t_kv, t_q;
    __device__ __forceinline__ int64_t length(int64_t i) const {
        return (int64_t)t_kv - t_q + i + 1;
    }
    __device__ __forceinline__ int32_t row(int64_t, int64_t s) const { return (int32_t)s; }
};

/* attn_gathered: slot s of query i is idx[i][s]; negative entries are skipped (-1). */
struct walk_list {
    static constexpr bool contiguous = false;
    const int32_t *idx;
    int32_t n_slots;
    __device__ __forceinline__ int64_t length(int64_t) const { return n_slots; }
    __device__ __forceinline__ int32_t row(int64_t i, int64_t s) const {
#if defined(MLA_BITE_GATHER_STOP_AT_PAD)
        /* BITE (test-only, docs/fixtures-that-bite.md): the first -1 ends the list, so rows
         * listed after a -1 are dropped (glm5_kpool_gather_edges). */
        for (int64_t t = 0; t < s; t++)
            if (idx[i * n_slots + t] < 0) return -1;
#endif
        int32_t r = idx[i * n_slots + s];
        return r < 0 ? -1 : r;
    }
};

#endif /* MLA_ATTN_WALK_CUH */
