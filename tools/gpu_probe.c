/* gpu_probe: says whether this machine can run the GPU tier, and why not.
 * Exit 0 with "device: <name> (sm_<cc>, <n> SMs)" when a device is usable; exit 1 with
 * "no device: <reason>" otherwise. */
#include <cuda_runtime_api.h>
#include <stdio.h>

int main(void) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        printf("no device: cudaGetDeviceCount returned %d (%s)\n", (int)e, cudaGetErrorString(e));
        return 1;
    }
    if (n == 0) {
        printf("no device: the driver reports no CUDA device\n");
        return 1;
    }
    struct cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
        printf("no device: cudaGetDeviceProperties failed\n");
        return 1;
    }
    printf("device: %s (sm_%d%d, %d SMs, %.1f GiB)\n", p.name, p.major, p.minor,
           p.multiProcessorCount, (double)p.totalGlobalMem / (1u << 30));
    return 0;
}
