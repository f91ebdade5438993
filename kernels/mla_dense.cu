/* mla_dense.cu: the dense MLA core launchers of kernels/mla.h (rope, latent split / append,
 * absorb / decompress and their decode-split twins, absorbed MQA attention).
 *
 * Layering (ggml): a `static __global__` kernel with the dtype suffix, a `static` launcher that
 * only picks the launch shape, and the public `extern "C"` entry that validates (mla_validate.h),
 * launches and returns 0 or 10000 + cudaError_t.
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
 *  - attention: f32 logits, online softmax with accurate expf, flash-decoding split of the cache
 *    walk whose chunk count and combine order depend only on the shape (run-to-run identical).
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include <mutex>

#include "kernels/mla.h"
#include "kernels/mla_cuda_check.h"
#include "kernels/mla_validate.h"

/* ------------------------------------------------------------------ failure record -------- */

static thread_local char mla_failure_text[512];

extern "C" void mla_cuda_record_failure(int err, const char *stmt, const char *func,
                                        const char *file, int line)
{
    snprintf(mla_failure_text, sizeof mla_failure_text, "%s:%d %s: %s -> %d (%s)", file, line,
             func, stmt, err, cudaGetErrorName((cudaError_t)err));
}

extern "C" const char *mla_cuda_last_failure(void) { return mla_failure_text; }

/* --------------------------------------------------------------- device helpers ----------- */

#define DENSE_THREADS 256
/* Weight slab of absorb / decompress, floats per buffer: 8192 payload + 256 of padding room so
 * a 32 x 256 decompress slab keeps its odd (bank-conflict-free) row stride 257. */
#define DENSE_SLAB 8448
#define DENSE_SLAB_PAYLOAD 8192

static __device__ __forceinline__ void cp_async4(float *dst, const float *src, bool valid)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    int n = valid ? 4 : 0; /* src-size 0: nothing read, destination zero-filled */
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(src), "r"(n)
                 : "memory");
}

static __device__ __forceinline__ void cp_async16(float *dst, const float *src, bool valid)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    int n = valid ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(n)
                 : "memory");
}

static __device__ __forceinline__ void cp_async_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

template <int N> static __device__ __forceinline__ void cp_async_wait(void)
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

static inline int64_t ceil_div64(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Grid of a grid-stride element loop: enough blocks to fill the card, capped. */
static inline unsigned elementwise_blocks(int64_t n)
{
    int64_t b = ceil_div64(n, DENSE_THREADS);
    if (b > 132 * 32)
        b = 132 * 32;
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
                                            int32_t n_vec, int32_t half, rope_freqs f)
{
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
                                        cudaStream_t st)
{
    int64_t n_pairs = (int64_t)n_pos * n_vec * (d_rope / 2);
    rope_interleaved_f32<<<elementwise_blocks(n_pairs), DENSE_THREADS, 0, st>>>(
        x, positions, n_pairs, n_vec, d_rope / 2, f);
}

extern "C" int memra_mla_rope_interleaved_f32(float *x, int32_t n_pos, int32_t n_vec,
                                              int32_t d_rope, const int32_t *positions,
                                              float base, void *stream)
{
    int rc = mla_validate_rope_interleaved(x, n_pos, n_vec, d_rope, positions, base);
    if (rc)
        return rc;
    if (d_rope == 0)
        return 0; /* NoPE: documented no-op */
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
                                        int32_t kv_rank, int32_t d_rope)
{
    int64_t width = (int64_t)kv_rank + d_rope;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n;
         e += (int64_t)gridDim.x * blockDim.x) {
        int64_t row = e / width, c = e - row * width;
        float v = kv[e];
        if (c < kv_rank)
            c_kv[row * kv_rank + c] = v;
        else
            k_pe[row * d_rope + (c - kv_rank)] = v;
    }
}

static __global__ void append_latent_f32(float *cache, const float *c_kv, const float *k_pe,
                                         int32_t slot, int64_t n, int32_t kv_rank,
                                         int32_t d_rope)
{
    int64_t width = (int64_t)kv_rank + d_rope;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n;
         e += (int64_t)gridDim.x * blockDim.x) {
        int64_t row = e / width, c = e - row * width;
        float v = c < kv_rank ? c_kv[row * kv_rank + c] : k_pe[row * d_rope + (c - kv_rank)];
        cache[(int64_t)slot * width + e] = v;
    }
}

