/* probe_dense_flat: does decompress_v / absorb_q lose time to the 4 SMs its 128 blocks leave idle,
 * or to its blocks' shape? (issue "Ahead of the PyTorch peer", docs/performance.md, thirteenth
 * session.)
 *
 * At glm5 decode both launchers run 128 blocks, one a head and output range, on 132 SMs. A "flat"
 * block takes a contiguous range of the flattened outputs f = h * out_dim + o instead, so the
 * grid can be any size: a block's range may span two heads (it stages both heads' input rows,
 * and each lane reads its own head's). Every output is still one serial __fmaf_rn chain in
 * ascending order from 0.0f, so the bytes must equal the launcher's. Rows:
 *   decompress_v (64 heads x 256 outputs, chains of 512):
 *     launcher        memra_mla_decompress_v_f32;
 *     D 128 x 4w      a standalone copy of the shipped arm's geometry (128 blocks of 4 warps);
 *     D flat G x NW   G blocks of NW warps (132 x 4, 264 x 2, 528 x 1), each lane its flat row;
 *   absorb_q (64 heads x 512 outputs, chains of 192):
 *     launcher        memra_mla_absorb_q_f32 (the bulk arm);
 *     A 128 cp.async  every thread's cp.async of the block's 192 rows at once (128 blocks), with
 *                     the ring at three offsets and the q_nope row loaded before or after;
 *     A 128, warps    each warp copying its own 32 columns, no block barrier in the chain;
 *     A flat 132      the same in 132 blocks of flat ranges (multiples of 4 outputs);
 *     A regs          no ring: each thread's column loaded straight into registers (fourteenth
 *                     session), every load at once, in blocks of 32 to 256 threads;
 *   the streaming read of wv_b in 128 x 8 and 132 x 8 blocks (does the SM count alone matter?),
 *   and of wk_b with a shared-memory request that needs the largest carveout (does it cost?).
 * Each row is the median of 30 launches after an L2 flush, the median of 3 interleaved rounds.
 * Without a GPU it exits 77. */
#include "kernels/mla.h"
#include "kernels/mla_cuda_check.h"
#include "tests/lib/geometry.h"
#include "tests/lib/mla_fill.h"
#include "tools/bench/probe_util.cuh"

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <functional>
#include <vector>

enum { H = MLA_GLM5_N_HEAD, DV = MLA_GLM5_D_V, R = MLA_GLM5_KV_RANK, DN = MLA_GLM5_D_NOPE };

/* ---- decompress_v: out[f] = chain over r of wv_b[f][r] * o_lat[f / DV][r] ------------------ */
enum { D_CH = 64, D_LD = D_CH + 4, D_NCH = R / D_CH, D_NF = H * DV, D_OS = R + 4 };

/* Block b: flat rows [f0, f1) = [b * D_NF / G, (b + 1) * D_NF / G) (G = gridDim.x), warp w the
 * 32 rows from f0 + 32 w. NS: the warp's ring depth. The o_lat rows of the (at most two) heads
 * the range spans at os[0] and os[D_OS] (4 floats apart in the banks). */
