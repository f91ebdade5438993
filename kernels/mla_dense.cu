/* mla_dense.cu: the dense MLA core launchers of kernels/mla.h (rope, latent split / append,
 * absorb / decompress and their decode-split twins). The attention launchers live in
 * mla_attn.cu.
 *
 * Layering, one rule in every .cu file of kernels/ (ggml-cuda's):
 *  1. a `static __global__` kernel named for its op, with the dtype suffix (`split_latent_f32`);
 *  2. `static void <kernel>_launch(...)`: picks the launch shape only (grid, block, dynamic shared
 *     memory, template arm) and launches; it neither validates nor checks errors;
 *  3. the `extern "C"` entry: validates (mla_validate.h), returns the documented no-ops, does the
 *     setup the launch needs, calls the helper, then MLA_CUDA_CHECK(cudaGetLastError()) and
 *     returns 0 (any CUDA failure: 10000 + cudaError_t).
 * Setup (cudaFuncSetAttribute opt-ins, cudaMallocAsync workspaces) is always the entry's, checked
 * there with MLA_CUDA_CHECK, never a helper's; where it depends on the launch shape, a `*_plan`
 * function picks that shape once and the entry passes it to the helper. Here the only setup is
 * the dynamic shared-memory opt-in of absorb / decompress (ensure_smem_attrs, once per device).
 *
 * Numerics:
 *  - absorb / decompress: every output element is ONE serial __fmaf_rn chain in ascending index
 *    order from 0.0f, computed by one thread, exactly the oracle's sequence (bit-exact). Launch
 *    geometry (split, slab sizes) only decides which thread runs which chain, so the bytes are
 *    split-invariant by construction (see "absorb / decompress" below for the geometry).
 *  - rope: theta = __fmul_rn(f32(pos), inv_freq[j]) with inv_freq computed on the host by the
 *    DESIGN.md section 2 rule (the same three f32 roundings as oracle_rope_inv_freq), accurate
 *    sincosf (never __sinf / __cosf), the rotation in double rounded once.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include <mutex>

#include "kernels/mla.h"
#include "kernels/mla_cuda_check.h"
#include "kernels/mla_cuda_util.cuh"
#include "kernels/mla_validate.h"

/* --------------------------------------------------------------- device helpers ----------- */

#define DENSE_THREADS 256

static inline int64_t ceil_div64(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Grid of a grid-stride element loop: enough blocks to fill the card, capped. */
static inline unsigned elementwise_blocks(int64_t n) {
    int64_t b = ceil_div64(n, DENSE_THREADS);
    if (b > 132 * 32) b = 132 * 32;
    return (unsigned)(b < 1 ? 1 : b);
}

/* The kernels needing more than 48 KiB of dynamic shared memory get the opt-in once per device
 * (set to the kernel's largest possible request, so concurrent callers never race on it). */
static int ensure_smem_attrs(void);

/* ------------------------------------------------------------------------- rope ---------- */

struct rope_freqs {
    float inv[MLA_MAX_ROPE / 2];
};

/* One thread per pair (p, v, j): element 2e of x with e = (p * n_vec + v) * half + j. */
static __global__ void rope_interleaved_f32(float *x, const int32_t *positions, int64_t n_pairs,
                                            int32_t n_vec, int32_t half, rope_freqs f) {
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n_pairs;
         e += (int64_t)gridDim.x * blockDim.x) {
        int32_t j = (int32_t)(e % half);
        int64_t p = e / half / n_vec;
        float theta = __fmul_rn((float)positions[p], f.inv[j]);
        float s, c;
        sincosf(theta, &s, &c);
        float *pair = x + 2 * e;
        double x0 = (double)pair[0], x1 = (double)pair[1];
        pair[0] = (float)(x0 * (double)c - x1 * (double)s);
        pair[1] = (float)(x0 * (double)s + x1 * (double)c);
    }
}

static void rope_interleaved_f32_launch(float *x, const int32_t *positions, int32_t n_pos,
                                        int32_t n_vec, int32_t d_rope, const rope_freqs &f,
                                        cudaStream_t st) {
    int64_t n_pairs = (int64_t)n_pos * n_vec * (d_rope / 2);
    rope_interleaved_f32<<<elementwise_blocks(n_pairs), DENSE_THREADS, 0, st>>>(
        x, positions, n_pairs, n_vec, d_rope / 2, f);
}

extern "C" int memra_mla_rope_interleaved_f32(float *x, int32_t n_pos, int32_t n_vec,
                                              int32_t d_rope, const int32_t *positions, float base,
                                              void *stream) {
    int rc = mla_validate_rope_interleaved(x, n_pos, n_vec, d_rope, positions, base);
    if (rc) return rc;
    if (d_rope == 0) return 0; /* NoPE: documented no-op */
    rope_freqs f;
    for (int32_t j = 0; j < d_rope / 2; j++) {
        /* DESIGN.md section 2, one f32 rounding per line (as oracle_rope_inv_freq). */
        float e = (float)(2 * j) / (float)d_rope;
        float p = (float)pow((double)base, (double)e);
        f.inv[j] = 1.0f / p;
    }
    rope_interleaved_f32_launch(x, positions, n_pos, n_vec, d_rope, f, (cudaStream_t)stream);
    MLA_CUDA_CHECK(cudaGetLastError());
    return 0;
}

/* ----------------------------------------------------------------------- copies ---------- */

static __global__ void split_latent_f32(const float *kv, float *c_kv, float *k_pe, int64_t n,
                                        int32_t kv_rank, int32_t d_rope) {
    int64_t width = (int64_t)kv_rank + d_rope;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n;
         e += (int64_t)gridDim.x * blockDim.x) {
        int64_t row = e / width, c = e - row * width;
        float v = kv[e];
#if defined(MLA_BITE_SPLIT_FTZ)
        /* BITE (test-only, docs/fixtures-that-bite.md): the copy goes through arithmetic built
         * with flush-to-zero (-ftz=true, as --use_fast_math sets): subnormals become a signed
         * zero (glm5_tp8_nonfinite: kv holds 2^-149 and -3 x 2^-149). */
        if (fabsf(v) < 1.17549435e-38f) v = copysignf(0.0f, v);
#endif
        if (c < kv_rank)
            c_kv[row * kv_rank + c] = v;
        else
            k_pe[row * d_rope + (c - kv_rank)] = v;
    }
}

static __global__ void append_latent_f32(float *cache, const float *c_kv, const float *k_pe,
                                         int32_t slot, int64_t n, int32_t kv_rank, int32_t d_rope) {
    int64_t width = (int64_t)kv_rank + d_rope;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n;
         e += (int64_t)gridDim.x * blockDim.x) {
        int64_t row = e / width, c = e - row * width;
        float v = c < kv_rank ? c_kv[row * kv_rank + c] : k_pe[row * d_rope + (c - kv_rank)];
        cache[(int64_t)slot * width + e] = v;
    }
}

static void split_latent_f32_launch(const float *kv, float *c_kv, float *k_pe, int32_t t,
                                    int32_t kv_rank, int32_t d_rope, cudaStream_t st) {
    int64_t n = (int64_t)t * (kv_rank + d_rope);
    split_latent_f32<<<elementwise_blocks(n), DENSE_THREADS, 0, st>>>(kv, c_kv, k_pe, n, kv_rank,
                                                                      d_rope);
}

static void append_latent_f32_launch(float *cache, const float *c_kv, const float *k_pe,
                                     int32_t slot, int32_t t, int32_t kv_rank, int32_t d_rope,
                                     cudaStream_t st) {
    int64_t n = (int64_t)t * (kv_rank + d_rope);
    append_latent_f32<<<elementwise_blocks(n), DENSE_THREADS, 0, st>>>(cache, c_kv, k_pe, slot, n,
                                                                       kv_rank, d_rope);
}

