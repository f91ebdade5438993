/* mla_cuda_util.cuh: what the kernel files share (CUDA C++ only, header-only):
 *  - cp.async staging helpers (sm_80+): 16- and 4-byte copies global -> shared with an optional
 *    zero-fill (valid == false reads nothing and writes zeros), commit and wait;
 *  - mla_device_once: a per-device, thread-safe once guard for host-side configuration such as
 *    the dynamic shared-memory opt-in (set to each kernel's maximum so concurrent callers never
 *    race on it). */
#ifndef MLA_CUDA_UTIL_CUH
#define MLA_CUDA_UTIL_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include <mutex>

#include "kernels/mla_cuda_check.h"

/* 16 bytes; both addresses 16-byte aligned. */
static __device__ __forceinline__ void mla_cp_async16(void *smem, const void *gmem,
                                                      bool valid = true) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    int n = valid ? 16 : 0; /* src-size 0: nothing read, 16 zero bytes written */
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(n)
                 : "memory");
}

/* 4 bytes; both addresses 4-byte aligned. */
static __device__ __forceinline__ void mla_cp_async4(void *smem, const void *gmem,
                                                     bool valid = true) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    int n = valid ? 4 : 0;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(n)
                 : "memory");
}

static __device__ __forceinline__ void mla_cp_async_commit(void) {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* Waits until at most N committed groups are still in flight. */
template <int N> static __device__ __forceinline__ void mla_cp_async_wait(void) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* Runs configure() (returning 0 or a status) once per device, for the current device, under a
 * process-wide lock; a failure is returned and retried by the next call. */
struct mla_device_once {
    std::mutex mu;
    uint64_t done_mask = 0; /* bit d: device d configured */
};

template <class F> static int mla_device_once_run(mla_device_once &once, F &&configure) {
    int dev = 0;
    MLA_CUDA_CHECK(cudaGetDevice(&dev));
    std::lock_guard<std::mutex> lock(once.mu);
    if (dev < 64 && ((once.done_mask >> dev) & 1u)) return 0;
    int rc = configure();
    if (rc == 0 && dev < 64) once.done_mask |= (uint64_t)1 << dev;
    return rc;
}

#endif /* MLA_CUDA_UTIL_CUH */
