/* mla_gemm_bf16.cu: memra_bf16_gemm_sb (kernels/mla.h) through cuBLASLt, plus the two bf16
 * preparation helpers of the tensor-core prefill door (kernels/mla_door.h).
 *
 * Row-major to cuBLAS column-major: a row-major [r][c] matrix with row stride ld IS a
 * column-major c x r matrix with leading dimension ld. So per batch
 *   y[m][n] = x[m][k] . w[n][k]^T   (row-major)
 * is, column-major,
 *   Y^T (n x m, ld y_rs) = op(W) (n x k) . X^T (k x m, ld x_rs),
 * where W's row-major [n][k] is the column-major k x n matrix A (ld k) and op(A) = A^T.
 * cuBLASLt: transa = T, transb = N, M = n, N = m, K = k; A: k x n ld k, batch stride n * k;
 * B: k x m ld x_rs, batch stride x_bs; C = D: n x m ld y_rs, batch stride y_bs.
 *
 * Layering, one rule in every .cu file of kernels/ (ggml-cuda's):
 *  1. a `static __global__` kernel named for its op, with the dtype suffix (`convert_f32_bf16`);
 *  2. `static void <kernel>_launch(...)`: picks the launch shape only (grid, block, dynamic shared
 *     memory, template arm) and launches; it neither validates nor checks errors;
 *  3. the `extern "C"` entry: validates (mla_validate.h), returns the documented no-ops, does the
 *     setup the launch needs, calls the helper, then MLA_CUDA_CHECK(cudaGetLastError()) and
 *     returns 0 (any CUDA failure: 10000 + cudaError_t).
 * Setup (cudaFuncSetAttribute opt-ins, cudaMallocAsync workspaces) is always the entry's, checked
 * there with MLA_CUDA_CHECK, never a helper's; where it depends on the launch shape, a `*_plan`
 * function picks that shape once and the entry passes it to the helper. Here no kernel needs
 * setup. memra_bf16_gemm_sb launches no kernel of ours: its cuBLASLt statuses keep their own
 * bands (20000 + status: declined, the caller may fall back; 30000 + status: failed). The two
 * door helpers (mla_door.h) have no mla_validate_* function: they check their arguments inline,
 * in the order of their codes.
 */
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <mutex>

#include "kernels/mla.h"
#include "kernels/mla_cuda_check.h"
#include "kernels/mla_cuda_util.cuh"
#include "kernels/mla_door.h"
#include "kernels/mla_validate.h"

/* One cuBLASLt handle per device, created on first use under a mutex and kept for the process
 * (cuBLASLt handles are thread-safe to share; the stream is per call). */
static int lt_handle(cublasLtHandle_t *out) {
    static std::mutex mu;
    static cublasLtHandle_t handles[MLA_MAX_DEVICES];
    int n = 0;
    MLA_CUDA_CHECK(cudaGetDeviceCount(&n));
    if (n < 1) return 10000 + (int)cudaErrorNoDevice;
    int dev = 0;
    MLA_CUDA_CHECK(cudaGetDevice(&dev));
    if (dev < 0 || dev >= MLA_MAX_DEVICES) return 30000 + (int)CUBLAS_STATUS_NOT_SUPPORTED;
    std::lock_guard<std::mutex> lock(mu);
    if (!handles[dev]) {
        cublasStatus_t st = cublasLtCreate(&handles[dev]);
        if (st != CUBLAS_STATUS_SUCCESS) {
            handles[dev] = NULL;
            return 30000 + (int)st;
        }
    }
    *out = handles[dev];
    return 0;
}

/* The descriptors of one call, destroyed on every path. */
struct lt_descs {
    cublasLtMatmulDesc_t op = NULL;
    cublasLtMatrixLayout_t a = NULL, b = NULL, d = NULL;
    cublasLtMatmulPreference_t pref = NULL;
    ~lt_descs() {
        if (pref) cublasLtMatmulPreferenceDestroy(pref);
        if (d) cublasLtMatrixLayoutDestroy(d);
        if (b) cublasLtMatrixLayoutDestroy(b);
        if (a) cublasLtMatrixLayoutDestroy(a);
        if (op) cublasLtMatmulDescDestroy(op);
    }
};

#define LT_CHECK(stmt)                                                                             \
    do {                                                                                           \
        cublasStatus_t lt_st_ = (stmt);                                                            \
        if (lt_st_ != CUBLAS_STATUS_SUCCESS) return 30000 + (int)lt_st_;                           \
    } while (0)

static int layout_batched(cublasLtMatrixLayout_t *l, cudaDataType_t t, uint64_t rows, uint64_t cols,
                          int64_t ld, int32_t batch, int64_t stride) {
    LT_CHECK(cublasLtMatrixLayoutCreate(l, t, rows, cols, ld));
    LT_CHECK(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                              sizeof batch));
    LT_CHECK(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                              &stride, sizeof stride));
    return 0;
}

