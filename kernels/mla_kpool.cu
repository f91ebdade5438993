/* mla_kpool.cu: the DSA k-pool indexer launchers of kernels/mla.h (docs/kpool.md has the exact
 * rules; oracle/mla_oracle_kpool.c is the CPU truth). memra_mla_attn_gathered_f32 lives in
 * mla_attn.cu beside attn_absorbed (one kernel body, two cache walks).
 *
 * Layering, one rule in every .cu file of kernels/ (ggml-cuda's):
 *  1. a `static __global__` kernel named for its op, with the dtype suffix (`kpool_score_ref_f32`);
 *  2. `static void <kernel>_launch(...)`: picks the launch shape only (grid, block, dynamic shared
 *     memory, template arm) and launches; it neither validates nor checks errors;
 *  3. the `extern "C"` entry: validates (mla_validate.h), returns the documented no-ops, does the
 *     setup the launch needs, calls the helper, then MLA_CUDA_CHECK(cudaGetLastError()) and
 *     returns 0 (any CUDA failure: 10000 + cudaError_t).
 * Setup (cudaFuncSetAttribute opt-ins, cudaMallocAsync workspaces) is always the entry's, checked
 * there with MLA_CUDA_CHECK, never a helper's; where it depends on the launch shape, a `*_plan`
 * function picks that shape once and the entry passes it to the helper. Here: the dynamic
 * shared-memory opt-in of the tiled scorer (its template arm from kpool_score_tiled_plan) and of
 * the radix selection, set by the entry on every call. Documented no-ops (score with
 * n_pools == 0, pool keys with pool_begin == n_pools) return 0 without touching the device, as
 * mla.h states.
 *
 * Bit-exact promises are kept by spelling every rounding with an explicit round-to-nearest
 * intrinsic (__fmaf_rn / __fmul_rn / __fadd_rn / __fsub_rn / __fdiv_rn), which nvcc never contracts
 * or reassociates; exponentials use the accurate expf (never __expf). No fast-math.
 */
#include "kernels/mla.h"
#include "kernels/mla_cuda_check.h"
#include "kernels/mla_cuda_util.cuh"
#include "kernels/mla_kpool_select.h"
#include "kernels/mla_validate.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#define FULL_MASK 0xFFFFFFFFu

/* ------------------------------------------------------------------ small device helpers ---- */

/* Exclusive prefix sum of one u32 per thread over the block (blockDim.x a multiple of 32);
 * *total gets the block sum. warp_sums: __shared__ u32[32]. Contains two __syncthreads. */
static __device__ uint32_t block_excl_scan_u32(uint32_t v, uint32_t *total, uint32_t *warp_sums) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    uint32_t x = v;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        uint32_t y = __shfl_up_sync(FULL_MASK, x, o);
        if (lane >= o) x += y;
    }
    if (lane == 31) warp_sums[warp] = x;
    __syncthreads();
    uint32_t before = 0, tot = 0;
    for (int w = 0; w < nwarps; w++) {
        uint32_t s = warp_sums[w];
        before += (w < warp) ? s : 0u;
        tot += s;
    }
    __syncthreads();
    *total = tot;
    return before + x - v;
}

/* ================================================================ index_append_ring ======== */

/* One block walks rows i (grid-stride), its threads the row's columns: a pure copy. */
static __global__ void index_append_ring_f32(float *plane, const float *a, const float *b,
                                             int32_t slot, int32_t t, int32_t wa, int32_t wb,
                                             int32_t rows) {
    const int64_t w = (int64_t)wa + wb;
    for (int64_t i = blockIdx.x; i < t; i += gridDim.x) {
        int64_t row = (int64_t)slot + i;
        if (rows > 0) row %= rows;
        float *dst = plane + row * w;
        for (int64_t c = threadIdx.x; c < w; c += blockDim.x)
            dst[c] = c < wa ? a[i * wa + c] : b[i * wb + (c - wa)];
    }
}

static void index_append_ring_f32_launch(float *plane, const float *a, const float *b, int32_t slot,
                                         int32_t t, int32_t wa, int32_t wb, int32_t rows,
                                         cudaStream_t st) {
    const int nt = 256;
    const unsigned grid = (unsigned)(t < (1 << 20) ? t : (1 << 20));
    index_append_ring_f32<<<grid, nt, 0, st>>>(plane, a, b, slot, t, wa, wb, rows);
}

extern "C" int memra_mla_index_append_ring_f32(float *plane, const float *a, const float *b,
                                               int32_t slot, int32_t t, int32_t wa, int32_t wb,
                                               int32_t rows, void *stream) {
    int rc = mla_validate_index_append_ring(plane, a, b, slot, t, wa, wb, rows);
    if (rc) return rc;
    index_append_ring_f32_launch(plane, a, b, slot, t, wa, wb, rows, (cudaStream_t)stream);
    MLA_CUDA_CHECK(cudaGetLastError());
    return 0;
}

/* ================================================================ pool keys ================ */

/* One thread per (pool p, channel c). The sequence, fixed per element (it reads only the pool's
 * own `pool` state rows and ape, so flat vs ring planes and full vs incremental builds give the
 * same bytes):
 *   l_s  = __fadd_rn(gate[p*pool+s][c], ape[s][c])                 s ascending
 *   m    = max_s l_s                (m = -inf; if (l_s > m) m = l_s: NaN never becomes the max)
 *   e_s  = expf(__fsub_rn(l_s, m))  (accurate expf; recomputed identically in each pass)
 *   sum  = +0; sum = __fadd_rn(sum, e_s)                             s ascending
 *   key  = +0; key = __fadd_rn(key, __fmul_rn(__fdiv_rn(e_s, sum), k[p*pool+s][c]))  s ascending
 * Physical row of logical row r is r % state_rows (state_rows > 0): state_rows is a multiple of
 * pool, so the pool's rows are contiguous from (p*pool) % state_rows. */
static __global__ void kpool_pool_keys_f32(const float *state, const float *ape, float *keys,
                                           int32_t pool_begin, int32_t n_pools, int32_t pool,
                                           int32_t d, int32_t state_rows) {
    const int64_t n = (int64_t)(n_pools - pool_begin) * d;
    const int64_t w2 = 2 * (int64_t)d;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n;
         e += (int64_t)gridDim.x * blockDim.x) {
        const int64_t pp = e / d, c = e - pp * d, p = pool_begin + pp;
        int64_t row0 = p * pool;
        if (state_rows > 0) row0 %= state_rows;
        const float *kc = state + row0 * w2 + c;
        const float *gc = kc + d;
        const float *ac = ape + c;
        float m = -INFINITY;
        for (int s = 0; s < pool; s++) {
            float l = __fadd_rn(gc[s * w2], ac[(int64_t)s * d]);
            if (l > m) m = l;
        }
#if defined(MLA_BITE_POOL_KEYS_NO_MAX)
        /* BITE (test-only, docs/fixtures-that-bite.md): the pool softmax without its max, exp(l)
         * directly: exact enough for gates within +-88, inf / NaN keys beyond
         * (glm5_next_kpool_gate). */
        m = 0.0f;
#endif
        float sum = 0.0f;
        for (int s = 0; s < pool; s++) {
            float l = __fadd_rn(gc[s * w2], ac[(int64_t)s * d]);
            sum = __fadd_rn(sum, expf(__fsub_rn(l, m)));
        }
        float key = 0.0f;
        for (int s = 0; s < pool; s++) {
            float l = __fadd_rn(gc[s * w2], ac[(int64_t)s * d]);
            float ws = __fdiv_rn(expf(__fsub_rn(l, m)), sum);
            key = __fadd_rn(key, __fmul_rn(ws, kc[s * w2]));
        }
        keys[p * d + c] = key;
    }
}

static void kpool_pool_keys_f32_launch(const float *state, const float *ape, float *keys,
                                       int32_t pool_begin, int32_t n_pools, int32_t pool, int32_t d,
                                       int32_t state_rows, cudaStream_t st) {
    const int nt = 256;
    const int64_t n = (int64_t)(n_pools - pool_begin) * d;
    int64_t blocks = (n + nt - 1) / nt;
    if (blocks > (1 << 20)) blocks = 1 << 20;
    kpool_pool_keys_f32<<<(unsigned)blocks, nt, 0, st>>>(state, ape, keys, pool_begin, n_pools,
                                                         pool, d, state_rows);
}

extern "C" int memra_mla_kpool_pool_keys_f32(const float *state, const float *ape, float *pool_keys,
                                             int32_t pool_begin, int32_t n_pools, int32_t pool,
                                             int32_t d, int32_t state_rows, void *stream) {
    int rc = mla_validate_kpool_pool_keys(state, ape, pool_keys, pool_begin, n_pools, pool, d,
                                          state_rows);
    if (rc) return rc;
    if (pool_begin == n_pools) return 0; /* mla.h: builds nothing and returns 0 */
    kpool_pool_keys_f32_launch(state, ape, pool_keys, pool_begin, n_pools, pool, d, state_rows,
                               (cudaStream_t)stream);
    MLA_CUDA_CHECK(cudaGetLastError());
    return 0;
}

/* ================================================================ scoring ================== */

/* The six steps of mla.h / docs/kpool.md, written once for both scorers:
 *   (1) dot = __fmaf_rn(q[c], key[c], dot), c ascending from +0
 *   (2) s = __fmul_rn(dot, qk_scale)   (3) r = s < 0 ? 0 : s   (4) w = __fmul_rn(hw, head_scale)
 *   (5) t = __fmul_rn(w, r)            (6) acc = __fadd_rn(acc, t), h ascending from +0 */
static __device__ __forceinline__ float kpool_head_term(float dot, float w, float qk_scale) {
    const float s = __fmul_rn(dot, qk_scale); /* (2) */
    const float r = (s < 0.0f) ? 0.0f : s;    /* (3) NaN and -0 pass through */
    return __fmul_rn(w, r);                   /* (5) */
}

