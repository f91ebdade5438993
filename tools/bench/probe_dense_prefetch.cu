/* probe_dense_prefetch: do decompress_v and absorb_q wait on the order their bytes arrive in?
 * (issue "Ahead of the PyTorch peer", docs/performance.md, twelfth session.)
 *
 * Both kernels sit 2.5-3.4 us above a streaming read of their bytes (decompress_v 14.2 us against
 * 11.07, absorb_q 12.6 against 9.2), and the tenth session's probe_dv_order put decompress's gap
 * in its chains' schedule (2.3 us), not in its request order. A chain can only run on a chunk
 * once every lane's copies of it have landed, so if the bytes come back in bursts, the chains run
 * after the bursts instead of beside them. This probe times standalone copies of the two shipped
 * kernels (bytes checked equal to the launchers') beside forms that first ask the L2 for the
 * whole block's bytes with one bulk prefetch a row (cp.async.bulk.prefetch.L2, sm_90), so the
 * DRAM has every byte requested at once while the shared-memory rings stay as they are:
 *   decompress_v (glm5 decode: 64 heads x 256 outputs, chains of 512):
 *     launcher      memra_mla_decompress_v_f32;
 *     D shipped     the shipped arm (4 warps a block, a 6-stage ring of 8 KB a warp);
 *     D pf row      + each lane's 2 KB weight row prefetched into L2 first;
 *     D pf chunk    + the same bytes prefetched chunk by chunk (8 x 256 B a lane, in the
 *                   chains' order);
 *     D pf ring 3   D pf row with a 3-stage ring;
 *   absorb_q (glm5 decode: 64 heads x 512 outputs, chains of 192):
 *     launcher      memra_mla_absorb_q_f32 (the bulk arm: 12 chunks of 16 KB on mbarriers);
 *     A shipped     its standalone copy;
 *     A pf          + each weight row's 1 KB prefetched into L2 first;
 *     A cp.async    every thread's cp.async of the block's 192 KB at once, 12 commit groups;
 *     A cp.async pf the same with the prefetch first;
 * and the streaming read of each kernel's bytes (the read floor) and an empty kernel. Each row is
 * the median of 30 launches after the same L2 flush as bench_dense, the median of 3 interleaved
 * rounds. Reading it: a prefetch form well below its shipped form says the arrival order cost the
 * time. Without a GPU it exits 77. */
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

static __device__ __forceinline__ void pf_l2(const void *g, unsigned bytes) {
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(g), "r"(bytes) : "memory");
}

/* ---- decompress_v: out[h][v] = chain over r of wv_b[h][v][r] * o_lat[h][r] ---------------- */
enum { D_CH = 64, D_LD = D_CH + 4, D_ROWS = 128, D_NB = DV / D_ROWS, D_NCH = R / D_CH };
/* PF 0: none; 1: the lane's row (2 KB) at once; 2: chunk by chunk (8 x 256 B). */
template <int PF, int NS>
static __global__ void __launch_bounds__(128, 2)
    dv_probe(const float *__restrict__ o_lat, const float *__restrict__ w,
             float *__restrict__ out) {
    extern __shared__ __align__(16) float smem[];
    const int h = blockIdx.x / D_NB, cb = blockIdx.x % D_NB;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int v0 = cb * D_ROWS + warp * 32;
    const float *wh = w + (size_t)h * DV * R;
    if (PF == 1) pf_l2(wh + (size_t)(v0 + lane) * R, R * 4);
    if (PF == 2)
#pragma unroll
        for (int k = 0; k < D_NCH; k++) pf_l2(wh + (size_t)(v0 + lane) * R + k * D_CH, D_CH * 4);
    float *os = smem;
    float *ring = smem + R + (size_t)warp * NS * 32 * D_LD;
    auto issue = [&](int k) {
        if (k < D_NCH) {
            float *st = ring + (k % NS) * (32 * D_LD);
#pragma unroll
            for (int u = 0; u < 32 * D_CH / 4 / 32; u++) {
                const int e = u * 32 + lane, row = e / (D_CH / 4), c4 = e % (D_CH / 4);
                cp16(st + row * D_LD + 4 * c4, wh + (size_t)(v0 + row) * R + k * D_CH + 4 * c4);
            }
        }
        commit();
    };
    for (int k = 0; k < NS - 1; k++) issue(k);
    for (int e = threadIdx.x; e < R; e += 128) os[e] = o_lat[(size_t)h * R + e];
    __syncthreads();
    float acc = 0.0f;
    for (int k = 0; k < D_NCH; k++) {
        issue(k + NS - 1);
        wait_groups<NS - 1>();
        __syncwarp();
        const float *row = ring + (k % NS) * (32 * D_LD) + lane * D_LD;
        for (int c = 0; c < D_CH; c += 4) {
            const float4 w4 = *reinterpret_cast<const float4 *>(row + c);
            const float4 o4 = *reinterpret_cast<const float4 *>(os + k * D_CH + c);
            acc = __fmaf_rn(w4.x, o4.x, acc);
            acc = __fmaf_rn(w4.y, o4.y, acc);
            acc = __fmaf_rn(w4.z, o4.z, acc);
            acc = __fmaf_rn(w4.w, o4.w, acc);
        }
        __syncwarp();
    }
    wait_groups<0>();
    out[(size_t)h * DV + v0 + lane] = acc;
}
static size_t dv_smem(int ns) { return (size_t)(R + 4 * ns * 32 * D_LD) * 4; }