template <int NW, int NS>
static __global__ void __launch_bounds__(NW * 32)
    dv_flat(const float *__restrict__ o_lat, const float *__restrict__ w, float *__restrict__ out) {
    extern __shared__ __align__(16) float smem[];
    const uint32_t G = gridDim.x, b = blockIdx.x;
    const int32_t f0 = (int32_t)(b * (uint32_t)D_NF / G),
                  f1 = (int32_t)((b + 1) * (uint32_t)D_NF / G);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int32_t v0 = f0 + warp * 32, ha = f0 / DV, hb = (f1 - 1) / DV;
    /* the stage loads first, the copies after, the stores last (the shipped order) */
    float og[2][R / (NW * 32) > 0 ? R / (NW * 32) : 1];
    constexpr int OU = R / (NW * 32);
#pragma unroll
    for (int u = 0; u < OU; u++) {
        og[0][u] = __ldg(o_lat + (size_t)ha * R + threadIdx.x + u * NW * 32);
        og[1][u] = hb > ha ? __ldg(o_lat + (size_t)hb * R + threadIdx.x + u * NW * 32) : 0.0f;
    }
    float *os = smem;
    float *ring = smem + 2 * D_OS + (size_t)warp * NS * 32 * D_LD;
    auto issue = [&](int k) {
        if (k < D_NCH) {
            float *st = ring + (k % NS) * (32 * D_LD);
#pragma unroll
            for (int u = 0; u < 32 * D_CH / 4 / 32; u++) {
                const int e = u * 32 + lane, row = e / (D_CH / 4), c4 = e % (D_CH / 4);
                if (v0 + row < f1)
                    cp16(st + row * D_LD + 4 * c4, w + (size_t)(v0 + row) * R + k * D_CH + 4 * c4);
            }
        }
        commit();
    };
    const bool warp_on = v0 < f1;
    if (warp_on)
        for (int k = 0; k < NS - 1; k++) issue(k);
#pragma unroll
    for (int u = 0; u < OU; u++) {
        os[threadIdx.x + u * NW * 32] = og[0][u];
        os[D_OS + threadIdx.x + u * NW * 32] = og[1][u];
    }
    __syncthreads();
    if (!warp_on) return;
    const bool on = v0 + lane < f1;
    const float *op = os + (on && (v0 + lane) / DV > ha ? D_OS : 0);
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < D_NCH; k++) {
        issue(k + NS - 1);
        wait_groups<NS - 1>();
        __syncwarp();
        const float *row = ring + (k % NS) * (32 * D_LD) + lane * D_LD;
#pragma unroll
        for (int c = 0; c < D_CH; c += 4) {
            const float4 w4 = *reinterpret_cast<const float4 *>(row + c);
            const float4 o4 = *reinterpret_cast<const float4 *>(op + k * D_CH + c);
            acc = __fmaf_rn(w4.x, o4.x, acc);
            acc = __fmaf_rn(w4.y, o4.y, acc);
            acc = __fmaf_rn(w4.z, o4.z, acc);
            acc = __fmaf_rn(w4.w, o4.w, acc);
        }
        __syncwarp();
    }
    wait_groups<0>();
    if (on) out[v0 + lane] = acc;
}
template <int NW, int NS> static size_t dv_flat_smem(void) {
    return (size_t)(2 * D_OS + NW * NS * 32 * D_LD) * 4;
}

/* ---- absorb_q: q_lat[f] = chain over d of q_nope[f / R][d] * wk_b[f / R][d][f % R] ---------- */
enum { A_COLS = 256, A_NB = R / A_COLS, A_ROWS = 16, A_NCH = DN / A_ROWS, A_NF = H * R };
enum { A_QS = DN + 1 }; /* the second head's q_nope row, one bank over */

static __device__ __forceinline__ void ab_chunks(const float *qs, const float *ring, int col,
                                                 float &acc) {
    /* the 12 chunks, each after its own group (wait_group needs a constant) */
#define AB_CHUNK(K)                                                                                \
    wait_groups<A_NCH - 1 - (K)>();                                                                \
    __syncthreads();                                                                               \
    _Pragma("unroll") for (int r = 0; r < A_ROWS; r++) acc =                                       \
        __fmaf_rn(qs[(K)*A_ROWS + r], ring[(size_t)((K)*A_ROWS + r) * A_COLS + col], acc);
    AB_CHUNK(0) AB_CHUNK(1) AB_CHUNK(2) AB_CHUNK(3) AB_CHUNK(4) AB_CHUNK(5);
    AB_CHUNK(6) AB_CHUNK(7) AB_CHUNK(8) AB_CHUNK(9) AB_CHUNK(10) AB_CHUNK(11);
#undef AB_CHUNK
    static_assert(A_NCH == 12, "the unrolled waits");
}

