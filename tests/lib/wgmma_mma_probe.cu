/* wgmma_mma_probe.cu: runs single wgmma instructions of the wgmma door arm (kernels/mla_wgmma.cuh:
 * the logits' m64n32k16 with A and B from shared memory, P . V's m64n256k16 with A from registers
 * and B read N-major) on given tiles, for the accumulator-model test
 * (tests/test_wgmma_model_gpu.c). Not kernels of the product: probes of the hardware the wgmma
 * arm's class models, with the arm's own helpers, layout and descriptors, so a fragment, swizzle
 * or descriptor error of those helpers shows here as a wrong output. Built for sm_90a
 * (cuda_library arch_srcs). */
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "kernels/mla_wgmma.cuh"
#include "tests/lib/wgmma_mma_probe.h"

#define WGP_Q_BYTES 73728    /* q: 64 rows x 576 bf16, 9 column blocks of 64 x 128 B (rb 64) */
#define WGP_TILE_BYTES 36864 /* a tile: 32 slots x 576 bf16, 9 column blocks of 32 x 128 B */
#define WGP_NAN2 0x7FC07FC0u /* two bf16 quiet NaNs: every byte the operands leave */
#define WGP_SMEM_N32 (WGP_Q_BYTES + WGP_TILE_BYTES + 1024) /* + the 1024-byte alignment */
#define WGP_SMEM_N256 (WGP_TILE_BYTES + 1024)

/* the two bf16 values at lo, hi (bf16-representable f32: their top halves, exactly; subnormals
 * kept) as one word, lo in the low half as mla_bf16x2 packs them */
static __device__ __forceinline__ uint32_t wgp_pair(const float *lo, const float *hi) {
    return (__float_as_uint(*lo) >> 16) | (__float_as_uint(*hi) & 0xFFFF0000u);
}

/* the dynamic shared memory from its first 1024-byte aligned address (wgmma's 128B swizzle atoms
 * are 1024-byte aligned), every word bf16 NaN, then a barrier */
static __device__ uint8_t *wgp_smem_nan(uint8_t *raw, int bytes) {
    const uint32_t s = (uint32_t)__cvta_generic_to_shared(raw);
    uint8_t *base = raw + ((1024u - (s & 1023u)) & 1023u);
    uint4 *w = reinterpret_cast<uint4 *>(base);
    for (int e = threadIdx.x; e < bytes / 16; e += blockDim.x)
        w[e] = make_uint4(WGP_NAN2, WGP_NAN2, WGP_NAN2, WGP_NAN2);
    __syncthreads();
    return base;
}

/* Block p: one m64n32k16 with the arm's operands and descriptors at k16 step ks (thread t of the
 * warpgroup: w = t / 32, r0 = 16 w + lane / 4; d[4n + e] row r0, column 8n + 2 (lane % 4) + e,
 * d[4n + 2 + e] row r0 + 8). acc 0: scale-d 0 over NaN accumulators. */
static __global__ void __launch_bounds__(128)
    wgmma_n32_probe_kernel(const float *a, const float *b, const float *c, float *d, int acc) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ uint8_t wgp_smem_raw[];
    const int p = blockIdx.x, t = threadIdx.x, lane = t & 31, r0 = 16 * (t >> 5) + (lane >> 2);
    const int ks = WGMMA_N32_KS(p), c0 = 16 * ks;
    const float *A = a + (size_t)p * 1024, *B = b + (size_t)p * 512;
    uint8_t *q_s = wgp_smem_nan(wgp_smem_raw, WGP_Q_BYTES + WGP_TILE_BYTES);
    uint8_t *tile = q_s + WGP_Q_BYTES;
    for (int e = t; e < 512; e += 128) { /* A: 64 rows x 8 pairs of k */
        const int row = e >> 3, k = 2 * (e & 7);
        *reinterpret_cast<uint32_t *>(q_s + mla_wg_sw(row, c0 + k, 64)) =
            wgp_pair(&A[row * 16 + k], &A[row * 16 + k + 1]);
    }
    for (int e = t; e < 256; e += 128) { /* B: 32 slots x 8 pairs of k */
        const int slot = e >> 3, k = 2 * (e & 7);
        *reinterpret_cast<uint32_t *>(tile + mla_wg_sw(slot, c0 + k, 32)) =
            wgp_pair(&B[slot * 16 + k], &B[slot * 16 + k + 1]);
    }
    mla_wg_proxy_fence();
    __syncthreads();
    float acc_r[16];
    const size_t cd = (size_t)p * 2048;
