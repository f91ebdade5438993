// Standalone: time a plain streaming read (and a D2D copy) of N bytes after an L2 flush, the
// way bench_dense times kernels (events around one launch, median of 30).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e = (x);                                                                       \
        if (e) {                                                                                   \
            printf("%s: %s\n", #x, cudaGetErrorString(e));                                         \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
__global__ void flush_read(const float4 *__restrict__ p, long n, float *sink) {
    float s = 0;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)gridDim.x * blockDim.x) {
        float4 v = p[i];
        s += v.x + v.y + v.z + v.w;
    }
    if (s == 12345.f) *sink = s;
}
template <int U>
__global__ void __launch_bounds__(256) rd(const float4 *__restrict__ p, long n, float *sink) {
    float s = 0;
    long stride = (long)gridDim.x * blockDim.x * U;
    for (long i = (blockIdx.x * (long)blockDim.x) * U + threadIdx.x; i < n; i += stride) {
        float4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            v[u] = (i + u * 256 < n) ? __ldg(p + i + u * 256) : make_float4(0, 0, 0, 0);
#pragma unroll
        for (int u = 0; u < U; u++) s += v[u].x + v[u].y + v[u].z + v[u].w;
    }
    if (s == 12345.f) *sink = s;
}
// contiguous per block: block b reads [b*per, (b+1)*per)
template <int U>
__global__ void __launch_bounds__(256) rdc(const float4 *__restrict__ p, long n, float *sink) {
    long per = (n + gridDim.x - 1) / gridDim.x, b0 = blockIdx.x * per, b1 = min(n, b0 + per);
    float s = 0;
    for (long i = b0 + threadIdx.x; i < b1; i += 256 * U) {
        float4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            v[u] = (i + u * 256 < b1) ? __ldg(p + i + u * 256) : make_float4(0, 0, 0, 0);
#pragma unroll
        for (int u = 0; u < U; u++) s += v[u].x + v[u].y + v[u].z + v[u].w;
    }
    if (s == 12345.f) *sink = s;
}
int main() {
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    int l2;
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    size_t fb = 2 * (size_t)l2;
    void *fl;
    float *sink;
    CK(cudaMalloc(&fl, fb));
    CK(cudaMemset(fl, 0, fb));
    CK(cudaMalloc(&sink, 4));
    size_t maxb = 600u << 20;
    void *a, *b;
    CK(cudaMalloc(&a, maxb));
    CK(cudaMalloc(&b, maxb));
    CK(cudaMemset(a, 1, maxb));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    auto time = [&](auto fn) {
        std::vector<float> v;
        for (int r = 0; r < 33; r++) {
            flush_read<<<1024, 256>>>((const float4 *)fl, fb / 16, sink);
            CK(cudaEventRecord(e0));
            fn();
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            if (r >= 3) v.push_back(ms * 1000);
        }
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    auto empty = [&]() { return time([&] { rd<1><<<1, 32>>>((const float4 *)a, 0, sink); }); };
    printf("empty kernel launch (events): %.2f us\n", empty());
    const double MB[] = {25.35, 33.75, 75.8, 537.0};
    printf("| MB | best read us | TB/s | config | memcpy D2D us (read+write TB/s) |\n");
    for (double mb : MB) {
        long n = (long)(mb * 1e6 / 16);
        float best = 1e30;
        char cfg[64] = "";
        for (int k : {1, 2, 4, 8, 16}) {
            int g = sms * k;
            float t1 = time([&] { rd<1><<<g, 256>>>((const float4 *)a, n, sink); });
            float t4 = time([&] { rd<4><<<g, 256>>>((const float4 *)a, n, sink); });
            float c4 = time([&] { rdc<4><<<g, 256>>>((const float4 *)a, n, sink); });
            if (t1 < best) {
                best = t1;
                snprintf(cfg, 64, "grid-stride U1 %d blk/SM", k);
            }
            if (t4 < best) {
                best = t4;
                snprintf(cfg, 64, "grid-stride U4 %d blk/SM", k);
            }
            if (c4 < best) {
                best = c4;
                snprintf(cfg, 64, "contig U4 %d blk/SM", k);
            }
        }
        size_t nb = (size_t)n * 16;
        float mc = time([&] { CK(cudaMemcpyAsync(b, a, nb, cudaMemcpyDeviceToDevice)); });
        printf("| %.2f | %.2f | %.2f | %s | %.2f (%.2f) |\n", mb, best, nb / (best * 1e6), cfg, mc,
               2.0 * nb / (mc * 1e6));
    }
    return 0;
}
