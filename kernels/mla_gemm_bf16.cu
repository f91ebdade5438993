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

#define GEMM_MAX_DEVICES 64

/* One cuBLASLt handle per device, created on first use under a mutex and kept for the process
 * (cuBLASLt handles are thread-safe to share; the stream is per call). */
static int lt_handle(cublasLtHandle_t *out) {
    static std::mutex mu;
    static cublasLtHandle_t handles[GEMM_MAX_DEVICES];
    int n = 0;
    MLA_CUDA_CHECK(cudaGetDeviceCount(&n));
    if (n < 1) return 10000 + (int)cudaErrorNoDevice;
    int dev = 0;
    MLA_CUDA_CHECK(cudaGetDevice(&dev));
    if (dev < 0 || dev >= GEMM_MAX_DEVICES) return 30000 + (int)CUBLAS_STATUS_NOT_SUPPORTED;
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

/* -------------------------------------------- bf16 GEMM with f32 activations ----------- */

/* mla_bf16_gemm_f32x_sb (kernels/mla_door.h): per batch b, y_b[m][n] = bf16(x_b[m][k]) .
 * w_b[n][k]^T with x f32, converted to bf16 (round to nearest even) as it is read, w bf16, f32
 * accumulate, y f32. The TC prefill door's GEMM: the cuBLASLt arm first converts the whole f32
 * input into a bf16 scratch (a read of 4 bytes and a write of 2 an element) and the GEMM reads
 * the scratch again (2 more); here each element is read once, as f32.
 *
 * Block tile GF_BM x GF_BN (64 x 256) of one batch, 8 warps as 2 (rows) x 4 (columns), each warp
 * 32 x 64: 2 m16 x 8 n8 tiles of mma.sync.m16n8k16 bf16 (f32 accumulate) per k16 step. K in steps
 * of GF_BK = 32 through a GF_ST-stage cp.async ring: the x tile as f32 [64][GF_ALD] (a thread's A
 * fragment is 4 float2 reads a m-tile and k16 step, packed to bf16 pairs by cvt.rn.bf16x2.f32),
 * the w tile as bf16 [256][GF_BLD] (B fragments by ldmatrix.x4, two n-tiles an instruction).
 * Rows past m, columns past n and k steps past k are zero-filled copies (src-size 0), never
 * stored. Covers k % 8 == 0 (w's 16-byte chunks), x 16-byte aligned with x_rs, x_bs multiples of
 * 4, y 8-byte aligned with n, y_rs, y_bs even, w 16-byte aligned, batch and ceil(n / 256) within
 * grid.z / grid.y; any other layout is declined (the door then takes the cuBLASLt arm). */
#define GF_BM 64
#define GF_BN 256
#define GF_BK 32
#define GF_ST 3                      /* ring stages (2 blocks an SM) */
#define GF_NT 256                    /* threads a block */
#define GF_ALD 40                    /* x tile row stride, floats (LDS.64 clean) */
#define GF_BLD 40                    /* w tile row stride, bf16 (80-byte rows) */
#define GF_A_FLOATS (GF_BM * GF_ALD) /* a stage's x tile */
#define GF_B_HALVES (GF_BN * GF_BLD) /* a stage's w tile */
#define GF_STAGE_BYTES (GF_A_FLOATS * 4 + GF_B_HALVES * 2)
#define GF_SMEM_BYTES (GF_ST * GF_STAGE_BYTES)

static __device__ __forceinline__ uint32_t gf_pack_bf16x2(float2 v) {
    uint32_t d; /* low half: v.x (the lower k), high half: v.y; round to nearest even */
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(v.y), "f"(v.x));
    return d;
}