extern "C" int memra_mla_split_latent_f32(const float *kv, float *c_kv, float *k_pe, int32_t t,
                                          int32_t kv_rank, int32_t d_rope, void *stream) {
    int rc = mla_validate_split_latent(kv, c_kv, k_pe, t, kv_rank, d_rope);
    if (rc) return rc;
    split_latent_f32_launch(kv, c_kv, k_pe, t, kv_rank, d_rope, (cudaStream_t)stream);
    MLA_CUDA_CHECK(cudaGetLastError());
    return 0;
}

extern "C" int memra_mla_append_latent_f32(float *cache, const float *c_kv, const float *k_pe,
                                           int32_t slot, int32_t t, int32_t kv_rank, int32_t d_rope,
                                           void *stream) {
    int rc = mla_validate_append_latent(cache, c_kv, k_pe, slot, t, kv_rank, d_rope);
    if (rc) return rc;
    append_latent_f32_launch(cache, c_kv, k_pe, slot, t, kv_rank, d_rope, (cudaStream_t)stream);
    MLA_CUDA_CHECK(cudaGetLastError());
    return 0;
}

/* ------------------------------------------------------------ absorb / decompress -------- */

/* Launch geometry of both (a function of the shape and the split only; the bytes are not):
 * tokens are taken in groups of TT (1, 2, 4 or 8: the smallest power of two >= min(t_q, 8)) that
 * share every weight load; each (token group g, head h) has its out_dim outputs split into
 * `split` balanced ranges [o0, o1) = [s * out_dim / split, (s + 1) * out_dim / split), and each
 * range into blocks of DENSE_COLS consecutive outputs (nb blocks per range, the widest range's
 * count). Block b = ((g * n_head + h) * split + s) * nb + cb. One thread per output column runs
 * that output's whole __fmaf_rn chain, for each token of its group, in ascending reduction order
 * from 0.0f: the oracle's sequence, so every split and group size gives the same bytes.
 *
 * The arms, each with the same bytes (and, but for the decode arms, the same blocks):
 *  - the decode arms (below): decompress_v_flat_f32 (t_q <= 4, kv_rank 512, d_v >= 128), blocks
 *    of 128 flat outputs across heads into a 128-byte aligned ring, and absorb_q_reg_f32 (t_q 1,
 *    d_nope 192), each weight column straight into the registers of its two threads (half the
 *    rows each, one chain); neither launch depends on the split;
 *  - absorb's bulk arm (TT <= 4 with 16-byte alignment: short verify, and decode where the cp arm
 *    does not apply; the default there): one output per thread, the block's weight rows staged by
 *    bulk copies (sm_90) on mbarriers, so no thread spends instructions on copy addresses
 *    (absorb_q_bulk_f32);
 *  - the warp-ring arms (absorb at TT 8 or unaligned; decompress elsewhere): each warp stages its
 *    own columns / rows through its own cp.async ring (warp-synchronous, no block barrier after
 *    the prologue). A bulk arm of decompress (one 256-byte copy per row and chunk, 1,024 a
 *    block) ran at 35.8 us against this arm's 14.4 (H200 2026-12-01, fifth session, call 2:
 *    DRAM 21%, 0.24 instructions a cycle) and was removed.
 */
#define DENSE_COLS 128 /* decompress: outputs (threads) per block, 4 warps of 32 rows */
/* floats per row per decompress chunk: 64 (256 contiguous bytes) for the decode-width groups,
 * 32 for the wider ones (their blocks are compute-bound: a smaller ring keeps 2 blocks per SM;
 * H200 2026-12-01: prefill took 765 us with 32, 1227 us with 64) */
static __host__ __device__ constexpr int dv_ch(int tt) { return tt <= 2 ? 64 : 32; }
static __host__ __device__ constexpr int dv_ld(int tt) { return dv_ch(tt) + 4; } /* 4 mod 32 */
/* chunks per warp ring: deeper for the decode-width groups (tt <= 2: the bytes in flight bound
 * them, ncu 2026-12-01: one block of 4 warps per SM, 56% of DRAM with 4), shallower for the wider
 * groups (their o_lat rows take the shared memory) */
static __host__ __device__ constexpr int dv_ns(int tt) { return tt <= 2 ? 6 : 4; }
static __host__ __device__ constexpr int dv_ring_floats(int tt) {
    return dv_ns(tt) * 32 * dv_ld(tt);
}
#define AB_WARPS 2               /* absorb: warps per block */
#define AB_COLS (AB_WARPS * 128) /* outputs per block: 4 consecutive per lane */
#define AB_CH 16                 /* weight rows per absorb chunk (16 x 512 contiguous bytes) */
/* chunks per warp ring: as decompress (ncu 2026-12-01: two warps per SM at decode, 40% of DRAM
 * with 4 in flight) */
static __host__ __device__ constexpr int ab_ns(int tt) { return tt <= 2 ? 8 : 4; }
static __host__ __device__ constexpr int ab_ring_floats(int tt) { return ab_ns(tt) * AB_CH * 128; }

struct dense_plan {
    int32_t tt;       /* tokens per group */
    int64_t n_groups; /* ceil(t_q / tt) */
    int32_t nb;       /* blocks per output range */
    int64_t blocks;
};

static dense_plan dense_plan_of(int32_t t_q, int32_t n_head, int32_t out_dim, int32_t split,
                                int32_t cols) {
    dense_plan p;
    const int32_t m = t_q < 8 ? t_q : 8;
    p.tt = m <= 1 ? 1 : m <= 2 ? 2 : m <= 4 ? 4 : 8;
    p.n_groups = ((int64_t)t_q + p.tt - 1) / p.tt;
    const int64_t widest = ((int64_t)out_dim + split - 1) / split;
    p.nb = (int32_t)((widest + cols - 1) / cols);
    p.blocks = p.n_groups * n_head * split * p.nb;
    return p;
}

/* The block's (group, head, range) and its first output; false when the block has none. */
struct dense_block {
    int64_t i0; /* first token of the group */
    int32_t nt; /* tokens in the group */
    int32_t h, o1, c0;
};

/* In 32-bit unsigned arithmetic: the block index is below 2^31, and (s + 1) * out_dim <= out_dim^2
 * <= 2^20 (split <= out_dim <= MLA_MAX_HEAD_DIM or MLA_MAX_RANK, 1024). The 64-bit divisions this
 * replaced were each a call of about 60 instructions, eight of them at every block's start, before
 * its first copy (twelfth session, docs/performance.md). */
static __device__ __forceinline__ bool dense_block_of(int32_t t_q, int32_t n_head, int32_t out_dim,
                                                      int32_t split, int32_t nb, int tt,
                                                      int32_t cols, dense_block *q) {
    uint32_t b = blockIdx.x;
    const uint32_t cb = b % (uint32_t)nb;
    b /= (uint32_t)nb;
    const uint32_t s = b % (uint32_t)split;
    b /= (uint32_t)split;
    q->h = (int32_t)(b % (uint32_t)n_head);
    q->i0 = (int64_t)(b / (uint32_t)n_head) * tt;
    const int64_t left = (int64_t)t_q - q->i0;
    q->nt = left < tt ? (int32_t)left : tt;
    const int32_t o0 = (int32_t)(s * (uint32_t)out_dim / (uint32_t)split);
    q->o1 = (int32_t)((s + 1) * (uint32_t)out_dim / (uint32_t)split);
    q->c0 = o0 + (int32_t)cb * cols;
    return q->c0 < q->o1;
}

/* The group's token rows of src[t_q][n_head][dim] at head q.h are staged into dst[dim][TT] of
 * shared memory (dst[d * TT + t] = token i0 + t's element d; zero for t >= nt) by the block's
 * nthreads. Element e of that layout, for e < dim * TT: */
template <int TT>
static __device__ __forceinline__ float
dense_group_elem(const float *src, int32_t dim, int32_t n_head, const dense_block &q, int32_t e) {
    const int32_t d = e / TT, t = e - d * TT;
    return t < q.nt ? __ldg(src + ((q.i0 + t) * n_head + q.h) * (int64_t)dim + d) : 0.0f;
}