extern "C" int memra_mla_split_latent_f32(const float *kv, float *c_kv, float *k_pe, int32_t t,
                                          int32_t kv_rank, int32_t d_rope, void *stream)
{
    int rc = mla_validate_split_latent(kv, c_kv, k_pe, t, kv_rank, d_rope);
    if (rc)
        return rc;
    int64_t n = (int64_t)t * (kv_rank + d_rope);
    split_latent_f32<<<elementwise_blocks(n), DENSE_THREADS, 0, (cudaStream_t)stream>>>(
        kv, c_kv, k_pe, n, kv_rank, d_rope);
    MLA_CUDA_CHECK(cudaGetLastError());
    return 0;
}

extern "C" int memra_mla_append_latent_f32(float *cache, const float *c_kv, const float *k_pe,
                                           int32_t slot, int32_t t, int32_t kv_rank,
                                           int32_t d_rope, void *stream)
{
    int rc = mla_validate_append_latent(cache, c_kv, k_pe, slot, t, kv_rank, d_rope);
    if (rc)
        return rc;
    int64_t n = (int64_t)t * (kv_rank + d_rope);
    append_latent_f32<<<elementwise_blocks(n), DENSE_THREADS, 0, (cudaStream_t)stream>>>(
        cache, c_kv, k_pe, slot, n, kv_rank, d_rope);
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
                 int32_t split, int32_t slab_floats, int32_t nbuf)
{
    extern __shared__ __align__(16) float smem[];
    const int tid = threadIdx.x;
    const int64_t ih = (int64_t)blockIdx.x / split;
    const int32_t s = (int32_t)((int64_t)blockIdx.x - ih * split);
    const int32_t h = (int32_t)(ih % n_head);
    const int32_t o0 = (int32_t)((int64_t)s * kv_rank / split);
    const int32_t o1 = (int32_t)((int64_t)(s + 1) * kv_rank / split);
    const int32_t range = o1 - o0;
    if (range <= 0)
        return;
    float *qs = smem;
    float *slabs = smem + ((d_nope + 3) & ~3);
    for (int32_t d = tid; d < d_nope; d += DENSE_THREADS)
        qs[d] = q_nope[ih * d_nope + d];

    const int32_t cw_max = range < DENSE_THREADS ? range : DENSE_THREADS;
    int32_t dc_rows = slab_floats / cw_max;
    if (dc_rows > d_nope)
        dc_rows = d_nope;
    const int32_t n_ct = (range + DENSE_THREADS - 1) / DENSE_THREADS;
    const int32_t n_dc = (d_nope + dc_rows - 1) / dc_rows;
    const int32_t n_slabs = n_ct * n_dc;
    const float *wh = wk_b + (int64_t)h * d_nope * kv_rank;

    auto issue = [&](int32_t k) {
        int32_t ct = k / n_dc, dc = k - ct * n_dc;
        int32_t c0 = o0 + ct * DENSE_THREADS;
        int32_t cw = min(DENSE_THREADS, o1 - c0);
        int32_t d0 = dc * dc_rows;
        int32_t dw = min(dc_rows, d_nope - d0);
        float *buf = slabs + (k % nbuf) * slab_floats;
        for (int32_t e = tid; e < dw * cw; e += DENSE_THREADS) {
            int32_t d = e / cw, c = e - d * cw;
            cp_async4(buf + e, wh + (int64_t)(d0 + d) * kv_rank + c0 + c, true);
        }
        cp_async_commit();
    };

    float acc = 0.0f;
    if (nbuf == 2)
        issue(0);
    for (int32_t k = 0; k < n_slabs; k++) {
        if (nbuf == 1) {
            issue(k);
            cp_async_wait<0>();
        } else if (k + 1 < n_slabs) {
            issue(k + 1);
            cp_async_wait<1>();
        } else {
            cp_async_wait<0>();
        }
        __syncthreads();
        int32_t ct = k / n_dc, dc = k - ct * n_dc;
        int32_t c0 = o0 + ct * DENSE_THREADS;
        int32_t cw = min(DENSE_THREADS, o1 - c0);
        int32_t d0 = dc * dc_rows;
        int32_t dw = min(dc_rows, d_nope - d0);
        const float *buf = slabs + (k % nbuf) * slab_floats;
        if (tid < cw) {
            if (dc == 0)
                acc = 0.0f;
#pragma unroll 8
            for (int32_t d = 0; d < dw; d++)
                acc = __fmaf_rn(qs[d0 + d], buf[d * cw + tid], acc);
            if (dc == n_dc - 1)
                q_lat[ih * kv_rank + c0 + tid] = acc;
        }
        __syncthreads(); /* the buffer is refilled by issue(k + 2) */
    }
}

/* decompress: slab = wv_b[h][c0 .. c0+vw)[r0 .. r0+rw) stored with an odd row stride so the
 * threads (one per row v) read distinct banks. */
