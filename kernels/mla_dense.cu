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
 *    split-invariant by construction. The weights are staged through shared-memory slabs with
 *    cp.async so the global reads coalesce and many bytes are in flight.
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
/* Weight slab of absorb / decompress, floats per buffer: 8192 payload + 256 of padding room so
 * a 32 x 256 decompress slab keeps its odd (bank-conflict-free) row stride 257. */
#define DENSE_SLAB 8448
#define DENSE_SLAB_PAYLOAD 8192

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

/* Block b = (i * n_head + h) * split + s owns outputs [o0, o1) of (token i, head h), the
 * balanced partition o0 = s * out_dim / split. It walks a sequence of weight slabs (column
 * tiles of <= 256 outputs, each cut into chunks along the reduction axis) staged with cp.async:
 * double-buffered when there is more than one slab (nbuf == 2), else a single buffer. One
 * thread per output column of the tile runs that output's whole fmaf chain, chunk after chunk,
 * in ascending reduction order; the chunking only changes when the operands arrive. */

/* absorb: slab = wk_b[h][d0 .. d0+dw)[c0 .. c0+cw), row-major with row length cw. */
static __global__ void __launch_bounds__(DENSE_THREADS)
    absorb_q_f32(const float *__restrict__ q_nope, const float *__restrict__ wk_b,
                 float *__restrict__ q_lat, int32_t n_head, int32_t d_nope, int32_t kv_rank,
                 int32_t split, int32_t slab_floats, int32_t nbuf) {
    extern __shared__ __align__(16) float smem[];
    const int tid = threadIdx.x;
    const int64_t ih = (int64_t)blockIdx.x / split;
    const int32_t s = (int32_t)((int64_t)blockIdx.x - ih * split);
    const int32_t h = (int32_t)(ih % n_head);
    const int32_t o0 = (int32_t)((int64_t)s * kv_rank / split);
    const int32_t o1 = (int32_t)((int64_t)(s + 1) * kv_rank / split);
    const int32_t range = o1 - o0;
    if (range <= 0) return;
    float *qs = smem;
    float *slabs = smem + ((d_nope + 3) & ~3);

    const int32_t cw_max = range < DENSE_THREADS ? range : DENSE_THREADS;
    int32_t dc_rows = slab_floats / cw_max;
    if (dc_rows > d_nope) dc_rows = d_nope;
    const int32_t n_ct = (range + DENSE_THREADS - 1) / DENSE_THREADS;
    const int32_t n_dc = (d_nope + dc_rows - 1) / dc_rows;
    const int32_t n_slabs = n_ct * n_dc;
    const float *wh = wk_b + (int64_t)h * d_nope * kv_rank;
    /* 16-byte staging needs 16-byte aligned weight rows (slab buffers always are). */
    const bool vec = (kv_rank & 3) == 0 && ((uintptr_t)wk_b & 15) == 0;

    auto issue = [&](int32_t k) {
        int32_t ct = k / n_dc, dc = k - ct * n_dc;
        int32_t c0 = o0 + ct * DENSE_THREADS;
        int32_t cw = min(DENSE_THREADS, o1 - c0);
        int32_t d0 = dc * dc_rows;
        int32_t dw = min(dc_rows, d_nope - d0);
        float *buf = slabs + (k % nbuf) * slab_floats;
        if (vec && ((c0 | cw) & 3) == 0) { /* whole float4s: a quarter of the copy instructions */
            const int32_t cw4 = cw >> 2;
            for (int32_t e = tid; e < dw * cw4; e += DENSE_THREADS) {
                int32_t d = e / cw4, c4 = e - d * cw4;
                mla_cp_async16(buf + d * cw + 4 * c4,
                               wh + (int64_t)(d0 + d) * kv_rank + c0 + 4 * c4);
            }
        } else {
            for (int32_t e = tid; e < dw * cw; e += DENSE_THREADS) {
                int32_t d = e / cw, c = e - d * cw;
                mla_cp_async4(buf + e, wh + (int64_t)(d0 + d) * kv_rank + c0 + c, true);
            }
        }
        mla_cp_async_commit();
    };

    /* The first slab streams in while the q row is loaded (disjoint shared memory; the barrier
     * after the first wait publishes both). */
    issue(0);
    for (int32_t d = tid; d < d_nope; d += DENSE_THREADS) qs[d] = q_nope[ih * d_nope + d];
    float acc = 0.0f;
    for (int32_t k = 0; k < n_slabs; k++) {
        if (nbuf == 1) {
            if (k > 0) issue(k);
            mla_cp_async_wait<0>();
        } else if (k + 1 < n_slabs) {
            issue(k + 1);
            mla_cp_async_wait<1>();
        } else {
            mla_cp_async_wait<0>();
        }
        __syncthreads();
        int32_t ct = k / n_dc, dc = k - ct * n_dc;
        int32_t c0 = o0 + ct * DENSE_THREADS;
        int32_t cw = min(DENSE_THREADS, o1 - c0);
        int32_t d0 = dc * dc_rows;
        int32_t dw = min(dc_rows, d_nope - d0);
        const float *buf = slabs + (k % nbuf) * slab_floats;
        if (tid < cw) {
            if (dc == 0) acc = 0.0f;
#pragma unroll 8
            for (int32_t d = 0; d < dw; d++) acc = __fmaf_rn(qs[d0 + d], buf[d * cw + tid], acc);
            if (dc == n_dc - 1) q_lat[ih * kv_rank + c0 + tid] = acc;
        }
        __syncthreads(); /* the buffer is refilled by issue(k + 2) */
    }
}

