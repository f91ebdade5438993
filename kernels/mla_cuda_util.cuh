/* mla_cuda_util.cuh: what the kernel files share (CUDA C++ only, header-only):
 *  - cp.async staging helpers (sm_80+): 16- and 4-byte copies global -> shared with an optional
 *    zero-fill (valid == false reads nothing and writes zeros), commit and wait;
 *  - mbarrier and bulk-copy helpers (sm_90): one thread copies a contiguous run global -> shared,
 *    the block waits on the barrier's phase;
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

/* Bulk copies (sm_90: the tensor memory accelerator's 1-D form) completing on an mbarrier. One
 * thread issues a copy of any multiple of 16 bytes (both addresses 16-byte aligned); the block
 * waits on the barrier's phase. Per stage: mla_mbar_expect(bar, bytes) once (the barrier counts
 * one arrival), then the copies, then every consumer mla_mbar_wait(bar, parity) with parity the
 * stage's use count mod 2. A barrier is initialised by one thread, then mla_mbar_fence_init()
 * and a block barrier, before any copy names it. */
static __device__ __forceinline__ void mla_mbar_init(uint64_t *bar, unsigned count) {
    unsigned b = (unsigned)__cvta_generic_to_shared(bar);
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(b), "r"(count) : "memory");
}

static __device__ __forceinline__ void mla_mbar_fence_init(void) {
    /* the initialised barriers visible to the async proxy that completes the copies */
    asm volatile("fence.mbarrier_init.release.cluster;\n"
                 "fence.proxy.async.shared::cta;\n" ::
                     : "memory");
}

/* The one arrival of the barrier's phase, announcing `bytes` of copies that complete on it. */
static __device__ __forceinline__ void mla_mbar_expect(uint64_t *bar, unsigned bytes) {
    unsigned b = (unsigned)__cvta_generic_to_shared(bar);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(b), "r"(bytes)
                 : "memory");
}

static __device__ __forceinline__ void mla_bulk_copy(void *smem, const void *gmem, unsigned bytes,
                                                     uint64_t *bar) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    unsigned b = (unsigned)__cvta_generic_to_shared(bar);
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], "
                 "%2, [%3];\n" ::"r"(s),
                 "l"(gmem), "r"(bytes), "r"(b)
                 : "memory");
}

/* One plain arrival of this thread on the mbarrier (release semantics: this thread's earlier
 * shared-memory writes are visible to a thread whose wait completes the phase). */
static __device__ __forceinline__ void mla_mbar_arrive(uint64_t *bar) {
    const unsigned b = (unsigned)__cvta_generic_to_shared(bar);
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(b) : "memory");
}

/* bf16(lo) in the low half, bf16(hi) in the high half (cvt.rn: round to nearest even; a NaN
 * stays a NaN, an infinity an infinity). */
static __device__ __forceinline__ uint32_t mla_bf16x2(float lo, float hi) {
    uint32_t r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

/* Until the barrier's phase of this parity has completed (its copies have landed). */
static __device__ __forceinline__ void mla_mbar_wait(uint64_t *bar, unsigned parity) {
    unsigned b = (unsigned)__cvta_generic_to_shared(bar);
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "MLA_MBAR_WAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
                 "@!p bra MLA_MBAR_WAIT;\n"
                 "}\n" ::"r"(b),
                 "r"(parity)
                 : "memory");
}

/* The device ids the kernel files' per-device host state holds: 0 .. MLA_MAX_DEVICES - 1 (the
 * attention workspace pools, the wgmma arm's ready flags, the cuBLASLt handles, the bits of
 * mla_device_once's mask). A call on a device past them gets its file's invalid-device code (the
 * wgmma door declines). */
#define MLA_MAX_DEVICES 64

/* Runs configure() (returning 0 or a status) once per device, for the current device, under a
 * process-wide lock; a failure is returned and retried by the next call (for a device id past
 * MLA_MAX_DEVICES, every call: it has no bit). */
struct mla_device_once {
    std::mutex mu;
    uint64_t done_mask = 0; /* bit d: device d configured */
};
static_assert(MLA_MAX_DEVICES <= 64, "mla_device_once's mask holds a bit a device");

template <class F> static int mla_device_once_run(mla_device_once &once, F &&configure) {
    int dev = 0;
    MLA_CUDA_CHECK(cudaGetDevice(&dev));
    std::lock_guard<std::mutex> lock(once.mu);
    if (dev < MLA_MAX_DEVICES && ((once.done_mask >> dev) & 1u)) return 0;
    int rc = configure();
    if (rc == 0 && dev < MLA_MAX_DEVICES) once.done_mask |= (uint64_t)1 << dev;
    return rc;
}

/* The shake builds' delay (test-only): at least ns nanoseconds of the global timer. __nanosleep
 * alone does not give that: the PTX ISA has nanosleep suspend the thread for "a duration
 * approximately close to" its argument, anywhere in [0, 2 t]. The thirty-third session saw it
 * (H100, 17 mutants in flight): the wgmma arm's empty partial writing one head past n_head,
 * `h < n_head + 1`, was killed by stray_rows_5h__wgmma, while `h <= n_head`, the same machine
 * code, survived it: the late write had not been late. So the delay spins on %globaltimer,
 * sleeping in short steps. */
static __device__ __forceinline__ uint64_t mla_globaltimer_ns(void) {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
static __device__ __forceinline__ void mla_shake_sleep_ns(uint32_t ns) {
    const uint64_t t0 = mla_globaltimer_ns();
    while (mla_globaltimer_ns() - t0 < ns) __nanosleep(1000);
}

/* The split walks' empty partial (a chunk with none of the query's slots) under the test-only
 * shake build (-DMLA_SHAKE_ATTN, //kernels:mla_kernels_shake, docs/mutation.md): written at least
 * 100 us late, after the live blocks of its chunk, so a write past its own rows of the workspace
 * lands on their partials instead of before them (the product build's block order almost always
 * has the live block write last, which hides the stray write). Every arm's empty-partial path
 * calls it; in a product build it is nothing. */
static __device__ __forceinline__ void mla_shake_empty_partial(void) {
#if defined(MLA_SHAKE_ATTN)
    mla_shake_sleep_ns(100000);
#endif
}

#endif /* MLA_CUDA_UTIL_CUH */