/* The layout's first DENSE_GROUP_U elements a thread, loaded into registers before the block's
 * weight copies are issued and stored after (dense_store_group), so that their loads are not
 * queued behind the copies' megabytes. ncu (H200, twelfth session, before this): the store of
 * each loaded value to shared memory held 22% of decompress_v's warp samples and 20% of
 * absorb_q's (long scoreboard), its loads one round trip after another (a loop of 4 dependent
 * iterations at decompress's 128 threads) and behind the copies. */
#define DENSE_GROUP_U 4
struct dense_group_regs {
    float v[DENSE_GROUP_U];
};
template <int TT>
static __device__ __forceinline__ void
dense_fetch_group_at(dense_group_regs &g, const float *src, int32_t dim, int32_t n_head,
                     const dense_block &q, int nthreads, int32_t e0) {
#pragma unroll
    for (int u = 0; u < DENSE_GROUP_U; u++) {
        const int32_t e = e0 + u * nthreads;
        g.v[u] = e < dim * TT ? dense_group_elem<TT>(src, dim, n_head, q, e) : 0.0f;
    }
}
template <int TT>
static __device__ __forceinline__ void dense_fetch_group(dense_group_regs &g, const float *src,
                                                         int32_t dim, int32_t n_head,
                                                         const dense_block &q, int nthreads) {
    dense_fetch_group_at<TT>(g, src, dim, n_head, q, nthreads, (int32_t)threadIdx.x);
}
/* Stores the fetched elements, then loads and stores the rest (DENSE_GROUP_U loads in flight). */
template <int TT>
static __device__ __forceinline__ void
dense_store_group(float *dst, const dense_group_regs &g, const float *src, int32_t dim,
                  int32_t n_head, const dense_block &q, int nthreads) {
    const int32_t n = dim * TT;
    auto put = [&](const dense_group_regs &r, int32_t e0) {
#pragma unroll
        for (int u = 0; u < DENSE_GROUP_U; u++)
            if (e0 + u * nthreads < n) dst[e0 + u * nthreads] = r.v[u];
    };
    put(g, (int32_t)threadIdx.x);
    for (int32_t e0 = (int32_t)threadIdx.x + DENSE_GROUP_U * nthreads; e0 < n;
         e0 += DENSE_GROUP_U * nthreads) {
        dense_group_regs r;
        dense_fetch_group_at<TT>(r, src, dim, n_head, q, nthreads, e0);
        put(r, e0);
    }
}

/* The TT values x[(row) * TT + 0 .. TT) of shared memory (float4 reads where TT allows). */
template <int TT>
static __device__ __forceinline__ void dense_tok_vals(const float *x, int32_t row, float v[TT]) {
    if constexpr (TT % 4 == 0) {
#pragma unroll
        for (int u = 0; u < TT / 4; u++) {
            const float4 f = *reinterpret_cast<const float4 *>(x + (size_t)row * TT + 4 * u);
            v[4 * u] = f.x, v[4 * u + 1] = f.y, v[4 * u + 2] = f.z, v[4 * u + 3] = f.w;
        }
    } else if constexpr (TT == 2) {
        const float2 f = *reinterpret_cast<const float2 *>(x + (size_t)row * 2);
        v[0] = f.x, v[1] = f.y;
    } else {
        v[0] = x[row];
    }
}

/* absorb: q_lat[i][h][c] = chain over d < d_nope of q_nope[i][h][d] * wk_b[h][d][c].
 * Block: AB_WARPS warps, warp w the 128 outputs [c0 + 128 w, c0 + 128 w + 128) of the block's
 * range, lane l four of them (VEC: c0w + 4 l .. + 3, one float4; else c0w + l + 32 x, x < 4).
 * Each warp stages the weight rows d of its 128 columns (512 contiguous bytes a row) through its
 * own ab_ns(TT)-deep cp.async ring of AB_CH rows. VEC: kv_rank % (4 split) == 0 and wk_b 16-byte
 * aligned (every range starts on a float4). Shared memory: qs[d][TT], then the rings. */
template <int TT, bool VEC>
static __global__ void __launch_bounds__(AB_WARPS * 32)
    absorb_q_f32(const float *__restrict__ q_nope, const float *__restrict__ wk_b,
                 float *__restrict__ q_lat, int32_t t_q, int32_t n_head, int32_t d_nope,
                 int32_t kv_rank, int32_t split, int32_t nb) {
    extern __shared__ __align__(16) float smem[];
    dense_block q;
    if (!dense_block_of(t_q, n_head, kv_rank, split, nb, TT, AB_COLS, &q)) return;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    float *qs = smem;
    constexpr int AB_NS = ab_ns(TT);
    float *ring = smem + (size_t)((d_nope * TT + 3) & ~3) + (size_t)warp * ab_ring_floats(TT);
    const int32_t c0w = q.c0 + warp * 128; /* the warp's first output */
    const bool warp_on = c0w < q.o1;
    const int32_t n_ch = (d_nope + AB_CH - 1) / AB_CH;
    const float *wh = wk_b + (int64_t)q.h * d_nope * kv_rank;

    auto issue = [&](int32_t k) {
        if (k < n_ch) {
            float *st = ring + (k % AB_NS) * (AB_CH * 128);
            const int32_t d0 = k * AB_CH;
#pragma unroll 4
            for (int r = 0; r < AB_CH; r++) {
                const bool row_ok = d0 + r < d_nope;
                const float *src = wh + (int64_t)(d0 + r) * kv_rank + c0w;
                if (VEC) {
                    const bool ok = row_ok && c0w + 4 * lane < q.o1;
                    mla_cp_async16(st + r * 128 + 4 * lane, ok ? src + 4 * lane : wk_b, ok);
                } else {
#pragma unroll
                    for (int x = 0; x < 4; x++) {
                        const bool ok = row_ok && c0w + lane + 32 * x < q.o1;
                        mla_cp_async4(st + r * 128 + lane + 32 * x, ok ? src + lane + 32 * x : wk_b,
                                      ok);
                    }
                }
            }
        }
        mla_cp_async_commit(); /* an empty group past the last chunk keeps the count uniform */
    };

    dense_group_regs g;
    dense_fetch_group<TT>(g, q_nope, d_nope, n_head, q, AB_WARPS * 32);
    if (warp_on)
        for (int k = 0; k < AB_NS - 1; k++) issue(k);
    dense_store_group<TT>(qs, g, q_nope, d_nope, n_head, q, AB_WARPS * 32);
    __syncthreads(); /* qs; the only block barrier */
    if (!warp_on) return;

    float acc[TT][4];
#pragma unroll
    for (int t = 0; t < TT; t++) acc[t][0] = acc[t][1] = acc[t][2] = acc[t][3] = 0.0f;
    for (int32_t k = 0; k < n_ch; k++) {
        issue(k + AB_NS - 1); /* into the stage chunk k - 1 used: released by the last syncwarp */
        mla_cp_async_wait<AB_NS - 1>();
        __syncwarp();
        const int32_t d0 = k * AB_CH, dw = min(AB_CH, d_nope - d0);
        const float *st = ring + (k % AB_NS) * (AB_CH * 128);
        for (int r = 0; r < dw; r++) {
            float w[4];
            if (VEC) {
                const float4 f = *reinterpret_cast<const float4 *>(st + r * 128 + 4 * lane);
                w[0] = f.x, w[1] = f.y, w[2] = f.z, w[3] = f.w;
            } else {
#pragma unroll
                for (int x = 0; x < 4; x++) w[x] = st[r * 128 + lane + 32 * x];
            }
            float qv[TT];
            dense_tok_vals<TT>(qs, d0 + r, qv);
#pragma unroll
            for (int t = 0; t < TT; t++)
#pragma unroll
                for (int x = 0; x < 4; x++) acc[t][x] = __fmaf_rn(qv[t], w[x], acc[t][x]);
        }
        __syncwarp(); /* the stage is refilled by issue(k + AB_NS) */
    }
    mla_cp_async_wait<0>();
#pragma unroll
    for (int x = 0; x < 4; x++) {
        const int32_t c = VEC ? c0w + 4 * lane + x : c0w + lane + 32 * x;
        if (c >= q.o1) continue;
#pragma unroll
        for (int t = 0; t < TT; t++)
            if (t < q.nt) q_lat[((q.i0 + t) * n_head + q.h) * (int64_t)kv_rank + c] = acc[t][x];
    }
}

