// ad hoc probe (twenty-fourth session): can 128 blocks of the bf16 door's shape (256 threads,
// 220,544 B dynamic smem, one block an SM) run co-resident in clusters of 2/4/8/16, and what
// does a DSMEM reduction of a 64 x 512 f32 partial cost?
#include <cooperative_groups.h>
#include <cstdio>
#include <cuda_runtime.h>
namespace cg = cooperative_groups;
#define CK(x) do { cudaError_t e = (x); if (e) { printf("ERR %s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
__global__ void __launch_bounds__(256, 1) spin(long long ns, float *sink) {
    extern __shared__ float sm[];
    long long t0 = clock64();
    while (clock64() - t0 < ns) {}
    if (threadIdx.x == 0) sink[blockIdx.x] = sm[0];
}
// each block: own smem [64][512] f32 written, cluster sync, block r sums columns [r*512/CL, ..) of
// all CL blocks' planes in rank order, writes them to out; cluster sync.
__global__ void __launch_bounds__(256, 1) dsm_reduce(float *out, int reps) {
    extern __shared__ float sm[];
    cg::cluster_group cl = cg::this_cluster();
    const int cls = cl.num_blocks(), r = cl.block_rank();
    for (int rep = 0; rep < reps; rep++) {
        for (int e = threadIdx.x; e < 64 * 512; e += 256) sm[e] = (float)(e + r + rep);
        cl.sync();
        const int w = 512 / cls;
        for (int e = threadIdx.x; e < 64 * w; e += 256) {
            const int h = e / w, c = r * w + e % w;
            float s = 0.f;
            for (int q = 0; q < cls; q++) s += cl.map_shared_rank(sm, q)[h * 512 + c];
            out[(size_t)blockIdx.x * 64 * w + e] = s;
        }
        cl.sync();
    }
}
int main() {
    const size_t smem = 220544;
    CK(cudaFuncSetAttribute(spin, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    CK(cudaFuncSetAttribute(dsm_reduce, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    CK(cudaFuncSetAttribute(spin, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    CK(cudaFuncSetAttribute(dsm_reduce, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    float *sink, *out;
    CK(cudaMalloc(&sink, 4096 * 4));
    CK(cudaMalloc(&out, (size_t)132 * 64 * 512 * 4));
    int clk; cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
    const long long ns = (long long)clk * 50; // ~50 us in cycles (clk in kHz)
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    printf("| cluster | max active clusters | blocks co-resident | 128 blocks spin 50us (us) | 132 blocks (us) | dsm reduce 64x512 x CL (us/rep) |\n|---|---|---|---|---|---|\n");
    for (int cs : {1, 2, 4, 8, 16}) {
        cudaLaunchConfig_t cfg = {};
        cudaLaunchAttribute at[1];
        at[0].id = cudaLaunchAttributeClusterDimension;
        at[0].val.clusterDim.x = cs; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
        cfg.blockDim = dim3(256); cfg.dynamicSmemBytes = smem; cfg.attrs = at; cfg.numAttrs = 1;
        cfg.gridDim = dim3(128);
        int ncl = -1;
        cudaError_t e = cudaOccupancyMaxActiveClusters(&ncl, (void *)spin, &cfg);
        if (e) { printf("| %d | err %s | | | | |\n", cs, cudaGetErrorString(e)); cudaGetLastError(); continue; }
        float t[2] = {0, 0};
        int gi = 0;
        for (int g : {128, 132}) {
            if (g % cs) { t[gi++] = -1; continue; }
            cfg.gridDim = dim3(g);
            for (int it = 0; it < 3; it++) {
                cudaEventRecord(a);
                e = cudaLaunchKernelEx(&cfg, spin, ns, sink);
                cudaEventRecord(b); cudaEventSynchronize(b);
            }
            if (e) { printf("launch err %s\n", cudaGetErrorString(e)); cudaGetLastError(); }
            cudaEventElapsedTime(&t[gi++], a, b);
        }
        float td = -1;
        if (cs > 1) {
            cfg.gridDim = dim3(128);
            e = cudaLaunchKernelEx(&cfg, dsm_reduce, out, 2);
            cudaDeviceSynchronize();
            cudaEventRecord(a);
            e = cudaLaunchKernelEx(&cfg, dsm_reduce, out, 20);
            cudaEventRecord(b); cudaEventSynchronize(b);
            float t20; cudaEventElapsedTime(&t20, a, b);
            cudaEventRecord(a);
            e = cudaLaunchKernelEx(&cfg, dsm_reduce, out, 10);
            cudaEventRecord(b); cudaEventSynchronize(b);
            float t10; cudaEventElapsedTime(&t10, a, b);
            td = (t20 - t10) * 1000 / 10;
            if (e) printf("dsm err %s\n", cudaGetErrorString(e));
        }
        printf("| %d | %d | %d | %.1f | %.1f | %.2f |\n", cs, ncl, ncl * cs, t[0] * 1000, t[1] * 1000, td);
    }
    return 0;
}