#pragma unroll
    for (int n = 0; n < 4; n++)
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const int col = 8 * n + 2 * (lane & 3) + e;
            acc_r[4 * n + e] = acc ? c[cd + r0 * 32 + col] : __uint_as_float(0x7FC00000u);
            acc_r[4 * n + 2 + e] = acc ? c[cd + (r0 + 8) * 32 + col] : __uint_as_float(0x7FC00000u);
        }
    const uint32_t q_a = (uint32_t)__cvta_generic_to_shared(q_s);
    const uint32_t tile_a = (uint32_t)__cvta_generic_to_shared(tile);
    const uint32_t ko = (uint32_t)((ks & 3) * 32);
    mla_wg_fence();
    mla_wg_mma_ss_n32(acc_r, mla_wg_desc(q_a + (ks >> 2) * 8192 + ko, 16, 1024),
                      mla_wg_desc(tile_a + (ks >> 2) * 4096 + ko, 16, 1024), acc);
    mla_wg_commit();
    mla_wg_wait<0>();
    mla_wg_keep(acc_r);
#pragma unroll
    for (int n = 0; n < 4; n++)
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const int col = 8 * n + 2 * (lane & 3) + e;
            d[cd + r0 * 32 + col] = acc_r[4 * n + e];
            d[cd + (r0 + 8) * 32 + col] = acc_r[4 * n + 2 + e];
        }
#else
    __trap();
#endif
}

/* Block p: one m64n256k16 with A the m64k16 register fragment (a[0] row r0, k 2 (lane % 4) and
 * +1; a[1] row r0 + 8; a[2], a[3] the same rows at k + 8) and B through the arm's descriptor for
 * k16 step j and column half h; the accumulators as m64n32k16's, n = 0..31. */
static __global__ void __launch_bounds__(128)
    wgmma_n256_probe_kernel(const float *a, const float *b, const float *c, float *d) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ uint8_t wgp_smem_raw[];
    const int p = blockIdx.x, t = threadIdx.x, lane = t & 31, r0 = 16 * (t >> 5) + (lane >> 2);
    const int j = WGMMA_N256_J(p), h = WGMMA_N256_HALF(p), k0 = 2 * (lane & 3);
    const float *A = a + (size_t)p * 1024, *B = b + (size_t)p * 4096;
    uint8_t *tile = wgp_smem_nan(wgp_smem_raw, WGP_TILE_BYTES);
    for (int e = t; e < 2048; e += 128) { /* B^T: 16 slots x 128 pairs of columns */
        const int k = e >> 7, col = 2 * (e & 127);
        *reinterpret_cast<uint32_t *>(tile + mla_wg_sw(16 * j + k, 256 * h + col, 32)) =
            wgp_pair(&B[k * 256 + col], &B[k * 256 + col + 1]);
    }
    mla_wg_proxy_fence();
    __syncthreads();
    const uint32_t af[4] = {
        wgp_pair(&A[r0 * 16 + k0], &A[r0 * 16 + k0 + 1]),
        wgp_pair(&A[(r0 + 8) * 16 + k0], &A[(r0 + 8) * 16 + k0 + 1]),
        wgp_pair(&A[r0 * 16 + k0 + 8], &A[r0 * 16 + k0 + 9]),
        wgp_pair(&A[(r0 + 8) * 16 + k0 + 8], &A[(r0 + 8) * 16 + k0 + 9]),
    };
    float o[128];
    const size_t cd = (size_t)p * 16384;