/* absorb, the bulk arm (TT <= 4 with VEC's alignment, but absorb_q_reg_f32's shapes; the
 * launcher's default there): the same
 * blocks, outputs and chains as absorb_q_f32, with one output column per thread (AB_COLS
 * threads, 8 warps) instead of four per lane (2 warps). ncu at glm5 decode (2026-12-01): the
 * 2-warp blocks issued one instruction per 3.7 cycles per warp for 14.4 us, SM busy 11%, DRAM
 * 37%: each warp's own instruction stream (its copies' addresses and its 4-wide FMAs) was the
 * critical path, not the bytes. Here the weight rows come in as bulk copies (one per row of
 * AB_BULK_ROWS-row chunks, up to AB_BULK_NS chunks in flight: 192 KB, the whole block at d_nope
 * 192), each chunk completing on its own mbarrier, and every thread's loop is a shared-memory
 * load and TT fmas a row. Every thread issues its share of the rows (ncu, fifth session: with
 * warp 0 issuing all 192, the other warps waited 7.1 of their 13.8 cycles an instruction at the
 * block barrier; 12.48 us; sixth session, issued by every thread: 11.62 us, bench 13.4 -> 12.6
 * us at decode, 14.7 -> 15.4 us at verify, unexplained; the block now waits on its one batch of
 * copies, docs/performance.md). Shared memory: qs[d][TT], then the ring. */
#define AB_BULK_ROWS 16 /* weight rows per chunk (one mbarrier) */
#define AB_BULK_NS 12   /* chunks in flight (12 x 16 KB) */
static __host__ __device__ constexpr int ab_bulk_ring_floats(void) {
    return AB_BULK_NS * AB_BULK_ROWS * AB_COLS;
}

/* DN > 0: the arm of d_nope DN (glm5's 192, glm5_next's 256), its chunk loop a constant. */
template <int TT, int DN = 0>
static __global__ void __launch_bounds__(AB_COLS)
    absorb_q_bulk_f32(const float *__restrict__ q_nope, const float *__restrict__ wk_b,
                      float *__restrict__ q_lat, int32_t t_q, int32_t n_head, int32_t d_nope_arg,
                      int32_t kv_rank, int32_t split, int32_t nb) {
    /* its own name: every `extern __shared__ smem` is one symbol, of one alignment */
    extern __shared__ __align__(128) float ab_bulk_smem[];
    __shared__ __align__(8) uint64_t bar[AB_BULK_NS];
    const int32_t d_nope = DN ? DN : d_nope_arg;
    constexpr int UNROLL_K = DN ? (DN + AB_BULK_ROWS - 1) / AB_BULK_ROWS : 1;
    dense_block q;
    if (!dense_block_of(t_q, n_head, kv_rank, split, nb, TT, AB_COLS, &q)) return;
    const int tid = threadIdx.x;
    float *qs = ab_bulk_smem;
    float *ring = ab_bulk_smem + (size_t)((d_nope * TT + 3) & ~3);
    const int32_t n_ch = (d_nope + AB_BULK_ROWS - 1) / AB_BULK_ROWS;
    const int32_t w = min(AB_COLS, q.o1 - q.c0); /* the block's columns: a multiple of 4 (VEC) */
    const unsigned row_bytes = (unsigned)w * 4u;
    const float *wh = wk_b + (int64_t)q.h * d_nope * kv_rank + q.c0;

    /* chunks [k0, k1) into their stages, by the whole block: thread 0 announces each chunk's
     * bytes, and row d of the run is issued by thread d % AB_COLS (one row a thread at d_nope
     * 192). A copy may complete before its chunk's announcement: the barrier's one pending
     * arrival (the announcement's) keeps the phase open until both are in. */
    auto issue = [&](int32_t k0, int32_t k1) {
        if (tid == 0)
            for (int32_t k = k0; k < k1; k++)
                mla_mbar_expect(&bar[k % AB_BULK_NS],
                                (unsigned)min(AB_BULK_ROWS, d_nope - k * AB_BULK_ROWS) * row_bytes);
        const int32_t d_end = min(d_nope, k1 * AB_BULK_ROWS);
        for (int32_t d = k0 * AB_BULK_ROWS + tid; d < d_end; d += AB_COLS) {
            const int32_t k = d / AB_BULK_ROWS;
            mla_bulk_copy(ring + ((size_t)(k % AB_BULK_NS) * AB_BULK_ROWS + d % AB_BULK_ROWS) *
                                     AB_COLS,
                          wh + (int64_t)d * kv_rank, row_bytes, &bar[k % AB_BULK_NS]);
        }
    };

    dense_group_regs g;
    dense_fetch_group<TT>(g, q_nope, d_nope, n_head, q, AB_COLS);
    if (tid == 0) {
        for (int i = 0; i < AB_BULK_NS; i++) mla_mbar_init(&bar[i], 1);
        mla_mbar_fence_init();
    }
    __syncthreads(); /* the barriers */
    issue(0, min(n_ch, AB_BULK_NS));
    dense_store_group<TT>(qs, g, q_nope, d_nope, n_head, q, AB_COLS);
    __syncthreads(); /* qs */

    float acc[TT];
#pragma unroll
    for (int t = 0; t < TT; t++) acc[t] = 0.0f;
#pragma unroll UNROLL_K
    for (int32_t k = 0; k < n_ch; k++) {
        mla_mbar_wait(&bar[k % AB_BULK_NS], (unsigned)(k / AB_BULK_NS) & 1u);
        const float *st = ring + (size_t)(k % AB_BULK_NS) * AB_BULK_ROWS * AB_COLS + tid;
        const int32_t d0 = k * AB_BULK_ROWS, dw = min(AB_BULK_ROWS, d_nope - d0);
        if (tid < w) {
            if (dw == AB_BULK_ROWS) {
#pragma unroll
                for (int r = 0; r < AB_BULK_ROWS; r += 4) {
                    /* the 4 rows' TT values: 4 TT contiguous floats, 16-byte aligned */
                    float qv[4 * TT];
#pragma unroll
                    for (int u = 0; u < TT; u++) {
                        const float4 f =
                            *reinterpret_cast<const float4 *>(qs + (size_t)(d0 + r) * TT + 4 * u);
                        qv[4 * u] = f.x, qv[4 * u + 1] = f.y, qv[4 * u + 2] = f.z,
                               qv[4 * u + 3] = f.w;
                    }
#pragma unroll
                    for (int x = 0; x < 4; x++) {
                        const float wv = st[(r + x) * AB_COLS];
#pragma unroll
                        for (int t = 0; t < TT; t++) acc[t] = __fmaf_rn(qv[x * TT + t], wv, acc[t]);
                    }
                }
            } else {
                for (int r = 0; r < dw; r++) {
                    float qv[TT];
                    dense_tok_vals<TT>(qs, d0 + r, qv);
                    const float wv = st[r * AB_COLS];
#pragma unroll
                    for (int t = 0; t < TT; t++) acc[t] = __fmaf_rn(qv[t], wv, acc[t]);
                }
            }
        }
        if (k + AB_BULK_NS < n_ch) {
            __syncthreads(); /* every thread is done with the stage */
            issue(k + AB_BULK_NS, k + AB_BULK_NS + 1);
        }
    }
    if (tid < w)
#pragma unroll
        for (int t = 0; t < TT; t++)
            if (t < q.nt)
                q_lat[((q.i0 + t) * n_head + q.h) * (int64_t)kv_rank + q.c0 + tid] = acc[t];
}

