/* gpu_util_kernels.cu: the device side of tests/lib/gpu_util.h's buffer checks: guard bands,
 * the poison fill, inputs copied in and compared, done by two kernels on the legacy default
 * stream instead of whole-buffer copies between host and device (see gpu_util.h: gpu_region).
 *
 * Both kernels take up to GPU_REGIONS_MAX regions by value; grid.y is the region, grid.x
 * strides over its payload words and guard bytes. Results only ever grow from zero (counts by
 * atomicAdd; the first differing word by atomicMax on its complement), so the normal case (no
 * finding) does no atomic at all.
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "tests/lib/gpu_util.h"

namespace {

struct regions_arg {
    gpu_region r[GPU_REGIONS_MAX];
};

constexpr int kThreads = 256;

__device__ inline uint8_t *guard_byte(const gpu_region &g, size_t j) {
    uint8_t *payload = static_cast<uint8_t *>(g.payload);
    return j < GPU_GUARD_BYTES ? payload - GPU_GUARD_BYTES + j
                               : payload + g.bytes + (j - GPU_GUARD_BYTES);
}

__global__ void prepare_kernel(regions_arg a, gpu_region_result *res) {
    const gpu_region &g = a.r[blockIdx.y];
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    if (g.flags & GPU_REGION_GUARDS)
        for (size_t j = tid; j < 2 * (size_t)GPU_GUARD_BYTES; j += stride)
            *guard_byte(g, j) = GPU_GUARD_BYTE;
    uint8_t *p = static_cast<uint8_t *>(g.payload);
    const size_t nw = g.bytes / 4;
    if (g.flags & GPU_REGION_COPY) {
        const uint8_t *s = static_cast<const uint8_t *>(g.src);
        for (size_t i = tid; i < nw; i += stride)
            reinterpret_cast<uint32_t *>(p)[i] = reinterpret_cast<const uint32_t *>(s)[i];
        if (tid < (g.bytes & 3u)) p[nw * 4 + tid] = s[nw * 4 + tid];
    } else if (g.flags & GPU_REGION_POISON) {
        for (size_t i = tid; i < nw; i += stride)
            reinterpret_cast<uint32_t *>(p)[i] = GPU_POISON_WORD;
    }
    if (res && tid == 0) {
        gpu_region_result z = {0, 0, 0, 0};
        res[blockIdx.y] = z;
    }
}

__global__ void check_kernel(regions_arg a, gpu_region_result *res) {
    const gpu_region &g = a.r[blockIdx.y];
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    unsigned long long guard_bad = 0, poison = 0, n_diff = 0, first_inv = 0;
    if (g.flags & GPU_REGION_GUARDS)
        for (size_t j = tid; j < 2 * (size_t)GPU_GUARD_BYTES; j += stride)
            guard_bad += *guard_byte(g, j) != GPU_GUARD_BYTE;
    const uint8_t *p = static_cast<const uint8_t *>(g.payload);
    const size_t nw = g.bytes / 4;
    if (g.flags & GPU_REGION_COPY) {
        const uint8_t *s = static_cast<const uint8_t *>(g.src);
        for (size_t i = tid; i < nw; i += stride)
            if (reinterpret_cast<const uint32_t *>(p)[i] !=
                reinterpret_cast<const uint32_t *>(s)[i]) {
                n_diff++;
                if (first_inv == 0) first_inv = ~(unsigned long long)i; /* i ascends per thread */
            }
        if (tid < (g.bytes & 3u) && p[nw * 4 + tid] != s[nw * 4 + tid]) {
            n_diff++;
            if (first_inv == 0) first_inv = ~(unsigned long long)nw; /* the trailing bytes */
        }
    }
    if (g.flags & GPU_REGION_POISON)
        for (size_t i = tid; i < nw; i += stride)
            poison += reinterpret_cast<const uint32_t *>(p)[i] == GPU_POISON_WORD;
    gpu_region_result *r = &res[blockIdx.y];
    if (guard_bad) atomicAdd(&r->guard_bad, guard_bad);
    if (poison) atomicAdd(&r->poison_left, poison);
    if (n_diff) {
        atomicAdd(&r->n_diff, n_diff);
        atomicMax(&r->first_diff_inv, first_inv);
    }
}

/* Blocks per region: enough to cover the largest payload (8 words a thread) and the guards. */
unsigned blocks_for(const gpu_region *r, int n) {
    size_t most = 2 * (size_t)GPU_GUARD_BYTES;
    for (int i = 0; i < n; i++)
        if (r[i].bytes / 4 > most) most = r[i].bytes / 4;
    size_t b = (most + 8 * kThreads - 1) / (8 * kThreads);
    return (unsigned)(b < 1 ? 1 : b > 1024 ? 1024 : b);
}

int launch(bool check, const gpu_region *r, int n, gpu_region_result *res) {
    for (int done = 0; done < n; done += GPU_REGIONS_MAX) {
        const int m = n - done < GPU_REGIONS_MAX ? n - done : GPU_REGIONS_MAX;
        regions_arg a = {};
        for (int i = 0; i < m; i++) a.r[i] = r[done + i];
        dim3 grid(blocks_for(a.r, m), (unsigned)m);
        if (check)
            check_kernel<<<grid, kThreads>>>(a, res + done);
        else
            prepare_kernel<<<grid, kThreads>>>(a, res ? res + done : nullptr);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) return (int)e;
    }
    return 0;
}

} // namespace

extern "C" int gpu_regions_prepare(const gpu_region *r, int n, gpu_region_result *dev_res) {
    return n > 0 ? launch(false, r, n, dev_res) : 0;
}

extern "C" int gpu_regions_check(const gpu_region *r, int n, gpu_region_result *dev_res) {
    return n > 0 ? launch(true, r, n, dev_res) : 0;
}
