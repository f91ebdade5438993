/* tf32_mma_probe.h: single TF32 mma.sync.m16n8k8 instructions on host-given tiles
 * (tests/lib/tf32_mma_probe.cu), for the accumulator-model test. */
#ifndef MLA_TESTS_TF32_MMA_PROBE_H
#define MLA_TESTS_TF32_MMA_PROBE_H

#ifdef __cplusplus
extern "C" {
#endif

/* n probes: a[n][16][8], b[n][8][8] (row-major [k][n]; TF32-representable values), c[n][16][8]
 * -> d[n][16][8] = a . b + c by one instruction each. Returns 0, or 10000 + cudaError_t. */
int tf32_mma_probe(const float *a, const float *b, const float *c, float *d, int n);

#ifdef __cplusplus
}
#endif

#endif /* MLA_TESTS_TF32_MMA_PROBE_H */
