/* wg_twin.cu: the scalar twin of the wgmma door arm (tests/lib/wg_twin.h). Two kernels: the
 * softmax walk of each (query, head, chunk), then each (query, head, column)'s accumulator
 * through its chunks and the combine. Plain CUDA (sm_90), the default nvcc flags of every
 * cuda_library (tools/cuda.bzl), as the product's. */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "tests/lib/wg_twin.h"

#define TW_JT 32

/* Thread (i, h, chunk): the chunk's walk. m_o, l_o, ne_o: the partial's max, denominator and
 * non-empty flag; alpha_o[tile]: each tile's alpha; pb_o[i][h][row]: each valid slot's weight
 * as the arm hands it to P . V, bf16_rn(p), as f32. */
static __global__ void tw_walk(const float *__restrict__ dot, int32_t n_head, int32_t t_q,
                               int32_t t_kv, float scale, int64_t cs, int32_t n_chunks,
                               int32_t max_tiles, float *__restrict__ m_o, float *__restrict__ l_o,
                               int32_t *__restrict__ ne_o, float *__restrict__ alpha_o,
                               float *__restrict__ pb_o) {
    const int64_t id = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t n_qh = (int64_t)t_q * n_head;
    if (id >= n_qh * n_chunks) return;
    const int32_t chunk = (int32_t)(id / n_qh);
    const int64_t qh = id - (int64_t)chunk * n_qh, i = qh / n_head;
    const int64_t c_begin = (int64_t)chunk * cs, w_len = (int64_t)t_kv - t_q + i + 1;
    const int64_t c_end = c_begin + cs < w_len ? c_begin + cs : w_len;
    const int32_t n_k = c_end > c_begin ? (int32_t)((c_end - c_begin + TW_JT - 1) / TW_JT) : 0;
    const float *d = dot + qh * t_kv;
    float m = -INFINITY, l = 0.0f;
    for (int32_t k = 0; k < n_k; k++) {
        const int64_t s0 = c_begin + (int64_t)k * TW_JT;
        float lg[TW_JT], p[TW_JT];
        bool vd[TW_JT];
        float lm = -INFINITY;
        for (int t = 0; t < TW_JT; t++) {
            vd[t] = s0 + t < c_end;
            lg[t] = vd[t] ? __fmul_rn(scale, d[s0 + t]) : 0.0f;
            if (vd[t]) lm = fmaxf(lm, lg[t]);
        }
        const float m_new = fmaxf(m, lm);
        const bool live = m_new != -INFINITY;
        float alpha = 1.0f;
        if (live) alpha = expf(__fsub_rn(m, m_new));
        const float m_ref = live ? m_new : 0.0f;
        for (int t = 0; t < TW_JT; t++) p[t] = vd[t] ? expf(__fsub_rn(lg[t], m_ref)) : 0.0f;
        float sq[4];
        for (int q = 0; q < 4; q++) {
            const float *x0 = p + 2 * q; /* slots 8n + 2q + e: x = 2n + e */
            sq[q] = __fadd_rn(__fadd_rn(__fadd_rn(x0[0], x0[1]), __fadd_rn(x0[8], x0[9])),
                              __fadd_rn(__fadd_rn(x0[16], x0[17]), __fadd_rn(x0[24], x0[25])));
        }
        const float ts = __fadd_rn(__fadd_rn(sq[0], sq[1]), __fadd_rn(sq[2], sq[3]));
        l = __fmaf_rn(l, alpha, ts);
        m = m_new;
        alpha_o[id * max_tiles + k] = alpha;
        for (int t = 0; t < TW_JT; t++)
            if (vd[t]) pb_o[qh * t_kv + s0 + t] = __bfloat162float(__float2bfloat16_rn(p[t]));
    }
    m_o[id] = n_k ? m : -INFINITY;
    l_o[id] = n_k ? l : 0.0f;
    ne_o[id] = n_k > 0;
}

/* Thread (i, h, c): column c's partial in each chunk (0 before its carrier's tile, then
 * P_j(c), then times each later tile's alpha), then the output (one chunk) or the combine. */
