/* probe_dv_order: does the order in which decompress_v asks for its bytes cost it time?
 * (issue "Ahead of the PyTorch peer", docs/performance.md, tenth session.)
 *
 * decompress_v at glm5 decode reads 33.55 MB of wv_b in 14.2 us, against a read floor of 10.9
 * us for a plain streaming read of as many bytes. Its depth and shape of bytes in flight did not
 * matter (the eighth session's sweep: 12.8-13.1 us in every variant). The untested difference is
 * the order: each warp of the shipped kernel asks, per stage, for 32 pieces of 256 B, 2 KB
 * apart (floats [64k, 64k + 64) of its 32 rows), where the streaming read walks addresses in
 * order. This probe times, in one process, after the same L2 flush as bench_dense (a read of
 * twice the L2), medians of 30 launches:
 *   kernel   memra_mla_decompress_v_f32 itself (the fmaf chains);
 *   order A  the shipped launch shape and per-warp cp.async ring (128 blocks of 4 warps, a ring of
 *            6 stages of 8 KB a warp), the shipped order, no chains;
 *   order B  the same shape and ring, each warp's 64 KB read in address order, no chains;
 *   order C  the same blocks, each block's 256 KB read in address order by 1-D bulk copies of
 *            16 KB (6 in flight), no chains: the read pattern of an arm that stages whole rows;
 *   floor    the streaming read of bench_dense (float4, 4 in flight a thread, the fastest of 4 /
 *            8 / 16 blocks of 256 an SM).
 * Reading it: A near the kernel and B or C near the floor says the order costs the time, and an
 * arm that reads whole rows in order is the next step. A near B near the floor says the order
 * does not matter, and the cost is in the chains' schedule.
 * A second table prices the shared-memory configuration. Every timed kernel follows the flush,
 * which uses no shared memory, while decompress_v asks for 206 KiB a block and absorb_q for 193 KiB
 * (197 KB), and both kernels sit about 3.3 us above their read floors. An empty kernel and the
 * streaming read (132 blocks of 256) are timed with 0, 100 and 206 KiB of dynamic shared memory,
 * after the flush alone and again after the flush plus an untimed launch of the same configuration.
 * A primed launch that is faster by a few us says the configuration switch, not the kernels, costs
 * that time in the bench. Without a GPU it exits 77. */
#include "kernels/mla.h"
#include "kernels/mla_cuda_check.h"
#include "tests/lib/geometry.h"
#include "tests/lib/mla_fill.h"
#include "tools/bench/probe_util.cuh"

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <functional>
#include <vector>

enum { H = MLA_GLM5_N_HEAD, DV = MLA_GLM5_D_V, R = MLA_GLM5_KV_RANK, DN = MLA_GLM5_D_NOPE };
enum { NS = 6, CH = 64, LD = CH + 4, ROWS_PER_BLOCK = 128, NB = DV / ROWS_PER_BLOCK };
enum { C_STAGE = 16384, C_NS = 6 };

/* Orders A (LINEAR false) and B (true): a warp's 32 rows [v0, v0 + 32) of head h. */
template <bool LINEAR>
static __global__ void __launch_bounds__(128) order_ab(const float *__restrict__ w, float *sink) {
    extern __shared__ __align__(16) float smem[];
    const int h = blockIdx.x / NB, cb = blockIdx.x % NB;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    float *ring = smem + (size_t)warp * NS * 32 * LD;
    const int v0 = cb * ROWS_PER_BLOCK + warp * 32;
    const float *wh = w + ((size_t)h * DV + v0) * R; /* the warp's 64 KB */
    constexpr int n_ch = R / CH;
    auto issue = [&](int k) {
        if (k < n_ch) {
            float *st = ring + (k % NS) * (32 * LD);
#pragma unroll
            for (int u = 0; u < 32 * CH / 4 / 32; u++) {
                const int e = u * 32 + lane, row = e / (CH / 4), c4 = e % (CH / 4);
                const float *src = LINEAR ? wh + (size_t)k * 32 * CH + 4 * e
                                          : wh + (size_t)row * R + k * CH + 4 * c4;
                cp16(st + row * LD + 4 * c4, src);
            }
        }
        commit();
    };
    for (int k = 0; k < NS - 1; k++) issue(k);
    float acc = 0.0f;
    for (int k = 0; k < n_ch; k++) {
        issue(k + NS - 1);
        wait_groups<NS - 1>();
        __syncwarp();
        acc += ring[(k % NS) * (32 * LD) + lane * LD];
        __syncwarp();
    }
    wait_groups<0>();
    if (acc == 12345.678f) sink[0] = acc; /* never true: keeps the copies */
}