static __device__ __forceinline__ bool kpool_pool_visible(int64_t p, int64_t pool, int64_t q_row) {
    return (p + 1) * pool - 1 <= q_row;
}

/* Reference: block per (query, pool), thread h computes steps (1)-(5) of head h, thread 0 walks
 * step (6) over h ascending. */
static __global__ void kpool_score_ref_f32(const float *q, const float *keys, const float *hw,
                                           float *score, int32_t t_q, int32_t heads, int32_t d,
                                           int32_t n_pools, int32_t pool, int32_t first_pos,
                                           float qk_scale, float head_scale) {
    extern __shared__ float term[]; /* [heads] */
    const int64_t blk = blockIdx.x;
    const int64_t i = blk / n_pools, p = blk - i * n_pools;
    if (!kpool_pool_visible(p, pool, (int64_t)first_pos + i)) {
        if (threadIdx.x == 0) score[blk] = -INFINITY;
        return;
    }
    const int h = threadIdx.x;
    if (h < heads) {
        const float *qh = q + (i * heads + h) * d;
        const float *key = keys + p * d;
        float dot = 0.0f;
        for (int c = 0; c < d; c++) dot = __fmaf_rn(qh[c], key[c], dot); /* (1) */
        const float w = __fmul_rn(hw[i * heads + h], head_scale);        /* (4) */
        term[h] = kpool_head_term(dot, w, qk_scale);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        float acc = 0.0f;
        for (int hh = 0; hh < heads; hh++) acc = __fadd_rn(acc, term[hh]); /* (6) */
        score[blk] = acc;
    }
}

static void kpool_score_ref_f32_launch(const float *q, const float *keys, const float *hw,
                                       float *score, int32_t t_q, int32_t heads, int32_t d,
                                       int32_t n_pools, int32_t pool, int32_t first_pos,
                                       float qk_scale, float head_scale, cudaStream_t st) {
    const int nt = (heads + 31) / 32 * 32;
    const int64_t blocks = (int64_t)t_q * n_pools; /* <= MLA_MAX_GRID_X (40012) */
    kpool_score_ref_f32<<<(unsigned)blocks, nt, (size_t)heads * sizeof(float), st>>>(
        q, keys, hw, score, t_q, heads, d, n_pools, pool, first_pos, qk_scale, head_scale);
}

/* Fast scorer: a register-tiled SGEMM whose epilogue is the head mix.
 *
 * Block tile: BM queries x BN pools, 256 threads as TY x TX (TY = BM/TM, TX = BN/TN); thread
 * (ty, tx) owns queries ty + r*TY (r < TM) and pools tx + j*TX (j < TN), with one running `dot`
 * and one `acc` register per owned (query, pool). The reduction dimension is walked as steps
 * (h, chunk) with h outer: a head's dot is a plain fmaf chain over c ascending through its
 * chunks, then steps (2)-(6) fold it into acc before the next head starts. So every output is
 * produced by exactly the reference sequence; only which thread runs it differs.
 *
 * Shared memory: with KRES (d <= KRES_D) the BN x d pool-key tile is loaded once and stays
 * resident across all heads; otherwise it is streamed per (h, chunk) like q. q chunks
 * [BM][KC] flow through a STAGES-deep cp.async ring. Rows are padded to LD = 4 (mod 8) floats so
 * the float4 reads of 8 (or more) consecutive rows at one column hit distinct banks.
 * Inner step per 4 channels: TM + TN LDS.128 for 4*TM*TN FFMA (8x8: 16 loads, 256 FMA).
 * Tiles whose pools are all invisible to all their queries are written -inf without compute. */
#define KS_NT 256
#define KS_KC 64       /* channels per pipeline step */
#define KS_LDQ 68      /* padded q / streamed-key row (KS_KC + 4) */
#define KS_KRES_D 128  /* largest d whose key tile stays resident */
#define KS_LDK_RES 132 /* padded resident key row (KS_KRES_D + 4) */
#define KS_STAGES 3

template <int BM, int BN, bool KRES> struct ks_smem {
    static constexpr int k_floats = KRES ? BN * KS_LDK_RES : KS_STAGES * BN * KS_LDQ;
    static constexpr int q_floats = KS_STAGES * BM * KS_LDQ;
    static constexpr size_t bytes = (size_t)(k_floats + q_floats) * sizeof(float);
};

