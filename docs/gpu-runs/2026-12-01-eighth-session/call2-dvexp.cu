// Standalone (eighth session): decompress_v at glm5 decode (64 heads, d_v 256, kv_rank 512, t_q 1)
// in the shipped kernel's form (kernels/mla_dense.cu decompress_v_f32<1, true>: a warp's 32
// outputs, each lane one output's fmaf chain in ascending r, the rows staged through a per-warp
// cp.async ring of NS chunks of CH floats a row), swept over the ring depth NS, chunk CH, warps a
// block NW and an L2 prefetch hint; timed as bench_dense times (L2 flushed by a 2x-L2 read, events
// around one launch, median of 30), beside a grid-stride read of the same 33.55 MB. Every variant's
// bytes are compared with the shipped form's.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <vector>
#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e = (x);                                                                       \
        if (e) {                                                                                   \
            printf("%s: %s\n", #x, cudaGetErrorString(e));                                         \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
constexpr int H = 64, DV = 256, R = 512;
template <int PF> __device__ __forceinline__ void cp16(void *smem, const void *g, bool ok) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    int n = ok ? 16 : 0;
    if (PF)
        asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16, %2;\n" ::"r"(s), "l"(g),
                     "r"(n)
                     : "memory");
    else
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(g), "r"(n)
                     : "memory");
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wait_g() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
template <int NS, int CH, int NW, int PF>
__global__ void __launch_bounds__(NW * 32)
    dv(const float *__restrict__ o_lat, const float *__restrict__ wv_b, float *__restrict__ out) {
    extern __shared__ __align__(16) float smem[];
    constexpr int LD = CH + 4, NB = (DV + 32 * NW - 1) / (32 * NW);
    const int h = blockIdx.x / NB, cb = blockIdx.x % NB;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    float *os = smem;
    float *ring = smem + R + (size_t)warp * NS * 32 * LD;
    const int v0 = cb * 32 * NW + warp * 32;
    const bool warp_on = v0 < DV;
    constexpr int n_ch = R / CH;
    const float *wh = wv_b + (int64_t)h * DV * R;
    auto issue = [&](int k) {
        if (k < n_ch) {
            float *st = ring + (k % NS) * (32 * LD);
            const int r0 = k * CH;
#pragma unroll
            for (int u = 0; u < 32 * CH / 4 / 32; u++) {
                const int e = u * 32 + lane, row = e / (CH / 4), c4 = e % (CH / 4);
                cp16<PF>(st + row * LD + 4 * c4, wh + (int64_t)(v0 + row) * R + r0 + 4 * c4, true);
            }
        }
        commit();
    };
    if (warp_on)
        for (int k = 0; k < NS - 1; k++) issue(k);
    for (int e = tid; e < R; e += NW * 32) os[e] = o_lat[h * R + e];
    __syncthreads();
    if (!warp_on) return;
    float acc = 0.0f;
    for (int k = 0; k < n_ch; k++) {
        issue(k + NS - 1);
        wait_g<NS - 1>();
        __syncwarp();
        const int r0 = k * CH;
        const float *row = ring + (k % NS) * (32 * LD) + lane * LD;
#pragma unroll 4
        for (int c = 0; c < CH; c += 4) {
            const float4 w4 = *reinterpret_cast<const float4 *>(row + c);
            acc = __fmaf_rn(w4.x, os[r0 + c], acc);
            acc = __fmaf_rn(w4.y, os[r0 + c + 1], acc);
            acc = __fmaf_rn(w4.z, os[r0 + c + 2], acc);
            acc = __fmaf_rn(w4.w, os[r0 + c + 3], acc);
        }
        __syncwarp();
    }
    wait_g<0>();
    out[h * DV + v0 + lane] = acc;
}
__global__ void flush_read(const float4 *__restrict__ p, long n, float *sink) {
    float s = 0;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)gridDim.x * blockDim.x) {
        float4 v = p[i];
        s += v.x + v.y + v.z + v.w;
    }
    if (s == 12345.f) *sink = s;
}
__global__ void __launch_bounds__(256) rd4(const float4 *__restrict__ p, long n, float *sink) {
    float s = 0;
    long stride = (long)gridDim.x * blockDim.x * 4;
    for (long i = (blockIdx.x * (long)blockDim.x) * 4 + threadIdx.x; i < n; i += stride) {
        float4 v[4];
#pragma unroll
        for (int u = 0; u < 4; u++)
            v[u] = (i + u * 256 < n) ? __ldg(p + i + u * 256) : make_float4(0, 0, 0, 0);
#pragma unroll
        for (int u = 0; u < 4; u++) s += v[u].x + v[u].y + v[u].z + v[u].w;
    }
    if (s == 12345.f) *sink = s;
}
static float *g_ol, *g_w, *g_out, *g_sink;
static void *g_fl;
static size_t g_fb;
static cudaEvent_t e0, e1;
template <class F> static float timed(F fn) {
    std::vector<float> v;
    for (int r = 0; r < 33; r++) {
        flush_read<<<1024, 256>>>((const float4 *)g_fl, g_fb / 16, g_sink);
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
}
static std::vector<float> ref_out;
template <int NS, int CH, int NW, int PF> static void variant(const char *note) {
    constexpr int NB = (DV + 32 * NW - 1) / (32 * NW);
    const size_t smem = (R + (size_t)NW * NS * 32 * (CH + 4)) * 4;
    auto k = dv<NS, CH, NW, PF>;
    if (smem > 48 * 1024)
        CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, NW * 32, smem));
    CK(cudaMemset(g_out, 0xff, H * DV * 4));
    float t = timed([&] { k<<<H * NB, NW * 32, smem>>>(g_ol, g_w, g_out); });
    CK(cudaGetLastError());
    std::vector<float> o(H * DV);
    CK(cudaMemcpy(o.data(), g_out, H * DV * 4, cudaMemcpyDeviceToHost));
    bool same = true;
    if (ref_out.empty())
        ref_out = o;
    else
        same = memcmp(o.data(), ref_out.data(), H * DV * 4) == 0;
    printf("| NS %2d | CH %3d | NW %d | PF %d | %4d blocks, %d/SM, %6.1f KB smem | %6.2f us | %s | "
           "%s |\n",
           NS, CH, NW, PF, H * NB, per_sm, smem / 1024.0, t,
           same ? "bytes identical" : "BYTES DIFFER", note);
}
int main() {
    int l2;
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    g_fb = 2 * (size_t)l2;
    CK(cudaMalloc(&g_fl, g_fb));
    CK(cudaMemset(g_fl, 0, g_fb));
    CK(cudaMalloc(&g_sink, 4));
    const size_t nw = (size_t)H * DV * R;
    std::vector<float> w(nw), ol(H * R);
    uint32_t s = 12345u;
    auto rnd = [&] {
        s = s * 1664525u + 1013904223u;
        return ((int)(s >> 8) - (1 << 23)) * 0x1p-23f;
    };
    for (auto &x : w) x = rnd();
    for (auto &x : ol) x = rnd();
    CK(cudaMalloc(&g_w, nw * 4));
    CK(cudaMalloc(&g_ol, H * R * 4));
    CK(cudaMalloc(&g_out, H * DV * 4));
    CK(cudaMemcpy(g_w, w.data(), nw * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(g_ol, ol.data(), H * R * 4, cudaMemcpyHostToDevice));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    printf("decompress_v glm5 decode, %.2f MB of weights; empty-kernel and read floor in the same "
           "process\n",
           nw * 4 / 1e6);
    float te = timed([&] { rd4<<<1, 32>>>((const float4 *)g_w, 0, g_sink); });
    float best = 1e30f;
    for (int kk : {2, 4, 8, 16})
        best = std::min(best, timed([&] {
                            rd4<<<sms * kk, 256>>>((const float4 *)g_w, (long)nw / 4, g_sink);
                        }));
    printf("empty kernel %.2f us, read floor (grid-stride) %.2f us\n", te, best);
    printf("| ring depth | chunk floats | warps a block | L2 prefetch | launch | median | bytes | "
           "note |\n");
    variant<6, 64, 4, 0>("the shipped form");
    variant<4, 64, 4, 0>("");
    variant<3, 64, 4, 0>("");
    variant<2, 64, 4, 0>("");
    variant<8, 64, 3, 0>("");
    variant<12, 32, 4, 0>("");
    variant<3, 128, 4, 0>("");
    variant<2, 128, 4, 0>("");
    variant<4, 128, 2, 0>("");
    variant<2, 256, 2, 0>("");
    variant<6, 64, 2, 0>("");
    variant<6, 64, 1, 0>("");
    variant<3, 128, 1, 0>("");
    variant<6, 64, 4, 1>("");
    variant<3, 128, 4, 1>("");
    variant<4, 64, 4, 1>("");
    variant<6, 64, 2, 1>("");
    variant<6, 64, 4, 0>("the shipped form again");
    // the CPU chain for 64 outputs
    int bad = 0;
    for (int o = 0; o < H * DV; o += 257) {
        const int h = o / DV, v = o % DV;
        float acc = 0.0f;
        for (int r = 0; r < R; r++) acc = fmaf(w[((size_t)h * DV + v) * R + r], ol[h * R + r], acc);
        if (memcmp(&acc, &ref_out[o], 4)) bad++;
    }
    printf("CPU fmaf chain vs the shipped form, %d outputs sampled: %d differ\n",
           (H * DV + 256) / 257, bad);
    return 0;
}