static __global__ void tw_out(const int32_t *__restrict__ carrier, int32_t n_head, int32_t kv_rank,
                              int32_t t_q, int32_t t_kv, int64_t cs, int32_t n_chunks,
                              int32_t max_tiles, const float *__restrict__ m_i,
                              const float *__restrict__ l_i, const int32_t *__restrict__ ne_i,
                              const float *__restrict__ alpha_i, const float *__restrict__ pb_i,
                              float *__restrict__ out) {
    const int64_t id = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t n_qh = (int64_t)t_q * n_head;
    if (id >= n_qh * kv_rank) return;
    const int64_t qh = id / kv_rank, i = qh / n_head;
    const int32_t c = (int32_t)(id - qh * kv_rank);
    const int64_t j = carrier[c], w_len = (int64_t)t_kv - t_q + i + 1;
    /* the partial of column c in chunk ch */
    auto part = [&](int32_t ch) -> float {
        const int64_t c_begin = (int64_t)ch * cs;
        const int64_t c_end = c_begin + cs < w_len ? c_begin + cs : w_len;
        if (j < c_begin || j >= c_end) return 0.0f;
        const int32_t n_k = (int32_t)((c_end - c_begin + TW_JT - 1) / TW_JT);
        const int32_t kj = (int32_t)((j - c_begin) / TW_JT);
        const float *al = alpha_i + ((int64_t)ch * n_qh + qh) * max_tiles;
        float o = pb_i[qh * t_kv + j];
        for (int32_t k = kj + 1; k < n_k; k++) o = __fmul_rn(o, al[k]);
        return o;
    };
    if (n_chunks == 1) {
        const float m = m_i[qh], l = l_i[qh];
        out[id] = !ne_i[qh] ? 0.0f : fabsf(m) == INFINITY ? NAN : __fdiv_rn(part(0), l);
        return;
    }
    float M = -INFINITY;
    int nonempty = 0;
    for (int32_t ch = 0; ch < n_chunks; ch++) {
        const int64_t e = (int64_t)ch * n_qh + qh;
        nonempty |= ne_i[e];
        if (ne_i[e] && m_i[e] == m_i[e]) M = fmaxf(M, m_i[e]);
    }
    const bool live = M != -INFINITY;
    float L = 0.0f, o = 0.0f;
    for (int32_t ch = 0; ch < n_chunks; ch++) {
        const int64_t e = (int64_t)ch * n_qh + qh;
        const float m_s = ne_i[e] ? m_i[e] : -INFINITY, l_s = ne_i[e] ? l_i[e] : 0.0f;
        const float w = (live && m_s != -INFINITY) ? expf(__fsub_rn(m_s, M)) : 0.0f;
        L = __fmaf_rn(w, l_s, L);
        o = __fmaf_rn(w, part(ch), o);
    }
    out[id] = !nonempty ? 0.0f : fabsf(M) == INFINITY ? NAN : __fdiv_rn(o, L);
}

#define TW_TRY(x)                                                                                  \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            rc = 10000 + (int)e_;                                                                  \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

extern "C" int wg_twin_absorbed(const float *dot, const int32_t *carrier, int32_t n_head,
                                int32_t kv_rank, int32_t t_q, int32_t t_kv, float scale, int64_t cs,
                                float *out) {
    int rc = 0;
    const int64_t n_qh = (int64_t)t_q * n_head;
    const int32_t n_chunks = (int32_t)((t_kv + cs - 1) / cs);
    const int32_t max_tiles = (int32_t)((cs + TW_JT - 1) / TW_JT);
    const size_t n_dot = (size_t)n_qh * t_kv, n_part = (size_t)n_qh * n_chunks;
    const size_t n_out = (size_t)n_qh * kv_rank;
    float *d_dot = NULL, *d_pb = NULL, *d_m = NULL, *d_l = NULL, *d_al = NULL, *d_out = NULL;
    int32_t *d_ne = NULL, *d_car = NULL;
    TW_TRY(cudaMalloc((void **)&d_dot, n_dot * 4));
    TW_TRY(cudaMalloc((void **)&d_pb, n_dot * 4));
    TW_TRY(cudaMalloc((void **)&d_m, n_part * 4));
    TW_TRY(cudaMalloc((void **)&d_l, n_part * 4));
    TW_TRY(cudaMalloc((void **)&d_ne, n_part * 4));
    TW_TRY(cudaMalloc((void **)&d_al, n_part * max_tiles * 4));
    TW_TRY(cudaMalloc((void **)&d_car, (size_t)kv_rank * 4));
    TW_TRY(cudaMalloc((void **)&d_out, n_out * 4));
    TW_TRY(cudaMemcpy(d_dot, dot, n_dot * 4, cudaMemcpyHostToDevice));
    TW_TRY(cudaMemcpy(d_car, carrier, (size_t)kv_rank * 4, cudaMemcpyHostToDevice));
    TW_TRY(cudaMemset(d_pb, 0, n_dot * 4));
    tw_walk<<<(unsigned)((n_part + 127) / 128), 128>>>(
        d_dot, n_head, t_q, t_kv, scale, cs, n_chunks, max_tiles, d_m, d_l, d_ne, d_al, d_pb);
    TW_TRY(cudaGetLastError());
    tw_out<<<(unsigned)((n_out + 127) / 128), 128>>>(d_car, n_head, kv_rank, t_q, t_kv, cs,
                                                     n_chunks, max_tiles, d_m, d_l, d_ne, d_al,
                                                     d_pb, d_out);
    TW_TRY(cudaGetLastError());
    TW_TRY(cudaMemcpy(out, d_out, n_out * 4, cudaMemcpyDeviceToHost));
done:
    cudaFree(d_dot), cudaFree(d_pb), cudaFree(d_m), cudaFree(d_l), cudaFree(d_ne);
    cudaFree(d_al), cudaFree(d_car), cudaFree(d_out);
    return rc;
}