template <int BM, int BN, int TM, int TN, int MINB, bool KRES, bool VEC4>
static __global__ void __launch_bounds__(KS_NT, MINB)
    kpool_score_tiled_f32(const float *__restrict__ q, const float *__restrict__ keys,
                          const float *__restrict__ hw, float *__restrict__ score, int32_t t_q,
                          int32_t heads, int32_t d, int32_t n_pools, int32_t pool,
                          int32_t first_pos, float qk_scale, float head_scale, int64_t n_ptiles) {
    constexpr int TY = BM / TM, TX = BN / TN;
    static_assert(TY * TX == KS_NT, "thread tile must cover the block tile");
    constexpr int LDK = KRES ? KS_LDK_RES : KS_LDQ;
    extern __shared__ float4 ks_smem4[];
    float *Ks = reinterpret_cast<float *>(ks_smem4);
    float *Qs = Ks + ks_smem<BM, BN, KRES>::k_floats;

    const int tid = threadIdx.x, ty = tid / TX, tx = tid % TX;
    const int64_t tile = blockIdx.x;
    const int64_t qt = tile / n_ptiles, pt = tile - qt * n_ptiles;
    const int64_t i0 = qt * BM, p0 = pt * BN;
    const int64_t i_end = (i0 + BM < t_q) ? i0 + BM : t_q;
    const int64_t p_end = (p0 + BN < n_pools) ? p0 + BN : n_pools;

    /* Whole tile invisible (its first pool ends after its last query's row): -inf, no work. */
    if (!kpool_pool_visible(p0, pool, (int64_t)first_pos + i_end - 1)) {
        for (int e = tid; e < BM * BN; e += KS_NT) {
            const int64_t i = i0 + e / BN, p = p0 + e % BN;
            if (i < i_end && p < p_end) score[i * n_pools + p] = -INFINITY;
        }
        return;
    }

    const int nch = (d + KS_KC - 1) / KS_KC;
    const int nsteps = heads * nch;

    /* Issue the cp.async copies of step s (head h, chunk ch) into ring stage s % STAGES. Rows
     * past t_q / n_pools and channels past d are zero-filled and never read by the compute. */
    auto issue_step = [&](int s) {
        const int h = s / nch, ch = s - h * nch, c0 = ch * KS_KC, stage = s % KS_STAGES;
        float *qdst = Qs + stage * BM * KS_LDQ;
        float *kdst = Ks + stage * BN * KS_LDQ;
        if (VEC4) {
            for (int e = tid; e < BM * (KS_KC / 4); e += KS_NT) {
                const int r = e / (KS_KC / 4), cc = (e % (KS_KC / 4)) * 4;
                const int64_t i = i0 + r;
                const bool ok = i < t_q && c0 + cc < d;
                mla_cp_async16(qdst + r * KS_LDQ + cc, ok ? q + (i * heads + h) * d + c0 + cc : q,
                               ok);
            }
            if (!KRES)
                for (int e = tid; e < BN * (KS_KC / 4); e += KS_NT) {
                    const int r = e / (KS_KC / 4), cc = (e % (KS_KC / 4)) * 4;
                    const int64_t p = p0 + r;
                    const bool ok = p < n_pools && c0 + cc < d;
                    mla_cp_async16(kdst + r * KS_LDQ + cc, ok ? keys + p * d + c0 + cc : keys, ok);
                }
        } else {
            for (int e = tid; e < BM * KS_KC; e += KS_NT) {
                const int r = e / KS_KC, cc = e % KS_KC;
                const int64_t i = i0 + r;
                const bool ok = i < t_q && c0 + cc < d;
                mla_cp_async4(qdst + r * KS_LDQ + cc, ok ? q + (i * heads + h) * d + c0 + cc : q,
                              ok);
            }
            if (!KRES)
                for (int e = tid; e < BN * KS_KC; e += KS_NT) {
                    const int r = e / KS_KC, cc = e % KS_KC;
                    const int64_t p = p0 + r;
                    const bool ok = p < n_pools && c0 + cc < d;
                    mla_cp_async4(kdst + r * KS_LDQ + cc, ok ? keys + p * d + c0 + cc : keys, ok);
                }
        }
    };

    if (KRES) { /* the resident key tile: BN rows x d (<= KS_KRES_D) channels */
        if (VEC4) {
            for (int e = tid; e < BN * (KS_KRES_D / 4); e += KS_NT) {
                const int r = e / (KS_KRES_D / 4), cc = (e % (KS_KRES_D / 4)) * 4;
                const int64_t p = p0 + r;
                const bool ok = p < n_pools && cc < d;
                mla_cp_async16(Ks + r * KS_LDK_RES + cc, ok ? keys + p * d + cc : keys, ok);
            }
        } else {
            for (int e = tid; e < BN * KS_KRES_D; e += KS_NT) {
                const int r = e / KS_KRES_D, cc = e % KS_KRES_D;
                const int64_t p = p0 + r;
                const bool ok = p < n_pools && cc < d;
                mla_cp_async4(Ks + r * KS_LDK_RES + cc, ok ? keys + p * d + cc : keys, ok);
            }
        }
    }
    mla_cp_async_commit();
#pragma unroll
    for (int s = 0; s < KS_STAGES - 1; s++) {
        if (s < nsteps) issue_step(s);
        mla_cp_async_commit();
    }

    /* Warps whose queries are all past t_q (small-t_q tiles) skip the arithmetic. */
    const bool active = i0 + ty < i_end;
    float acc[TM][TN], dot[TM][TN];
#pragma unroll
    for (int r = 0; r < TM; r++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[r][j] = 0.0f;

    for (int s = 0; s < nsteps; s++) {
        mla_cp_async_wait<KS_STAGES - 2>();
        __syncthreads();
        if (s + KS_STAGES - 1 < nsteps)
            issue_step(s + KS_STAGES - 1); /* into the stage consumed at step s - 1 */
        mla_cp_async_commit();

        const int h = s / nch, ch = s - h * nch, c0 = ch * KS_KC;
        if (!active) continue;
        if (ch == 0) {
#pragma unroll
            for (int r = 0; r < TM; r++)
#pragma unroll
                for (int j = 0; j < TN; j++) dot[r][j] = 0.0f;
        }
        const float *qs = Qs + (s % KS_STAGES) * BM * KS_LDQ + ty * KS_LDQ;
        const float *ks =
            KRES ? Ks + tx * KS_LDK_RES + c0 : Ks + (s % KS_STAGES) * BN * KS_LDQ + tx * KS_LDQ;
        const int rem = (d - c0 < KS_KC) ? d - c0 : KS_KC;

        /* (1): four channels per group, c ascending within every chain. */
        auto group4 = [&](int g) {
            float4 a[TM];
#pragma unroll
            for (int r = 0; r < TM; r++)
                a[r] = *reinterpret_cast<const float4 *>(qs + r * TY * KS_LDQ + g * 4);
#pragma unroll
            for (int j = 0; j < TN; j++) {
                const float4 b = *reinterpret_cast<const float4 *>(ks + j * TX * LDK + g * 4);
#pragma unroll
                for (int r = 0; r < TM; r++) {
                    float x = dot[r][j];
                    x = __fmaf_rn(a[r].x, b.x, x);
                    x = __fmaf_rn(a[r].y, b.y, x);
                    x = __fmaf_rn(a[r].z, b.z, x);
                    x = __fmaf_rn(a[r].w, b.w, x);
                    dot[r][j] = x;
                }
            }
        };
        if (rem == KS_KC) {
#pragma unroll
            for (int g = 0; g < KS_KC / 4; g++) group4(g);
        } else {
            const int ng = rem >> 2;
#pragma unroll 1
            for (int g = 0; g < ng; g++) group4(g);
#pragma unroll 1
            for (int cc = ng * 4; cc < rem; cc++) {
#pragma unroll
                for (int r = 0; r < TM; r++) {
                    const float a = qs[r * TY * KS_LDQ + cc];
#pragma unroll
                    for (int j = 0; j < TN; j++)
                        dot[r][j] = __fmaf_rn(a, ks[j * TX * LDK + cc], dot[r][j]);
                }
            }
        }

        if (ch == nch - 1) { /* head h complete: steps (2)-(6) */
#pragma unroll
            for (int r = 0; r < TM; r++) {
                const int64_t i = i0 + ty + r * TY;
                const float w =
                    (i < t_q) ? __fmul_rn(hw[i * heads + h], head_scale) : 0.0f; /* (4) */
#pragma unroll
                for (int j = 0; j < TN; j++)
                    acc[r][j] =
                        __fadd_rn(acc[r][j], kpool_head_term(dot[r][j], w, qk_scale)); /* (6) */
            }
        }
    }
    mla_cp_async_wait<0>();

#pragma unroll
    for (int r = 0; r < TM; r++) {
        const int64_t i = i0 + ty + r * TY;
        if (i >= i_end) continue;
        const int64_t q_row = (int64_t)first_pos + i;
#pragma unroll
        for (int j = 0; j < TN; j++) {
            const int64_t p = p0 + tx + j * TX;
            if (p < p_end)
                score[i * n_pools + p] = kpool_pool_visible(p, pool, q_row) ? acc[r][j] : -INFINITY;
        }
    }
}

/* The fast scorer's template arm and tile: what the entry opts in (dynamic shared memory above
 * 48 KiB) and the launch helper launches. Every arm has the same signature. */
typedef void (*ks_kernel)(const float *, const float *, const float *, float *, int32_t, int32_t,
                          int32_t, int32_t, int32_t, int32_t, float, float, int64_t);

struct ks_plan {
    ks_kernel kern;
    int32_t bm, bn; /* block tile: queries x pools */
    size_t smem;
};

template <int BM, int BN, int TM, int TN, int MINB, bool KRES, bool VEC4>
static ks_plan ks_plan_of(void) {
    return {kpool_score_tiled_f32<BM, BN, TM, TN, MINB, KRES, VEC4>, BM, BN,
            ks_smem<BM, BN, KRES>::bytes};
}

/* Launch shape: 128 x 128 tiles (8 x 8 per thread) for prefill-sized t_q; for 4 < t_q < 64,
 * 8-query tiles with one query per warp (idle warps skip the arithmetic); for decode / verify
 * (t_q <= 4), one query per tile and 256 pools (every warp busy), so no query rows are wasted. */
template <bool KRES, bool VEC4> static ks_plan ks_plan_pick(int32_t t_q) {
    if (t_q >= 64) return ks_plan_of<128, 128, 8, 8, 1, KRES, VEC4>();
    if (t_q > 4) return ks_plan_of<8, 128, 1, 4, 2, KRES, VEC4>();
    return ks_plan_of<1, 256, 1, 1, 1, KRES, VEC4>();
}

static ks_plan kpool_score_tiled_plan(const float *q, const float *keys, int32_t t_q, int32_t d) {
    const bool vec4 = d % 4 == 0 && (((uintptr_t)q | (uintptr_t)keys) & 15) == 0;
    const bool kres = d <= KS_KRES_D;
    if (kres && vec4) return ks_plan_pick<true, true>(t_q);
    if (kres) return ks_plan_pick<true, false>(t_q);
    if (vec4) return ks_plan_pick<false, true>(t_q);
    return ks_plan_pick<false, false>(t_q);
}

static void kpool_score_tiled_f32_launch(const ks_plan &p, const float *q, const float *keys,
                                         const float *hw, float *score, int32_t t_q, int32_t heads,
                                         int32_t d, int32_t n_pools, int32_t pool,
                                         int32_t first_pos, float qk_scale, float head_scale,
                                         cudaStream_t st) {
    const int64_t nqt = ((int64_t)t_q + p.bm - 1) / p.bm;
    const int64_t npt = ((int64_t)n_pools + p.bn - 1) / p.bn;
    /* pool tiles fastest: co-resident blocks share one query tile's q rows in L2 */
    p.kern<<<(unsigned)(nqt * npt), KS_NT, p.smem, st>>>(
        q, keys, hw, score, t_q, heads, d, n_pools, pool, first_pos, qk_scale, head_scale, npt);
}

extern "C" int memra_mla_kpool_score_f32(const float *q, const float *pool_keys, const float *hw,
                                         float *score, int32_t t_q, int32_t heads, int32_t d,
                                         int32_t n_pools, int32_t pool, int32_t first_pos,
                                         float qk_scale, float head_scale, void *stream) {
    int rc = mla_validate_kpool_score(q, pool_keys, hw, score, t_q, heads, d, n_pools, pool,
                                      first_pos, qk_scale, head_scale);
    if (rc) return rc;
    if (n_pools == 0) return 0; /* mla.h: writes nothing and returns 0 */
    const ks_plan p = kpool_score_tiled_plan(q, pool_keys, t_q, d);
    MLA_CUDA_CHECK(
        cudaFuncSetAttribute(p.kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)p.smem));
    kpool_score_tiled_f32_launch(p, q, pool_keys, hw, score, t_q, heads, d, n_pools, pool,
                                 first_pos, qk_scale, head_scale, (cudaStream_t)stream);
    MLA_CUDA_CHECK(cudaGetLastError());
    return 0;
}

extern "C" int memra_mla_kpool_score_ref_f32(const float *q, const float *pool_keys,
                                             const float *hw, float *score, int32_t t_q,
                                             int32_t heads, int32_t d, int32_t n_pools,
                                             int32_t pool, int32_t first_pos, float qk_scale,
                                             float head_scale, void *stream) {
    int rc = mla_validate_kpool_score(q, pool_keys, hw, score, t_q, heads, d, n_pools, pool,
                                      first_pos, qk_scale, head_scale);
    if (rc) return rc;
    if (n_pools == 0) return 0;
    kpool_score_ref_f32_launch(q, pool_keys, hw, score, t_q, heads, d, n_pools, pool, first_pos,
                               qk_scale, head_scale, (cudaStream_t)stream);
    MLA_CUDA_CHECK(cudaGetLastError());
    return 0;
}

/* ================================================================ selection ================ */

/* desc32: ascending order == score descending; +0 == -0; every NaN (0xFFFFFFFF) after -inf. */
static __device__ __forceinline__ uint32_t kpool_desc32(float x) {
    if (x != x) return 0xFFFFFFFFu;
    const uint32_t u = (x == 0.0f) ? 0u : __float_as_uint(x);
    const uint32_t ordered = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    return ~ordered;
}

static __device__ __forceinline__ uint64_t kpool_key64(float x, int64_t p) {
    return ((uint64_t)kpool_desc32(x) << 32) | (uint64_t)(uint32_t)p;
}

/* The radix select's key of a score and its division by pool: kpool_desc32 and `/`, or a
 * test-only bite (docs/fixtures-that-bite.md) when one is compiled in. Macros, so the default
 * build's expressions (and its device code) are exactly the plain ones. */
#if defined(MLA_BITE_SELECT_NAN_FIRST)
/* BITE: NaN ranks as the best score (desc32 0, before +inf) instead of after -inf
 * (glm5_kpool_select_special). */
#define SEL_DESC32(x) ((x) != (x) ? 0u : kpool_desc32(x))
#else
#define SEL_DESC32(x) kpool_desc32(x)
#endif
#if defined(MLA_BITE_SELECT_TIE_FLIP)
/* BITE: ties broken by the HIGHEST pool index first (the key's low word ~p instead of p, undone
 * when the pool is read back) in the collect-and-sort path every stored case's select takes
 * (glm5_next_kpool_smallint: the cut inside a tie group of a repeated context). */