static __global__ void __launch_bounds__(DENSE_THREADS)
    decompress_v_f32(const float *__restrict__ o_lat, const float *__restrict__ wv_b,
                     float *__restrict__ out, int32_t n_head, int32_t d_v, int32_t kv_rank,
                     int32_t split, int32_t slab_floats, int32_t nbuf)
{
    extern __shared__ __align__(16) float smem[];
    const int tid = threadIdx.x;
    const int64_t ih = (int64_t)blockIdx.x / split;
    const int32_t s = (int32_t)((int64_t)blockIdx.x - ih * split);
    const int32_t h = (int32_t)(ih % n_head);
    const int32_t o0 = (int32_t)((int64_t)s * d_v / split);
    const int32_t o1 = (int32_t)((int64_t)(s + 1) * d_v / split);
    const int32_t range = o1 - o0;
    if (range <= 0)
        return;
    float *os = smem;
    float *slabs = smem + ((kv_rank + 3) & ~3);
    for (int32_t r = tid; r < kv_rank; r += DENSE_THREADS)
        os[r] = o_lat[ih * kv_rank + r];

    const int32_t vw_max = range < DENSE_THREADS ? range : DENSE_THREADS;
    int32_t rc_cols = slab_floats / vw_max - 1;
    if (rc_cols >= kv_rank)
        rc_cols = kv_rank;
    else if (rc_cols >= 64)
        rc_cols &= ~31; /* whole 128-byte segments per row when the row does not fit */
    const int32_t stride = rc_cols | 1;
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
        for (int32_t e = tid; e < vw * rw; e += DENSE_THREADS) {
            int32_t v = e / rw, c = e - v * rw;
            cp_async4(buf + v * stride + c, wh + (int64_t)(c0 + v) * kv_rank + r0 + c, true);
        }
        cp_async_commit();
    };

    float acc = 0.0f;
    if (nbuf == 2)
        issue(0);
    for (int32_t k = 0; k < n_slabs; k++) {
        if (nbuf == 1) {
            issue(k);
            cp_async_wait<0>();
        } else if (k + 1 < n_slabs) {
            issue(k + 1);
            cp_async_wait<1>();
        } else {
            cp_async_wait<0>();
        }
        __syncthreads();
        int32_t vt = k / n_rc, rc = k - vt * n_rc;
        int32_t c0 = o0 + vt * DENSE_THREADS;
        int32_t vw = min(DENSE_THREADS, o1 - c0);
        int32_t r0 = rc * rc_cols;
        int32_t rw = min(rc_cols, kv_rank - r0);
        const float *row = slabs + (k % nbuf) * slab_floats + tid * stride;
        if (tid < vw) {
            if (rc == 0)
                acc = 0.0f;
#pragma unroll 8
            for (int32_t c = 0; c < rw; c++)
                acc = __fmaf_rn(row[c], os[r0 + c], acc);
            if (rc == n_rc - 1)
                out[ih * d_v + c0 + tid] = acc;
        }
        __syncthreads();
    }
}

/* The slab geometry both kernels derive: per-buffer floats and buffer count for the widest
 * block (ceil(out_dim / split) outputs), so every block's slabs fit. */