/* decompress: out[i][h][v] = chain over r < kv_rank of wv_b[h][v][r] * o_lat[i][h][r].
 * Shared memory: os[r][TT] (the group's o_lat rows), then per warp a ring of DV_NS chunks
 * [32 rows][dv_ld(TT)] (row chunk r0 .. r0 + dv_ch(TT) of the warp's 32 outputs). VEC: 16-byte
 * copies (kv_rank % 4 == 0 and wv_b 16-byte aligned), else 4-byte copies. (The twelfth session's
 * constant-rank arm of this kernel, kv_rank 512 at TT 2, gave way to decompress_v_flat_f32 in the
 * fourteenth: every shape it took is one group with d_v >= 128.) */
template <int TT, bool VEC>
static __global__ void __launch_bounds__(DENSE_COLS, 2)
    decompress_v_f32(const float *__restrict__ o_lat, const float *__restrict__ wv_b,
                     float *__restrict__ out, int32_t t_q, int32_t n_head, int32_t d_v,
                     int32_t kv_rank_arg, int32_t split, int32_t nb) {
    extern __shared__ __align__(16) float smem[];
    const int32_t kv_rank = kv_rank_arg;
    dense_block q;
    if (!dense_block_of(t_q, n_head, d_v, split, nb, TT, DENSE_COLS, &q)) return;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    float *os = smem;
    constexpr int DV_NS = dv_ns(TT), DV_CH = dv_ch(TT), DV_LD = dv_ld(TT);
    float *ring = smem + (size_t)((kv_rank + 3) & ~3) * TT + (size_t)warp * dv_ring_floats(TT);
    const int32_t v0 = q.c0 + warp * 32; /* the warp's first output */
    const bool warp_on = v0 < q.o1;
    const int32_t n_ch = (kv_rank + DV_CH - 1) / DV_CH;
    const float *wh = wv_b + (int64_t)q.h * d_v * kv_rank;

    auto issue = [&](int32_t k) {
        if (k < n_ch) {
            float *st = ring + (k % DV_NS) * (32 * DV_LD);
            const int32_t r0 = k * DV_CH, rw = min(DV_CH, kv_rank - r0);
            if (VEC) { /* rw is a multiple of 4 */
#pragma unroll
                for (int u = 0; u < 32 * DV_CH / 4 / 32; u++) {
                    const int e = u * 32 + lane, row = e / (DV_CH / 4), c4 = e % (DV_CH / 4);
                    const bool ok = v0 + row < q.o1 && 4 * c4 < rw;
                    mla_cp_async16(st + row * DV_LD + 4 * c4,
                                   ok ? wh + (int64_t)(v0 + row) * kv_rank + r0 + 4 * c4 : wv_b,
                                   ok);
                }
            } else {
#pragma unroll 4
                for (int e = lane; e < 32 * DV_CH; e += 32) {
                    const int row = e / DV_CH, c = e % DV_CH;
                    const bool ok = v0 + row < q.o1 && c < rw;
                    mla_cp_async4(st + row * DV_LD + c,
                                  ok ? wh + (int64_t)(v0 + row) * kv_rank + r0 + c : wv_b, ok);
                }
            }
        }
        mla_cp_async_commit(); /* an empty group past the last chunk keeps the count uniform */
    };

    dense_group_regs g;
    dense_fetch_group<TT>(g, o_lat, kv_rank, n_head, q, DENSE_COLS);
    if (warp_on)
        for (int k = 0; k < DV_NS - 1; k++) issue(k);
    dense_store_group<TT>(os, g, o_lat, kv_rank, n_head, q, DENSE_COLS);
    __syncthreads(); /* os; the only block barrier */
    if (!warp_on) return;

    const bool on = v0 + lane < q.o1;
    float acc[TT];
#pragma unroll
    for (int t = 0; t < TT; t++) acc[t] = 0.0f;
#pragma unroll 1
    for (int32_t k = 0; k < n_ch; k++) {
        issue(k + DV_NS - 1); /* into the stage chunk k - 1 used: released by the last syncwarp */
        mla_cp_async_wait<DV_NS - 1>(); /* this lane's copies of chunk k have landed */
        __syncwarp();                   /* ... and every lane's are visible */
        const int32_t r0 = k * DV_CH, rw = min(DV_CH, kv_rank - r0);
        const float *row = ring + (k % DV_NS) * (32 * DV_LD) + lane * DV_LD;
        if (on) {
            int32_t c = 0;
            if (VEC) {
#pragma unroll 1
                for (; c + 4 <= rw; c += 4) {
                    const float4 w4 = *reinterpret_cast<const float4 *>(row + c);
                    const float w[4] = {w4.x, w4.y, w4.z, w4.w};
                    if constexpr (TT == 1) { /* the 4 rows' values: one 16-byte load */
                        const float4 o4 = *reinterpret_cast<const float4 *>(os + r0 + c);
                        const float ov[4] = {o4.x, o4.y, o4.z, o4.w};
#pragma unroll
                        for (int x = 0; x < 4; x++) acc[0] = __fmaf_rn(w[x], ov[x], acc[0]);
                    } else {
#pragma unroll
                        for (int x = 0; x < 4; x++) {
                            float ov[TT];
                            dense_tok_vals<TT>(os, r0 + c + x, ov);
#pragma unroll
                            for (int t = 0; t < TT; t++) acc[t] = __fmaf_rn(w[x], ov[t], acc[t]);
                        }
                    }
                }
            }
            for (; c < rw; c++) {
                float ov[TT];
                dense_tok_vals<TT>(os, r0 + c, ov);
#pragma unroll
                for (int t = 0; t < TT; t++) acc[t] = __fmaf_rn(row[c], ov[t], acc[t]);
            }
        }
        __syncwarp(); /* the stage is refilled by issue(k + DV_NS) */
    }
    mla_cp_async_wait<0>(); /* only empty groups remain */
    if (on)
#pragma unroll
        for (int t = 0; t < TT; t++)
            if (t < q.nt) out[((q.i0 + t) * n_head + q.h) * (int64_t)d_v + v0 + lane] = acc[t];
}

/* decompress at decode and short verify, the flat arm (t_q <= TT <= 4: one token group, VEC,
 * kv_rank KR, d_v >= DENSE_COLS; the launcher's default there). The outputs are taken flat,
 * f = h * d_v + v (token t's out[t * n_head * d_v + f], weight row wv_b[f][.]), block b the
 * DENSE_COLS rows [128 b, 128 b + 128) whatever their heads: so a block spans at most two heads
 * (d_v >= 128) and stages both heads' o_lat rows of the group, os[hh * OS + r * TT + t] (zero for
 * t >= t_q), each lane reading its own head's. Warp w: rows 128 b + 32 w + lane, through its own
 * DV_NS-deep ring of dv_ch(1)-float chunks, as decompress_v_f32 (the same chains, so the same
 * bytes), with every loop bound a constant and no per-block decode. H200 (thirteenth session,
 * probe_dense_flat, glm5 decode): this form ran 12.16 us against decompress_v_f32<1, true, 512>'s
 * 12.96, bytes identical; the SM count does not matter (132 flat blocks also 12.16 us, a read in
 * 128 or 132 SMs' blocks 11.01 / 11.07 us). The split does not change this arm's launch: its bytes
 * are split-invariant by construction, and its grid is already the decode width.
 *
 * At TT 2 and 4 (t_q 2 to 4) the ring is decode's, 6 chunks of 64 floats (196 KB a block), not
 * decompress_v_f32's 4 of 32 at TT 4: these shapes are one group of 128 blocks, one block an SM,
 * so the bytes in flight bound them as they bound decode, and the 2-blocks-an-SM ring of the
 * wide groups (prefill) buys nothing (fourteenth session, docs/performance.md).
 *
 * The ring's rows are 128-byte aligned, as their global sources are: a row's 16-byte pieces are
 * stored at float4 (c4 ^ (row & 15)) of an unpadded row, so each lane's reads of its own row stay
 * conflict-free without decompress_v_f32's 4-float pad (which put the rows at 16-byte offsets).
 * The same session measured what the offset costs a cp.async ring: absorb's copies into a ring at
 * a 16-byte offset from 128 ran 11.55 us, at 0 mod 128 10.46 (probe_dense_flat, bytes identical).
 */