#define SEL_KEY_LOW(p) (~(uint32_t)(p))
#define SEL_KEY_POOL(low) ((uint32_t) ~(uint32_t)(low))
#else
#define SEL_KEY_LOW(p) ((uint32_t)(p))
#define SEL_KEY_POOL(low) (low)
#endif
#if defined(MLA_BITE_SELECT_POW2_POOL)
/* BITE: pool assumed a power of two, the division a shift by floor(log2(pool))
 * (glm5_kpool_pool7_notail). */
#define SEL_DIV_POOL(a, pool) ((a) >> (31 - __clz(pool)))
#else
#define SEL_DIV_POOL(a, pool) ((a) / (pool))
#endif

/* After the n_sel chosen pools' rows (positions < start): the tail rows (q+1)/pool*pool .. q if
 * always_tail, then -1 up to width. */
static __device__ void kpool_write_tail_pad(int32_t *out, int64_t start, int64_t q_row,
                                            int32_t pool, int32_t always_tail, int32_t width) {
    const int64_t tail_lo = (q_row + 1) / pool * pool;
#if defined(MLA_BITE_SELECT_TAIL_WARP)
    /* BITE (test-only, docs/fixtures-that-bite.md): the tail written as if by one warp's lanes:
     * rows past the 32nd dropped (glm5_next_kpool_pool64: tails of 63 rows). */
    const int64_t n_tail = always_tail ? (q_row - tail_lo + 1 < 32 ? q_row - tail_lo + 1 : 32) : 0;
#else
    const int64_t n_tail = always_tail ? q_row - tail_lo + 1 : 0;
#endif
    for (int64_t j = threadIdx.x; start + j < width; j += blockDim.x)
        out[start + j] = j < n_tail ? (int32_t)(tail_lo + j) : -1;
}

#define SEL_REF_NT 1024
/* Keys the reference sorts in shared memory (64 KiB of dynamic shared memory); above, rounds. */
#define SEL_REF_SORT_CAP 8192

/* The reference selection (not a serving path): block per query. It finds `last`, the n_sel-th
 * smallest key64 of the visible pools (keys are distinct), by one of two obviously right
 * methods, both independent of the radix kernel:
 *  sort   (n_vis <= sort_cap, the launch's dynamic shared memory / 8): every key into shared
 *         memory, padded with ~0 to a power of two, a bitonic sort ascending; last = key n_sel-1;
 *  rounds (else): round k is a block-wide argmin of key64 over visible pools whose key exceeds
 *         the previous round's winner ("> previous winner" is exactly "not yet chosen").
 * Then the chosen set is {key64 <= last}; it is written in ascending pool order by a
 * block-ordered compaction (== the chosen pools sorted ascending), expanded to rows; tail; pad.
 * Rounds cost one block reduction per selected pool, the sort about log2(m)^2 / 2 barriers. */
static __global__ void __launch_bounds__(SEL_REF_NT)
    kpool_select_ref_f32(const float *score, int32_t *idx, int32_t t_q, int32_t n_pools,
                         int32_t pool, int32_t select_k, int32_t width, int32_t first_pos,
                         int32_t always_tail, int32_t sort_cap) {
    extern __shared__ uint64_t sort_keys[];
    __shared__ uint64_t red[32];
    __shared__ uint32_t warp_sums[32];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, nwarps = blockDim.x >> 5;
    const int64_t i = blockIdx.x, q_row = (int64_t)first_pos + i;
    int64_t n_vis = (q_row + 1) / pool;
    if (n_vis > n_pools) n_vis = n_pools;
    const int64_t n_sel = n_vis < select_k ? n_vis : select_k;
    const float *row = score + i * (int64_t)n_pools;
    int32_t *out = idx + i * (int64_t)width;

    uint64_t last = 0;
    if (n_sel > 0 && n_vis <= sort_cap) {
        int64_t m = 1;
        while (m < n_vis) m <<= 1;
        for (int64_t p = tid; p < m; p += blockDim.x)
            sort_keys[p] = p < n_vis ? kpool_key64(row[p], p) : ~0ull;
        __syncthreads();
        for (int64_t k = 2; k <= m; k <<= 1)
            for (int64_t j = k >> 1; j > 0; j >>= 1) {
                for (int64_t a = tid; a < m; a += blockDim.x) {
                    const int64_t b = a ^ j;
                    if (b > a) {
                        const uint64_t x = sort_keys[a], y = sort_keys[b];
                        if ((x > y) == ((a & k) == 0)) sort_keys[a] = y, sort_keys[b] = x;
                    }
                }
                __syncthreads();
            }
        last = sort_keys[n_sel - 1];
    }
    for (int64_t k = 0; k < (n_vis <= sort_cap ? 0 : n_sel); k++) {
        uint64_t best = ~0ull;
        for (int64_t p = tid; p < n_vis; p += blockDim.x) {
            const uint64_t key = kpool_key64(row[p], p);
            if ((k == 0 || key > last) && key < best) best = key;
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            const uint64_t other = __shfl_xor_sync(FULL_MASK, best, o);
            best = other < best ? other : best;
        }
        if (lane == 0) red[warp] = best;
        __syncthreads();
        best = ~0ull;
        for (int w = 0; w < nwarps; w++) best = red[w] < best ? red[w] : best;
        __syncthreads();
        last = best;
    }

    int64_t base = 0;
    for (int64_t c0 = 0; c0 < n_vis; c0 += blockDim.x) {
        const int64_t p = c0 + tid;
        const bool chosen = n_sel > 0 && p < n_vis && kpool_key64(row[p], p) <= last;
        uint32_t total;
        const uint32_t ex = block_excl_scan_u32(chosen ? 1u : 0u, &total, warp_sums);
        if (chosen)
            for (int r = 0; r < pool; r++) out[(base + ex) * pool + r] = (int32_t)(p * pool + r);
        base += total;
    }
    kpool_write_tail_pad(out, n_sel * pool, q_row, pool, always_tail, width);
}

/* Radix selection, block per query (SEL_NT = 512 threads, two blocks per SM so one block's
 * shared-memory sort overlaps the other's streaming), cost independent of select_k.
 *
 * Keys: desc32(score[p]) << 32 | p; the select_k smallest (n_sel = min(select_k, n_vis)) are
 * wanted. Ties in desc32 are resolved by the pool index, i.e. the lowest-indexed tying pools win,
 * so only the 32 high bits need a radix search:
 *  1. Histogram passes over the score row (vectorised loads, shared-memory atomics) on desc32
 *     digits of 12, 12 and 8 bits, each restricted to the prefix found so far; after each pass
 *     the bin holding the n_sel-th key is found with a block scan of the histogram, giving
 *     c_less (keys whose prefix is below) and cnt (keys in that bin).
 *  2. As soon as c_less + cnt <= SEL_CAP (typically after the first pass), one more pass
 *     collects every key with prefix <= the found prefix (exactly c_less + cnt keys) into shared
 *     memory, and the settle (sel_settle) picks the n_sel winners there and puts their pool
 *     indices in ascending order (sel_sort_pools). Two reads of the row in the common case; the
 *     sampled route below makes it 1/16 of a read and one pass.
 *  3. Otherwise (massive ties, or n_sel > SEL_CAP) all 32 bits are resolved by the passes
 *     (threshold T, c_less = #{desc32 < T}, m = n_sel - c_less ties to take), and one ordered pass
 *     over the row (block scans over chunks in ascending pool order) emits the pools with
 *     desc32 < T plus the first m with desc32 == T, already ascending.
 * Shared memory: SEL_CAP u64 keys + SEL_BINS u32 bins = 80 KiB dynamic (2 blocks / SM). */
/* SEL_NT, SEL_CAP, SEL_BINS and the other geometry: kernels/mla_kpool_select.h */
#define SEL_SMEM ((size_t)SEL_CAP * sizeof(uint64_t) + (size_t)SEL_BINS * sizeof(uint32_t))

/* Calls f(x, p) for every visible p in [0, n) in any order; float4 loads, 4 in flight. */
template <class F>
static __device__ __forceinline__ void sel_for_each(const float *row, int64_t n, F f) {
    int64_t done = 0;
    if ((((uintptr_t)row) & 15) == 0) {
        const float4 *row4 = reinterpret_cast<const float4 *>(row);
        const int64_t n4 = n >> 2;
        const int64_t step = (int64_t)blockDim.x;
        int64_t g = threadIdx.x;
        for (; g + 3 * step < n4; g += 4 * step) {
            float4 v[4];
#pragma unroll
            for (int u = 0; u < 4; u++) v[u] = __ldg(row4 + g + u * step);
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const int64_t p = (g + u * step) * 4;
                f(v[u].x, p);
                f(v[u].y, p + 1);
                f(v[u].z, p + 2);
                f(v[u].w, p + 3);
            }
        }
        for (; g < n4; g += step) {
            const float4 v = __ldg(row4 + g);
            f(v.x, g * 4);
            f(v.y, g * 4 + 1);
            f(v.z, g * 4 + 2);
            f(v.w, g * 4 + 3);
        }
        done = n4 * 4;
    }
    for (int64_t p = done + threadIdx.x; p < n; p += blockDim.x) f(__ldg(row + p), p);
}

/* Smallest bin b with sum(hist[0..b]) >= k (k >= 1, total >= k): *s_bin = b and *s_before =
 * sum(hist[0..b-1]). Thread t owns bins [t*SEL_BPT, (t+1)*SEL_BPT). Ends with a barrier. */