static void dense_slab_plan(int32_t red_dim, int32_t out_dim, int32_t split, int stride_pad,
                            int32_t *slab_floats, int32_t *nbuf)
{
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

static void absorb_q_f32_launch(const float *q_nope, const float *wk_b, float *q_lat,
                                int32_t t_q, int32_t n_head, int32_t d_nope, int32_t kv_rank,
                                int32_t split, cudaStream_t st)
{
    int32_t slab_floats, nbuf;
    dense_slab_plan(d_nope, kv_rank, split, 0, &slab_floats, &nbuf);
    size_t smem = ((size_t)((d_nope + 3) & ~3) + (size_t)nbuf * slab_floats) * sizeof(float);
    unsigned blocks = (unsigned)((int64_t)t_q * n_head * split);
    absorb_q_f32<<<blocks, DENSE_THREADS, smem, st>>>(q_nope, wk_b, q_lat, n_head, d_nope,
                                                      kv_rank, split, slab_floats, nbuf);
}

static void decompress_v_f32_launch(const float *o_lat, const float *wv_b, float *out,
                                    int32_t t_q, int32_t n_head, int32_t d_v, int32_t kv_rank,
                                    int32_t split, cudaStream_t st)
{
    int32_t slab_floats, nbuf;
    dense_slab_plan(kv_rank, d_v, split, 1, &slab_floats, &nbuf);
    size_t smem = ((size_t)((kv_rank + 3) & ~3) + (size_t)nbuf * slab_floats) * sizeof(float);
    unsigned blocks = (unsigned)((int64_t)t_q * n_head * split);
    decompress_v_f32<<<blocks, DENSE_THREADS, smem, st>>>(o_lat, wv_b, out, n_head, d_v, kv_rank,
                                                          split, slab_floats, nbuf);
}

extern "C" int memra_mla_absorb_q_f32(const float *q_nope, const float *wk_b, float *q_lat,
                                      int32_t t_q, int32_t n_head, int32_t d_nope,
                                      int32_t kv_rank, void *stream)
{
    int rc = mla_validate_absorb_q(q_nope, wk_b, q_lat, t_q, n_head, d_nope, kv_rank, 1);
    if (rc)
        return rc;
    rc = ensure_smem_attrs();
    if (rc)
        return rc;
    absorb_q_f32_launch(q_nope, wk_b, q_lat, t_q, n_head, d_nope, kv_rank, 1,
                        (cudaStream_t)stream);
    MLA_CUDA_CHECK(cudaGetLastError());
    return 0;
}

extern "C" int memra_mla_absorb_q_split_f32(const float *q_nope, const float *wk_b, float *q_lat,
                                            int32_t t_q, int32_t n_head, int32_t d_nope,
                                            int32_t kv_rank, int32_t split, void *stream)
{
    int rc = mla_validate_absorb_q(q_nope, wk_b, q_lat, t_q, n_head, d_nope, kv_rank, split);
    if (rc)
        return rc;
    rc = ensure_smem_attrs();
    if (rc)
        return rc;
    absorb_q_f32_launch(q_nope, wk_b, q_lat, t_q, n_head, d_nope, kv_rank, split,
                        (cudaStream_t)stream);
    MLA_CUDA_CHECK(cudaGetLastError());
    return 0;
}

extern "C" int memra_mla_decompress_v_f32(const float *o_lat, const float *wv_b, float *out,
                                          int32_t t_q, int32_t n_head, int32_t d_v,
                                          int32_t kv_rank, void *stream)
{
    int rc = mla_validate_decompress_v(o_lat, wv_b, out, t_q, n_head, d_v, kv_rank, 1);
    if (rc)
        return rc;
    rc = ensure_smem_attrs();
    if (rc)
        return rc;
    decompress_v_f32_launch(o_lat, wv_b, out, t_q, n_head, d_v, kv_rank, 1,
                            (cudaStream_t)stream);
    MLA_CUDA_CHECK(cudaGetLastError());
    return 0;
}

extern "C" int memra_mla_decompress_v_split_f32(const float *o_lat, const float *wv_b,
                                                float *out, int32_t t_q, int32_t n_head,
                                                int32_t d_v, int32_t kv_rank, int32_t split,
                                                void *stream)
{
    int rc = mla_validate_decompress_v(o_lat, wv_b, out, t_q, n_head, d_v, kv_rank, split);
    if (rc)
        return rc;
    rc = ensure_smem_attrs();
    if (rc)
        return rc;
    decompress_v_f32_launch(o_lat, wv_b, out, t_q, n_head, d_v, kv_rank, split,
                            (cudaStream_t)stream);
    MLA_CUDA_CHECK(cudaGetLastError());
    return 0;
}

/* --------------------------------------------------------------------- attention --------- */

/* Flash-decoding over the latent cache, MQA-aware.
 *
 * The (query, head) pairs are flattened to qh = i * n_head + h (the q_lat / o_lat row) and cut
 * into tiles of HT pairs; all pairs share the cache rows, so a block reads each cache row once
 * for its whole tile (HT = 32 pairs when kv_rank <= 512: at glm5 decode the 64 heads are two
 * tiles, and the two blocks of one chunk are adjacent in the grid so the second read hits L2).
 * The cache walk is split into n_chunks chunks of chunk_rows rows (a multiple of JT); block
 * b = chunk * n_tiles + tile walks its chunk in tiles of JT rows (double-buffered cp.async):
 *   1. logits S[HT][JT] (f32 dot over [c_kv | k_pe], reduction split NWS ways, partials summed
 *      in ascending order), scaled, masked by each pair's causal limit;
 *   2. online softmax per pair (one warp per pair, accurate expf, fixed-tree warp sums);
 *   3. O[HT][kv_rank] = alpha * O + P . c_kv in registers (each thread: HV pairs x 4 columns).
 * With one chunk the block normalises and writes o_lat; otherwise it writes (m, l, O) partials
 * to a stream-ordered workspace (cudaMallocAsync / cudaFreeAsync on the caller's stream) and
 * attn_combine_f32 merges them in ascending chunk order. The chunk count is a function of the
 * shape only (never of the device), so bytes are identical run to run and card to card. */

#define ATTN_TARGET_BLOCKS 132 /* one wave of H200-class SMs at one block per SM */
#define ATTN_MIN_CHUNK_ROWS 64
#define ATTN_MAX_CHUNKS 256

template <int HT, int JT> struct attn_cfg {
    static constexpr int HS = 16; /* pairs per thread in the logit step */
    static constexpr int HV = 16; /* pairs per thread in the P . V step */
    static constexpr int S_HG = HT / HS;
    static constexpr int NWS = DENSE_THREADS / (JT * S_HG);
    static constexpr int V_HG = HT / HV;
    static constexpr int NCOL = DENSE_THREADS / V_HG; /* float4 columns covered: 4 * NCOL */
    static_assert(NWS >= 1 && NWS * JT * S_HG == DENSE_THREADS, "logit layout");
    static_assert(JT % 4 == 0 && JT <= 32, "tile rows");
};

/* Shared-memory floats of a configuration at row width wp (kv_rank and d_rope padded to 4). */
template <int HT, int JT> static size_t attn_smem_floats(int32_t wp)
{
    typedef attn_cfg<HT, JT> C;
    return (size_t)HT * wp + 2 * (size_t)JT * (wp + 4) + (size_t)C::NWS * HT * JT +
           (size_t)HT * JT + 4 * (size_t)HT;
}

template <int HT, int JT>
static __global__ void __launch_bounds__(DENSE_THREADS, 1)
    attn_absorbed_f32(const float *__restrict__ q_lat, const float *__restrict__ q_pe,
                      const float *__restrict__ cache, float *__restrict__ o_lat,
                      float *__restrict__ ws_o, float *__restrict__ ws_ml, int32_t n_head,
                      int32_t kv_rank, int32_t d_rope, int32_t t_q, int32_t t_kv, float scale,
                      int32_t n_tiles, int32_t chunk_rows, int32_t n_chunks)
{
    typedef attn_cfg<HT, JT> C;
    extern __shared__ __align__(16) float smem[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int32_t r4 = (kv_rank + 3) & ~3, d4 = (d_rope + 3) & ~3;
    const int32_t wp = r4 + d4, wp4 = wp >> 2, sk = wp + 4;
    const int64_t width = (int64_t)kv_rank + d_rope;
    float *qs = smem;                                   /* [HT][wp] */
    float *ks = qs + (size_t)HT * wp;                   /* [2][JT][sk] */
    float *sp = ks + 2 * (size_t)JT * sk;               /* [NWS][HT][JT] */
    float *ps = sp + (size_t)C::NWS * HT * JT;          /* [HT][JT] */
    float *m_s = ps + HT * JT, *l_s = m_s + HT, *a_s = l_s + HT;
    int32_t *lim_s = (int32_t *)(a_s + HT);

    const int32_t tile = (int32_t)(blockIdx.x % n_tiles);
    const int32_t chunk = (int32_t)(blockIdx.x / n_tiles);
    const int64_t n_qh = (int64_t)t_q * n_head;
    const int64_t qh0 = (int64_t)tile * HT;
    const int64_t qh_last = min(qh0 + HT, n_qh) - 1;
    const int32_t max_lim = t_kv - t_q + (int32_t)(qh_last / n_head);
    const int32_t c_begin = chunk * chunk_rows;
    const int32_t c_end = min(min(c_begin + chunk_rows, t_kv), max_lim + 1);
    const int32_t n_rt = c_end > c_begin ? (c_end - c_begin + JT - 1) / JT : 0;
    const bool vec = ((kv_rank | d_rope) & 3) == 0 && (((uintptr_t)cache) & 15) == 0;

    /* Query tile, zero-padded to wp columns (pads and missing pairs contribute 0). */
    for (int32_t e = tid; e < HT * wp; e += DENSE_THREADS) {
        int32_t hh = e / wp, c = e - hh * wp;
        int64_t qh = qh0 + hh;
        float v = 0.0f;
        if (qh < n_qh) {
            if (c < kv_rank)
                v = q_lat[qh * kv_rank + c];
            else if (c >= r4 && c < r4 + d_rope)
                v = q_pe[qh * d_rope + (c - r4)];
        }
        qs[e] = v;
    }
    if (tid < HT) {
        int64_t qh = qh0 + tid;
        m_s[tid] = -INFINITY;
        l_s[tid] = 0.0f;
        lim_s[tid] = qh < n_qh ? t_kv - t_q + (int32_t)(qh / n_head) : -1;
    }

    /* Rows row0 .. row0 + JT of the chunk into buffer k & 1; rows past c_end zero-filled. */
    auto issue = [&](int32_t k) {
        float *buf = ks + (size_t)(k & 1) * JT * sk;
        int32_t row0 = c_begin + k * JT;
        if (vec) {
            for (int32_t e = tid; e < JT * wp4; e += DENSE_THREADS) {
                int32_t jr = e / wp4, c4 = e - jr * wp4;
                bool ok = row0 + jr < c_end;
                const float *src = ok ? cache + (int64_t)(row0 + jr) * width + 4 * c4 : cache;
                cp_async16(buf + jr * sk + 4 * c4, src, ok);
            }
        } else {
            for (int32_t e = tid; e < JT * wp; e += DENSE_THREADS) {
                int32_t jr = e / wp, c = e - jr * wp;
                bool ok = row0 + jr < c_end;
                int64_t col = -1;
                if (c < kv_rank)
                    col = c;
                else if (c >= r4 && c < r4 + d_rope)
                    col = kv_rank + (c - r4);
                ok = ok && col >= 0;
                const float *src = ok ? cache + (int64_t)(row0 + jr) * width + col : cache;
                cp_async4(buf + jr * sk + c, src, ok);
            }
        }
        cp_async_commit();
    };

    /* P . V ownership: pairs hv0 .. hv0 + HV, float4 column vcol. */
    const int32_t vcol = tid % C::NCOL, hv0 = (tid / C::NCOL) * C::HV;
    const bool v_active = 4 * vcol < r4;
    float acc[C::HV][4];
#pragma unroll
    for (int hh = 0; hh < C::HV; hh++)
        acc[hh][0] = acc[hh][1] = acc[hh][2] = acc[hh][3] = 0.0f;

    /* Logit ownership: row j, pairs sg0 .. sg0 + HS, float4 columns [c4a, c4b). */
    const int32_t sj = tid % JT;
    const int32_t s_rest = tid / JT;
    const int32_t sg0 = (s_rest % C::S_HG) * C::HS;
    const int32_t sws = s_rest / C::S_HG;
    const int32_t c4a = sws * wp4 / C::NWS, c4b = (sws + 1) * wp4 / C::NWS;

    if (n_rt > 0)
        issue(0);
    for (int32_t k = 0; k < n_rt; k++) {
        if (k + 1 < n_rt) {
            issue(k + 1);
            cp_async_wait<1>();
        } else {
            cp_async_wait<0>();
        }
        __syncthreads();
        const float *buf = ks + (size_t)(k & 1) * JT * sk;
        const int32_t row0 = c_begin + k * JT;

        /* 1. partial logits */
        {
            float s[C::HS];
#pragma unroll
            for (int hh = 0; hh < C::HS; hh++)
                s[hh] = 0.0f;
            const float4 *krow = (const float4 *)(buf + sj * sk);
            for (int32_t c4 = c4a; c4 < c4b; c4++) {
                float4 kv = krow[c4];
#pragma unroll
                for (int hh = 0; hh < C::HS; hh++) {
                    float4 q = ((const float4 *)(qs + (size_t)(sg0 + hh) * wp))[c4];
                    s[hh] = fmaf(q.x, kv.x, s[hh]);
                    s[hh] = fmaf(q.y, kv.y, s[hh]);
                    s[hh] = fmaf(q.z, kv.z, s[hh]);
                    s[hh] = fmaf(q.w, kv.w, s[hh]);
                }
            }
#pragma unroll
            for (int hh = 0; hh < C::HS; hh++)
                sp[((size_t)sws * HT + sg0 + hh) * JT + sj] = s[hh];
        }
        __syncthreads();

        /* 2. online softmax, one warp per pair */
        for (int32_t hh = warp; hh < HT; hh += DENSE_THREADS / 32) {
            float logit = -INFINITY;
            bool ok = false;
            if (lane < JT) {
                float dot = 0.0f;
#pragma unroll
                for (int w = 0; w < C::NWS; w++)
                    dot = __fadd_rn(dot, sp[((size_t)w * HT + hh) * JT + lane]);
                ok = row0 + lane <= lim_s[hh];
                if (ok)
                    logit = __fmul_rn(scale, dot);
            }
            float tmax = logit;
#pragma unroll
            for (int off = 16; off > 0; off >>= 1)
                tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, off));
            float m_old = m_s[hh];
            float m_new = fmaxf(m_old, tmax);
            float alpha = 1.0f, p = 0.0f;
            if (m_new != -INFINITY) {
                alpha = expf(m_old - m_new);
                p = ok ? expf(logit - m_new) : 0.0f;
            }
            float psum = p;
#pragma unroll
            for (int off = 16; off > 0; off >>= 1)
                psum += __shfl_down_sync(0xffffffffu, psum, off);
            if (lane < JT)
                ps[hh * JT + lane] = p;
            if (lane == 0) {
                l_s[hh] = __fmaf_rn(l_s[hh], alpha, psum);
                m_s[hh] = m_new;
                a_s[hh] = alpha;
            }
        }
        __syncthreads();

        /* 3. O = alpha * O + P . c_kv */
        if (v_active) {
#pragma unroll
            for (int hh = 0; hh < C::HV; hh++) {
                float a = a_s[hv0 + hh];
                acc[hh][0] *= a;
                acc[hh][1] *= a;
                acc[hh][2] *= a;
                acc[hh][3] *= a;
            }
#pragma unroll
            for (int j = 0; j < JT; j += 4) {
                float4 v[4];
#pragma unroll
                for (int q = 0; q < 4; q++)
                    v[q] = *(const float4 *)(buf + (j + q) * sk + 4 * vcol);
#pragma unroll
                for (int hh = 0; hh < C::HV; hh++) {
                    float4 p = *(const float4 *)(ps + (hv0 + hh) * JT + j);
                    float pj[4] = {p.x, p.y, p.z, p.w};
#pragma unroll
                    for (int q = 0; q < 4; q++) {
                        acc[hh][0] = fmaf(pj[q], v[q].x, acc[hh][0]);
                        acc[hh][1] = fmaf(pj[q], v[q].y, acc[hh][1]);
                        acc[hh][2] = fmaf(pj[q], v[q].z, acc[hh][2]);
                        acc[hh][3] = fmaf(pj[q], v[q].w, acc[hh][3]);
                    }
                }
            }
        }
        __syncthreads(); /* ps / sp / this buffer are rewritten next */
    }
    __syncthreads(); /* stats visible even when the chunk had no rows */

    if (v_active) {
#pragma unroll
        for (int hh = 0; hh < C::HV; hh++) {
            int64_t qh = qh0 + hv0 + hh;
            if (qh >= n_qh)
                continue;
            float l = l_s[hv0 + hh];
            for (int x = 0; x < 4; x++) {
                int32_t r = 4 * vcol + x;
                if (r >= kv_rank)
                    break;
                if (n_chunks == 1)
                    o_lat[qh * kv_rank + r] = acc[hh][x] / l;
                else
                    ws_o[((int64_t)chunk * n_qh + qh) * kv_rank + r] = acc[hh][x];
            }
        }
    }
    if (n_chunks > 1 && tid < HT && qh0 + tid < n_qh) {
        int64_t at = ((int64_t)chunk * n_qh + qh0 + tid) * 2;
        ws_ml[at] = m_s[tid];
        ws_ml[at + 1] = l_s[tid];
    }
}