static __device__ __forceinline__ void gf_mma(float c[4], const uint32_t a[4], uint32_t b0,
                                              uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

static __global__ void __launch_bounds__(GF_NT, 2)
    bf16_gemm_f32x(const uint16_t *__restrict__ w, const float *__restrict__ x,
                   float *__restrict__ y, int32_t m, int32_t n, int32_t k, int64_t x_rs,
                   int64_t x_bs, int64_t y_rs, int64_t y_bs) {
    extern __shared__ __align__(16) unsigned char gf_smem[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int wm = warp >> 2, wn = warp & 3;
    const int64_t b = blockIdx.z;
    const int32_t m0 = blockIdx.x * GF_BM, n0 = blockIdx.y * GF_BN;
    const float *xb = x + b * x_bs;
    const uint16_t *wb = w + (b * n + n0) * (int64_t)k;
    const int32_t nk = (k + GF_BK - 1) / GF_BK;

    /* copy layout: x tile rows tid / 8 + 32 u (u < 2), 16-byte chunk tid % 8; w tile rows
     * tid / 4 + 64 u (u < 4), chunk tid % 4 */
    const int ar = tid >> 3, ac = tid & 7, br = tid >> 2, bc = tid & 3;
    auto load = [&](int32_t kt) {
        float *as = (float *)(gf_smem + (size_t)(kt % GF_ST) * GF_STAGE_BYTES);
        uint16_t *bs = (uint16_t *)(as + GF_A_FLOATS);
        const int32_t k0 = kt * GF_BK;
        const bool ka = k0 + 4 * ac < k, kb = k0 + 8 * bc < k;
#pragma unroll
        for (int u = 0; u < 2; u++) {
            const int r = ar + 32 * u;
            const bool ok = ka && m0 + r < m;
            mla_cp_async16(as + r * GF_ALD + 4 * ac,
                           ok ? xb + (int64_t)(m0 + r) * x_rs + k0 + 4 * ac : x, ok);
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int r = br + 64 * u;
            const bool ok = kb && n0 + r < n;
            mla_cp_async16(bs + r * GF_BLD + 8 * bc, ok ? wb + (int64_t)r * k + k0 + 8 * bc : w,
                           ok);
        }
    };

    float acc[2][8][4];
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 8; j++)
            acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.0f;

#pragma unroll
    for (int s = 0; s < GF_ST - 1; s++) {
        if (s < nk) load(s);
        mla_cp_async_commit();
    }
    /* ldmatrix.x4 rows: lanes 8 j .. 8 j + 7 address matrix j = (n-tile 2 p + (j >> 1), k half
     * j & 1): lane l gets w[n-tile row l / 4][k 2 (l % 4), + 1] of each, the B fragment pair */
    const int lrow = 64 * wn + (lane & 7) + ((lane >> 4) << 3), lk = ((lane >> 3) & 1) * 8;
    const bool wlive = n0 + 64 * wn < n; /* n % 2 == 0: a live warp's columns are pairs */
    for (int32_t kt = 0; kt < nk; kt++) {
        mla_cp_async_wait<GF_ST - 2>();
        __syncthreads(); /* stage kt landed; stage kt - 1 (refilled below) is free */
        if (kt + GF_ST - 1 < nk) load(kt + GF_ST - 1);
        mla_cp_async_commit();
        const float *as = (const float *)(gf_smem + (size_t)(kt % GF_ST) * GF_STAGE_BYTES);
        const uint16_t *bs = (const uint16_t *)(as + GF_A_FLOATS);
        if (!wlive) continue;
#pragma unroll
        for (int kk = 0; kk < GF_BK / 16; kk++) {
            uint32_t a[2][4];
#pragma unroll
            for (int mt = 0; mt < 2; mt++) {
                const float *ap = as + (32 * wm + 16 * mt + g) * GF_ALD + 16 * kk + 2 * t;
                a[mt][0] = gf_pack_bf16x2(*reinterpret_cast<const float2 *>(ap));
                a[mt][1] = gf_pack_bf16x2(*reinterpret_cast<const float2 *>(ap + 8 * GF_ALD));
                a[mt][2] = gf_pack_bf16x2(*reinterpret_cast<const float2 *>(ap + 8));
                a[mt][3] = gf_pack_bf16x2(*reinterpret_cast<const float2 *>(ap + 8 * GF_ALD + 8));
            }
#pragma unroll
            for (int p = 0; p < 4; p++) {
                uint32_t r0, r1, r2, r3;
                const uint32_t addr = (uint32_t)__cvta_generic_to_shared(
                    bs + (lrow + 16 * p) * GF_BLD + 16 * kk + lk);
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                             : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                             : "r"(addr));
#pragma unroll
                for (int mt = 0; mt < 2; mt++) {
                    gf_mma(acc[mt][2 * p], a[mt], r0, r1);
                    gf_mma(acc[mt][2 * p + 1], a[mt], r2, r3);
                }
            }
        }
    }
    mla_cp_async_wait<0>(); /* no copy outlives the block */
    if (!wlive) return;
    float *yb = y + b * y_bs;
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int32_t r = m0 + 32 * wm + 16 * mt + g + 8 * half;
            if (r >= m) continue;
            float *yr = yb + (int64_t)r * y_rs;
#pragma unroll
            for (int nt = 0; nt < 8; nt++) {
                const int32_t c = n0 + 64 * wn + 8 * nt + 2 * t;
                if (c < n)
                    *reinterpret_cast<float2 *>(yr + c) =
                        make_float2(acc[mt][nt][2 * half], acc[mt][nt][2 * half + 1]);
            }
        }
}