#define SEL_BPT (SEL_BINS / SEL_NT)
static __device__ void sel_find_bin(const uint32_t *hist, int nbins, uint32_t k,
                                    uint32_t *warp_sums, uint32_t *s_bin, uint32_t *s_before) {
    const int b0 = threadIdx.x * SEL_BPT;
    uint32_t hb[SEL_BPT], s = 0;
#pragma unroll
    for (int j = 0; j < SEL_BPT; j++) {
        hb[j] = b0 + j < nbins ? hist[b0 + j] : 0u;
        s += hb[j];
    }
    uint32_t total;
    const uint32_t e = block_excl_scan_u32(s, &total, warp_sums);
    if (e < k && e + s >= k) {
        uint32_t cum = e;
#pragma unroll
        for (int j = 0; j < SEL_BPT; j++) {
            if (cum + hb[j] >= k) {
                *s_bin = (uint32_t)(b0 + j);
                *s_before = cum;
                break;
            }
            cum += hb[j];
        }
    }
    __syncthreads();
}

/* Ascending bitonic sort of a[0..n), n a power of two, by the whole block. Ends with a barrier. */
static __device__ void sel_bitonic_sort(uint64_t *a, uint32_t n) {
    for (uint32_t k = 2; k <= n; k <<= 1)
        for (uint32_t j = k >> 1; j > 0; j >>= 1) {
            for (uint32_t e = threadIdx.x; e < n; e += blockDim.x) {
                const uint32_t x = e ^ j;
                if (x > e) {
                    const uint64_t ae = a[e], ax = a[x];
                    if ((ae > ax) == ((e & k) == 0)) {
                        a[e] = ax;
                        a[x] = ae;
                    }
                }
            }
            __syncthreads();
        }
}

static __device__ __forceinline__ uint32_t sel_pow2_ceil(uint32_t n) {
    return n <= 1 ? 1u : 1u << (32 - __clz(n - 1));
}

#if defined(MLA_SHAKE_SELECT)
/* SHAKE (test-only, never in a product build: //kernels:mla_kernels_shake, docs/mutation.md):
 * the odd warps of a block sleep (at least 50 us: mla_shake_sleep_ns) at each side of the sample
 * histogram's barriers, of the sorts' (sel_sort_pools: the bitmap's and the bitonic list's fill;
 * the whole sort's padding), before each level pass's clear and its bin's read and before the full
 * passes' collect, and warp 0 alone before the sampled pass's slot counter reset, so a barrier
 * missing there loses its race on every launch instead of almost never. The bytes and receipts are
 * the product build's: a barrier in place makes the delay only time. */
static __device__ __forceinline__ void sel_shake() {
    if ((threadIdx.x >> 5) & 1) mla_shake_sleep_ns(50000);
}
/* warp 0 alone late: where thread 0 resets a counter the other warps then count into */
static __device__ __forceinline__ void sel_shake_warp0() {
    if ((threadIdx.x >> 5) == 0) mla_shake_sleep_ns(50000);
}
#endif

/* hist[0 .. n) holds n distinct pool indices below n_vis: into list[0 .. n), ascending. Ends with
 * a barrier. Where the row's pool bitmap fits list (n_vis <= 30 x 32 x blockDim: 491,520 pools at
 * 512 threads) the pools mark a bitmap and each thread emits the set bits of its own run of words
 * in order, at its rank from one block scan: 6 barriers (ncu, eleventh session:
 * the bitonic sort of 512 pools, 45 barrier steps, held 5% of the kernel's warp samples). Thread
 * t's run is words [t per, (t + 1) per), stored at t (per + 1) + k: per even, so the stride per + 1
 * is odd and a warp's reads at one k fall in 32 distinct banks. Else the bitonic sort. */
static __device__ void sel_sort_pools(uint64_t *list, uint32_t *hist, uint32_t n, uint32_t n_vis,
                                      uint32_t *warp_sums) {
    const uint32_t n_words = (n_vis + 31) / 32, nt = blockDim.x, tid = threadIdx.x;
    const uint32_t per = ((n_words + nt - 1) / nt + 1) & ~1u; /* even */
    if ((per + 1) * nt <= 2 * SEL_CAP) {
        uint32_t *bm = reinterpret_cast<uint32_t *>(list);
#if defined(MLA_SHAKE_SELECT)
        sel_shake(); /* the odd warps clear their words late */
#endif
        for (uint32_t w = tid; w < (per + 1) * nt; w += nt) bm[w] = 0u;
        __syncthreads();
#if defined(MLA_SHAKE_SELECT)
        sel_shake(); /* the odd warps mark their pools late */
#endif
        for (uint32_t e = tid; e < n; e += nt) {
            const uint32_t p = hist[e], w = p >> 5;
            atomicOr(&bm[(w / per) * (per + 1) + w % per], 1u << (p & 31));
        }
        __syncthreads();
#if defined(MLA_SHAKE_SELECT)
        sel_shake(); /* the odd warps read their runs and emit late */
#endif
        const uint32_t *run = bm + tid * (per + 1);
        uint32_t c = 0;
        for (uint32_t k = 0; k < per; k++) c += (uint32_t)__popc(run[k]);
        uint32_t total;
        uint32_t r =
            block_excl_scan_u32(c, &total, warp_sums); /* (hist is free after its barriers) */
        for (uint32_t k = 0; k < per; k++)
            for (uint32_t b = run[k]; b != 0u; b &= b - 1u)
                hist[r++] = (tid * per + k) * 32 + (uint32_t)(__ffs(b) - 1);
        __syncthreads();
#if defined(MLA_SHAKE_SELECT)
        sel_shake(); /* the odd warps copy the sorted pools late */
#endif
        for (uint32_t e = tid; e < n; e += nt) list[e] = hist[e];
        __syncthreads();
        return;
    }
    const uint32_t n3 = sel_pow2_ceil(n);
#if defined(MLA_SHAKE_SELECT)
    sel_shake(); /* the odd warps fill the sort's list late */
#endif
    for (uint32_t e = tid; e < n3; e += nt) list[e] = e < n ? (uint64_t)hist[e] : ~0ull;
    __syncthreads();
    sel_bitonic_sort(list, n3);
}

/* list[0 .. n_c) holds every key (desc32 << 32 | pool) at or below a row's n_sel-th key, and
 * possibly more (n_sel <= n_c <= SEL_CAP). Finds the n_sel-th key's desc32 T by 12 / 12 / 8-bit
 * histograms of the list (in shared memory, hist as scratch), then compacts the n_sel winners
 * (every key with desc32 < T, and the k smallest keys with desc32 == T: a small sort of the tie
 * group when it straddles the cut) and sorts only their pool indices into list[0 .. n_sel),
 * ascending (sel_sort_pools). This replaces the bitonic sort of all n_c keys (up to 8192: 91
 * barrier steps) by three short histograms and sorts of the tie group and of n_sel. Returns false,
 * list untouched, when n_sel plus the tie group exceed SEL_BINS (the scratch): the caller sorts
 * everything. */
static __device__ bool sel_settle(uint64_t *list, uint32_t n_c, uint32_t n_sel, uint32_t n_vis,
                                  uint32_t *hist, uint32_t *warp_sums, uint32_t *s_bin,
                                  uint32_t *s_before, uint32_t *s_count) {
    if (n_sel > SEL_BINS) return false;
    uint32_t prefix = 0, k = n_sel, cnt = 0;
    int consumed = 0;
    for (int level = 0; level < 3; level++) {
        const int bits = level < 2 ? 12 : 8, shift = 32 - consumed - bits;
        const uint32_t mask = (1u << bits) - 1u;
        for (int j = threadIdx.x; j < (1 << bits); j += blockDim.x) hist[j] = 0u;
        __syncthreads();
        for (uint32_t e = threadIdx.x; e < n_c; e += blockDim.x) {
            const uint32_t dk = (uint32_t)(list[e] >> 32);
            if (consumed == 0 || (dk >> (32 - consumed)) == prefix)
                atomicAdd(&hist[(dk >> shift) & mask], 1u);
        }
        __syncthreads();
        sel_find_bin(hist, 1 << bits, k, warp_sums, s_bin, s_before);
        const uint32_t b = *s_bin;
        cnt = hist[b];
        k -= *s_before;
        prefix = (prefix << bits) | b;
        consumed += bits;
        __syncthreads(); /* hist, s_bin and s_before are rewritten next */
    }
    /* block-uniform (every thread read the same shared values): the winners are the n_sel - k
     * keys below T and the k smallest keys equal to T (by their low word: the pool index), which
     * the tie group's own small sort picks; a group too large for the scratch takes the caller's
     * whole sort */
    if (n_sel + cnt > SEL_BINS) return false;
    const uint32_t T = prefix, n_lt = n_sel - k;
    if (threadIdx.x == 0) *s_count = 0u, *s_before = 0u;
    __syncthreads();
    for (uint32_t e = threadIdx.x; e < n_c; e += blockDim.x) {
        const uint64_t key = list[e];
        const uint32_t d = (uint32_t)(key >> 32);
        if (d < T) /* hist[0 .. n_lt): the winners below T */
            hist[atomicAdd(s_count, 1u)] = (uint32_t)SEL_KEY_POOL(key & 0xFFFFFFFFull);
        else if (d == T) /* hist[n_sel .. n_sel + cnt): the tie group's low words */
            hist[n_sel + atomicAdd(s_before, 1u)] = (uint32_t)(key & 0xFFFFFFFFull);
    }
    __syncthreads();
    if (cnt != k) { /* the first k of the tie group, in key order */
        const uint32_t nt = sel_pow2_ceil(cnt);
        for (uint32_t e = threadIdx.x; e < nt; e += blockDim.x)
            list[e] = e < cnt ? (uint64_t)hist[n_sel + e] : ~0ull;
        __syncthreads();
        sel_bitonic_sort(list, nt);
        for (uint32_t e = threadIdx.x; e < k; e += blockDim.x)
            hist[n_lt + e] = (uint32_t)SEL_KEY_POOL(list[e] & 0xFFFFFFFFull);
    } else {
        for (uint32_t e = threadIdx.x; e < k; e += blockDim.x)
            hist[n_lt + e] = (uint32_t)SEL_KEY_POOL(hist[n_sel + e]);
    }
    __syncthreads();
    sel_sort_pools(list, hist, n_sel, n_vis, warp_sums);
    return true;
}