/* 128 blocks (head, 256 columns), every thread's cp.async of the block's 192 rows at once. The
 * ring starts RING floats into shared memory (after qs); QFIRST: the q_nope row loaded into a
 * register before the copies and stored after, else loaded and stored after the copies (the
 * twelfth session's probe form, 10.6 us there against this form's 11.6 at RING 388). */
template <bool QFIRST, int RING>
static __global__ void __launch_bounds__(A_COLS)
    ab_cp128(const float *__restrict__ q_nope, const float *__restrict__ w,
             float *__restrict__ q_lat) {
    extern __shared__ __align__(128) float ab_smem[];
    const int h = blockIdx.x / A_NB, c0 = (blockIdx.x % A_NB) * A_COLS, tid = threadIdx.x;
    const float *wh = w + (size_t)h * DN * R + c0;
    float *qs = ab_smem, *ring = ab_smem + RING;
    float qv = 0.0f;
    if (QFIRST) qv = tid < DN ? __ldg(q_nope + (size_t)h * DN + tid) : 0.0f;
    const int c4 = tid & 63, rp = tid >> 6;
#pragma unroll
    for (int k = 0; k < A_NCH; k++) {
#pragma unroll
        for (int u = 0; u < A_ROWS / 4; u++) {
            const int d = k * A_ROWS + 4 * u + rp;
            cp16(ring + (size_t)d * A_COLS + 4 * c4, wh + (size_t)d * R + 4 * c4);
        }
        commit();
    }
    if (!QFIRST && tid < DN) qv = q_nope[(size_t)h * DN + tid];
    if (tid < DN) qs[tid] = qv;
    float acc = 0.0f;
    ab_chunks(qs, ring, tid, acc);
    q_lat[(size_t)h * R + c0 + tid] = acc;
}
template <int RING> static size_t ab_cp_smem(void) { return (size_t)(RING + DN * A_COLS) * 4; }

/* The same chains with no block barrier in the chain: warp w copies its own 32 columns of every
 * row (128 B, float4 column lane % 8 of rows lane / 8 + 4 u of each chunk) into its own 128-byte
 * aligned ring [DN][32], so a chunk needs only the warp's own copies (wait_group, __syncwarp).
 * The q_nope row: one block barrier before the chain. (Thirteenth session: the question was
 * whether the 12 block barriers of absorb_q_cp_f32 cost its last 0.7 us. Fourteenth session,
 * H200: 10.56 / 10.69 us against the block-barrier form's 10.53 / 10.66, so they did not.) */
template <int K>
static __device__ __forceinline__ void ab_warp_chunk(const float *qs, const float *ring, int lane,
                                                     float &acc) {
    wait_groups<A_NCH - 1 - K>();
    __syncwarp();
#pragma unroll
    for (int r = 0; r < A_ROWS; r++)
        acc = __fmaf_rn(qs[K * A_ROWS + r], ring[(K * A_ROWS + r) * 32 + lane], acc);
}
static __global__ void __launch_bounds__(A_COLS)
    ab_warp128(const float *__restrict__ q_nope, const float *__restrict__ w,
               float *__restrict__ q_lat) {
    extern __shared__ __align__(128) float ab_smem[];
    const int h = blockIdx.x / A_NB, c0 = (blockIdx.x % A_NB) * A_COLS, tid = threadIdx.x;
    const int lane = tid & 31, warp = tid >> 5, c4 = lane & 7, rp = lane >> 3;
    const float *wh = w + (size_t)h * DN * R + c0 + warp * 32 + 4 * c4;
    float *qs = ab_smem, *ring = ab_smem + 192 + (size_t)warp * DN * 32;
    const float qv = tid < DN ? __ldg(q_nope + (size_t)h * DN + tid) : 0.0f;
#pragma unroll
    for (int k = 0; k < A_NCH; k++) {
#pragma unroll
        for (int u = 0; u < A_ROWS / 4; u++) {
            const int d = k * A_ROWS + 4 * u + rp;
            cp16(ring + d * 32 + 4 * c4, wh + (size_t)d * R);
        }
        commit();
    }
    if (tid < DN) qs[tid] = qv;
    __syncthreads(); /* qs */
    float acc = 0.0f;
    ab_warp_chunk<0>(qs, ring, lane, acc), ab_warp_chunk<1>(qs, ring, lane, acc);
    ab_warp_chunk<2>(qs, ring, lane, acc), ab_warp_chunk<3>(qs, ring, lane, acc);
    ab_warp_chunk<4>(qs, ring, lane, acc), ab_warp_chunk<5>(qs, ring, lane, acc);
    ab_warp_chunk<6>(qs, ring, lane, acc), ab_warp_chunk<7>(qs, ring, lane, acc);
    ab_warp_chunk<8>(qs, ring, lane, acc), ab_warp_chunk<9>(qs, ring, lane, acc);
    ab_warp_chunk<10>(qs, ring, lane, acc), ab_warp_chunk<11>(qs, ring, lane, acc);
    q_lat[(size_t)h * R + c0 + tid] = acc;
}
static_assert(DN == 192 && A_NCH == 12 && DN <= A_COLS, "ab_warp128's unrolled chunks, q row");