/* ---- absorb_q: q_lat[h][c] = chain over d of q_nope[h][d] * wk_b[h][d][c] ------------------ */
enum { A_COLS = 256, A_NB = R / A_COLS, A_ROWS = 16, A_NCH = DN / A_ROWS };
static __device__ __forceinline__ unsigned sh(const void *p) {
    return (unsigned)__cvta_generic_to_shared(p);
}
/* The shipped bulk arm at TT 1 (all 12 chunks in flight from the start), PF: each row's 1 KB
 * prefetched into L2 first. */
template <bool PF>
static __global__ void __launch_bounds__(A_COLS)
    ab_bulk_probe(const float *__restrict__ q_nope, const float *__restrict__ w,
                  float *__restrict__ q_lat) {
    extern __shared__ __align__(128) float ab_smem[];
    __shared__ __align__(8) uint64_t bar[A_NCH];
    const int h = blockIdx.x / A_NB, c0 = (blockIdx.x % A_NB) * A_COLS, tid = threadIdx.x;
    const float *wh = w + (size_t)h * DN * R + c0;
    if (PF && tid < DN) pf_l2(wh + (size_t)tid * R, A_COLS * 4);
    float *qs = ab_smem, *ring = ab_smem + DN;
    if (tid == 0) {
        for (int i = 0; i < A_NCH; i++)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(sh(&bar[i])) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;\nfence.proxy.async.shared::cta;\n" ::
                         : "memory");
    }
    __syncthreads();
    if (tid == 0)
        for (int k = 0; k < A_NCH; k++)
            asm volatile(
                "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(sh(&bar[k])),
                "r"((unsigned)(A_ROWS * A_COLS * 4))
                : "memory");
    if (tid < DN)
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], "
                     "[%1], %2, [%3];\n" ::"r"(sh(ring + (size_t)tid * A_COLS)),
                     "l"(wh + (size_t)tid * R), "r"((unsigned)(A_COLS * 4)),
                     "r"(sh(&bar[tid / A_ROWS]))
                     : "memory");
    for (int e = tid; e < DN; e += A_COLS) qs[e] = q_nope[(size_t)h * DN + e];
    __syncthreads();
    float acc = 0.0f;
    for (int k = 0; k < A_NCH; k++) {
        asm volatile("{\n.reg .pred p;\nAPW:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], "
                     "0;\n@!p bra APW;\n}\n" ::"r"(sh(&bar[k]))
                     : "memory");
#pragma unroll
        for (int r = 0; r < A_ROWS; r++)
            acc = __fmaf_rn(qs[k * A_ROWS + r], ring[(size_t)(k * A_ROWS + r) * A_COLS + tid], acc);
    }
    q_lat[(size_t)h * R + c0 + tid] = acc;
}

