/* probe_combine.cuh: the split walk's combine, shared by the door prototypes
 * (probe_door_pingpong.cu, probe_door_wgmma.cu): a copy of attn_combine_f32 (kernels/mla_attn.cu,
 * static there), so a prototype's row pays the same combine as the shipped arms' rows. */
#ifndef MLA_PROBE_COMBINE_CUH
#define MLA_PROBE_COMBINE_CUH

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#define PROBE_COMBINE_MAX_CHUNKS 256
#define PROBE_COMBINE_NT 128 /* threads (= columns) a block: attn_combine_f32's AC_NT */

/* attn_combine_f32 of kernels/mla_attn.cu (its CB-batched form, chunks ascending), copied so a
 * prototype's row pays the same combine as the arms' rows. The workspace is the arms': ws_o
 * [chunk][n_qh][kv_rank], ws_ml [chunk][n_qh][3] (m, l, flag: 0 empty, 1 live, 2 poisoned). */
template <int CB>
static __global__ void __launch_bounds__(PROBE_COMBINE_NT)
    probe_combine(const float *__restrict__ ws_o, const float *__restrict__ ws_ml,
                  float *__restrict__ o_lat, int64_t n_qh, int32_t kv_rank, int32_t n_chunks) {
    __shared__ float m_s[PROBE_COMBINE_MAX_CHUNKS], l_s[PROBE_COMBINE_MAX_CHUNKS],
        w_s[PROBE_COMBINE_MAX_CHUNKS];
    __shared__ float red_s[PROBE_COMBINE_NT / 32];
    const int tid = threadIdx.x;
    const int64_t qh = blockIdx.x;
    const int32_t r = blockIdx.y * PROBE_COMBINE_NT + tid;
    const bool col = r < kv_rank;
    const float *src = ws_o + qh * kv_rank + (col ? r : 0);
    const int64_t stride = n_qh * kv_rank;
    auto load = [&](float(&v)[CB], int32_t b) {
#pragma unroll
        for (int j = 0; j < CB; j++) {
            const int32_t c = b * CB + j;
            v[j] = (col && c < n_chunks) ? __ldg(src + (int64_t)c * stride) : 0.0f;
        }
    };
    float va[CB], vb[CB];
    load(va, 0);
    load(vb, 1);
    float m_loc = -INFINITY;
    int nonempty = 0, poison = 0;
    for (int32_t c = tid; c < n_chunks; c += PROBE_COMBINE_NT) {
        const float *ml = ws_ml + ((int64_t)c * n_qh + qh) * 3;
        const float m = ml[0], l = ml[1], f = ml[2];
        const bool ne = f != 0.0f;
        nonempty |= ne;
        poison |= f == 2.0f;
        if (ne && m == m) m_loc = fmaxf(m_loc, m);
        m_s[c] = ne ? m : -INFINITY;
        l_s[c] = ne ? l : 0.0f;
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        m_loc = fmaxf(m_loc, __shfl_xor_sync(0xffffffffu, m_loc, off));
    if ((tid & 31) == 0) red_s[tid >> 5] = m_loc;
    nonempty = __syncthreads_or(nonempty);
    poison = __syncthreads_or(poison);
    float M = red_s[0];
#pragma unroll
    for (int w = 1; w < PROBE_COMBINE_NT / 32; w++) M = fmaxf(M, red_s[w]);
    const bool live = M != -INFINITY;
    for (int32_t c = tid; c < n_chunks; c += PROBE_COMBINE_NT)
        w_s[c] = (live && m_s[c] != -INFINITY) ? expf(m_s[c] - M) : 0.0f;
    __syncthreads();
    if (!col) return;
    float L = 0.0f, o = 0.0f;
    auto merge = [&](const float(&v)[CB], int32_t b) {
#pragma unroll
        for (int j = 0; j < CB; j++) {
            const int32_t c = b * CB + j;
            if (c < n_chunks) {
                const float w = w_s[c];
                L = __fmaf_rn(w, l_s[c], L);
                o = __fmaf_rn(w, v[j], o);
            }
        }
    };
    const int32_t n_b = (n_chunks + CB - 1) / CB;
    for (int32_t b = 0; b < n_b; b += 2) {
        merge(va, b);
        if (b + 2 < n_b) load(va, b + 2);
        if (b + 1 < n_b) {
            merge(vb, b + 1);
            if (b + 3 < n_b) load(vb, b + 3);
        }
    }
    float out;
    if (!nonempty)
        out = 0.0f;
    else if (poison || fabsf(M) == INFINITY)
        out = NAN;
    else
        out = __fdiv_rn(o, L);
    o_lat[qh * kv_rank + r] = out;
}

/* The combine over n_chunks partials (n_chunks > 1), at kv_rank columns. */
static void probe_combine_launch(const float *ws_o, const float *ws_ml, float *o_lat, int64_t n_qh,
                                 int32_t kv_rank, int32_t n_chunks) {
    dim3 grid((unsigned)n_qh, (unsigned)((kv_rank + PROBE_COMBINE_NT - 1) / PROBE_COMBINE_NT));
    auto comb = n_chunks > 32 ? probe_combine<32> : probe_combine<16>;
    comb<<<grid, PROBE_COMBINE_NT>>>(ws_o, ws_ml, o_lat, n_qh, kv_rank, n_chunks);
}

#endif /* MLA_PROBE_COMBINE_CUH */