/* The same chains with no shared-memory ring at all (fourteenth session): one column a thread,
 * NT threads a block (512 / NT blocks a head), each thread loading its column's weights straight
 * into registers, coalesced (a warp's 32 columns: 128 B a row), BATCH rows at a time with the next
 * batch's loads issued before the current batch's chain (the rows run BATCH = DN: every load at
 * once, 234 registers; with smaller batches ptxas interleaved the loads with the chain). The
 * q_nope row is staged in 768 B of static shared memory. The question: is the ring (its 192 KB
 * carveout, the copies, the waits) what keeps absorb 1.3 us above the read of wk_b? The loads
 * are ld_pinned (probe_util.cuh), so a batch's loads are all issued before the chain that waits on
 * the previous batch's. */
template <int NT, int BATCH>
static __global__ void __launch_bounds__(NT)
    ab_reg(const float *__restrict__ q_nope, const float *__restrict__ w,
           float *__restrict__ q_lat) {
    static_assert(DN % BATCH == 0 && R % NT == 0, "whole batches; whole blocks a head");
    __shared__ float qs[DN];
    constexpr int NBH = R / NT; /* blocks a head */
    const int h = blockIdx.x / NBH, c = (blockIdx.x % NBH) * NT + threadIdx.x;
    const float *wc = w + (size_t)h * DN * R + c;
    float cur[BATCH], nxt[BATCH];
#pragma unroll
    for (int r = 0; r < BATCH; r++) cur[r] = ld_pinned(wc + (size_t)r * R);
    for (int d = threadIdx.x; d < DN; d += NT) qs[d] = __ldg(q_nope + (size_t)h * DN + d);
    __syncthreads();
    float acc = 0.0f;
#pragma unroll
    for (int b = 0; b < DN / BATCH; b++) {
        if (b + 1 < DN / BATCH)
#pragma unroll
            for (int r = 0; r < BATCH; r++)
                nxt[r] = ld_pinned(wc + (size_t)((b + 1) * BATCH + r) * R);
#pragma unroll
        for (int r = 0; r < BATCH; r++) acc = __fmaf_rn(qs[b * BATCH + r], cur[r], acc);
#pragma unroll
        for (int r = 0; r < BATCH; r++) cur[r] = nxt[r];
    }
    q_lat[(size_t)h * R + c] = acc;
}

/* The streaming read of stream_read with a dynamic shared-memory request per block that, at 8
 * blocks an SM, needs the largest carveout (as absorb's and decompress's rings do): does the
 * carveout itself cost time after the flush? */