template <int K> static __device__ __forceinline__ void wait_chunk() {
    wait_groups<A_NCH - 1 - K>();
}
/* Every thread's cp.async of the block's 192 rows x 1 KB at once, one commit group a chunk. */
template <bool PF>
static __global__ void __launch_bounds__(A_COLS)
    ab_cp_probe(const float *__restrict__ q_nope, const float *__restrict__ w,
                float *__restrict__ q_lat) {
    extern __shared__ __align__(128) float ab_smem[];
    const int h = blockIdx.x / A_NB, c0 = (blockIdx.x % A_NB) * A_COLS, tid = threadIdx.x;
    const float *wh = w + (size_t)h * DN * R + c0;
    if (PF && tid < DN) pf_l2(wh + (size_t)tid * R, A_COLS * 4);
    float *qs = ab_smem, *ring = ab_smem + DN;
#pragma unroll
    for (int k = 0; k < A_NCH; k++) {
#pragma unroll
        for (int u = 0; u < A_ROWS * A_COLS / 4 / A_COLS; u++) {
            const int e = u * A_COLS + tid, r = k * A_ROWS + e / (A_COLS / 4),
                      c4 = e % (A_COLS / 4);
            cp16(ring + (size_t)r * A_COLS + 4 * c4, wh + (size_t)r * R + 4 * c4);
        }
        commit();
    }
    for (int e = tid; e < DN; e += A_COLS) qs[e] = q_nope[(size_t)h * DN + e];
    float acc = 0.0f;
    auto chunk = [&](int k) {
        __syncthreads();
#pragma unroll
        for (int r = 0; r < A_ROWS; r++)
            acc = __fmaf_rn(qs[k * A_ROWS + r], ring[(size_t)(k * A_ROWS + r) * A_COLS + tid], acc);
    };
    wait_chunk<0>(), chunk(0);
    wait_chunk<1>(), chunk(1);
    wait_chunk<2>(), chunk(2);
    wait_chunk<3>(), chunk(3);
    wait_chunk<4>(), chunk(4);
    wait_chunk<5>(), chunk(5);
    wait_chunk<6>(), chunk(6);
    wait_chunk<7>(), chunk(7);
    wait_chunk<8>(), chunk(8);
    wait_chunk<9>(), chunk(9);
    wait_chunk<10>(), chunk(10);
    wait_chunk<11>(), chunk(11);
    static_assert(A_NCH == 12, "the unrolled waits");
    q_lat[(size_t)h * R + c0 + tid] = acc;
}
static const size_t ab_smem_bytes = (size_t)(DN + DN * A_COLS) * 4;

struct row {
    const char *name;
    std::function<void()> fn;
    const float *out;
    size_t n;
    std::vector<double> t;
    int same; /* bytes equal the launcher's: 1, differ: 0, the launcher itself: -1 */
};