/* One block per pair: weights w_c = exp(m_c - M) (0 for an empty chunk), then
 * o[r] = (sum_c w_c * O_c[r]) / (sum_c w_c * l_c), chunks in ascending order. */
static __global__ void __launch_bounds__(DENSE_THREADS)
    attn_combine_f32(const float *__restrict__ ws_o, const float *__restrict__ ws_ml,
                     float *__restrict__ o_lat, int64_t n_qh, int32_t kv_rank, int32_t n_chunks)
{
    __shared__ float w_s[ATTN_MAX_CHUNKS];
    __shared__ float l_sum;
    const int64_t qh = blockIdx.x;
    if (threadIdx.x == 0) {
        float m = -INFINITY;
        for (int32_t c = 0; c < n_chunks; c++)
            m = fmaxf(m, ws_ml[((int64_t)c * n_qh + qh) * 2]);
        float l = 0.0f;
        for (int32_t c = 0; c < n_chunks; c++) {
            float mc = ws_ml[((int64_t)c * n_qh + qh) * 2];
            float w = mc == -INFINITY ? 0.0f : expf(mc - m);
            w_s[c] = w;
            l = __fmaf_rn(w, ws_ml[((int64_t)c * n_qh + qh) * 2 + 1], l);
        }
        l_sum = l;
    }
    __syncthreads();
    for (int32_t r = threadIdx.x; r < kv_rank; r += DENSE_THREADS) {
        float o = 0.0f;
        for (int32_t c = 0; c < n_chunks; c++)
            o = __fmaf_rn(w_s[c], ws_o[((int64_t)c * n_qh + qh) * kv_rank + r], o);
        o_lat[qh * kv_rank + r] = o / l_sum;
    }
}