/* The smallest non-NaN float x with kpool_desc32(x) <= D (kpool_desc32 is monotone
 * non-increasing in x, +0 and -0 equal), or NaN when no float ranks that high (D above +inf's
 * key): then "x >= result" holds for no x. D at or past -inf's key gives -inf (every non-NaN x). */
static __device__ __forceinline__ float sel_desc_floor(uint32_t D) {
    if (D < 0x007FFFFFu) return NAN;
    if (D >= 0xFF800000u) return -INFINITY;
    const uint32_t o = ~D;
    return __uint_as_float((o & 0x80000000u) ? (o & 0x7FFFFFFFu) : ~o);
}

/* The block's maximum of v (NaN-free inputs; every thread calls; ends with a barrier). */
static __device__ float sel_block_max_f32(float v, uint32_t *warp_sums) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, o));
    if (lane == 0) warp_sums[warp] = __float_as_uint(v);
    __syncthreads();
    float r = -INFINITY;
    for (int w = 0; w < nwarps; w++) r = fmaxf(r, __uint_as_float(warp_sums[w]));
    __syncthreads();
    return r;
}

/* The sampled route (SAMPLED: the launcher's arm; MEMRA_MLA_SELECT_SAMPLED=0 is its rollback,
 * kernels/mla_door.h; docs/performance.md): for rows of at least SEL_SAMPLE_MIN visible pools, a
 * 12-bit histogram of every 16th 128-byte segment of the row (1/16 of a read) gives a threshold
 * bin tb expected to hold about 1.5 x n_sel keys at or below it; then one pass over the row:
 *  - when the sample expects at most SEL_CAP keys at or below tb, it collects them all: with
 *    n_sel <= count <= SEL_CAP the collected set holds every winner (all keys below the
 *    threshold are in it), and the sorts below give exactly the bytes of the full passes; any
 *    other count sends the row to the full passes from level 0;
 *  - else (a tie group at the cut) it counts the keys below tb and in tb, with tb's least and
 *    greatest key: when the n_sel-th key lies in tb (count below tb < n_sel <= count) the first
 *    12-bit digit is resolved, so the full passes continue at level 1 restricted to tb (or one
 *    collecting pass when tb's keys fit SEL_CAP); when every key of tb is one value (a
 *    tie-heavy row), that value is the threshold T and the row goes straight to the ordered
 *    pass; else the full passes from level 0.
 * Receipts: sel_sampled_hits (settled with no further full-row pass: collected, or tb one value)
 * / _fallbacks (another full-row pass or more). */
template <bool B> struct sel_form { static constexpr bool value = B; }; /* a pass's form */
__device__ unsigned long long sel_sampled_hits, sel_sampled_fallbacks;

