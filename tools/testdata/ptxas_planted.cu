/* tools/testdata/ptxas_planted.cu: two kernels for //tools:ptxas_budget_test, the same sum of a
 * thread's 12 loaded values, one picking them by constant indices (registers only) and one by a
 * runtime index (ptxas keeps the array in local memory: a stack frame). The test budgets both at
 * zero and expects tools/ptxas_budget.py to fail exactly the second: the gate sees in ptxas's
 * report what the eleventh session's select change did (docs/perf-gate.md). Never linked. */
#include <stdint.h>

__global__ void planted_static(const float *in, float *out, uint32_t mask) {
    float v[12];
#pragma unroll
    for (int j = 0; j < 12; j++) v[j] = in[threadIdx.x + 32 * j];
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < 12; j++)
        if ((mask >> j) & 1u) s += v[j];
    out[threadIdx.x] = s;
}

__global__ void planted_runtime(const float *in, float *out, uint32_t mask) {
    float v[12];
#pragma unroll
    for (int j = 0; j < 12; j++) v[j] = in[threadIdx.x + 32 * j];
    float s = 0.0f;
    for (uint32_t m = mask & 0xFFFu; m != 0u; m &= m - 1u) s += v[__ffs(m) - 1];
    out[threadIdx.x] = s;
}