/* The split plan: a function of the shape only. */
static void attn_plan(int64_t n_qh, int32_t t_kv, int32_t ht, int32_t jt, int32_t *n_tiles,
                      int32_t *chunk_rows, int32_t *n_chunks)
{
    int64_t tiles = ceil_div64(n_qh, ht);
    int64_t want = ATTN_TARGET_BLOCKS / tiles;
    int64_t by_rows = ceil_div64(t_kv, ATTN_MIN_CHUNK_ROWS);
    if (want > by_rows)
        want = by_rows;
    if (want < 1)
        want = 1;
    int64_t rows = ceil_div64(ceil_div64(t_kv, want), jt) * jt;
    *n_tiles = (int32_t)tiles;
    *chunk_rows = (int32_t)rows;
    *n_chunks = (int32_t)ceil_div64(t_kv, rows);
}

template <int HT, int JT>
static int attn_absorbed_f32_launch(const float *q_lat, const float *q_pe, const float *cache,
                                    float *o_lat, int32_t n_head, int32_t kv_rank,
                                    int32_t d_rope, int32_t t_q, int32_t t_kv, float scale,
                                    cudaStream_t st)
{
    int64_t n_qh = (int64_t)t_q * n_head;
    int32_t n_tiles, chunk_rows, n_chunks;
    attn_plan(n_qh, t_kv, HT, JT, &n_tiles, &chunk_rows, &n_chunks);
    int32_t wp = ((kv_rank + 3) & ~3) + ((d_rope + 3) & ~3);
    size_t smem = attn_smem_floats<HT, JT>(wp) * sizeof(float);
    float *ws = NULL;
    size_t o_floats = 0;
    if (n_chunks > 1) {
        o_floats = (size_t)n_chunks * (size_t)n_qh * (size_t)kv_rank;
        size_t bytes = (o_floats + 2 * (size_t)n_chunks * (size_t)n_qh) * sizeof(float);
        MLA_CUDA_CHECK(cudaMallocAsync((void **)&ws, bytes, st));
    }
    unsigned blocks = (unsigned)((int64_t)n_tiles * n_chunks);
    attn_absorbed_f32<HT, JT><<<blocks, DENSE_THREADS, smem, st>>>(
        q_lat, q_pe, cache, o_lat, ws, ws ? ws + o_floats : NULL, n_head, kv_rank, d_rope, t_q,
        t_kv, scale, n_tiles, chunk_rows, n_chunks);
    cudaError_t launch = cudaGetLastError();
    if (launch == cudaSuccess && n_chunks > 1) {
        attn_combine_f32<<<(unsigned)n_qh, DENSE_THREADS, 0, st>>>(ws, ws + o_floats, o_lat,
                                                                     n_qh, kv_rank, n_chunks);
        launch = cudaGetLastError();
    }
    if (ws)
        MLA_CUDA_CHECK(cudaFreeAsync(ws, st)); /* stream-ordered: after both kernels */
    MLA_CUDA_CHECK(launch);
    return 0;
}