static void bf16_gemm_f32x_launch(const uint16_t *w, const float *x, float *y, int32_t m, int32_t n,
                                  int32_t k, int64_t x_rs, int64_t x_bs, int64_t y_rs, int64_t y_bs,
                                  int32_t batch, cudaStream_t st) {
    dim3 grid((unsigned)((m + GF_BM - 1) / GF_BM), (unsigned)((n + GF_BN - 1) / GF_BN),
              (unsigned)batch);
    bf16_gemm_f32x<<<grid, GF_NT, GF_SMEM_BYTES, st>>>(w, x, y, m, n, k, x_rs, x_bs, y_rs, y_bs);
}

extern "C" int mla_bf16_gemm_f32x_covers(const void *w_bf16, const float *x, const float *y,
                                         int32_t n, int32_t k, int64_t x_rs, int64_t x_bs,
                                         int64_t y_rs, int64_t y_bs, int32_t batch) {
    return k % 8 == 0 && n % 2 == 0 && x_rs % 4 == 0 && x_bs % 4 == 0 && y_rs % 2 == 0 &&
           y_bs % 2 == 0 && ((uintptr_t)x & 15) == 0 && ((uintptr_t)w_bf16 & 15) == 0 &&
           ((uintptr_t)y & 7) == 0 && batch <= 65535 && (n + GF_BN - 1) / GF_BN <= 65535;
}

extern "C" int mla_bf16_gemm_f32x_sb(const void *w_bf16, const float *x, float *y, int32_t m,
                                     int32_t n, int32_t k, int64_t x_rs, int64_t x_bs, int64_t y_rs,
                                     int64_t y_bs, int32_t batch, void *stream) {
    int rc = mla_validate_bf16_gemm_f32x_sb(w_bf16, x, y, m, n, k, x_rs, x_bs, y_rs, y_bs, batch);
    if (rc) return rc;
    if (!mla_bf16_gemm_f32x_covers(w_bf16, x, y, n, k, x_rs, x_bs, y_rs, y_bs, batch))
        return 20000 + (int)CUBLAS_STATUS_NOT_SUPPORTED; /* declined: the caller may fall back */
    static mla_device_once attr_once;
    rc = mla_device_once_run(attr_once, [] {
        MLA_CUDA_CHECK(cudaFuncSetAttribute(
            bf16_gemm_f32x, cudaFuncAttributeMaxDynamicSharedMemorySize, GF_SMEM_BYTES));
        return 0;
    });
    if (rc) return rc;
    bf16_gemm_f32x_launch((const uint16_t *)w_bf16, x, y, m, n, k, x_rs, x_bs, y_rs, y_bs, batch,
                          (cudaStream_t)stream);
    MLA_CUDA_CHECK(cudaGetLastError());
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
    int64_t blocks = (n + 255) / 256;
    if (blocks > 132 * 32) blocks = 132 * 32;
    convert_f32_bf16<<<(unsigned)blocks, 256, 0, st>>>(src, dst, n);
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