/* decompress: slab = wv_b[h][c0 .. c0+vw)[r0 .. r0+rw) stored with an odd row stride so the
 * threads (one per row v) read distinct banks. */
static __global__ void __launch_bounds__(DENSE_THREADS)
    decompress_v_f32(const float *__restrict__ o_lat, const float *__restrict__ wv_b,
                     float *__restrict__ out, int32_t n_head, int32_t d_v, int32_t kv_rank,
                     int32_t split, int32_t slab_floats, int32_t nbuf) {
    extern __shared__ __align__(16) float smem[];
    const int tid = threadIdx.x;
    const int64_t ih = (int64_t)blockIdx.x / split;
    const int32_t s = (int32_t)((int64_t)blockIdx.x - ih * split);
    const int32_t h = (int32_t)(ih % n_head);
    const int32_t o0 = (int32_t)((int64_t)s * d_v / split);
    const int32_t o1 = (int32_t)((int64_t)(s + 1) * d_v / split);
    const int32_t range = o1 - o0;
    if (range <= 0) return;
    float *os = smem;
    float *slabs = smem + ((kv_rank + 3) & ~3);

    const int32_t vw_max = range < DENSE_THREADS ? range : DENSE_THREADS;
    /* Two slab layouts, the same chain: with 16-byte aligned rows (vec) a row chunk of rc_cols
     * (a multiple of 8) has stride rc_cols + 4, which is 4 (mod 8): the eight threads of a
     * quarter-warp reading float4s at row starts t * stride hit distinct bank quads (4 times an
     * odd number, mod 32), and the copies are 16 bytes wide. Otherwise scalar copies and an odd
     * stride (one float per thread per step, distinct banks). */
    const bool vec = (kv_rank & 3) == 0 && ((uintptr_t)wv_b & 15) == 0;
    int32_t rc_cols = slab_floats / vw_max - (vec ? 4 : 1);
    if (rc_cols >= kv_rank)
        rc_cols = kv_rank;
    else if (rc_cols >= 64)
        rc_cols &= ~31; /* whole 128-byte segments per row when the row does not fit */
    else if (vec)
        rc_cols &= ~7;
    /* A whole row of kv_rank % 8 == 4 floats pads to a stride of kv_rank + 8: shrink the chunk
     * to multiples of 8 while that does not fit the slab. */
    while (vec && (int64_t)vw_max * (((rc_cols + 7) & ~7) + 4) > slab_floats)
        rc_cols = (rc_cols - 1) & ~7;
    const int32_t stride = vec ? ((rc_cols + 7) & ~7) + 4 : (rc_cols | 1);
    const int32_t n_vt = (range + DENSE_THREADS - 1) / DENSE_THREADS;
    const int32_t n_rc = (kv_rank + rc_cols - 1) / rc_cols;
    const int32_t n_slabs = n_vt * n_rc;
    const float *wh = wv_b + (int64_t)h * d_v * kv_rank;

    auto issue = [&](int32_t k) {
        int32_t vt = k / n_rc, rc = k - vt * n_rc;
        int32_t c0 = o0 + vt * DENSE_THREADS;
        int32_t vw = min(DENSE_THREADS, o1 - c0);
        int32_t r0 = rc * rc_cols;
        int32_t rw = min(rc_cols, kv_rank - r0);
        float *buf = slabs + (k % nbuf) * slab_floats;
        if (vec) { /* r0 and rw are multiples of 4 here */
            const int32_t rw4 = rw >> 2;
            for (int32_t e = tid; e < vw * rw4; e += DENSE_THREADS) {
                int32_t v = e / rw4, c4 = e - v * rw4;
                mla_cp_async16(buf + v * stride + 4 * c4,
                               wh + (int64_t)(c0 + v) * kv_rank + r0 + 4 * c4);
            }
        } else {
            for (int32_t e = tid; e < vw * rw; e += DENSE_THREADS) {
                int32_t v = e / rw, c = e - v * rw;
                mla_cp_async4(buf + v * stride + c, wh + (int64_t)(c0 + v) * kv_rank + r0 + c,
                              true);
            }
        }
        mla_cp_async_commit();
    };

    /* The first slab streams in while the o_lat row is loaded (as in absorb). */
    issue(0);
    for (int32_t r = tid; r < kv_rank; r += DENSE_THREADS) os[r] = o_lat[ih * kv_rank + r];
    float acc = 0.0f;
    for (int32_t k = 0; k < n_slabs; k++) {
        if (nbuf == 1) {
            if (k > 0) issue(k);
            mla_cp_async_wait<0>();
        } else if (k + 1 < n_slabs) {
            issue(k + 1);
            mla_cp_async_wait<1>();
        } else {
            mla_cp_async_wait<0>();
        }
        __syncthreads();
        int32_t vt = k / n_rc, rc = k - vt * n_rc;
        int32_t c0 = o0 + vt * DENSE_THREADS;
        int32_t vw = min(DENSE_THREADS, o1 - c0);
        int32_t r0 = rc * rc_cols;
        int32_t rw = min(rc_cols, kv_rank - r0);
        const float *row = slabs + (k % nbuf) * slab_floats + tid * stride;
        if (tid < vw) {
            if (rc == 0) acc = 0.0f;
            if (vec) { /* float4 reads, the same ascending chain */
#pragma unroll 2
                for (int32_t c = 0; c < rw; c += 4) {
                    float4 w4 = *reinterpret_cast<const float4 *>(row + c);
                    acc = __fmaf_rn(w4.x, os[r0 + c], acc);
                    acc = __fmaf_rn(w4.y, os[r0 + c + 1], acc);
                    acc = __fmaf_rn(w4.z, os[r0 + c + 2], acc);
                    acc = __fmaf_rn(w4.w, os[r0 + c + 3], acc);
                }
            } else {
#pragma unroll 8
                for (int32_t c = 0; c < rw; c++) acc = __fmaf_rn(row[c], os[r0 + c], acc);
            }
            if (rc == n_rc - 1) out[ih * d_v + c0 + tid] = acc;
        }
        __syncthreads();
    }
}