template <bool SAMPLED>
static __global__ void __launch_bounds__(SEL_NT, SEL_MINB)
    kpool_select_radix_f32(const float *score, int32_t *idx, int32_t t_q, int32_t n_pools,
                           int32_t pool, int32_t select_k, int32_t width, int32_t first_pos,
                           int32_t always_tail) {
    extern __shared__ uint64_t sel_smem[];
    uint64_t *list = sel_smem;                                         /* [SEL_CAP] */
    uint32_t *hist = reinterpret_cast<uint32_t *>(sel_smem + SEL_CAP); /* [SEL_BINS] */
    __shared__ uint32_t warp_sums[32];
    __shared__ uint32_t s_bin, s_before, s_count;

    const int tid = threadIdx.x;
    const int64_t i = blockIdx.x, q_row = (int64_t)first_pos + i;
#if defined(MLA_BITE_SELECT_NO_MASK)
    /* BITE (test-only, docs/fixtures-that-bite.md): every pool is a candidate, the visibility
     * mask ignored (glm5_next_kpool_mask, glm5_next_kpool_select_few). */
    int64_t n_vis = n_pools;
#else
    int64_t n_vis = SEL_DIV_POOL(q_row + 1, pool);
#endif
    if (n_vis > n_pools) n_vis = n_pools;
    const int64_t n_sel = n_vis < select_k ? n_vis : select_k;
    int32_t *out = idx + i * (int64_t)width;

    if (n_sel == n_vis) { /* every visible pool is kept: rows 0 .. n_vis*pool - 1 */
        for (int64_t j = tid; j < n_vis * pool; j += blockDim.x) out[j] = (int32_t)j;
        kpool_write_tail_pad(out, n_vis * pool, q_row, pool, always_tail, width);
        return;
    }

    /* n_sel < n_vis <= 2^31 - 1 from here. */
    const float *row = score + i * (int64_t)n_pools;
    bool collected = false; /* the sampled route filled list[0 .. s_count) */
    /* What the sampled pass resolves when its collected set cannot settle the row (the level-0
     * digit from its counts, or the whole threshold of an all-equal bin): the full passes start
     * from there (start_level 1, or 3: straight to the ordered pass). */
    uint32_t prefix = 0, k = (uint32_t)n_sel, c_less = 0, cnt = 0;
    int consumed = 0, start_level = 0;
    bool collect = false; /* a collecting pass of the keys with prefix <= `prefix` is due */
    if constexpr (SAMPLED) {
        if (n_vis >= SEL_SAMPLE_MIN) {
#if defined(MLA_SHAKE_SELECT)
            sel_shake(); /* the odd warps clear their bins late */
#endif
            for (int j = tid; j < SEL_BINS; j += blockDim.x) hist[j] = 0u;
            if (tid == 0) s_bin = SEL_BINS - 1; /* a sample short of ks keys: take every bin */
            __syncthreads();
#if defined(MLA_SHAKE_SELECT)
            sel_shake(); /* the odd warps count their sample late */
#endif
            /* sample element e is pool (e / 32) * 512 + e % 32 (32-bit: n_vis < 2^31, so p <
             * 2^31 + 512). The SEL_SAMP_U loads are unconditional (a sample past the row loads
             * pool 0 and is not counted), so all of them are in flight at once (ncu, eleventh
             * session: with each load under its own bounds branch they were issued one at a time,
             * a round trip each, and the sample took 18% of the kernel's warp samples). */
            constexpr uint32_t RUN = SEL_SAMPLE_RUN, SEGS = SEL_SAMPLE_EVERY / SEL_SAMPLE_RUN;
            const uint32_t n_seg = (uint32_t)((n_vis + RUN - 1) / RUN),
                           n_samp = (n_seg + SEGS - 1) / SEGS * RUN;
            for (uint32_t e0 = 0; e0 < n_samp; e0 += SEL_SAMP_U * blockDim.x) {
                float x[SEL_SAMP_U];
                bool ok[SEL_SAMP_U];
#pragma unroll
                for (int u = 0; u < SEL_SAMP_U; u++) {
                    const uint32_t e = e0 + u * blockDim.x + tid,
                                   p = (e / RUN) * SEL_SAMPLE_EVERY + e % RUN;
                    ok[u] = e < n_samp && (int64_t)p < n_vis;
                    x[u] = __ldg(row + (ok[u] ? p : 0u));
                }
#pragma unroll
                for (int u = 0; u < SEL_SAMP_U; u++)
                    if (ok[u]) atomicAdd(&hist[SEL_DESC32(x[u]) >> 20], 1u);
            }
            __syncthreads();
            const uint32_t ks = (uint32_t)SEL_SAMPLE_QUOTA(n_sel);
            sel_find_bin(hist, SEL_BINS, ks, warp_sums, &s_bin, &s_before);
            const uint32_t tb = s_bin;
            /* the sample's estimate of the keys at or below tb: far past SEL_CAP (a tie group
             * at the cut) the pass only counts; slots cost a contended atomic per warp step */
            const bool collect_now = ((uint64_t)s_before + hist[tb]) * 16 <= 2 * (uint64_t)SEL_CAP;
#if defined(MLA_SHAKE_SELECT)
            sel_shake_warp0(); /* the slot counter reset late */
#endif
            if (tid == 0) s_count = 0u;
            __syncthreads();
            /* One pass over the row, in one of two forms (block-uniform collect_now):
             *  - collecting (the sample expects few keys at or below tb): every key whose top 12
             *    bits are <= tb gets a list slot (a lane with any among its 4 SEL_SU keys of a
             *    step takes their slots with one shared atomic and writes only those keys:
             *    ncu, eleventh session: a warp vote and a slot sequence per key, 12 a step, took
             *    39 of the 102.7 M instructions); the slot counter counts them all, so a
             *    collected set of n_sel .. SEL_CAP keys settles the row, and any other count
             *    (a sample far off) sends the row to the full passes from level 0;
             *  - counting (a tie group at the cut, far past SEL_CAP): the keys below tb and in
             *    tb, with tb's least and greatest score, for the level-0 digit and the
             *    one-value test below.
             * Each form does only its own work per key (ncu, fifth session: one form doing both
             * ran at about 40 instructions a key, bound by issue; sixth session, two forms: 147.4
             * -> 102.7 M instructions, 1.89 -> 1.77 reads, now bound by the loads in flight,
             * docs/performance.md). No step needs the warp converged (no votes). The bins are
             * float thresholds (desc32 is monotone in the
             * score): a key's top 12 bits are <= tb iff x >= thr, < tb iff x >= thr_lt; NaN (the
             * last bin's) passes neither, so a NaN pads the lanes past the row. When tb is the
             * last bin (a sample short of ks keys: NaN-heavy rows) the row takes the full passes
             * from level 0 instead. */
            const bool take_all = tb == SEL_BINS - 1;
            const float thr = sel_desc_floor(((tb + 1u) << 20) - 1u);
            const float thr_lt = tb == 0u ? NAN : sel_desc_floor((tb << 20) - 1u);
            uint32_t n_tk = 0, n_lt = 0;
            float eq_min = INFINITY, eq_max = -INFINITY;
            /* list slots for this lane's taken keys of a step: bit j of `mask` takes the key
             * of pool p_of(j), one key per trip (a lane has one or two). Its score is loaded
             * again (from L1: the step's own line): picking it from the step's registers by a
             * runtime j put them in local memory, stored every step (ncu, eleventh session:
             * 528 MB of local stores, the pass 22% slower). */
            auto slots = [&](uint32_t mask, auto p_of) {
                uint32_t pos = atomicAdd(&s_count, (uint32_t)__popc(mask));
                for (; mask != 0u; mask &= mask - 1u, pos++) {
                    const int64_t p = p_of(__ffs(mask) - 1);
                    if (pos < SEL_CAP)
                        list[pos] =
                            ((uint64_t)SEL_DESC32(__ldg(row + p)) << 32) | (uint64_t)SEL_KEY_LOW(p);
                }
            };
            auto pass = [&](auto form) {
                constexpr bool COLLECT = decltype(form)::value;
                /* one key: whether it is taken; the counting form's counts. The least key of
                 * tb is the least taken key, its greatest the greatest key not below tb (keys
                 * below tb score higher than tb's, keys past it lower: with a key in tb, as
                 * every use has, the others cannot move either bound), so neither needs "in
                 * tb" itself. */
                auto key = [&](float x) {
                    const bool tk = x >= thr;
                    if constexpr (!COLLECT) {
                        const bool lt = x >= thr_lt;
                        n_tk += tk ? 1u : 0u;
                        n_lt += lt ? 1u : 0u;
                        eq_min = fminf(eq_min, tk ? x : INFINITY);
                        eq_max = fmaxf(eq_max, lt ? -INFINITY : x);
                    }
                    return tk;
                };
                int64_t p_done = 0;
                const int64_t step = blockDim.x, chunk = SEL_SU * step;
                if ((((uintptr_t)row) & 15) == 0) {
                    const float4 *row4 = reinterpret_cast<const float4 *>(row) + tid;
                    /* whole chunks of SEL_SU float4 per thread, software-pipelined: the next
                     * chunk's loads are in flight while this one's are counted (without it each
                     * step waited a whole load latency: ncu 2026-12-01, about 1 read per 136 us
                     * per wave); no bounds test per load; the rest of the row takes the loop
                     * below */
                    const int64_t n4c = (n_vis >> 2) / chunk * chunk;
                    float4 v[SEL_SU];
                    auto load = [&](int64_t g0, float4(&w)[SEL_SU]) {
#pragma unroll
                        for (int u = 0; u < SEL_SU; u++) w[u] = __ldg(row4 + g0 + u * step);
                    };
                    if (n4c > 0) load(0, v);
                    for (int64_t g0 = 0; g0 < n4c; g0 += chunk) {
                        float4 nv[SEL_SU];
                        load(g0 + chunk < n4c ? g0 + chunk : g0, nv); /* the last: a reload */
                        bool any = false;
#pragma unroll
                        for (int u = 0; u < SEL_SU; u++) {
                            const bool t0 = key(v[u].x), t1 = key(v[u].y), t2 = key(v[u].z),
                                       t3 = key(v[u].w);
                            any = any || t0 || t1 || t2 || t3;
                        }
                        if constexpr (COLLECT) {
                            if (any) { /* rare per lane (about 3% of steps at the shipped shape) */
                                uint32_t mask = 0u;
#pragma unroll
                                for (int u = 0; u < SEL_SU; u++) {
                                    mask |= (v[u].x >= thr ? 1u : 0u) << (4 * u);
                                    mask |= (v[u].y >= thr ? 2u : 0u) << (4 * u);
                                    mask |= (v[u].z >= thr ? 4u : 0u) << (4 * u);
                                    mask |= (v[u].w >= thr ? 8u : 0u) << (4 * u);
                                }
                                slots(mask, [&](int j) {
                                    return 4 * (g0 + (j >> 2) * step + tid) + (j & 3);
                                });
                            }
                        }
#pragma unroll
                        for (int u = 0; u < SEL_SU; u++) v[u] = nv[u];
                    }
                    p_done = n4c * 4;
                }
#if defined(MLA_BITE_SELECT_SAMPLED_NO_TAIL)
                /* BITE (test-only, docs/fixtures-that-bite.md): the pass stops at its last whole
                 * chunk of an aligned row, the row's tail never counted (glm5_kpool_sampled:
                 * 132-135 of a row's 2,048 winners lie in the tail). */
                if (p_done == 0)
#endif
                    /* the rest (an aligned row's tail, under SEL_SU chunks; every pool of an
                     * unaligned row): 4 SEL_SU scalar loads a thread in flight at once (ncu,
                     * eleventh session: one at a time, a round trip each, the tail took 5% of
                     * the warp samples) */
                    for (int64_t p0 = p_done; p0 < n_vis; p0 += 4 * SEL_SU * step) {
                        constexpr int TU = 4 * SEL_SU;
                        float x[TU];
#pragma unroll
                        for (int u = 0; u < TU; u++) {
                            const int64_t p = p0 + u * step + tid;
                            x[u] = __ldg(row + (p < n_vis ? p : 0));
                            if (p >= n_vis)
                                x[u] = NAN; /* past the row: neither taken nor counted */
                        }
                        uint32_t mask = 0u;
#pragma unroll
                        for (int u = 0; u < TU; u++) mask |= key(x[u]) ? 1u << u : 0u;
                        if constexpr (COLLECT) {
                            if (mask != 0u) slots(mask, [&](int j) { return p0 + j * step + tid; });
                        }
                    }
            };
            if (take_all) {
                /* no pass: the full passes from level 0 */
            } else if (collect_now) {
                pass(sel_form<true>{});
                __syncthreads(); /* s_count */
                const uint32_t n_got = s_count;
                collected = n_got >= (uint32_t)n_sel && n_got <= SEL_CAP;
            } else {
                pass(sel_form<false>{});
                uint32_t c_tk, c_lt;
                block_excl_scan_u32(n_tk, &c_tk, warp_sums);
                block_excl_scan_u32(n_lt, &c_lt, warp_sums);
                const uint32_t c_eq = c_tk - c_lt; /* a key below tb is at or below it */
                eq_min = sel_block_max_f32(-eq_min, warp_sums) * -1.0f;
                eq_max = sel_block_max_f32(eq_max, warp_sums);
                /* the one-value test in key order (+0 == -0) */
                const uint32_t eq_lo = SEL_DESC32(eq_max), eq_hi = SEL_DESC32(eq_min);
                if (c_lt < (uint32_t)n_sel && (uint32_t)n_sel <= c_tk) {
                    /* the n_sel-th key is in bin tb: level 0 is resolved by this pass */
                    c_less = c_lt;
                    k = (uint32_t)n_sel - c_lt;
                    cnt = c_eq;
                    prefix = tb;
                    consumed = 12;
                    start_level = 1;
                    if (eq_lo == eq_hi) { /* one value fills the bin: the threshold is that key */
                        prefix = eq_lo;
                        consumed = 32;
                        start_level = 3;
                    } else if (c_tk <= SEL_CAP) { /* only counted: one collecting pass */
                        collect = true;
                        start_level = 3;
                    }
                }
            }
            if (tid == 0)
                atomicAdd(collected || (start_level == 3 && !collect) ? &sel_sampled_hits
                                                                      : &sel_sampled_fallbacks,
                          1ull);
            __syncthreads(); /* s_count read by all before the fallback resets it */
        }
    }
    for (int level = start_level; level < 3 && !collected; level++) {
        const int bits = level < 2 ? 12 : 8;
        const int shift = 32 - consumed - bits;
        const uint32_t mask = (1u << bits) - 1u;
#if defined(MLA_SHAKE_SELECT)
        sel_shake(); /* the odd warps clear the level's bins late */
#endif
        for (int j = tid; j < (1 << bits); j += blockDim.x) hist[j] = 0u;
        __syncthreads();
        const int cons = consumed;
        const uint32_t pre = prefix;
        sel_for_each(row, n_vis, [&](float x, int64_t) {
            const uint32_t dk = SEL_DESC32(x);
            if (cons == 0 || (dk >> (32 - cons)) == pre) atomicAdd(&hist[(dk >> shift) & mask], 1u);
        });
        __syncthreads();
        sel_find_bin(hist, 1 << bits, k, warp_sums, &s_bin, &s_before);
#if defined(MLA_SHAKE_SELECT)
        sel_shake(); /* the odd warps read the level's bin late */
#endif
        const uint32_t b = s_bin, before = s_before;
        cnt = hist[b];
        c_less += before;
        k -= before;
        prefix = (prefix << bits) | b;
        consumed += bits;
        __syncthreads(); /* hist and s_bin are rewritten by the next level */
        if (c_less + cnt <= SEL_CAP) {
            collect = true;
            break;
        }
    }

    if (collect || collected) {
        if (!collected) {
            if (tid == 0) s_count = 0u;
            __syncthreads();
#if defined(MLA_SHAKE_SELECT)
            sel_shake(); /* the odd warps collect late */
#endif
            const int shc = 32 - consumed;
            const uint32_t pre = prefix;
            sel_for_each(row, n_vis, [&](float x, int64_t p) {
                const uint32_t dk = SEL_DESC32(x);
                if ((dk >> shc) <= pre) {
                    const uint32_t pos = atomicAdd(&s_count, 1u);
                    list[pos] = ((uint64_t)dk << 32) | (uint64_t)SEL_KEY_LOW(p);
                }
            });
            __syncthreads();
        }
        const uint32_t n_c = s_count; /* >= n_sel, <= SEL_CAP */
        if (!sel_settle(list, n_c, (uint32_t)n_sel, (uint32_t)n_vis, hist, warp_sums, &s_bin,
                        &s_before, &s_count)) {
            /* the whole sort: a tie group at the threshold larger than the ties to take */
            const uint32_t n2 = sel_pow2_ceil(n_c);
#if defined(MLA_SHAKE_SELECT)
            sel_shake(); /* the odd warps pad the list late */
#endif
            for (uint32_t e = n_c + tid; e < n2; e += blockDim.x) list[e] = ~0ull;
            __syncthreads();
            sel_bitonic_sort(list, n2);
            const uint32_t ns = (uint32_t)n_sel, n3 = sel_pow2_ceil(ns);
            for (uint32_t e = tid; e < n3; e += blockDim.x)
                list[e] = e < ns ? (uint64_t)SEL_KEY_POOL(list[e] & 0xFFFFFFFFull) : ~0ull;
            __syncthreads();
            sel_bitonic_sort(list, n3);
        }
        for (int64_t e = tid; e < n_sel * pool; e += blockDim.x) {
            const int64_t s = SEL_DIV_POOL(e, pool), r = e - s * pool;
            out[e] = (int32_t)((int64_t)list[s] * pool + r);
        }
    } else {
        /* All 32 bits resolved: T = prefix; keep desc32 < T and the first m ties (ascending p).
         * Chunks of SEL_OE consecutive pools per thread (the block's chunk in ascending pool
         * order), the next chunk's loads in flight while this one is scanned, and the walk ends
         * as soon as n_sel pools are taken (a tie-heavy row's winners are usually all early). */
        const uint32_t T = prefix, m = k;
        const bool aligned = (((uintptr_t)row) & 15) == 0;
        const int64_t step = (int64_t)SEL_OE * blockDim.x;
        uint32_t base = 0, ties_seen = 0;
        float nv[SEL_OE];
        auto fetch = [&](int64_t c0, float(&v)[SEL_OE]) {
            const int64_t p = c0 + (int64_t)SEL_OE * tid;
            if (aligned && p + SEL_OE <= n_vis) {
                const float4 *r4 = reinterpret_cast<const float4 *>(row + p);
#pragma unroll
                for (int u = 0; u < SEL_OE / 4; u++) {
                    const float4 f = __ldg(r4 + u);
                    v[4 * u] = f.x, v[4 * u + 1] = f.y, v[4 * u + 2] = f.z, v[4 * u + 3] = f.w;
                }
            } else {
#pragma unroll
                for (int j = 0; j < SEL_OE; j++) v[j] = p + j < n_vis ? __ldg(row + p + j) : 0.0f;
            }
        };
        fetch(0, nv);
        for (int64_t c0 = 0; c0 < n_vis; c0 += step) {
            float v[SEL_OE];
#pragma unroll
            for (int j = 0; j < SEL_OE; j++) v[j] = nv[j];
            if (c0 + step < n_vis) fetch(c0 + step, nv);
            const int64_t p = c0 + (int64_t)SEL_OE * tid;
            uint32_t dk[SEL_OE], n_tie = 0;
#pragma unroll
            for (int j = 0; j < SEL_OE; j++) {
                dk[j] = SEL_DESC32(v[j]);
                n_tie += (p + j < n_vis && dk[j] == T) ? 1u : 0u;
            }
            uint32_t tie_total;
            uint32_t tie_rank = ties_seen + block_excl_scan_u32(n_tie, &tie_total, warp_sums);
            uint32_t take = 0, n_take = 0; /* bit j: pool p + j is taken */
#pragma unroll
            for (int j = 0; j < SEL_OE; j++) {
                const bool vis = p + j < n_vis;
                const bool tie = vis && dk[j] == T;
                const bool t = vis && (dk[j] < T || (tie && tie_rank < m));
                tie_rank += tie ? 1u : 0u;
                take |= t ? 1u << j : 0u;
                n_take += t ? 1u : 0u;
            }
            uint32_t take_total;
            uint32_t o = base + block_excl_scan_u32(n_take, &take_total, warp_sums);
            for (int j = 0; j < SEL_OE; j++)
                if (take >> j & 1u) {
                    for (int r = 0; r < pool; r++)
                        out[(int64_t)o * pool + r] = (int32_t)((p + j) * pool + r);
                    o++;
                }
            base += take_total;
            ties_seen += tie_total;
            if ((int64_t)base >= n_sel) break; /* block-uniform: every winner is written */
        }
    }
    kpool_write_tail_pad(out, n_sel * pool, q_row, pool, always_tail, width);
}