static __global__ void __launch_bounds__(256)
    stream_read_smem(const float4 *__restrict__ p, int64_t n, float *sink) {
    extern __shared__ float rs_smem[];
    const float s = stream_read_sum(p, n);
    if (s == 12345.678f) { /* never true: keeps the loads and the request */
        rs_smem[threadIdx.x] = s;
        sink[0] = rs_smem[(threadIdx.x + 1) & 255];
    }
}
#define RS_SMEM (24 * 1024)

/* G blocks of flat ranges [f0, f1), each a multiple of 4 outputs (at most 256); float4 column
 * c4 < (f1 - f0) / 4 of every row by the threads tid % 64 == c4, rows tid / 64 + 4 u. */
static __global__ void __launch_bounds__(A_COLS)
    ab_flat(const float *__restrict__ q_nope, const float *__restrict__ w,
            float *__restrict__ q_lat) {
    extern __shared__ __align__(128) float ab_smem[];
    const uint32_t G = gridDim.x, b = blockIdx.x;
    const int32_t f0 = 4 * (int32_t)(b * (uint32_t)(A_NF / 4) / G),
                  f1 = 4 * (int32_t)((b + 1) * (uint32_t)(A_NF / 4) / G);
    const int tid = threadIdx.x, c4 = tid & 63, rp = tid >> 6;
    const int32_t ha = f0 / R, hb = (f1 - 1) / R;
    float *qs = ab_smem, *ring = ab_smem + 2 * A_QS + 2;
    const float qa = tid < DN ? __ldg(q_nope + (size_t)ha * DN + tid) : 0.0f;
    const float qb = tid < DN && hb > ha ? __ldg(q_nope + (size_t)hb * DN + tid) : 0.0f;
    const int32_t fc = f0 + 4 * c4; /* this thread's copy column */
    const bool cp_on = fc < f1;
    const float *src = w + (size_t)(fc / R) * DN * R + fc % R;
#pragma unroll
    for (int k = 0; k < A_NCH; k++) {
#pragma unroll
        for (int u = 0; u < A_ROWS / 4; u++) {
            const int d = k * A_ROWS + 4 * u + rp;
            if (cp_on) cp16(ring + (size_t)d * A_COLS + 4 * c4, src + (size_t)d * R);
        }
        commit();
    }
    if (tid < DN) {
        qs[tid] = qa;
        qs[A_QS + tid] = qb;
    }
    const int32_t f = f0 + tid;
    float acc = 0.0f;
    ab_chunks(qs + (f < f1 && f / R > ha ? A_QS : 0), ring, tid, acc);
    if (f < f1) q_lat[f] = acc;
}
static const size_t ab_smem_bytes = (size_t)(2 * A_QS + 2 + DN * A_COLS) * 4;

struct row {
    const char *name;
    std::function<void()> fn;
    const float *out; /* NULL: a read, no bytes */
    int kind;         /* 0 decompress, 1 absorb */
    std::vector<double> t;
    int same; /* bytes equal the launcher's: 1, differ: 0, the launcher itself or a read: -1 */
};

int main(void) {
    cudaDeviceProp prop;
    probe_device("probe_dense_flat", &prop);
    const dense_decode_inputs in = dense_decode_inputs_make();
    float *wv = in.wv, *wk = in.wk, *o_lat = in.o_lat, *q_nope = in.q_nope;
    const int64_t nwv = in.nwv, nwk = in.nwk;
    const size_t n_dv = (size_t)H * DV, n_ab = (size_t)H * R;
    CK(cudaFuncSetAttribute(dv_flat<4, 6>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)dv_flat_smem<4, 6>()));
    CK(cudaFuncSetAttribute(dv_flat<2, 6>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)dv_flat_smem<2, 6>()));
    CK(cudaFuncSetAttribute(dv_flat<1, 5>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)dv_flat_smem<1, 5>()));
#define AB_ATTR(Q, RG)                                                                             \
    CK(cudaFuncSetAttribute(ab_cp128<Q, RG>, cudaFuncAttributeMaxDynamicSharedMemorySize,          \
                            (int)ab_cp_smem<RG>()))
    AB_ATTR(true, 388);
    AB_ATTR(true, 256);
    AB_ATTR(true, 192);
    AB_ATTR(false, 192);
    AB_ATTR(false, 388);
    CK(cudaFuncSetAttribute(ab_warp128, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)ab_cp_smem<192>()));
