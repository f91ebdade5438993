/* gpu_util.c: see gpu_util.h. Plain C against the CUDA runtime API. */
#include "tests/lib/gpu_util.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void (*abort_hook)(void);

void gpu_set_abort_hook(void (*hook)(void)) { abort_hook = hook; }

#define GPU_CHECK(stmt)                                                                            \
    do {                                                                                           \
        cudaError_t e_ = (stmt);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "CUDA failure %d (%s) in `%s` at %s:%d\n", (int)e_,                    \
                    cudaGetErrorString(e_), #stmt, __FILE__, __LINE__);                            \
            if (abort_hook) abort_hook();                                                          \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

int gpu_device_present(char *why, size_t why_len) {
    static int cached = -1;
    static char reason[200];
    if (cached < 0) {
        int n = 0;
        cudaError_t e = cudaGetDeviceCount(&n);
        if (e != cudaSuccess) {
            snprintf(reason, sizeof reason, "cudaGetDeviceCount: %d (%s)", (int)e,
                     cudaGetErrorString(e));
            cached = 0;
        } else if (n == 0) {
            snprintf(reason, sizeof reason, "no CUDA device");
            cached = 0;
        } else {
            reason[0] = 0;
            cached = 1;
        }
    }
    if (why && why_len) snprintf(why, why_len, "%s", reason);
    return cached;
}

/* Guard bands around the current payload, then the poison fill: one device-side fill. */
static void fill_guards_and_poison(gpu_buf *b) {
    gpu_region r = {b->ptr, NULL, b->bytes, GPU_REGION_GUARDS | GPU_REGION_POISON, 0};
    GPU_CHECK((cudaError_t)gpu_regions_prepare(&r, 1, NULL));
}

/* One region checked on the device; the findings come back (a few bytes; synchronises). */
static gpu_region_result check_one(const gpu_buf *b, uint32_t flags) {
    static gpu_region_result *dev_res; /* per process (CUDA state is created in the test) */
    if (!dev_res) GPU_CHECK(cudaMalloc((void **)&dev_res, sizeof *dev_res));
    gpu_region r = {b->ptr, NULL, b->bytes, flags, 0};
    gpu_region_result h;
    GPU_CHECK(cudaMemsetAsync(dev_res, 0, sizeof *dev_res, 0));
    GPU_CHECK((cudaError_t)gpu_regions_check(&r, 1, dev_res));
    GPU_CHECK(cudaMemcpy(&h, dev_res, sizeof h, cudaMemcpyDeviceToHost));
    return h;
}

gpu_buf gpu_buf_alloc(size_t bytes) {
    gpu_buf b;
    b.bytes = bytes;
    GPU_CHECK(cudaMalloc((void **)&b.base, bytes + 2 * GPU_GUARD_BYTES));
    b.ptr = b.base + GPU_GUARD_BYTES;
    fill_guards_and_poison(&b);
    return b;
}

gpu_buf gpu_buf_from_host(const void *host, size_t bytes) {
    gpu_buf b = gpu_buf_alloc(bytes);
    gpu_buf_upload(&b, host, bytes);
    return b;
}

void gpu_buf_upload(gpu_buf *b, const void *host, size_t bytes) {
    if (bytes) GPU_CHECK(cudaMemcpy(b->ptr, host, bytes, cudaMemcpyHostToDevice));
}

void gpu_buf_download(const gpu_buf *b, void *host, size_t bytes) {
    if (bytes) GPU_CHECK(cudaMemcpy(host, b->ptr, bytes, cudaMemcpyDeviceToHost));
}

void gpu_buf_poison(gpu_buf *b) {
    gpu_region r = {b->ptr, NULL, b->bytes, GPU_REGION_POISON, 0};
    GPU_CHECK((cudaError_t)gpu_regions_prepare(&r, 1, NULL));
}

int gpu_buf_guards_intact(const gpu_buf *b) {
    return check_one(b, GPU_REGION_GUARDS).guard_bad == 0;
}

size_t gpu_buf_count_poison(const gpu_buf *b) {
    return b->bytes / 4 ? (size_t)check_one(b, GPU_REGION_POISON).poison_left : 0;
}

void gpu_buf_free(gpu_buf *b) {
    if (b->base) GPU_CHECK(cudaFree(b->base));
    b->base = NULL;
    b->ptr = NULL;
    b->bytes = 0;
}

void *gpu_exact_from_host(const void *host, size_t bytes) {
    void *d = NULL;
    GPU_CHECK(cudaMalloc(&d, bytes ? bytes : 1));
    if (host && bytes) GPU_CHECK(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice));
    return d;
}

void gpu_exact_download(const void *dev, void *host, size_t bytes) {
    if (bytes) GPU_CHECK(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
}

void gpu_exact_free(void *dev) {
    if (dev) GPU_CHECK(cudaFree(dev));
}

int gpu_sync(void) {
    cudaError_t e = cudaDeviceSynchronize();
    return e == cudaSuccess ? 0 : 10000 + (int)e;
}
