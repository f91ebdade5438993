/* gpu_util.h: what every GPU-tier test shares.
 *  - GPU_REQUIRE(): skip the Criterion test (reported as skipped, never passed) when no usable
 *    CUDA device is present, naming the reason (no driver / no device).
 *  - gpu_buf: a device buffer with guard bands on both sides (filled with a pattern and checked
 *    untouched after each launch) and a poison fill (0x7FC0DEAD per 32-bit word: a quiet NaN as
 *    f32, an impossible index as int32) so "every element written" is checkable. (The fuzz
 *    targets reuse device memory across executions through fuzz/fuzz_gpu.h's arenas.)
 *  - The fills and checks run on the device (gpu_util_kernels.cu: gpu_regions_prepare /
 *    gpu_regions_check, on the legacy default stream): a check copies back a few counters, never
 *    the buffer. The fuzz targets batch them (fuzz/fuzz_gpu.h: one prepare, one check and one
 *    synchronisation per execution).
 * Create CUDA state inside the test (Criterion runs tests in worker processes).
 */
#ifndef MLA_TESTS_GPU_UTIL_H
#define MLA_TESTS_GPU_UTIL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPU_POISON_WORD 0x7FC0DEADu
#define GPU_GUARD_BYTES 4096u
#define GPU_GUARD_BYTE 0xA5u

/* 1 when a CUDA device can run kernels; else 0 with `why` set (e.g. "cudaGetDeviceCount:
 * 35 (CUDA driver version is insufficient)"). Cached per process. */
int gpu_device_present(char *why, size_t why_len);

#define GPU_REQUIRE()                                                                              \
    do {                                                                                           \
        char gpu_why_[256];                                                                        \
        if (!gpu_device_present(gpu_why_, sizeof gpu_why_))                                        \
            cr_skip_test("GPU test skipped: %s", gpu_why_);                                        \
    } while (0)

typedef struct {
    uint8_t *base; /* device allocation: guard | payload | guard */
    void *ptr;     /* payload (what the launcher gets) */
    size_t bytes;  /* payload bytes */
} gpu_buf;

/* Allocates bytes (0 allowed) plus guard bands, fills the guards with GPU_GUARD_BYTE and the
 * payload with the poison word. Aborts the test process on a CUDA failure (a broken device is a
 * failure, never a skip). */
gpu_buf gpu_buf_alloc(size_t bytes);
/* Allocates and uploads `bytes` from host. */
gpu_buf gpu_buf_from_host(const void *host, size_t bytes);
void gpu_buf_upload(gpu_buf *b, const void *host, size_t bytes);
void gpu_buf_download(const gpu_buf *b, void *host, size_t bytes);
/* Refills the payload with GPU_POISON_WORD (a device-side fill, ordered on the legacy default
 * stream before later launches and copies). */
void gpu_buf_poison(gpu_buf *b);
/* 1 when both guard bands still hold GPU_GUARD_BYTE (checked on the device; synchronises). */
int gpu_buf_guards_intact(const gpu_buf *b);
/* Number of 32-bit words of the payload still equal to GPU_POISON_WORD (counted on the device;
 * synchronises). */
size_t gpu_buf_count_poison(const gpu_buf *b);
void gpu_buf_free(gpu_buf *b);
/* A device allocation of exactly `bytes` (plain cudaMalloc: no guard band, no poison), uploaded
 * from host (NULL: left as cudaMalloc gives it), so that under compute-sanitizer memcheck an
 * access past its end is out of bounds, where a gpu_buf's guard band would hide it (the
 * san_*exact_alloc tests). Aborts on a CUDA failure like the helpers above. */
void *gpu_exact_from_host(const void *host, size_t bytes);
void gpu_exact_download(const void *dev, void *host, size_t bytes);
void gpu_exact_free(void *dev);
/* A CUDA failure inside these helpers prints the failing call and aborts the process; a hook
 * set here runs between the two (e.g. the fuzz targets write their input reproducer). NULL:
 * none. */
void gpu_set_abort_hook(void (*hook)(void));
/* cudaDeviceSynchronize; returns 0 or 10000 + cudaError_t. */
int gpu_sync(void);

/* ---- device-side fills and checks (gpu_util_kernels.cu) ------------------------------------ */
/* A payload of `bytes` bytes at device address `payload`, with (GPU_REGION_GUARDS) a guard band
 * of GPU_GUARD_BYTES on each side: [payload - GPU_GUARD_BYTES, payload) and
 * [payload + bytes, payload + bytes + GPU_GUARD_BYTES). payload and src 4-byte aligned. */
typedef struct {
    void *payload;
    const void *src; /* GPU_REGION_COPY: device bytes (the input as uploaded) */
    uint64_t bytes;
    uint32_t flags;
    uint32_t unused;
} gpu_region;
#define GPU_REGION_GUARDS                                                                          \
    1u /* prepare: fill both bands with GPU_GUARD_BYTE; check: count bytes                         \
        * of the bands that differ from it */
#define GPU_REGION_POISON                                                                          \
    2u                     /* prepare: every payload word = GPU_POISON_WORD; check: count the      \
                            * payload words still equal to it */
#define GPU_REGION_COPY 4u /* prepare: payload = src; check: compare the payload with src */
#define GPU_REGIONS_MAX 32 /* regions per kernel launch (more: several launches) */

/* One region's findings (device memory, zeroed by gpu_regions_prepare or by the caller). */
typedef struct {
    unsigned long long guard_bad;      /* guard-band bytes != GPU_GUARD_BYTE */
    unsigned long long poison_left;    /* payload words == GPU_POISON_WORD */
    unsigned long long n_diff;         /* payload words (and a differing tail) != src */
    unsigned long long first_diff_inv; /* ~(first differing word; bytes / 4: the tail), 0: none */
} gpu_region_result;

/* Enqueue the fill of n regions (COPY before POISON: a region gets one of them) and, when
 * dev_res is not NULL, zero dev_res[0..n). Returns 0 or the cudaError_t of the launch. */
int gpu_regions_prepare(const gpu_region *r, int n, gpu_region_result *dev_res);
/* Enqueue the checks of n regions into dev_res[0..n) (zeroed before). Returns 0 or the
 * cudaError_t of the launch. */
int gpu_regions_check(const gpu_region *r, int n, gpu_region_result *dev_res);

#ifdef __cplusplus
}
#endif
#endif /* MLA_TESTS_GPU_UTIL_H */