/* The radix select's two arms: the sampled route (the launcher's) and the full passes. */
static void (*sel_kernel_of(bool sampled))(const float *, int32_t *, int32_t, int32_t, int32_t,
                                           int32_t, int32_t, int32_t, int32_t) {
    return sampled ? kpool_select_radix_f32<true> : kpool_select_radix_f32<false>;
}

static void kpool_select_radix_f32_launch(const float *score, int32_t *idx, int32_t t_q,
                                          int32_t n_pools, int32_t pool, int32_t select_k,
                                          int32_t width, int32_t first_pos, int32_t always_tail,
                                          cudaStream_t st, bool sampled = false) {
    sel_kernel_of(sampled)<<<(unsigned)t_q, SEL_NT, SEL_SMEM, st>>>(
        score, idx, t_q, n_pools, pool, select_k, width, first_pos, always_tail);
}

/* The reference's dynamic shared memory: the power of two >= n_pools keys when that is at most
 * SEL_REF_SORT_CAP (every query sorts; a query sees at most n_pools pools), else 0 (rounds). */
static size_t kpool_select_ref_smem(int32_t n_pools) {
    if (n_pools <= 0 || n_pools > SEL_REF_SORT_CAP) return 0;
    size_t m = 1;
    while (m < (size_t)n_pools) m <<= 1;
    return m * sizeof(uint64_t);
}

static void kpool_select_ref_f32_launch(const float *score, int32_t *idx, int32_t t_q,
                                        int32_t n_pools, int32_t pool, int32_t select_k,
                                        int32_t width, int32_t first_pos, int32_t always_tail,
                                        cudaStream_t st) {
    const size_t smem = kpool_select_ref_smem(n_pools);
    kpool_select_ref_f32<<<(unsigned)t_q, SEL_REF_NT, smem, st>>>(
        score, idx, t_q, n_pools, pool, select_k, width, first_pos, always_tail,
        (int32_t)(smem / sizeof(uint64_t)));
}

/* The radix entries' common body (the launcher and the sampled door): validate, opt in, launch. */
static int kpool_select_radix_run(const float *score, int32_t *idx, int32_t t_q, int32_t n_pools,
                                  int32_t pool, int32_t select_k, int32_t width, int32_t first_pos,
                                  int32_t always_tail, void *stream, bool sampled) {
    int rc = mla_validate_kpool_select(score, idx, t_q, n_pools, pool, select_k, width, first_pos,
                                       always_tail);
    if (rc) return rc;
    MLA_CUDA_CHECK(cudaFuncSetAttribute(
        sel_kernel_of(sampled), cudaFuncAttributeMaxDynamicSharedMemorySize, (int)SEL_SMEM));
    kpool_select_radix_f32_launch(score, idx, t_q, n_pools, pool, select_k, width, first_pos,
                                  always_tail, (cudaStream_t)stream, sampled);
    MLA_CUDA_CHECK(cudaGetLastError());
    return 0;
}

extern "C" int memra_mla_kpool_select_f32(const float *score, int32_t *idx, int32_t t_q,
                                          int32_t n_pools, int32_t pool, int32_t select_k,
                                          int32_t width, int32_t first_pos, int32_t always_tail,
                                          void *stream) {
    return kpool_select_radix_run(score, idx, t_q, n_pools, pool, select_k, width, first_pos,
                                  always_tail, stream, true);
}

extern "C" int memra_mla_kpool_select_ref_f32(const float *score, int32_t *idx, int32_t t_q,
                                              int32_t n_pools, int32_t pool, int32_t select_k,
                                              int32_t width, int32_t first_pos, int32_t always_tail,
                                              void *stream) {
    int rc = mla_validate_kpool_select(score, idx, t_q, n_pools, pool, select_k, width, first_pos,
                                       always_tail);
    if (rc) return rc;
    MLA_CUDA_CHECK(cudaFuncSetAttribute(kpool_select_ref_f32,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)(SEL_REF_SORT_CAP * sizeof(uint64_t))));
    kpool_select_ref_f32_launch(score, idx, t_q, n_pools, pool, select_k, width, first_pos,
                                always_tail, (cudaStream_t)stream);
    MLA_CUDA_CHECK(cudaGetLastError());
    return 0;
}

/* The radix select without its sampled route (every row takes the full histogram passes): the
 * rollback arm of the MEMRA_MLA_SELECT_SAMPLED=0 door (kernels/mla_door.h); the launcher's
 * validation and bytes. */
extern "C" int mla_kpool_select_full_f32(const float *score, int32_t *idx, int32_t t_q,
                                         int32_t n_pools, int32_t pool, int32_t select_k,
                                         int32_t width, int32_t first_pos, int32_t always_tail,
                                         void *stream) {
    return kpool_select_radix_run(score, idx, t_q, n_pools, pool, select_k, width, first_pos,
                                  always_tail, stream, false);
}

/* The sampled route's device receipts since process start: rows it settled, rows it handed to
 * the full passes. @return 0 or 10000 + cudaError_t. */
extern "C" int mla_select_sampled_counts(uint64_t *hits, uint64_t *fallbacks) {
    unsigned long long h = 0, f = 0;
    MLA_CUDA_CHECK(cudaMemcpyFromSymbol(&h, sel_sampled_hits, sizeof h));
    MLA_CUDA_CHECK(cudaMemcpyFromSymbol(&f, sel_sampled_fallbacks, sizeof f));
    if (hits) *hits = h;
    if (fallbacks) *fallbacks = f;
    return 0;
}