/* Order C: the block's 128 rows (256 KB contiguous) in address order, 16 KB bulk copies. */
static __global__ void __launch_bounds__(128) order_c(const float *__restrict__ w, float *sink) {
    extern __shared__ __align__(16) float smem[];
    __shared__ uint64_t bar[C_NS];
    const int h = blockIdx.x / NB, cb = blockIdx.x % NB;
    const char *src = (const char *)(w + ((size_t)h * DV + (size_t)cb * ROWS_PER_BLOCK) * R);
    constexpr int n_st = ROWS_PER_BLOCK * R * 4 / C_STAGE;
    auto issue = [&](int k) {
        unsigned b = (unsigned)__cvta_generic_to_shared(&bar[k % C_NS]);
        unsigned d = (unsigned)__cvta_generic_to_shared(smem + (size_t)(k % C_NS) * C_STAGE / 4);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(b),
                     "r"((unsigned)C_STAGE)
                     : "memory");
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], "
            "%2, [%3];\n" ::"r"(d),
            "l"(src + (size_t)k * C_STAGE), "r"((unsigned)C_STAGE), "r"(b)
            : "memory");
    };
    if (threadIdx.x == 0) {
        for (int s = 0; s < C_NS; s++) {
            unsigned b = (unsigned)__cvta_generic_to_shared(&bar[s]);
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(b) : "memory");
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        for (int k = 0; k < C_NS; k++) issue(k);
    }
    __syncthreads();
    float acc = 0.0f;
    for (int k = 0; k < n_st; k++) {
        unsigned b = (unsigned)__cvta_generic_to_shared(&bar[k % C_NS]);
        asm volatile("{\n.reg .pred p;\nPROBE_WAIT:\n"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
                     "@!p bra PROBE_WAIT;\n}\n" ::"r"(b),
                     "r"((unsigned)(k / C_NS) & 1u)
                     : "memory");
        acc += smem[(size_t)(k % C_NS) * C_STAGE / 4 + threadIdx.x * 4];
        __syncthreads(); /* every thread is done with the stage */
        if (threadIdx.x == 0 && k + C_NS < n_st) issue(k + C_NS);
    }
    if (acc == 12345.678f) sink[0] = acc;
}