/* The slab geometry both kernels derive: per-buffer floats and buffer count for the widest
 * block (ceil(out_dim / split) outputs), so every block's slabs fit. */
static void dense_slab_plan(int32_t red_dim, int32_t out_dim, int32_t split, int stride_pad,
                            int32_t *slab_floats, int32_t *nbuf) {
    int32_t range = (int32_t)ceil_div64(out_dim, split);
    int32_t w = range < DENSE_THREADS ? range : DENSE_THREADS;
    int64_t need = (int64_t)w * (red_dim + stride_pad); /* whole reduction axis in one slab */
    int64_t n_tiles = ceil_div64(range, DENSE_THREADS);
    if (need <= DENSE_SLAB_PAYLOAD && n_tiles == 1) {
        *slab_floats = (int32_t)((need + 3) & ~3);
        *nbuf = 1;
    } else {
        *slab_floats = DENSE_SLAB;
        *nbuf = 2;
    }
}

static void absorb_q_f32_launch(const float *q_nope, const float *wk_b, float *q_lat, int32_t t_q,
                                int32_t n_head, int32_t d_nope, int32_t kv_rank, int32_t split,
                                cudaStream_t st) {
    int32_t slab_floats, nbuf;
    dense_slab_plan(d_nope, kv_rank, split, 0, &slab_floats, &nbuf);
    size_t smem = ((size_t)((d_nope + 3) & ~3) + (size_t)nbuf * slab_floats) * sizeof(float);
    unsigned blocks = (unsigned)((int64_t)t_q * n_head * split);
    absorb_q_f32<<<blocks, DENSE_THREADS, smem, st>>>(q_nope, wk_b, q_lat, n_head, d_nope, kv_rank,
                                                      split, slab_floats, nbuf);
}

