/* tf32_mma_probe.cu: runs single mma.sync.m16n8k8 TF32 instructions on given tiles, for the
 * accumulator-model test (tests/test_tf32_mma_model_gpu.c, docs/tolerances.md "(H) The
 * accumulator"), and single mma.sync.m16n8k16 bf16 instructions for the bf16 door's model (H16)
 * (tests/test_bf16_mma_model_gpu.c). Not kernels of the product: probes of the hardware the
 * tensor-core analyses model. */
#include <cuda_runtime.h>
#include <stdint.h>

#include "kernels/mla_cuda_util.cuh"
#include "tests/lib/tf32_mma_probe.h"

/* One warp per probe p: D[p] = A[p] (16 x 8, row-major) . B[p] (8 x 8, row-major [k][n]) + C[p]
 * (16 x 8, row-major), with the fragment layout of the PTX ISA for m16n8k8 .tf32 (g = lane / 4,
 * t = lane % 4): a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4); b0 (k t, n g),
 * b1 (k t + 4, n g); c0 (g, 2t), c1 (g, 2t + 1), c2 (g + 8, 2t), c3 (g + 8, 2t + 1). A and B are
 * passed as f32 bit patterns already representable in TF32 (the low 13 mantissa bits zero), so
 * the instruction sees exactly these values. */
static __global__ void tf32_mma_probe_kernel(const float *a, const float *b, const float *c,
                                             float *d, int n) {
    const int p = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (p >= n) return;
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const float *A = a + (size_t)p * 128, *B = b + (size_t)p * 64, *C = c + (size_t)p * 128;
    float *D = d + (size_t)p * 128;
    const uint32_t a0 = __float_as_uint(A[g * 8 + t]), a1 = __float_as_uint(A[(g + 8) * 8 + t]),
                   a2 = __float_as_uint(A[g * 8 + t + 4]),
                   a3 = __float_as_uint(A[(g + 8) * 8 + t + 4]);
    const uint32_t b0 = __float_as_uint(B[t * 8 + g]), b1 = __float_as_uint(B[(t + 4) * 8 + g]);
    float c0 = C[g * 8 + 2 * t], c1 = C[g * 8 + 2 * t + 1], c2 = C[(g + 8) * 8 + 2 * t],
          c3 = C[(g + 8) * 8 + 2 * t + 1];
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    D[g * 8 + 2 * t] = c0;
    D[g * 8 + 2 * t + 1] = c1;
    D[(g + 8) * 8 + 2 * t] = c2;
    D[(g + 8) * 8 + 2 * t + 1] = c3;
}

