/* tf32_mma_probe.h: single TF32 mma.sync.m16n8k8 and bf16 mma.sync.m16n8k16 instructions on
 * host-given tiles, and the bf16 door's conversion (tests/lib/tf32_mma_probe.cu), for the
 * accumulator-model tests. */
#ifndef MLA_TESTS_TF32_MMA_PROBE_H
#define MLA_TESTS_TF32_MMA_PROBE_H

#ifdef __cplusplus
extern "C" {
#endif

/* n probes: a[n][16][8], b[n][8][8] (row-major [k][n]; TF32-representable values), c[n][16][8]
 * -> d[n][16][8] = a . b + c by one instruction each. Returns 0, or 10000 + cudaError_t. */
int tf32_mma_probe(const float *a, const float *b, const float *c, float *d, int n);

/* n probes of mma.sync.m16n8k16 bf16 with f32 accumulate: a[n][16][16], b[n][16][8] (row-major
 * [k][n]; bf16-representable values), c[n][16][8] -> d[n][16][8] = a . b + c by one instruction
 * each. Returns 0, or 10000 + cudaError_t. */
int bf16_mma_probe(const float *a, const float *b, const float *c, float *d, int n);

/* d[e] = cvt.rn.bf16x2.f32 of x[e] (the bf16 door's operand conversion), as an f32, e < n. */
int bf16_cvt_probe(const float *x, float *d, int n);

#ifdef __cplusplus
}
#endif

#endif /* MLA_TESTS_TF32_MMA_PROBE_H */
