// Standalone (ninth session): does compute-sanitizer racecheck see shared-memory atomics at all?
// The eighth session's mode 2 reported one hazard, but its clear (a plain store) and its later
// plain load were unordered too, so the hazard it saw may have been store -> load. Here every
// plain store is ordered by a barrier, so only the atomics are unordered:
//   mode 0: control: plain store by warp 0, plain load by warp 1, no barrier (must be reported);
//   mode 1: clear; barrier; atomicAdd; NO barrier; other warps' plain loads (mutant 944's shape);
//   mode 2: as 1 with the barrier (must be clean);
//   mode 3: plain store; NO barrier; other warps' atomicAdd (mutant 930's shape, eighth: 0).
#include <cstdio>
#include <cstdlib>
__global__ void probe(int mode, unsigned *out) {
    __shared__ unsigned hist[1024];
    const int t = threadIdx.x; /* 512 threads, 16 warps */
    if (mode == 0) {
        if (t < 32) hist[t] = 1u;
        if (t >= 32 && t < 64) out[t] = hist[t - 32]; /* written by warp 0 */
        return;
    }
    for (int j = t; j < 1024; j += 512) hist[j] = 0u;
    if (mode != 3) __syncthreads();
    atomicAdd(&hist[(t * 7 + 300) & 1023], 1u);
    if (mode == 2) __syncthreads();
    if (mode != 3) out[t] = hist[((t * 7 + 300) + 7 * 64) & 1023]; /* a bin 64 threads away */
}
int main(int argc, char **argv) {
    int mode = atoi(argv[1]);
    unsigned *o;
    cudaMalloc(&o, 4096);
    probe<<<1, 512>>>(mode, o);
    cudaError_t e = cudaDeviceSynchronize();
    printf("mode %d: %s\n", mode, cudaGetErrorString(e));
    return 0;
}