template <int KR, int TT> static __host__ __device__ constexpr int dvf_os(void) {
    return KR * TT + 4;
}
/* the ring's offset: both staged heads' rows, rounded up to 32 floats (128 bytes) */
template <int KR, int TT> static __host__ __device__ constexpr int dvf_ring0(void) {
    return (2 * dvf_os<KR, TT>() + 31) & ~31;
}
static __host__ __device__ constexpr int dvf_ring_floats(void) { return dv_ns(1) * 32 * dv_ch(1); }
template <int KR, int TT>
static __global__ void __launch_bounds__(DENSE_COLS)
    decompress_v_flat_f32(const float *__restrict__ o_lat, const float *__restrict__ wv_b,
                          float *__restrict__ out, int32_t t_q, int32_t n_head, int32_t d_v) {
    static_assert(KR % dv_ch(1) == 0 && (KR * TT) % DENSE_COLS == 0,
                  "whole chunks and staging loads");
    static_assert(TT == 1 || TT == 2 || TT == 4, "one token group of at most 4");
    constexpr int NS = dv_ns(1), CH = dv_ch(1), OS = dvf_os<KR, TT>();
    static_assert(CH == 64, "the swizzle: 16 float4 a row");
    constexpr int OU = KR * TT / DENSE_COLS; /* o_lat loads a thread, per head */
    extern __shared__ __align__(16) float smem[];
    const int32_t n_out = n_head * d_v;
    const int32_t f0 = (int32_t)blockIdx.x * DENSE_COLS;
    const int32_t f1 = min(f0 + DENSE_COLS, n_out);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int32_t ha = f0 / d_v, hb = (f1 - 1) / d_v; /* hb <= ha + 1 */
    float og[2][OU]; /* the staged rows' loads first, before the copies (dense_fetch_group) */
#pragma unroll
    for (int u = 0; u < OU; u++) {
        /* layout element e = r * TT + t: token t's o_lat[t][h][r] */
        const int e = tid + u * DENSE_COLS, r = e / TT, t = e % TT;
        const bool tok = TT == 1 || t < t_q;
        const int64_t ta = ((int64_t)t * n_head + ha) * KR + r, tb = ta + (int64_t)(hb - ha) * KR;
        og[0][u] = tok ? __ldg(o_lat + ta) : 0.0f;
        og[1][u] = tok && hb > ha ? __ldg(o_lat + tb) : 0.0f;
    }
    float *os = smem;
    float *ring = smem + dvf_ring0<KR, TT>() + (size_t)warp * dvf_ring_floats();
    const int32_t v0 = f0 + warp * 32; /* the warp's first row */
    const float *wr = wv_b + (int64_t)v0 * KR;
    auto issue = [&](int k) {
        if (k < KR / CH) {
            float *st = ring + (k % NS) * (32 * CH);
#pragma unroll
            for (int u = 0; u < 32 * CH / 4 / 32; u++) {
                const int e = u * 32 + lane, row = e / (CH / 4), c4 = e % (CH / 4);
                if (v0 + row < f1)
                    mla_cp_async16(st + row * CH + 4 * (c4 ^ (row & 15)),
                                   wr + (int64_t)row * KR + k * CH + 4 * c4, true);
            }
        }
        mla_cp_async_commit(); /* an empty group past the last chunk keeps the count uniform */
    };
    const bool warp_on = v0 < f1;
    if (warp_on)
        for (int k = 0; k < NS - 1; k++) issue(k);
#pragma unroll
    for (int u = 0; u < OU; u++) {
        os[tid + u * DENSE_COLS] = og[0][u];
        os[OS + tid + u * DENSE_COLS] = og[1][u];
    }
    __syncthreads(); /* os; the only block barrier */
    if (!warp_on) return;
    const int32_t f = v0 + lane;
    const bool on = f < f1;
    /* a lane past the range computes on rows never copied, and stores nothing */
    const float *op = os + (on && f / d_v > ha ? OS : 0);
    float acc[TT];
#pragma unroll
    for (int t = 0; t < TT; t++) acc[t] = 0.0f;
#pragma unroll
    for (int k = 0; k < KR / CH; k++) {
        issue(k + NS - 1); /* into the stage chunk k - 1 used: released by the last syncwarp */
        mla_cp_async_wait<NS - 1>(); /* this lane's copies of chunk k have landed */
        __syncwarp();                /* ... and every lane's are visible */
        const float *row = ring + (k % NS) * (32 * CH) + lane * CH;
#pragma unroll
        for (int c = 0; c < CH; c += 4) {
            const float4 w4 = *reinterpret_cast<const float4 *>(row + 4 * ((c / 4) ^ (lane & 15)));
            if constexpr (TT == 1) { /* the 4 rows' values: one 16-byte load */
                const float4 o4 = *reinterpret_cast<const float4 *>(op + k * CH + c);
                acc[0] = __fmaf_rn(w4.x, o4.x, acc[0]);
                acc[0] = __fmaf_rn(w4.y, o4.y, acc[0]);
                acc[0] = __fmaf_rn(w4.z, o4.z, acc[0]);
                acc[0] = __fmaf_rn(w4.w, o4.w, acc[0]);
            } else {
                const float w[4] = {w4.x, w4.y, w4.z, w4.w};
#pragma unroll
                for (int x = 0; x < 4; x++) {
                    float ov[TT];
                    dense_tok_vals<TT>(op, k * CH + c + x, ov);
#pragma unroll
                    for (int t = 0; t < TT; t++) acc[t] = __fmaf_rn(w[x], ov[t], acc[t]);
                }
            }
        }
        __syncwarp(); /* the stage is refilled by issue(k + NS) */
    }
    mla_cp_async_wait<0>(); /* only empty groups remain */
    if (on)
#pragma unroll
        for (int t = 0; t < TT; t++)
            if (TT == 1 || t < t_q) out[(int64_t)t * n_out + f] = acc[t];
}
template <int KR, int TT> static size_t decompress_flat_smem(void) {
    return ((size_t)dvf_ring0<KR, TT>() + (size_t)(DENSE_COLS / 32) * dvf_ring_floats()) *
           sizeof(float);
}

