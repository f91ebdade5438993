// Standalone (eighth session): does compute-sanitizer racecheck report a shared-memory hazard
// between a plain store / load and another warp's atomicAdd with no barrier between them (the
// two surviving select mutants remove exactly such barriers)? mode 0: plain store, then another
// warp's plain load (the control, a textbook hazard); 1: plain store (the clear), then other warps'
// atomicAdd (mutant 930); 2: atomicAdd, then other warps' plain load (mutant 944); 3: as 1 and 2
// with the barriers in place (must be clean).
#include <cstdio>
#include <cstdlib>
__global__ void probe(int mode, unsigned *out) {
    __shared__ unsigned hist[1024];
    const int t = threadIdx.x; /* 512 threads, 16 warps */
    for (int j = t; j < 1024; j += 512) hist[j] = 0u;
    if (mode == 3) __syncthreads();
    if (mode == 0) {
        if (t >= 256) out[t] = hist[(t + 512) & 1023]; /* a bin another warp cleared */
        return;
    }
    atomicAdd(&hist[(t * 7 + 300) & 1023], 1u); /* bins other warps cleared */
    if (mode == 3) __syncthreads();
    if (mode == 2 || mode == 3) out[t] = hist[(t * 13 + 5) & 1023];
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