extern "C" int memra_bf16_gemm_sb(const void *w_bf16, const void *x_bf16, void *y, int32_t m,
                                  int32_t n, int32_t k, int64_t x_rs, int64_t x_bs, int64_t y_rs,
                                  int64_t y_bs, int32_t batch, int32_t y_is_bf16, void *ws,
                                  size_t ws_bytes, void *stream) {
    int rc = mla_validate_bf16_gemm_sb(w_bf16, x_bf16, y, m, n, k, x_rs, x_bs, y_rs, y_bs, batch,
                                       y_is_bf16, ws, ws_bytes);
    if (rc) return rc;
    cublasLtHandle_t h = NULL;
    rc = lt_handle(&h);
    if (rc) return rc;

    lt_descs D;
    cudaDataType_t yt = y_is_bf16 ? CUDA_R_16BF : CUDA_R_32F;
    LT_CHECK(cublasLtMatmulDescCreate(&D.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    LT_CHECK(cublasLtMatmulDescSetAttribute(D.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    LT_CHECK(cublasLtMatmulDescSetAttribute(D.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    if ((rc =
             layout_batched(&D.a, CUDA_R_16BF, (uint64_t)k, (uint64_t)n, k, batch, (int64_t)n * k)))
        return rc;
    if ((rc = layout_batched(&D.b, CUDA_R_16BF, (uint64_t)k, (uint64_t)m, x_rs, batch, x_bs)))
        return rc;
    if ((rc = layout_batched(&D.d, yt, (uint64_t)n, (uint64_t)m, y_rs, batch, y_bs))) return rc;
    LT_CHECK(cublasLtMatmulPreferenceCreate(&D.pref));
    uint64_t ws_cap = ws_bytes;
    LT_CHECK(cublasLtMatmulPreferenceSetAttribute(D.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                  &ws_cap, sizeof ws_cap));

    cublasLtMatmulHeuristicResult_t heur;
    int found = 0;
    cublasStatus_t st =
        cublasLtMatmulAlgoGetHeuristic(h, D.op, D.a, D.b, D.d, D.d, D.pref, 1, &heur, &found);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED)
        return 20000 + (int)st; /* decline: the caller may fall back */
    if (st != CUBLAS_STATUS_SUCCESS) return 30000 + (int)st;
    if (found < 1) return 20000 + (int)CUBLAS_STATUS_NOT_SUPPORTED;

    const float alpha = 1.0f, beta = 0.0f;
    st = cublasLtMatmul(h, D.op, &alpha, w_bf16, D.a, x_bf16, D.b, &beta, y, D.d, y, D.d,
                        &heur.algo, ws, ws_bytes, (cudaStream_t)stream);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED) return 20000 + (int)st;
    if (st != CUBLAS_STATUS_SUCCESS) return 30000 + (int)st;
    return 0;
}

/* ------------------------------------------------------------ bf16 preparation ----------- */

/* Round-to-nearest-even f32 -> bf16; NaN stays NaN (quieted), as oracle_bf16_from_f32. */
static __device__ __forceinline__ uint16_t bf16_from_f32(float f) {
    uint32_t u = __float_as_uint(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x0040u);
    uint32_t lsb = (u >> 16) & 1u;
    return (uint16_t)((u + 0x7FFFu + lsb) >> 16);
}

static __global__ void convert_f32_bf16(const float *__restrict__ src, uint16_t *__restrict__ dst,
                                        int64_t n) {
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n;
         e += (int64_t)gridDim.x * blockDim.x)
        dst[e] = bf16_from_f32(src[e]);
}

/* The same conversion, 8 elements a thread a step: two 16-byte loads (evict-first: the door reads
 * its f32 input once), one 16-byte store (src and dst 16-byte aligned, n8 = n / 8 groups; the
 * caller converts the n % 8 tail with the kernel above). H200, sixteenth session (call 4,
 * bench_dense, three interleaved rounds): the TC prefill door at glm5 prefill went from 41.6-41.9
 * to 39.7-39.8 us (absorb_q, q_nope 25 MB) and from 51.8-52.3 to 48.1-48.8 us (decompress_v,
 * o_lat 67 MB) against the scalar kernel's 4-byte loads and 2-byte stores, bytes unchanged. */
#define CV_U 2
static __global__ void convert_f32_bf16_v8(const float4 *__restrict__ src, uint4 *__restrict__ dst,
                                           int64_t n8) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; g < n8; g += CV_U * stride) {
        float4 v[CV_U][2];
#pragma unroll
        for (int u = 0; u < CV_U; u++)
            if (g + u * stride < n8) {
                v[u][0] = __ldcs(src + 2 * (g + u * stride));
                v[u][1] = __ldcs(src + 2 * (g + u * stride) + 1);
            }
#pragma unroll
        for (int u = 0; u < CV_U; u++)
            if (g + u * stride < n8) {
                const float4 a = v[u][0], b = v[u][1];
                uint4 o;
                o.x = (uint32_t)bf16_from_f32(a.x) | (uint32_t)bf16_from_f32(a.y) << 16;
                o.y = (uint32_t)bf16_from_f32(a.z) | (uint32_t)bf16_from_f32(a.w) << 16;
                o.z = (uint32_t)bf16_from_f32(b.x) | (uint32_t)bf16_from_f32(b.y) << 16;
                o.w = (uint32_t)bf16_from_f32(b.z) | (uint32_t)bf16_from_f32(b.w) << 16;
                dst[g + u * stride] = o;
            }
    }
}

/* dst[b][c][r] = bf16(src[b][r][c]) through a 32 x 33 shared tile (coalesced both ways). */
static __global__ void transpose_heads_f32_bf16(const float *__restrict__ src,
                                                uint16_t *__restrict__ dst, int32_t rows,
                                                int32_t cols) {
    __shared__ float tile[32][33];
    const int64_t b = blockIdx.z;
    const int32_t r0 = blockIdx.y * 32, c0 = blockIdx.x * 32;
    const float *s = src + b * rows * (int64_t)cols;
    uint16_t *d = dst + b * rows * (int64_t)cols;
    for (int i = threadIdx.y; i < 32; i += blockDim.y) {
        int32_t r = r0 + i, c = c0 + threadIdx.x;
        if (r < rows && c < cols) tile[i][threadIdx.x] = s[(int64_t)r * cols + c];
    }
    __syncthreads();
    for (int i = threadIdx.y; i < 32; i += blockDim.y) {
        int32_t c = c0 + i, r = r0 + threadIdx.x;
        if (r < rows && c < cols) d[(int64_t)c * rows + r] = bf16_from_f32(tile[threadIdx.x][i]);
    }
}

static void convert_f32_bf16_launch(const float *src, uint16_t *dst, int64_t n, cudaStream_t st) {
    int64_t head = 0; /* elements converted by the 8-wide kernel */
    if ((((uintptr_t)src | (uintptr_t)dst) & 15) == 0 && n >= 8) {
        const int64_t n8 = n / 8;
        int64_t blocks = (n8 + 255) / 256;
        if (blocks > 132 * 64) blocks = 132 * 64; /* one pass at glm5 prefill (call 4's best) */
        convert_f32_bf16_v8<<<(unsigned)blocks, 256, 0, st>>>((const float4 *)src, (uint4 *)dst,
                                                              n8);
        head = 8 * n8;
    }
    if (head == n) return;
    int64_t blocks = (n - head + 255) / 256;
    if (blocks > 132 * 32) blocks = 132 * 32;
    convert_f32_bf16<<<(unsigned)blocks, 256, 0, st>>>(src + head, dst + head, n - head);
}

static void transpose_heads_f32_bf16_launch(const float *src, uint16_t *dst, int32_t batch,
                                            int32_t rows, int32_t cols, cudaStream_t st) {
    dim3 grid((unsigned)((cols + 31) / 32), (unsigned)((rows + 31) / 32), (unsigned)batch);
    transpose_heads_f32_bf16<<<grid, dim3(32, 8), 0, st>>>(src, dst, rows, cols);
}

extern "C" int mla_f32_to_bf16(const float *src, uint16_t *dst, int64_t n, void *stream) {
    if (n < 1) return MLA_E_NONPOSITIVE_EXTENT;
    if (!src || !dst) return MLA_E_NULL_POINTER;
    convert_f32_bf16_launch(src, dst, n, (cudaStream_t)stream);
    MLA_CUDA_CHECK(cudaGetLastError());
    return 0;
}

extern "C" int mla_bf16_transpose_heads(const float *src, uint16_t *dst, int32_t batch,
                                        int32_t rows, int32_t cols, void *stream) {
    if (batch < 1 || rows < 1 || cols < 1) return MLA_E_NONPOSITIVE_EXTENT;
    if ((int64_t)batch * rows * cols > INT32_MAX) return MLA_E_INDEX_OVERFLOW;
    if (!src || !dst) return MLA_E_NULL_POINTER;
    if (batch > 65535 || (rows + 31) / 32 > 65535)
        return MLA_E_GRID_CONTRACT; /* grid.y / grid.z ceiling */
    transpose_heads_f32_bf16_launch(src, dst, batch, rows, cols, (cudaStream_t)stream);
    MLA_CUDA_CHECK(cudaGetLastError());
    return 0;
}