#pragma unroll
    for (int n = 0; n < 32; n++)
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const int col = 8 * n + k0 + e;
            o[4 * n + e] = c[cd + r0 * 256 + col];
            o[4 * n + 2 + e] = c[cd + (r0 + 8) * 256 + col];
        }
    const uint32_t tile_a = (uint32_t)__cvta_generic_to_shared(tile);
    mla_wg_fence();
    mla_wg_mma_rs_n256(o, af, mla_wg_desc(tile_a + h * 4 * 4096 + j * 2048, 4096, 1024));
    mla_wg_commit();
    mla_wg_wait<0>();
    mla_wg_keep(o);
#pragma unroll
    for (int n = 0; n < 32; n++)
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const int col = 8 * n + k0 + e;
            d[cd + r0 * 256 + col] = o[4 * n + e];
            d[cd + (r0 + 8) * 256 + col] = o[4 * n + 2 + e];
        }
#else
    __trap();
#endif
}

/* the host side of both probes: uploads, one launch of n blocks, the download */
static int wgmma_probe_run(int n256, const float *a, const float *b, const float *c, float *d,
                           int n) {
    if (n <= 0) return 0;
    const size_t na = (size_t)n * 1024, nb = (size_t)n * (n256 ? 4096 : 512),
                 nd = (size_t)n * (n256 ? 16384 : 2048);
    const int smem = n256 ? WGP_SMEM_N256 : WGP_SMEM_N32;
    float *da = nullptr, *db = nullptr, *dc = nullptr, *dd = nullptr;
    cudaError_t e = n256 ? cudaFuncSetAttribute(wgmma_n256_probe_kernel,
                                                cudaFuncAttributeMaxDynamicSharedMemorySize, smem)
                         : cudaFuncSetAttribute(wgmma_n32_probe_kernel,
                                                cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e == cudaSuccess) e = cudaMalloc(&da, na * 4);
    if (e == cudaSuccess) e = cudaMalloc(&db, nb * 4);
    if (e == cudaSuccess && c) e = cudaMalloc(&dc, nd * 4);
    if (e == cudaSuccess) e = cudaMalloc(&dd, nd * 4);
    if (e == cudaSuccess) e = cudaMemcpy(da, a, na * 4, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(db, b, nb * 4, cudaMemcpyHostToDevice);
    if (e == cudaSuccess && c) e = cudaMemcpy(dc, c, nd * 4, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        if (n256)
            wgmma_n256_probe_kernel<<<n, 128, smem>>>(da, db, dc, dd);
        else
            wgmma_n32_probe_kernel<<<n, 128, smem>>>(da, db, dc, dd, c != nullptr);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpy(d, dd, nd * 4, cudaMemcpyDeviceToHost);
    cudaFree(da), cudaFree(db), cudaFree(dc), cudaFree(dd);
    return e == cudaSuccess ? 0 : 10000 + (int)e;
}

extern "C" int wgmma_n32_probe(const float *a, const float *b, const float *c, float *d, int n) {
    return wgmma_probe_run(0, a, b, c, d, n);
}

extern "C" int wgmma_n256_probe(const float *a, const float *b, const float *c, float *d, int n) {
    if (!c) return 10000 + (int)cudaErrorInvalidValue;
    return wgmma_probe_run(1, a, b, c, d, n);
}

extern "C" int wgmma_probe_device(int *major, int *minor, char *name, size_t name_len) {
    int dev = 0;
    cudaDeviceProp prop;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaGetDeviceProperties(&prop, dev);
    if (e != cudaSuccess) return 10000 + (int)e;
    *major = prop.major;
    *minor = prop.minor;
    if (name_len > 0) {
        strncpy(name, prop.name, name_len - 1);
        name[name_len - 1] = '\0';
    }
    return 0;
}