/* absorb at decode, the register arm (t_q 1, d_nope DN = 192: glm5; the launcher's default
 * there, any kv_rank and alignment). Block (h, y) = head h, the AB_REG_NC columns from
 * c0 = y * AB_REG_NC (heads on x: up to 2^31 - 1 of them), AB_REG_NS threads a column: thread
 * tid = p * AB_REG_NC + l is part p of column c0 + l, and loads that column's weight rows
 * [p DN / NS, (p + 1) DN / NS) straight into registers, all at once (a warp's loads are 128
 * contiguous bytes a row). Part 0 runs the column's chain over its rows from 0.0f and leaves the
 * value in shared memory; after a barrier part 1 continues it over the next rows, and so on: one
 * serial chain in ascending d over the q_nope row staged in static shared memory, the same chain
 * as absorb_q_bulk_f32's (so the same bytes), with no ring, no copies, no large carveout, no
 * per-chunk waits and no block-index division. Each thread's q_nope element is loaded before its
 * weights and stored after them (in this form its order measured the same: 9.70 us either way;
 * in the one-thread form ptxas hoisted the store and barrier above the loads, 2.8 us slower). The
 * loads are volatile asm so that ptxas issues them all before the chain (with plain loads it
 * interleaved them with the fmas).
 * H200 (probe_absorb_tail, glm5 decode, bytes identical; twenty-second session, two runs):
 * 128 columns x 2 parts 9.76 / 9.70 us against 9.89 / 10.02 for the fourteenth session's one
 * thread a column in blocks of 256, whose chain costs only 0.13 us (the same loads summed in four
 * independent chains, other bytes: 9.76 / 9.89); a read of the same bytes 9.18 / 9.25; the tier
 * 10.14 -> 9.89 us. Earlier (fourteenth session, probe_dense_flat): one thread a column 9.89 /
 * 10.02 us in blocks of 256, 10.14 / 10.21 in blocks of 128, against 10.53 / 10.66 for the
 * thirteenth session's all-at-once cp.async arm (absorb_q_cp_f32, which that replaced: a 192 KB
 * ring, 12 block-wide chunk waits), whose own read needs the largest carveout (a plain read of
 * wk_b 9.22 us, the same read with a 192 KB-an-SM shared-memory request 9.73). At d_nope 256
 * (glm5_next) the bulk arm stays. The split does not change this arm's launch. */
#define AB_REG_NC 128 /* columns a block */
#define AB_REG_NS 2   /* parts (threads) a column */
#define AB_REG_DN 192 /* d_nope: glm5 */
static __device__ __forceinline__ float ab_ld_pinned(const float *p) {
    float v;
    asm volatile("ld.global.nc.f32 %0, [%1];" : "=f"(v) : "l"(p));
    return v;
}
static __global__ void __launch_bounds__(AB_REG_NC *AB_REG_NS)
    absorb_q_reg_f32(const float *__restrict__ q_nope, const float *__restrict__ wk_b,
                     float *__restrict__ q_lat, int32_t kv_rank) {
    constexpr int DN = AB_REG_DN, NC = AB_REG_NC, NS = AB_REG_NS, NT = NC * NS, DP = DN / NS;
    constexpr int QV = (DN + NT - 1) / NT; /* q_nope elements a thread */
    static_assert(DN % NS == 0 && NC % 32 == 0, "whole parts; whole warps a part");
    __shared__ float qs[DN];
    __shared__ float carry[NS > 1 ? NC : 1]; /* the chain's value between parts */
    const int tid = threadIdx.x, part = tid / NC, l = tid - part * NC;
    const int32_t h = (int32_t)blockIdx.x, c = (int32_t)blockIdx.y * NC + l;
    const bool on = c < kv_rank;
    float qv[QV];
#pragma unroll
    for (int u = 0; u < QV; u++)
        qv[u] = tid + u * NT < DN ? ab_ld_pinned(q_nope + (int64_t)h * DN + tid + u * NT) : 0.0f;
    /* a column past kv_rank loads column 0's weights (in range) and stores nothing */
    const float *wc = wk_b + ((int64_t)h * DN + (int64_t)part * DP) * kv_rank + (on ? c : 0);
    float w[DP];
#pragma unroll
    for (int d = 0; d < DP; d++) w[d] = ab_ld_pinned(wc + (int64_t)d * kv_rank);
#pragma unroll
    for (int u = 0; u < QV; u++)
        if (tid + u * NT < DN) qs[tid + u * NT] = qv[u];
    __syncthreads(); /* qs */
    float acc = 0.0f;
#pragma unroll
    for (int p = 0; p < NS; p++) {
        if (part == p) {
            if (p) acc = carry[l];
#pragma unroll
            for (int d = 0; d < DP; d++) acc = __fmaf_rn(qs[p * DP + d], w[d], acc);
            if (p + 1 < NS) carry[l] = acc;
        }
        if (p + 1 < NS) __syncthreads(); /* carry */
    }
    if (part == NS - 1 && on) q_lat[(int64_t)h * kv_rank + c] = acc;
}

static size_t absorb_smem(int32_t d_nope, int tt) {
    return ((size_t)((d_nope * tt + 3) & ~3) + (size_t)AB_WARPS * ab_ring_floats(tt)) *
           sizeof(float);
}

static size_t absorb_bulk_smem(int32_t d_nope, int tt) {
    return ((size_t)((d_nope * tt + 3) & ~3) + (size_t)ab_bulk_ring_floats()) * sizeof(float);
}

template <int TT>
static void absorb_q_f32_arm(const dense_plan &p, const float *q_nope, const float *wk_b,
                             float *q_lat, int32_t t_q, int32_t n_head, int32_t d_nope,
                             int32_t kv_rank, int32_t split, cudaStream_t st) {
    const bool vec = kv_rank % (4 * split) == 0 && ((uintptr_t)wk_b & 15) == 0;
    if constexpr (TT == 1) {
        if (d_nope == AB_REG_DN) {
            const dim3 grid((unsigned)n_head, (unsigned)((kv_rank + AB_REG_NC - 1) / AB_REG_NC));
            absorb_q_reg_f32<<<grid, AB_REG_NC * AB_REG_NS, 0, st>>>(q_nope, wk_b, q_lat, kv_rank);
            return;
        }
    }
    if constexpr (TT <= 4) {
        if (vec) { /* the bulk arm: rows as 16-byte multiples from 16-byte aligned addresses */
            auto bulk = d_nope == 256 ? absorb_q_bulk_f32<TT, 256> : absorb_q_bulk_f32<TT>;
            if constexpr (TT != 1) /* TT 1 at d_nope 192 took absorb_q_reg_f32 above */
                if (d_nope == 192) bulk = absorb_q_bulk_f32<TT, 192>;
            bulk<<<(unsigned)p.blocks, AB_COLS, absorb_bulk_smem(d_nope, TT), st>>>(
                q_nope, wk_b, q_lat, t_q, n_head, d_nope, kv_rank, split, p.nb);
            return;
        }
    }
    /* VEC with TT <= 4 took the bulk arm: no such instantiation */
    auto kern = vec ? absorb_q_f32<TT, (TT > 4)> : absorb_q_f32<TT, false>;
    kern<<<(unsigned)p.blocks, AB_WARPS * 32, absorb_smem(d_nope, TT), st>>>(
        q_nope, wk_b, q_lat, t_q, n_head, d_nope, kv_rank, split, p.nb);
}

/* The split actually used: the caller's, but never ranges narrower than a block's width (a
 * range below it leaves lanes idle in every block: the seed's policy asks for 32 outputs per
 * range, the kernels' blocks are 128 / 256 wide). The bytes are the same for every split. */
static int32_t dense_split_eff(int32_t split, int32_t out_dim, int32_t cols) {
    const int32_t most = out_dim / cols > 1 ? out_dim / cols : 1;
    return split < most ? split : most;
}

static void absorb_q_f32_launch(const float *q_nope, const float *wk_b, float *q_lat, int32_t t_q,
                                int32_t n_head, int32_t d_nope, int32_t kv_rank, int32_t split,
                                cudaStream_t st) {
    split = dense_split_eff(split, kv_rank, AB_COLS);
    const dense_plan p = dense_plan_of(t_q, n_head, kv_rank, split, AB_COLS);
    auto arm = p.tt == 1   ? absorb_q_f32_arm<1>
               : p.tt == 2 ? absorb_q_f32_arm<2>
               : p.tt == 4 ? absorb_q_f32_arm<4>
                           : absorb_q_f32_arm<8>;
    arm(p, q_nope, wk_b, q_lat, t_q, n_head, d_nope, kv_rank, split, st);
}

static size_t decompress_smem(int32_t kv_rank, int tt) {
    return ((size_t)((kv_rank + 3) & ~3) * tt + (size_t)(DENSE_COLS / 32) * dv_ring_floats(tt)) *
           sizeof(float);
}

