/* probe_util.cuh: what the hand-run probes (probe_dv_order.cu, probe_dense_prefetch.cu) share:
 *  - CK, a CUDA call's failure printed with its place, then exit(1);
 *  - cp16 / commit / wait_groups, the plain cp.async forms of their standalone kernels;
 *  - fill (the realistic Philox fill of mla_fill.h, on the device) and an empty kernel;
 *  - probe_device, the device check (no device: exit 77) and the L2 flush buffer;
 *  - median_us, the median of 30 launches each after the flush (a read of twice the L2, as
 *    bench_dense times), optionally primed by an untimed launch; median_of, the median of a
 *    row's rounds;
 *  - ld_pinned, a load the compiler may not sink to its use (probe_dense_flat.cu,
 *    probe_absorb_tail.cu);
 *  - dense_decode_inputs_make, glm5 decode's inputs of decompress_v and absorb_q on the device
 *    (probe_dense_prefetch.cu, probe_dense_flat.cu). */
#ifndef MLA_PROBE_UTIL_CUH
#define MLA_PROBE_UTIL_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "tests/lib/geometry.h"
#include "tests/lib/mla_fill.h"
#include "tools/bench/bench_read.cuh"

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));     \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static __device__ __forceinline__ void cp16(void *smem, const void *g) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(g) : "memory");
}
static __device__ __forceinline__ void commit() {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N> static __device__ __forceinline__ void wait_groups() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

static __global__ void fill(float *p, int64_t n, uint32_t name_hash, float scale) {
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n;
         e += (int64_t)gridDim.x * blockDim.x)
        p[e] = mla_fill_realistic(1u, name_hash, (uint64_t)e, scale);
}

static __global__ void empty_kernel(float *sink) {
    if (threadIdx.x == 1023) sink[0] = 1.0f; /* never: 256 threads */
}

static float *g_flush, *g_sink;
static int64_t g_flush_n;

/* Device 0's properties into *prop and the flush buffer (twice the L2); exits 77 without a
 * device, naming the probe. */
static void probe_device(const char *name, cudaDeviceProp *prop) {
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
        fprintf(stderr, "%s: no CUDA device\n", name);
        exit(77);
    }
    CK(cudaGetDeviceProperties(prop, 0));
    g_flush_n = 2 * (int64_t)prop->l2CacheSize / 16;
    CK(cudaMalloc(&g_flush, (size_t)g_flush_n * 16));
    CK(cudaMemset(g_flush, 0, (size_t)g_flush_n * 16));
    CK(cudaMalloc(&g_sink, 4));
}

/* The median of 30 launches of fn, each after the L2 flush and then primer (untimed; none by
 * default). */
static double median_us(const std::function<void()> &fn,
                        const std::function<void()> &primer = std::function<void()>()) {
    std::vector<float> t;
    CK(bench_timed_launches(
        fn,
        [&] {
            stream_read<<<1024, 256>>>((const float4 *)g_flush, g_flush_n, g_sink);
            if (primer) primer();
        },
        3, 30, &t));
    CK(cudaGetLastError());
    return t[t.size() / 2] * 1e3;
}

/* The median of v (the upper one of an even count), as every probe's table reads its rounds. */
static double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/* A load the compiler may not sink to its use: volatile asm keeps the program order of the loads,
 * so a thread's loads are all issued before the chain that waits on them. */
static __device__ __forceinline__ float ld_pinned(const float *p) {
    float v;
    asm volatile("ld.global.nc.f32 %0, [%1];" : "=f"(v) : "l"(p));
    return v;
}

/* glm5 decode (one token): wv_b [H][d_v][R], wk_b [H][d_nope][R], o_lat [H][R], q_nope [H][d_nope],
 * the realistic fill at the weights' scales. */
struct dense_decode_inputs {
    float *wv, *wk, *o_lat, *q_nope;
    int64_t nwv, nwk; /* the weights' elements */
};
static dense_decode_inputs dense_decode_inputs_make(void) {
    const int64_t H = MLA_GLM5_N_HEAD, R = MLA_GLM5_KV_RANK;
    dense_decode_inputs in;
    in.nwv = H * MLA_GLM5_D_V * R;
    in.nwk = H * MLA_GLM5_D_NOPE * R;
    CK(cudaMalloc(&in.wv, (size_t)in.nwv * 4));
    CK(cudaMalloc(&in.wk, (size_t)in.nwk * 4));
    CK(cudaMalloc(&in.o_lat, (size_t)(H * R) * 4));
    CK(cudaMalloc(&in.q_nope, (size_t)(H * MLA_GLM5_D_NOPE) * 4));
    fill<<<1024, 256>>>(in.wv, in.nwv, mla_fill_name_hash("wv_b"), 0.0442f);
    fill<<<1024, 256>>>(in.wk, in.nwk, mla_fill_name_hash("wk_b"), 0.0722f);
    fill<<<64, 256>>>(in.o_lat, H * R, mla_fill_name_hash("o_lat"), 1.0f);
    fill<<<64, 256>>>(in.q_nope, H * MLA_GLM5_D_NOPE, mla_fill_name_hash("q_nope"), 1.0f);
    CK(cudaGetLastError());
    return in;
}

#endif /* MLA_PROBE_UTIL_CUH */
