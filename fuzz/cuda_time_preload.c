/* cuda_time_preload.c: an LD_PRELOAD profiler of the CUDA runtime calls a fuzzer makes (calls
 * and wall time inside each of cudaMemcpy*, cudaMemset*, cudaMalloc* / cudaFree*, the
 * synchronisations and cudaLaunchKernel), printed to stderr when the process exits, so an
 * execution's GPU-side time can be split per call on a GPU host (docs/fuzzing.md). Not part of
 * any test or fuzzer; built on demand:
 *   bazel build //fuzz:libcuda_time_preload.so
 *   LD_PRELOAD=$PWD/libcuda_time_preload.so bin/<target>_fuzzer ... -print_final_stats=1
 * Per execution: a function's seconds / stat::number_of_executed_units (sum over the workers'
 * logs with -jobs). A process that made no CUDA call prints nothing. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

enum {
    F_MEMCPY,
    F_MEMCPY_ASYNC,
    F_MEMSET,
    F_MEMSET_ASYNC,
    F_MALLOC,
    F_FREE,
    F_MALLOC_HOST,
    F_FREE_HOST,
    F_DEVICE_SYNC,
    F_STREAM_SYNC,
    F_LAUNCH,
    F_N
};
static const char *const NAMES[F_N] = {"cudaMemcpy",
                                       "cudaMemcpyAsync",
                                       "cudaMemset",
                                       "cudaMemsetAsync",
                                       "cudaMalloc",
                                       "cudaFree",
                                       "cudaMallocHost",
                                       "cudaFreeHost",
                                       "cudaDeviceSynchronize",
                                       "cudaStreamSynchronize",
                                       "cudaLaunchKernel"};
static unsigned long long calls[F_N];
static double secs[F_N];
static double t_start;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

__attribute__((constructor)) static void start(void) { t_start = now(); }

__attribute__((destructor)) static void report(void) {
    unsigned long long any = 0;
    for (int i = 0; i < F_N; i++) any += calls[i];
    if (!any) return;
    double wall = now() - t_start, total = 0;
    char buf[4096];
    int off = snprintf(buf, sizeof buf, "cuda_time: pid %d wall %.3f s\n", (int)getpid(), wall);
    for (int i = 0; i < F_N && off < (int)sizeof buf; i++) {
        if (!calls[i]) continue;
        total += secs[i];
        off += snprintf(buf + off, sizeof buf - (size_t)off,
                        "cuda_time: %-22s calls %10llu %9.3f s %8.2f us/call\n", NAMES[i], calls[i],
                        secs[i], 1e6 * secs[i] / (double)calls[i]);
    }
    if (off < (int)sizeof buf)
        off += snprintf(buf + off, sizeof buf - (size_t)off,
                        "cuda_time: in CUDA calls %.3f s of %.3f s wall\n", total, wall);
    if (off > (int)sizeof buf) off = (int)sizeof buf;
    if (write(2, buf, (size_t)off) < 0) return;
}

/* The next definition of `name` (the real CUDA runtime), timed. */
#define TIMED(idx, name, params, args)                                                             \
    cudaError_t name params {                                                                      \
        static cudaError_t(*real) params;                                                          \
        if (!real) *(void **)&real = dlsym(RTLD_NEXT, #name);                                      \
        if (!real) return cudaErrorUnknown;                                                        \
        double t0 = now();                                                                         \
        cudaError_t r = real args;                                                                 \
        secs[idx] += now() - t0;                                                                   \
        calls[idx]++;                                                                              \
        return r;                                                                                  \
    }

TIMED(F_MEMCPY, cudaMemcpy, (void *d, const void *s, size_t n, enum cudaMemcpyKind k), (d, s, n, k))
TIMED(F_MEMCPY_ASYNC, cudaMemcpyAsync,
      (void *d, const void *s, size_t n, enum cudaMemcpyKind k, cudaStream_t st), (d, s, n, k, st))
TIMED(F_MEMSET, cudaMemset, (void *d, int v, size_t n), (d, v, n))
TIMED(F_MEMSET_ASYNC, cudaMemsetAsync, (void *d, int v, size_t n, cudaStream_t st), (d, v, n, st))
TIMED(F_MALLOC, cudaMalloc, (void **p, size_t n), (p, n))
TIMED(F_FREE, cudaFree, (void *p), (p))
TIMED(F_MALLOC_HOST, cudaMallocHost, (void **p, size_t n), (p, n))
TIMED(F_FREE_HOST, cudaFreeHost, (void *p), (p))
TIMED(F_DEVICE_SYNC, cudaDeviceSynchronize, (void), ())
TIMED(F_STREAM_SYNC, cudaStreamSynchronize, (cudaStream_t st), (st))
TIMED(F_LAUNCH, cudaLaunchKernel,
      (const void *f, dim3 g, dim3 b, void **a, size_t sh, cudaStream_t st), (f, g, b, a, sh, st))