int main(void) {
    cudaDeviceProp prop;
    probe_device("probe_dense_prefetch", &prop);
    const dense_decode_inputs in = dense_decode_inputs_make();
    float *wv = in.wv, *wk = in.wk, *o_lat = in.o_lat, *q_nope = in.q_nope;
    const int64_t nwv = in.nwv, nwk = in.nwk;
    const size_t n_dv = (size_t)H * DV, n_ab = (size_t)H * R;
    CK(cudaFuncSetAttribute(dv_probe<0, 6>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)dv_smem(6)));
    CK(cudaFuncSetAttribute(dv_probe<1, 6>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)dv_smem(6)));
    CK(cudaFuncSetAttribute(dv_probe<2, 6>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)dv_smem(6)));
    CK(cudaFuncSetAttribute(dv_probe<1, 3>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)dv_smem(3)));
    CK(cudaFuncSetAttribute(ab_bulk_probe<false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)ab_smem_bytes));
    CK(cudaFuncSetAttribute(ab_bulk_probe<true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)ab_smem_bytes));
    CK(cudaFuncSetAttribute(ab_cp_probe<false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)ab_smem_bytes));
    CK(cudaFuncSetAttribute(ab_cp_probe<true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)ab_smem_bytes));
    float *o[10]; /* rows 0-4: decompress_v's outputs, rows 5-9: absorb_q's */
    for (int v = 0; v < 10; v++) CK(cudaMalloc(&o[v], (v < 5 ? n_dv : n_ab) * 4));
    const unsigned gdv = H * D_NB, gab = H * A_NB;
    std::vector<row> rows = {
        {"decompress_v: launcher",
         [&] {
             if (memra_mla_decompress_v_f32(o_lat, wv, o[0], 1, H, DV, R, NULL))
                 exit((fprintf(stderr, "decompress_v failed\n"), 1));
         },
         o[0],
         n_dv,
         {},
         -1},
        {"D shipped (standalone)",
         [&] { dv_probe<0, 6><<<gdv, 128, dv_smem(6)>>>(o_lat, wv, o[1]); },
         o[1],
         n_dv,
         {},
         0},
        {"D pf row (2 KB a lane into L2 first)",
         [&] { dv_probe<1, 6><<<gdv, 128, dv_smem(6)>>>(o_lat, wv, o[2]); },
         o[2],
         n_dv,
         {},
         0},
        {"D pf chunk (8 x 256 B a lane, chain order)",
         [&] { dv_probe<2, 6><<<gdv, 128, dv_smem(6)>>>(o_lat, wv, o[3]); },
         o[3],
         n_dv,
         {},
         0},
        {"D pf row, 3-stage ring",
         [&] { dv_probe<1, 3><<<gdv, 128, dv_smem(3)>>>(o_lat, wv, o[4]); },
         o[4],
         n_dv,
         {},
         0},
        {"absorb_q: launcher",
         [&] {
             if (memra_mla_absorb_q_f32(q_nope, wk, o[5], 1, H, DN, R, NULL))
                 exit((fprintf(stderr, "absorb_q failed\n"), 1));
         },
         o[5],
         n_ab,
         {},
         -1},
        {"A shipped (bulk, standalone)",
         [&] { ab_bulk_probe<false><<<gab, A_COLS, ab_smem_bytes>>>(q_nope, wk, o[6]); },
         o[6],
         n_ab,
         {},
         0},
        {"A bulk + pf (1 KB a row into L2 first)",
         [&] { ab_bulk_probe<true><<<gab, A_COLS, ab_smem_bytes>>>(q_nope, wk, o[7]); },
         o[7],
         n_ab,
         {},
         0},
        {"A cp.async (every thread, all at once)",
         [&] { ab_cp_probe<false><<<gab, A_COLS, ab_smem_bytes>>>(q_nope, wk, o[8]); },
         o[8],
         n_ab,
         {},
         0},
        {"A cp.async + pf",
         [&] { ab_cp_probe<true><<<gab, A_COLS, ab_smem_bytes>>>(q_nope, wk, o[9]); },
         o[9],
         n_ab,
         {},
         0},
    };
    double floor_dv = 1e30, floor_ab = 1e30, t_empty = 1e30;
    for (int rep = 0; rep < 3; rep++) { /* interleaved, so drift hits every row alike */
        for (auto &r : rows) r.t.push_back(median_us(r.fn));
        for (int per_sm : {4, 8, 16}) {
            const unsigned g = prop.multiProcessorCount * per_sm;
            floor_dv = std::min(floor_dv, median_us([&] {
                                    stream_read<<<g, 256>>>((const float4 *)wv, nwv / 4, g_sink);
                                }));
            floor_ab = std::min(floor_ab, median_us([&] {
                                    stream_read<<<g, 256>>>((const float4 *)wk, nwk / 4, g_sink);
                                }));
        }
        t_empty = std::min(t_empty, median_us([&] { empty_kernel<<<132, 256>>>(g_sink); }));
    }
    CK(cudaDeviceSynchronize());
    std::vector<float> ref_dv(n_dv), ref_ab(n_ab), got(n_ab > n_dv ? n_ab : n_dv);
    CK(cudaMemcpy(ref_dv.data(), o[0], n_dv * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(ref_ab.data(), o[5], n_ab * 4, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (auto &r : rows) {
        if (r.same < 0) continue;
        CK(cudaMemcpy(got.data(), r.out, r.n * 4, cudaMemcpyDeviceToHost));
        const float *ref = r.n == n_dv ? ref_dv.data() : ref_ab.data();
        r.same = memcmp(got.data(), ref, r.n * 4) == 0;
        bad += !r.same;
    }
    printf("probe_dense_prefetch on %s: glm5 decode; medians of 30 launches after an L2 flush, "
           "the median of 3 interleaved rounds; empty kernel %.2f us\n\n",
           prop.name, t_empty);
    printf("| row | us | of its read floor | bytes == launcher |\n| --- | ---: | ---: | --- |\n");
    for (auto &r : rows) {
        const double f = r.n == n_dv ? floor_dv : floor_ab;
        printf("| %s | %.2f | %.0f%% | %s |\n", r.name, median_of(r.t), 100 * f / median_of(r.t),
               r.same < 0 ? "(the reference)"
               : r.same   ? "yes"
                          : "NO");
    }
    printf("| read floor: wv_b %.2f MB | %.2f | 100%% | - |\n", nwv * 4 / 1e6, floor_dv);
    printf("| read floor: wk_b %.2f MB | %.2f | 100%% | - |\n", nwk * 4 / 1e6, floor_ab);
    if (bad) fprintf(stderr, "probe_dense_prefetch: %d variant(s) changed the bytes\n", bad);
    return bad ? 1 : 0;
}
