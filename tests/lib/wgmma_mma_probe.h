/* wgmma_mma_probe.h: single Hopper wgmma instructions of the wgmma door arm (kernels/mla_wgmma.cuh)
 * on host-given tiles (tests/lib/wgmma_mma_probe.cu), for its accumulator-model test
 * (//tests:wgmma_model_gpu_test). Each probe is one block of 128 threads (a warpgroup) that lays
 * its operands out in shared memory as the arm does, runs one instruction and writes D out.
 * The probes need compute capability 9.0 (sm_90a); elsewhere they return 10000 +
 * cudaErrorNoKernelImageForDevice (or the device traps). */
#ifndef MLA_TESTS_WGMMA_MMA_PROBE_H
#define MLA_TESTS_WGMMA_MMA_PROBE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where probe p puts its operands among the arm's descriptors (each covered by 36 consecutive
 * probes, resp. 4): the k16 step ks of the logits' m64n32k16, and the k16 step j (slots
 * 16j..16j+15) and column half (0: columns 0..255, 1: 256..511) of P . V's m64n256k16. */
#define WGMMA_N32_KS(p) ((p) % 36)
#define WGMMA_N256_J(p) ((p)&1)
#define WGMMA_N256_HALF(p) (((p) >> 1) & 1)

/* n probes of wgmma.mma_async.m64n32k16.f32.bf16.bf16, A and B from shared memory:
 * a[n][64][16] (row, k), b[n][32][16] (column, k: the tile's slot and feature), bf16-representable
 * f32 values (low 16 bits zero) passed as their top halves, so the instruction sees exactly these
 * values. A sits at columns 16 ks .. 16 ks + 15 of a 64 x 576 q region (rb 64), B at the same
 * columns of a 32 x 576 tile (rb 32), both in the 128-byte swizzled layout (mla_wg_sw), with the
 * arm's descriptors for ks = WGMMA_N32_KS(p); every other byte of both regions holds bf16 NaN, so
 * a read outside the operands shows as NaN. c[n][64][32] the initial accumulator (scale-d 1), or
 * c NULL: the accumulator registers hold NaN and scale-d is 0 (the arm's first k16 step).
 * d[n][64][32] = a . b^T (+ c). Returns 0, or 10000 + cudaError_t. */
int wgmma_n32_probe(const float *a, const float *b, const float *c, float *d, int n);

/* n probes of wgmma.mma_async.m64n256k16.f32.bf16.bf16, A from registers (the m64k16 fragment),
 * B read N-major from shared memory: a[n][64][16] (row, k), b[n][16][256] (k, column),
 * c[n][64][256] (the initial accumulator; scale-d 1, as the arm) -> d[n][64][256] = a . b + c;
 * values as wgmma_n32_probe's. B sits transposed in a 32-slot x 576 tile (rb 32): tile element (16
 * j + k, 256 half + column) = b[k][column], for j = WGMMA_N256_J(p), half = WGMMA_N256_HALF(p),
 * read through the arm's descriptor for that j and half; every other byte of the tile holds bf16
 * NaN. Returns 0, or 10000 + cudaError_t. */
int wgmma_n256_probe(const float *a, const float *b, const float *c, float *d, int n);

/* The current device's compute capability and name (name_len bytes, NUL-terminated). Returns 0,
 * or 10000 + cudaError_t. */
int wgmma_probe_device(int *major, int *minor, char *name, size_t name_len);

#ifdef __cplusplus
}
#endif

#endif /* MLA_TESTS_WGMMA_MMA_PROBE_H */
