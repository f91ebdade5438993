/* kpool_fuzz_util.h: what the k-pool fuzz targets share (select_order, score_identity,
 * ring_residency, gathered_indices): device detection, small device-buffer helpers that abort
 * with the failing CUDA call, a counter-based value generator, and the "no device" rule (a valid
 * argument tuple must reach the CUDA band, 10000 + cudaError_t, when no device is present). */
#ifndef FUZZ_KPOOL_FUZZ_UTIL_H
#define FUZZ_KPOOL_FUZZ_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "fuzz/fuzz_gpu.h"
#include "fuzz/fuzz_helpers.h"

/* 1 when the kernel side runs (fuzz_gpu.h: a device, and MLA_FUZZ_NO_GPU unset). */
static inline int kf_have_gpu(void) { return fuzz_gpu_enabled(); }

#define KF_CUDA(call)                                                                         \
    do {                                                                                      \
        cudaError_t kf_e_ = (call);                                                           \
        FUZZ_ASSERT_MSG(kf_e_ == cudaSuccess, "CUDA call %s failed: %d (%s)", #call,          \
                        (int)kf_e_, cudaGetErrorString(kf_e_));                               \
    } while (0)

static inline void *kf_dev(size_t bytes) {
    void *p = NULL;
    KF_CUDA(cudaMalloc(&p, bytes ? bytes : 4));
    return p;
}
static inline void *kf_dev_from(const void *host, size_t bytes) {
    void *p = kf_dev(bytes);
    if (bytes) KF_CUDA(cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice));
    return p;
}
static inline void kf_download(void *host, const void *dev, size_t bytes) {
    KF_CUDA(cudaDeviceSynchronize());
    if (bytes) KF_CUDA(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
}
/* Poison: 0x7F7F7F7F per word (f32: 3.4e38, never a plausible output here; int32: an
 * impossible index), so unwritten outputs fail the comparisons. */
static inline void kf_poison(void *dev, size_t bytes) {
    if (bytes) KF_CUDA(cudaMemset(dev, 0x7F, bytes));
}

/* Without a device, a valid tuple must come back in the CUDA band. */
#define KF_ASSERT_CUDA_BAND(rc, what, ...)                                                    \
    FUZZ_ASSERT_MSG((rc) >= 10000 && (rc) < 20000,                                            \
                    "no device: %s returned %d for a valid tuple (expected 10000 + "          \
                    "cudaError_t); tuple: " what, #rc, (int)(rc), __VA_ARGS__)

static inline uint64_t kf_mix(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline uint64_t kf_word(uint64_t seed, uint64_t i) { return kf_mix(seed ^ kf_mix(i + 1)); }
/* U(-1, 1) on a 2^24 grid. */
static inline float kf_uni(uint64_t seed, uint64_t i) {
    return (float)((int32_t)(kf_word(seed, i) >> 40) - (1 << 23)) * 0x1p-23f;
}
static inline float kf_from_bits(uint32_t b) {
    float f;
    memcpy(&f, &b, 4);
    return f;
}
static inline uint32_t kf_bits(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

static inline void *kf_malloc(size_t n) {
    void *p = malloc(n ? n : 1);
    FUZZ_ASSERT_MSG(p != NULL, "out of host memory (%zu bytes)", n);
    return p;
}

#endif /* FUZZ_KPOOL_FUZZ_UTIL_H */
