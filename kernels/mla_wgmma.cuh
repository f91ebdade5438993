/* mla_wgmma.cuh: the Hopper warpgroup MMA (wgmma) pieces of the wgmma door arm
 * (kernels/mla_attn_wg.cu) and of what measures it (//tests:wgmma_model_gpu_test,
 * tools/bench/probe_door_wgmma.cu). Every function here needs sm_90a (the arch-specific target:
 * cuda_library(arch_srcs = ...)); a file built for plain sm_90 may include this header as long
 * as it calls none of the wgmma functions.
 *  - bf16 operands in shared memory in the 128-byte swizzled K-major layout (mla_wg_sw) that the
 *    descriptors (mla_wg_desc) name; a 32-slot tile of 576 columns is 9 blocks of 64 columns;
 *  - the logits' wgmma.m64n32k16 (A and B from shared memory) and P . V's wgmma.m64n256k16 (A from
 *    registers, B the same tile read N-major), both bf16 x bf16 into f32 accumulators. */
#ifndef MLA_WGMMA_CUH
#define MLA_WGMMA_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "kernels/mla_cuda_util.cuh"

/* the byte offset of bf16 element (row, col) in a 128-byte swizzled K-major region of rb rows a
 * 64-column block: 16-byte chunk c of a 128-byte row sits at chunk c ^ (row & 7) (Swizzle<3,4,3>,
 * the pattern wgmma's 128B mode applies to 1024-byte aligned atoms of 8 rows) */
static __device__ __forceinline__ uint32_t mla_wg_sw(int row, int col, int rb) {
    return (uint32_t)((col >> 6) * rb * 128 + row * 128 + ((((col & 63) >> 3) ^ (row & 7)) << 4) +
                      ((col & 7) << 1));
}
/* a shared-memory matrix descriptor in the 128B swizzle mode */
static __device__ __forceinline__ uint64_t mla_wg_desc(uint32_t saddr, uint32_t lbo, uint32_t sbo) {
    return (uint64_t)((saddr & 0x3FFFF) >> 4) | ((uint64_t)((lbo & 0x3FFFF) >> 4) << 16) |
           ((uint64_t)((sbo & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}
static __device__ __forceinline__ void mla_wg_fence(void) {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
static __device__ __forceinline__ void mla_wg_commit(void) {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N> static __device__ __forceinline__ void mla_wg_wait(void) {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
/* the accumulators' reads kept after the wait (and their writes before the next wgmma) */
template <int N> static __device__ __forceinline__ void mla_wg_keep(float (&d)[N]) {
#pragma unroll
    for (int e = 0; e < N; e++) asm volatile("" : "+f"(d[e])::"memory");
}
static __device__ __forceinline__ void mla_wg_proxy_fence(void) {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
/* a named barrier with its id and count as immediates: the second form's racecheck hazards sat
 * across a barrier whose id and count were registers, and that racecheck misreads such a barrier
 * is one hypothesis (untested) */
template <int ID, int N> static __device__ __forceinline__ void mla_wg_named_sync(void) {
    asm volatile("bar.sync %0, %1;" ::"n"(ID), "n"(N) : "memory");
}
/* 4 floats as bf16 into the swizzled region at byte offset off (8 bytes) */
static __device__ __forceinline__ void mla_wg_st4(uint8_t *base, uint32_t off, float4 v) {
    *reinterpret_cast<uint2 *>(base + off) = make_uint2(mla_bf16x2(v.x, v.y), mla_bf16x2(v.z, v.w));
}

static __device__ __forceinline__ void mla_wg_mma_ss_n32(float (&d)[16], uint64_t da, uint64_t db,
                                                         int acc) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p, "
                 "1, 1, 0, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
                   "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
                   "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
                 : "l"(da), "l"(db), "r"(acc));
}

static __device__ __forceinline__ void mla_wg_mma_rs_n256(float (&d)[128], const uint32_t (&a)[4],
                                                          uint64_t db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%"
        "24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%"
        "46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%"
        "68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%"
        "90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%"
        "110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127},"
        " "
        "{%128,%129,%130,%131}, %132, p, 1, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
          "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
          "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
          "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
          "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
          "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]),
          "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]),
          "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
          "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
          "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),
          "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
          "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
          "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
          "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
}

#endif /* MLA_WGMMA_CUH */
