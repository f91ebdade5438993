/* fuzz_gpu.h: device detection for the fuzz targets that touch the GPU.
 *  - fuzz_device_present(): a CUDA device can run kernels (cached per process);
 *  - fuzz_gpu_enabled(): the same, unless MLA_FUZZ_NO_GPU=1 forces the CPU-only path of the
 *    kernel-checking targets (their oracle-side checks still run).
 * Targets that must never hand fake pointers to a real device (contract_codes) ask
 * fuzz_device_present(), which no variable can override. */
#ifndef FUZZ_GPU_H
#define FUZZ_GPU_H

#include <stdlib.h>

#include <cuda_runtime_api.h>

static inline int fuzz_device_present(void) {
    static int cached = -1;
    if (cached < 0) {
        int n = 0;
        cached = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
        if (!cached) (void)cudaGetLastError();
    }
    return cached;
}

static inline int fuzz_gpu_enabled(void) {
    const char *off = getenv("MLA_FUZZ_NO_GPU");
    return fuzz_device_present() && !(off && off[0] == '1');
}

#endif /* FUZZ_GPU_H */