extern "C" int memra_mla_attn_absorbed_f32(const float *q_lat, const float *q_pe,
                                           const float *cache, float *o_lat, int32_t n_head,
                                           int32_t kv_rank, int32_t d_rope, int32_t t_q,
                                           int32_t t_kv, float scale, void *stream)
{
    int rc = mla_validate_attn_absorbed(q_lat, q_pe, cache, o_lat, n_head, kv_rank, d_rope, t_q,
                                        t_kv, scale);
    if (rc)
        return rc;
    rc = ensure_smem_attrs();
    if (rc)
        return rc;
    cudaStream_t st = (cudaStream_t)stream;
    if (kv_rank <= 512)
        return attn_absorbed_f32_launch<32, 16>(q_lat, q_pe, cache, o_lat, n_head, kv_rank,
                                                d_rope, t_q, t_kv, scale, st);
    return attn_absorbed_f32_launch<16, 8>(q_lat, q_pe, cache, o_lat, n_head, kv_rank, d_rope,
                                           t_q, t_kv, scale, st);
}

/* ------------------------------------------------------------ shared-memory opt-in -------- */

static int ensure_smem_attrs(void)
{
    static std::mutex mu;
    static uint64_t done_mask; /* bit d: device d configured */
    int dev = 0;
    MLA_CUDA_CHECK(cudaGetDevice(&dev));
    std::lock_guard<std::mutex> lock(mu);
    if (dev < 64 && ((done_mask >> dev) & 1u))
        return 0;
    size_t dense = (MLA_MAX_HEAD_DIM + 2 * (size_t)DENSE_SLAB) * sizeof(float);
    size_t attn_a = attn_smem_floats<32, 16>(512 + MLA_MAX_ROPE) * sizeof(float);
    size_t attn_b = attn_smem_floats<16, 8>(MLA_MAX_RANK + MLA_MAX_ROPE) * sizeof(float);
    MLA_CUDA_CHECK(cudaFuncSetAttribute(absorb_q_f32, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)dense));
    MLA_CUDA_CHECK(cudaFuncSetAttribute(decompress_v_f32,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dense));
    MLA_CUDA_CHECK(cudaFuncSetAttribute(attn_absorbed_f32<32, 16>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)attn_a));
    MLA_CUDA_CHECK(cudaFuncSetAttribute(attn_absorbed_f32<16, 8>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)attn_b));
    if (dev < 64)
        done_mask |= (uint64_t)1 << dev;
    return 0;
}