int main(void) {
    cudaDeviceProp prop;
    probe_device("probe_dv_order", &prop);
    const int64_t nw = (int64_t)H * DV * R;
    float *w, *o_lat, *out;
    CK(cudaMalloc(&w, (size_t)nw * 4));
    CK(cudaMalloc(&o_lat, (size_t)H * R * 4));
    CK(cudaMalloc(&out, (size_t)H * DV * 4));
    fill<<<1024, 256>>>(w, nw, mla_fill_name_hash("wv_b"), 0.0442f);
    fill<<<64, 256>>>(o_lat, (int64_t)H * R, mla_fill_name_hash("o_lat"), 1.0f);
    CK(cudaGetLastError());
    const size_t smem_ab = (size_t)4 * NS * 32 * LD * 4, smem_c = (size_t)C_NS * C_STAGE;
    CK(cudaFuncSetAttribute(order_ab<false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)smem_ab));
    CK(cudaFuncSetAttribute(order_ab<true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)smem_ab));
    CK(cudaFuncSetAttribute(order_c, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_c));
    const unsigned blocks = H * NB;
    double best_floor = 1e30;
    std::vector<double> t_kernel, t_a, t_b, t_c;
    for (int rep = 0; rep < 3; rep++) { /* interleaved, so drift hits every row alike */
        t_kernel.push_back(median_us([&] {
            int rc = memra_mla_decompress_v_f32(o_lat, w, out, 1, H, DV, R, NULL);
            if (rc) {
                fprintf(stderr, "decompress_v: %d %s\n", rc, mla_cuda_last_failure());
                exit(1);
            }
        }));
        t_a.push_back(median_us([&] { order_ab<false><<<blocks, 128, smem_ab>>>(w, g_sink); }));
        t_b.push_back(median_us([&] { order_ab<true><<<blocks, 128, smem_ab>>>(w, g_sink); }));
        t_c.push_back(median_us([&] { order_c<<<blocks, 128, smem_c>>>(w, g_sink); }));
        for (int per_sm : {4, 8, 16})
            best_floor = std::min(best_floor, median_us([&] {
                                      stream_read<<<prop.multiProcessorCount * per_sm, 256>>>(
                                          (const float4 *)w, nw / 4, g_sink);
                                  }));
    }
    /* The price of the shared-memory configuration: every timed kernel follows the L2 flush, which
     * uses none; decompress_v asks for 206 KiB a block and absorb_q for 193 KiB (197 KB). The same
     * launch (132 blocks of 256) with 0, 100 and 206 KiB of dynamic shared memory, after the flush
     * alone and after the flush and an untimed launch of the same configuration. */
    const int smem_kb[3] = {0, 100, 206}; /* KiB */
    double t_empty[3][2], t_read[3][2];
    for (int c = 0; c < 3; c++) {
        const size_t sm = (size_t)smem_kb[c] * 1024;
        CK(cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)sm));
        CK(cudaFuncSetAttribute(stream_read, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm));
        const unsigned g = prop.multiProcessorCount;
        auto empty = [&] { empty_kernel<<<g, 256, sm>>>(g_sink); };
        auto read = [&] { stream_read<<<g, 256, sm>>>((const float4 *)w, nw / 4, g_sink); };
        for (int primed = 0; primed < 2; primed++) {
            t_empty[c][primed] = median_us(empty, primed ? std::function<void()>(empty) : nullptr);
            t_read[c][primed] = median_us(read, primed ? std::function<void()>(empty) : nullptr);
        }
    }
    /* the kernels themselves, after the flush alone and primed with an empty launch at their own
     * configuration (decompress_v 206 KiB, absorb_q 193 KiB) */
    float *q_nope, *wk_b, *q_lat;
    CK(cudaMalloc(&q_nope, (size_t)H * DN * 4));
    CK(cudaMalloc(&wk_b, (size_t)H * DN * R * 4));
    CK(cudaMalloc(&q_lat, (size_t)H * R * 4));
    fill<<<64, 256>>>(q_nope, (int64_t)H * DN, mla_fill_name_hash("q_nope"), 1.0f);
    fill<<<1024, 256>>>(wk_b, (int64_t)H * DN * R, mla_fill_name_hash("wk_b"), 0.0722f);
    CK(cudaGetLastError());
    auto dv = [&] {
        int rc = memra_mla_decompress_v_f32(o_lat, w, out, 1, H, DV, R, NULL);
        if (rc) exit((fprintf(stderr, "decompress_v: %d\n", rc), 1));
    };
    auto ab = [&] {
        int rc = memra_mla_absorb_q_f32(q_nope, wk_b, q_lat, 1, H, DN, R, NULL);
        if (rc) exit((fprintf(stderr, "absorb_q: %d\n", rc), 1));
    };
    const unsigned g1 = prop.multiProcessorCount;
    /* the launchers' dynamic shared memory at decode (mla_dense.cu: decompress_smem(512, 1),
     * absorb_bulk_smem(192, 1)) */
    const size_t sm_dv = (512 + 4 * 6 * 32 * 68) * 4, sm_ab = (192 + 12 * 16 * 256) * 4;
    CK(cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm_dv));
    const double t_dv = median_us(dv),
                 t_dv_p = median_us(dv, [&] { empty_kernel<<<g1, 256, sm_dv>>>(g_sink); }),
                 t_ab = median_us(ab),
                 t_ab_p = median_us(ab, [&] { empty_kernel<<<g1, 256, sm_ab>>>(g_sink); });
    CK(cudaFuncSetAttribute(stream_read, cudaFuncAttributeMaxDynamicSharedMemorySize, 0));
    printf("probe_dv_order on %s: decompress_v glm5 decode, %.2f MB of wv_b; medians of 30 "
           "launches after an L2 flush, the median of 3 interleaved rounds\n\n",
           prop.name, nw * 4 / 1e6);
    printf("| row | us | of the read floor |\n| --- | ---: | ---: |\n");
    const double f = best_floor;
    printf("| kernel: memra_mla_decompress_v_f32 (fmaf chains) | %.2f | %.0f%% |\n",
           median_of(t_kernel), 100 * f / median_of(t_kernel));
    printf("| order A: the shipped order, no chains | %.2f | %.0f%% |\n", median_of(t_a),
           100 * f / median_of(t_a));
    printf("| order B: each warp's 64 KB in address order, no chains | %.2f | %.0f%% |\n",
           median_of(t_b), 100 * f / median_of(t_b));
    printf("| order C: each block's 256 KB in order, 16 KB bulk copies, no chains | %.2f | %.0f%% "
           "|\n",
           median_of(t_c), 100 * f / median_of(t_c));
    printf("| floor: streaming read | %.2f | 100%% |\n", f);
    printf("\nThe price of the shared-memory configuration (%d blocks of 256, each launch after "
           "the flush; primed: after the flush and an untimed empty launch of the same "
           "configuration):\n\n",
           prop.multiProcessorCount);
    printf("| dynamic shared memory a block | empty kernel us | primed | streaming read of the "
           "weights us | primed |\n| ---: | ---: | ---: | ---: | ---: |\n");
    for (int c = 0; c < 3; c++)
        printf("| %d KiB | %.2f | %.2f | %.2f | %.2f |\n", smem_kb[c], t_empty[c][0], t_empty[c][1],
               t_read[c][0], t_read[c][1]);
    printf("\n| kernel | after the flush us | primed at its configuration us |\n| --- | ---: | "
           "---: |\n| decompress_v (206 KiB) | %.2f | %.2f |\n| absorb_q (193 KiB) | %.2f | %.2f "
           "|\n",
           t_dv, t_dv_p, t_ab, t_ab_p);
    return 0;
}
