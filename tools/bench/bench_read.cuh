/* bench_read.cuh: what bench_dense.cu and probe_dv_order.cu time with:
 *  - stream_read, the streaming read that the read floor is (bench_dense.cu's read_floor_us):
 *    float4 loads, 4 in flight a thread, grid-stride over n float4 of p; a sum that is never
 *    stored keeps the loads (stream_read_sum, its loop, for the probes' variants);
 *  - bench_timed_launches, the launches of one row: warm untimed ones, then reps each after
 *    before() (the L2 flush), CUDA events around fn alone. */
#ifndef MLA_BENCH_READ_CUH
#define MLA_BENCH_READ_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include <algorithm>
#include <vector>

/* The streaming read's loop, the body of stream_read and of the probes' variants of it: this
 * thread's sum of its float4 of p (never stored; it keeps the loads). */
static __device__ __forceinline__ float stream_read_sum(const float4 *__restrict__ p, int64_t n) {
    float s = 0.0f;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x * 4;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x * 4 + threadIdx.x; e < n; e += stride) {
        float4 v[4];
#pragma unroll
        for (int u = 0; u < 4; u++)
            v[u] = e + u * 256 < n ? __ldg(p + e + u * 256) : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
        for (int u = 0; u < 4; u++) s += v[u].x + v[u].y + v[u].z + v[u].w;
    }
    return s;
}
static __global__ void __launch_bounds__(256)
    stream_read(const float4 *__restrict__ p, int64_t n, float *sink) {
    const float s = stream_read_sum(p, n);
    if (s == 12345.678f) /* never true: keeps the loads */
        sink[0] = s;
}

/* The times (ms, sorted) into *t; the first CUDA error, or cudaSuccess. */
template <class F, class B>
static cudaError_t bench_timed_launches(const F &fn, const B &before, int warm, int reps,
                                        std::vector<float> *t) {
    cudaEvent_t a, b;
    cudaError_t e = cudaEventCreate(&a);
    if (e != cudaSuccess) return e;
    if ((e = cudaEventCreate(&b)) != cudaSuccess) {
        cudaEventDestroy(a);
        return e;
    }
    for (int i = 0; i < warm; i++) fn();
    t->clear();
    for (int i = 0; i < reps && e == cudaSuccess; i++) {
        before();
        float ms = 0;
        if ((e = cudaEventRecord(a)) != cudaSuccess) break;
        fn();
        if ((e = cudaEventRecord(b)) != cudaSuccess ||
            (e = cudaEventSynchronize(b)) != cudaSuccess ||
            (e = cudaEventElapsedTime(&ms, a, b)) != cudaSuccess)
            break;
        t->push_back(ms);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(t->begin(), t->end());
    return e;
}

#endif /* MLA_BENCH_READ_CUH */