extern "C" int tf32_mma_probe(const float *a, const float *b, const float *c, float *d, int n) {
    if (n <= 0) return 0;
    float *da = nullptr, *db = nullptr, *dc = nullptr, *dd = nullptr;
    cudaError_t e = cudaMalloc(&da, (size_t)n * 128 * 4);
    if (e == cudaSuccess) e = cudaMalloc(&db, (size_t)n * 64 * 4);
    if (e == cudaSuccess) e = cudaMalloc(&dc, (size_t)n * 128 * 4);
    if (e == cudaSuccess) e = cudaMalloc(&dd, (size_t)n * 128 * 4);
    if (e == cudaSuccess) e = cudaMemcpy(da, a, (size_t)n * 128 * 4, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(db, b, (size_t)n * 64 * 4, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(dc, c, (size_t)n * 128 * 4, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        const int warps = 4;
        tf32_mma_probe_kernel<<<(n + warps - 1) / warps, 32 * warps>>>(da, db, dc, dd, n);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpy(d, dd, (size_t)n * 128 * 4, cudaMemcpyDeviceToHost);
    cudaFree(da), cudaFree(db), cudaFree(dc), cudaFree(dd);
    return e == cudaSuccess ? 0 : 10000 + (int)e;
}

/* One warp per probe p: D[p] = A[p] (16 x 16, row-major) . B[p] (16 x 8, row-major [k][n]) + C[p]
 * (16 x 8), with the fragment layout of the PTX ISA for m16n8k16 .bf16 (g = lane / 4, t = lane %
 * 4; each register two elements, the lower k in the low half): a0 (g, 2t..2t+1), a1 (g + 8,
 * 2t..), a2 (g, 2t+8..), a3 (g + 8, 2t+8..); b0 (k 2t..2t+1, n g), b1 (k 2t+8..2t+9, n g); c as
 * m16n8k8's. A and B are f32 bit patterns representable in bf16 (the low 16 bits zero), passed
 * as their top halves, so the instruction sees exactly these values. */
static __device__ __forceinline__ uint32_t bf16_pair(const float *lo, const float *hi) {
    return (__float_as_uint(*lo) >> 16) | (__float_as_uint(*hi) & 0xFFFF0000u);
}
static __global__ void bf16_mma_probe_kernel(const float *a, const float *b, const float *c,
                                             float *d, int n) {
    const int p = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (p >= n) return;
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const float *A = a + (size_t)p * 256, *B = b + (size_t)p * 128, *C = c + (size_t)p * 128;
    float *D = d + (size_t)p * 128;
    const uint32_t a0 = bf16_pair(&A[g * 16 + 2 * t], &A[g * 16 + 2 * t + 1]),
                   a1 = bf16_pair(&A[(g + 8) * 16 + 2 * t], &A[(g + 8) * 16 + 2 * t + 1]),
                   a2 = bf16_pair(&A[g * 16 + 2 * t + 8], &A[g * 16 + 2 * t + 9]),
                   a3 = bf16_pair(&A[(g + 8) * 16 + 2 * t + 8], &A[(g + 8) * 16 + 2 * t + 9]);
    const uint32_t b0 = bf16_pair(&B[(2 * t) * 8 + g], &B[(2 * t + 1) * 8 + g]),
                   b1 = bf16_pair(&B[(2 * t + 8) * 8 + g], &B[(2 * t + 9) * 8 + g]);
    float c0 = C[g * 8 + 2 * t], c1 = C[g * 8 + 2 * t + 1], c2 = C[(g + 8) * 8 + 2 * t],
          c3 = C[(g + 8) * 8 + 2 * t + 1];
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    D[g * 8 + 2 * t] = c0;
    D[g * 8 + 2 * t + 1] = c1;
    D[(g + 8) * 8 + 2 * t] = c2;
    D[(g + 8) * 8 + 2 * t + 1] = c3;
}

extern "C" int bf16_mma_probe(const float *a, const float *b, const float *c, float *d, int n) {
    if (n <= 0) return 0;
    float *da = nullptr, *db = nullptr, *dc = nullptr, *dd = nullptr;
    cudaError_t e = cudaMalloc(&da, (size_t)n * 256 * 4);
    if (e == cudaSuccess) e = cudaMalloc(&db, (size_t)n * 128 * 4);
    if (e == cudaSuccess) e = cudaMalloc(&dc, (size_t)n * 128 * 4);
    if (e == cudaSuccess) e = cudaMalloc(&dd, (size_t)n * 128 * 4);
    if (e == cudaSuccess) e = cudaMemcpy(da, a, (size_t)n * 256 * 4, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(db, b, (size_t)n * 128 * 4, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(dc, c, (size_t)n * 128 * 4, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        const int warps = 4;
        bf16_mma_probe_kernel<<<(n + warps - 1) / warps, 32 * warps>>>(da, db, dc, dd, n);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpy(d, dd, (size_t)n * 128 * 4, cudaMemcpyDeviceToHost);
    cudaFree(da), cudaFree(db), cudaFree(dc), cudaFree(dd);
    return e == cudaSuccess ? 0 : 10000 + (int)e;
}

/* d[e] = the bits of cvt.rn.bf16x2.f32 of x[e] (the bf16 door arms' operand conversion itself,
 * mla_bf16x2 in kernels/mla_cuda_util.cuh: x[e] in the low half), widened back to f32, e < n. */
static __global__ void bf16_cvt_probe_kernel(const float *x, float *d, int n) {
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n) return;
    d[e] = __uint_as_float(mla_bf16x2(x[e], 0.0f) << 16);
}

extern "C" int bf16_cvt_probe(const float *x, float *d, int n) {
    if (n <= 0) return 0;
    float *dx = nullptr, *dd = nullptr;
    cudaError_t e = cudaMalloc(&dx, (size_t)n * 4);
    if (e == cudaSuccess) e = cudaMalloc(&dd, (size_t)n * 4);
    if (e == cudaSuccess) e = cudaMemcpy(dx, x, (size_t)n * 4, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        bf16_cvt_probe_kernel<<<(n + 255) / 256, 256>>>(dx, dd, n);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpy(d, dd, (size_t)n * 4, cudaMemcpyDeviceToHost);
    cudaFree(dx), cudaFree(dd);
    return e == cudaSuccess ? 0 : 10000 + (int)e;
}