#undef AB_ATTR
    CK(cudaFuncSetAttribute(ab_flat, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)ab_smem_bytes));
    CK(cudaFuncSetAttribute(stream_read_smem, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            RS_SMEM));
    float
        *o[17]; /* row i's output (the reads have none): rows 0-4 decompress_v's, 5-16 absorb_q's */
    for (int v = 0; v < 17; v++) CK(cudaMalloc(&o[v], (v < 5 ? n_dv : n_ab) * 4));
    const unsigned sms = (unsigned)prop.multiProcessorCount;
    std::vector<row> rows = {
        {"decompress_v: launcher",
         [&] {
             if (memra_mla_decompress_v_f32(o_lat, wv, o[0], 1, H, DV, R, NULL))
                 exit((fprintf(stderr, "decompress_v failed\n"), 1));
         },
         o[0],
         0,
         {},
         -1},
        {"D 128 x 4 warps (the shipped geometry, flat form)",
         [&] { dv_flat<4, 6><<<128, 128, dv_flat_smem<4, 6>()>>>(o_lat, wv, o[1]); },
         o[1],
         0,
         {},
         0},
        {"D flat 132 x 4 warps",
         [&] { dv_flat<4, 6><<<sms, 128, dv_flat_smem<4, 6>()>>>(o_lat, wv, o[2]); },
         o[2],
         0,
         {},
         0},
        {"D flat 264 x 2 warps",
         [&] { dv_flat<2, 6><<<2 * sms, 64, dv_flat_smem<2, 6>()>>>(o_lat, wv, o[3]); },
         o[3],
         0,
         {},
         0},
        {"D flat 528 x 1 warp",
         [&] { dv_flat<1, 5><<<4 * sms, 32, dv_flat_smem<1, 5>()>>>(o_lat, wv, o[4]); },
         o[4],
         0,
         {},
         0},
        {"absorb_q: launcher",
         [&] {
             if (memra_mla_absorb_q_f32(q_nope, wk, o[5], 1, H, DN, R, NULL))
                 exit((fprintf(stderr, "absorb_q failed\n"), 1));
         },
         o[5],
         1,
         {},
         -1},
        {"A 128 cp.async, q first, ring at 388 floats",
         [&] { ab_cp128<true, 388><<<128, A_COLS, ab_cp_smem<388>()>>>(q_nope, wk, o[6]); },
         o[6],
         1,
         {},
         0},
        {"A 128 cp.async, q first, ring at 256 floats",
         [&] { ab_cp128<true, 256><<<128, A_COLS, ab_cp_smem<256>()>>>(q_nope, wk, o[7]); },
         o[7],
         1,
         {},
         0},
        {"A 128 cp.async, q first, ring at 192 floats",
         [&] { ab_cp128<true, 192><<<128, A_COLS, ab_cp_smem<192>()>>>(q_nope, wk, o[8]); },
         o[8],
         1,
         {},
         0},
        {"A 128 cp.async, q after, ring at 192 floats (the twelfth session's form)",
         [&] { ab_cp128<false, 192><<<128, A_COLS, ab_cp_smem<192>()>>>(q_nope, wk, o[9]); },
         o[9],
         1,
         {},
         0},
        {"A 128 cp.async, q after, ring at 388 floats",
         [&] { ab_cp128<false, 388><<<128, A_COLS, ab_cp_smem<388>()>>>(q_nope, wk, o[10]); },
         o[10],
         1,
         {},
         0},
        {"A 128, each warp its own columns, no block barrier in the chain",
         [&] { ab_warp128<<<128, A_COLS, ab_cp_smem<192>()>>>(q_nope, wk, o[11]); },
         o[11],
         1,
         {},
         0},
        {"A flat 132 cp.async",
         [&] { ab_flat<<<sms, A_COLS, ab_smem_bytes>>>(q_nope, wk, o[12]); },
         o[12],
         1,
         {},
         0},
        {"A regs 256 x 128 threads, every load at once",
         [&] { ab_reg<128, 192><<<256, 128>>>(q_nope, wk, o[13]); },
         o[13],
         1,
         {},
         0},
        {"A regs 128 x 256 threads, every load at once",
         [&] { ab_reg<256, 192><<<128, 256>>>(q_nope, wk, o[14]); },
         o[14],
         1,
         {},
         0},
        {"A regs 512 x 64 threads, every load at once",
         [&] { ab_reg<64, 192><<<512, 64>>>(q_nope, wk, o[15]); },
         o[15],
         1,
         {},
         0},
        {"A regs 1024 x 32 threads, every load at once",
         [&] { ab_reg<32, 192><<<1024, 32>>>(q_nope, wk, o[16]); },
         o[16],
         1,
         {},
         0},
        {"read wk_b, 128 x 8 blocks, 24 KB shared memory a block (the largest carveout)",
         [&] { stream_read_smem<<<128 * 8, 256, RS_SMEM>>>((const float4 *)wk, nwk / 4, g_sink); },
         NULL,
         1,
         {},
         -1},
        {"read wv_b, 128 x 8 blocks",
         [&] { stream_read<<<128 * 8, 256>>>((const float4 *)wv, nwv / 4, g_sink); },
         NULL,
         0,
         {},
         -1},
        {"read wv_b, 132 x 8 blocks",
         [&] { stream_read<<<sms * 8, 256>>>((const float4 *)wv, nwv / 4, g_sink); },
         NULL,
         0,
         {},
         -1},
        {"read wk_b, 128 x 8 blocks",
         [&] { stream_read<<<128 * 8, 256>>>((const float4 *)wk, nwk / 4, g_sink); },
         NULL,
         1,
         {},
         -1},
        {"read wk_b, 132 x 8 blocks",
         [&] { stream_read<<<sms * 8, 256>>>((const float4 *)wk, nwk / 4, g_sink); },
         NULL,
         1,
         {},
         -1},
    };
    double t_empty = 1e30;
    for (int rep = 0; rep < 3; rep++) { /* interleaved, so drift hits every row alike */
        for (auto &r : rows) r.t.push_back(median_us(r.fn));
        t_empty = std::min(t_empty, median_us([&] { empty_kernel<<<132, 256>>>(g_sink); }));
    }
    CK(cudaDeviceSynchronize());
    std::vector<float> ref[2] = {std::vector<float>(n_dv), std::vector<float>(n_ab)};
    std::vector<float> got(n_ab > n_dv ? n_ab : n_dv);
    CK(cudaMemcpy(ref[0].data(), o[0], n_dv * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(ref[1].data(), o[5], n_ab * 4, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (auto &r : rows) {
        if (r.same < 0) continue;
        const size_t n = r.kind ? n_ab : n_dv;
        CK(cudaMemcpy(got.data(), r.out, n * 4, cudaMemcpyDeviceToHost));
        r.same = memcmp(got.data(), ref[r.kind].data(), n * 4) == 0;
        bad += !r.same;
    }
    printf("probe_dense_flat on %s (%u SMs): glm5 decode; medians of 30 launches after an L2 "
           "flush, the median of 3 interleaved rounds; empty kernel %.2f us\n\n",
           prop.name, sms, t_empty);
    printf("| row | us | bytes == launcher |\n| --- | ---: | --- |\n");
    for (auto &r : rows)
        printf("| %s | %.2f | %s |\n", r.name, median_of(r.t),
               !r.out       ? "(a read)"
               : r.same < 0 ? "(the reference)"
               : r.same     ? "yes"
                            : "NO");
    if (bad) fprintf(stderr, "probe_dense_flat: %d variant(s) changed the bytes\n", bad);
    return bad ? 1 : 0;
}
