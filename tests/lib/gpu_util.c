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

static void fill_words(void *dev, size_t bytes, uint32_t word) {
    size_t n = bytes / 4;
    if (n == 0) return;
    uint32_t *h = malloc(n * 4);
    for (size_t i = 0; i < n; i++) h[i] = word;
    GPU_CHECK(cudaMemcpy(dev, h, n * 4, cudaMemcpyHostToDevice));
    free(h);
}

/* Guard bands around the current payload, then the poison fill. */
static void fill_guards_and_poison(gpu_buf *b) {
    GPU_CHECK(cudaMemset(b->base, GPU_GUARD_BYTE, GPU_GUARD_BYTES));
    GPU_CHECK(cudaMemset(b->base + GPU_GUARD_BYTES + b->bytes, GPU_GUARD_BYTE, GPU_GUARD_BYTES));
    gpu_buf_poison(b);
}

gpu_buf gpu_buf_alloc(size_t bytes) {
    gpu_buf b;
    b.bytes = b.cap = bytes;
    GPU_CHECK(cudaMalloc((void **)&b.base, bytes + 2 * GPU_GUARD_BYTES));
    b.ptr = b.base + GPU_GUARD_BYTES;
    fill_guards_and_poison(&b);
    return b;
}

void gpu_buf_reserve(gpu_buf *b, size_t bytes) {
    if (!b->base || bytes > b->cap) {
        gpu_buf_free(b);
        *b = gpu_buf_alloc(bytes);
        return;
    }
    b->bytes = bytes;
    fill_guards_and_poison(b);
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

void gpu_buf_poison(gpu_buf *b) { fill_words(b->ptr, b->bytes, GPU_POISON_WORD); }

int gpu_buf_guards_intact(const gpu_buf *b) {
    uint8_t *h = malloc(2 * GPU_GUARD_BYTES);
    GPU_CHECK(cudaMemcpy(h, b->base, GPU_GUARD_BYTES, cudaMemcpyDeviceToHost));
    GPU_CHECK(cudaMemcpy(h + GPU_GUARD_BYTES, b->base + GPU_GUARD_BYTES + b->bytes, GPU_GUARD_BYTES,
                         cudaMemcpyDeviceToHost));
    int ok = 1;
    for (size_t i = 0; i < 2 * GPU_GUARD_BYTES; i++)
        if (h[i] != GPU_GUARD_BYTE) {
            ok = 0;
            break;
        }
    free(h);
    return ok;
}

size_t gpu_buf_count_poison(const gpu_buf *b) {
    size_t n = b->bytes / 4, count = 0;
    if (n == 0) return 0;
    uint32_t *h = malloc(n * 4);
    GPU_CHECK(cudaMemcpy(h, b->ptr, n * 4, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++) count += h[i] == GPU_POISON_WORD;
    free(h);
    return count;
}

void gpu_buf_free(gpu_buf *b) {
    if (b->base) GPU_CHECK(cudaFree(b->base));
    b->base = NULL;
    b->ptr = NULL;
    b->bytes = b->cap = 0;
}

int gpu_sync(void) {
    cudaError_t e = cudaDeviceSynchronize();
    return e == cudaSuccess ? 0 : 10000 + (int)e;
}