static void decompress_v_f32_launch(const float *o_lat, const float *wv_b, float *out, int32_t t_q,
                                    int32_t n_head, int32_t d_v, int32_t kv_rank, int32_t split,
                                    cudaStream_t st) {
    int32_t slab_floats, nbuf;
    /* Row padding of the slab: the kernel's stride (4 mod 8 for 16-byte rows, else odd). */
    const bool vec = (kv_rank & 3) == 0 && ((uintptr_t)wv_b & 15) == 0;
    const int pad = vec ? ((kv_rank + 7) & ~7) + 4 - kv_rank : 1;
    dense_slab_plan(kv_rank, d_v, split, pad, &slab_floats, &nbuf);
    size_t smem = ((size_t)((kv_rank + 3) & ~3) + (size_t)nbuf * slab_floats) * sizeof(float);
    unsigned blocks = (unsigned)((int64_t)t_q * n_head * split);
    decompress_v_f32<<<blocks, DENSE_THREADS, smem, st>>>(o_lat, wv_b, out, n_head, d_v, kv_rank,
                                                          split, slab_floats, nbuf);
#if defined(MLA_SLOW_DECOMPRESS_V)
    /* test-only slowed variant (kernels/BUILD MLA_SLOWS, docs/perf-gate.md): the same launch
     * again, so the bytes are unchanged and the time about doubles; the perf gate must name it */
    decompress_v_f32<<<blocks, DENSE_THREADS, smem, st>>>(o_lat, wv_b, out, n_head, d_v, kv_rank,
                                                          split, slab_floats, nbuf);
#endif
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

static int ensure_smem_attrs(void) {
    static mla_device_once once;
    return mla_device_once_run(once, [] {
        size_t dense = (MLA_MAX_HEAD_DIM + 2 * (size_t)DENSE_SLAB) * sizeof(float);
        MLA_CUDA_CHECK(cudaFuncSetAttribute(
            absorb_q_f32, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dense));
        MLA_CUDA_CHECK(cudaFuncSetAttribute(
            decompress_v_f32, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dense));
        return 0;
    });
}