template <int TT>
static void decompress_v_f32_arm(const dense_plan &p, const float *o_lat, const float *wv_b,
                                 float *out, int32_t t_q, int32_t n_head, int32_t d_v,
                                 int32_t kv_rank, int32_t split, cudaStream_t st) {
    const bool vec = (kv_rank & 3) == 0 && ((uintptr_t)wv_b & 15) == 0;
    if constexpr (TT <= 4) {
        /* decode and short verify (one group: t_q <= TT): the flat arm */
        if (p.n_groups == 1 && vec && kv_rank == 512 && d_v >= DENSE_COLS) {
            const unsigned blocks = (unsigned)ceil_div64((int64_t)n_head * d_v, DENSE_COLS);
            const size_t smem = decompress_flat_smem<512, TT>();
            decompress_v_flat_f32<512, TT>
                <<<blocks, DENSE_COLS, smem, st>>>(o_lat, wv_b, out, t_q, n_head, d_v);
#if defined(MLA_SLOW_DECOMPRESS_V)
            /* test-only slowed variant (below) */
            decompress_v_flat_f32<512, TT>
                <<<blocks, DENSE_COLS, smem, st>>>(o_lat, wv_b, out, t_q, n_head, d_v);
#endif
            return;
        }
    }
    /* the other shapes: prefill's wide groups (TT 8), d_v < 128, other ranks, unaligned */
    auto kern = !vec ? decompress_v_f32<TT, false> : decompress_v_f32<TT, true>;
    const size_t smem = decompress_smem(kv_rank, TT);
    kern<<<(unsigned)p.blocks, DENSE_COLS, smem, st>>>(o_lat, wv_b, out, t_q, n_head, d_v, kv_rank,
                                                       split, p.nb);
#if defined(MLA_SLOW_DECOMPRESS_V)
    /* test-only slowed variant (kernels/BUILD MLA_SLOWS, docs/perf-gate.md): the same launch
     * again, so the bytes are unchanged and the time about doubles; the perf gate must name it */
    kern<<<(unsigned)p.blocks, DENSE_COLS, smem, st>>>(o_lat, wv_b, out, t_q, n_head, d_v, kv_rank,
                                                       split, p.nb);
#endif
}

static void decompress_v_f32_launch(const float *o_lat, const float *wv_b, float *out, int32_t t_q,
                                    int32_t n_head, int32_t d_v, int32_t kv_rank, int32_t split,
                                    cudaStream_t st) {
    split = dense_split_eff(split, d_v, DENSE_COLS);
    const dense_plan p = dense_plan_of(t_q, n_head, d_v, split, DENSE_COLS);
    auto arm = p.tt == 1   ? decompress_v_f32_arm<1>
               : p.tt == 2 ? decompress_v_f32_arm<2>
               : p.tt == 4 ? decompress_v_f32_arm<4>
                           : decompress_v_f32_arm<8>;
    arm(p, o_lat, wv_b, out, t_q, n_head, d_v, kv_rank, split, st);
}

extern "C" int memra_mla_absorb_q_f32(const float *q_nope, const float *wk_b, float *q_lat,
                                      int32_t t_q, int32_t n_head, int32_t d_nope, int32_t kv_rank,
                                      void *stream) {
    int rc = mla_validate_absorb_q(q_nope, wk_b, q_lat, t_q, n_head, d_nope, kv_rank, 1);
    if (rc) return rc;
    rc = ensure_smem_attrs();
    if (rc) return rc;
    absorb_q_f32_launch(q_nope, wk_b, q_lat, t_q, n_head, d_nope, kv_rank, 1, (cudaStream_t)stream);
    MLA_CUDA_CHECK(cudaGetLastError());
    return 0;
}

extern "C" int memra_mla_absorb_q_split_f32(const float *q_nope, const float *wk_b, float *q_lat,
                                            int32_t t_q, int32_t n_head, int32_t d_nope,
                                            int32_t kv_rank, int32_t split, void *stream) {
    int rc = mla_validate_absorb_q(q_nope, wk_b, q_lat, t_q, n_head, d_nope, kv_rank, split);
    if (rc) return rc;
    rc = ensure_smem_attrs();
    if (rc) return rc;
    absorb_q_f32_launch(q_nope, wk_b, q_lat, t_q, n_head, d_nope, kv_rank, split,
                        (cudaStream_t)stream);
    MLA_CUDA_CHECK(cudaGetLastError());
    return 0;
}

extern "C" int memra_mla_decompress_v_f32(const float *o_lat, const float *wv_b, float *out,
                                          int32_t t_q, int32_t n_head, int32_t d_v, int32_t kv_rank,
                                          void *stream) {
    int rc = mla_validate_decompress_v(o_lat, wv_b, out, t_q, n_head, d_v, kv_rank, 1);
    if (rc) return rc;
    rc = ensure_smem_attrs();
    if (rc) return rc;
    decompress_v_f32_launch(o_lat, wv_b, out, t_q, n_head, d_v, kv_rank, 1, (cudaStream_t)stream);
    MLA_CUDA_CHECK(cudaGetLastError());
    return 0;
}

extern "C" int memra_mla_decompress_v_split_f32(const float *o_lat, const float *wv_b, float *out,
                                                int32_t t_q, int32_t n_head, int32_t d_v,
                                                int32_t kv_rank, int32_t split, void *stream) {
    int rc = mla_validate_decompress_v(o_lat, wv_b, out, t_q, n_head, d_v, kv_rank, split);
    if (rc) return rc;
    rc = ensure_smem_attrs();
    if (rc) return rc;
    decompress_v_f32_launch(o_lat, wv_b, out, t_q, n_head, d_v, kv_rank, split,
                            (cudaStream_t)stream);
    MLA_CUDA_CHECK(cudaGetLastError());
    return 0;
}

/* ------------------------------------------------------------ shared-memory opt-in -------- */

template <int TT> static cudaError_t dense_set_attrs(void) {
    const int dv = (int)decompress_smem(MLA_MAX_RANK, TT);
    cudaError_t e = cudaFuncSetAttribute(decompress_v_f32<TT, true>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, dv);
    if (e != cudaSuccess) return e;
    e = cudaFuncSetAttribute(decompress_v_f32<TT, false>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, dv);
    if (e != cudaSuccess) return e;
    if constexpr (TT == 1) {
    }
    if constexpr (TT <= 4) {
        e = cudaFuncSetAttribute(decompress_v_flat_f32<512, TT>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)decompress_flat_smem<512, TT>());
        if (e != cudaSuccess) return e;
    }
    const int ab = (int)absorb_smem(MLA_MAX_HEAD_DIM, TT);
    e = cudaFuncSetAttribute(absorb_q_f32<TT, (TT > 4)>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, ab);
    if (e != cudaSuccess) return e;
    if constexpr (TT <= 4) {
        e = cudaFuncSetAttribute(absorb_q_bulk_f32<TT>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)absorb_bulk_smem(MLA_MAX_HEAD_DIM, TT));
        if (e != cudaSuccess) return e;
        if constexpr (TT != 1) {
            e = cudaFuncSetAttribute(absorb_q_bulk_f32<TT, 192>,
                                     cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     (int)absorb_bulk_smem(192, TT));
            if (e != cudaSuccess) return e;
        }
        e = cudaFuncSetAttribute(absorb_q_bulk_f32<TT, 256>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)absorb_bulk_smem(256, TT));
        if (e != cudaSuccess) return e;
    }
    return cudaFuncSetAttribute(absorb_q_f32<TT, false>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize, ab);
}

static int ensure_smem_attrs(void) {
    static mla_device_once once;
    return mla_device_once_run(once, [] {
        MLA_CUDA_CHECK(dense_set_attrs<1>());
        MLA_CUDA_CHECK(dense_set_attrs<2>());
        MLA_CUDA_CHECK(dense_set_attrs<4>());
        MLA_CUDA_CHECK(dense_set_attrs<8>());
        return 0;
    });
}
