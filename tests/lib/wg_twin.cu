/* wg_twin.cu: the scalar twin of the wgmma door arm (tests/lib/wg_twin.h). Two steps: the softmax
 * walk of each (query, head, chunk), then each (query, head, column)'s accumulator through its
 * chunks and the combine; each a __host__ __device__ function of its item, run by a kernel on the
 * GPU (plain CUDA, sm_90, the default nvcc flags of every cuda_library, as the product's) or by a
 * loop on the CPU (the host's expf, IEEE single operations). */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/mla_fill.h"
#include "tests/lib/wg_twin.h"

#define TW_JT 32

#ifdef __CUDA_ARCH__
#define TW_MUL(a, b) __fmul_rn(a, b)
#define TW_ADD(a, b) __fadd_rn(a, b)
#define TW_SUB(a, b) __fsub_rn(a, b)
#define TW_FMA(a, b, c) __fmaf_rn(a, b, c)
#define TW_DIV(a, b) __fdiv_rn(a, b)
#else
#define TW_MUL(a, b) ((a) * (b))
#define TW_ADD(a, b) ((a) + (b))
#define TW_SUB(a, b) ((a) - (b))
#define TW_FMA(a, b, c) fmaf(a, b, c)
#define TW_DIV(a, b) ((a) / (b))
#endif

/* One call's plan and buffers: m, l, ne [n_chunks][n_qh] (the partials' max, denominator and
 * non-empty flag), alpha [n_chunks][n_qh][max_tiles] (each tile's alpha), pb [n_qh][t_kv] (each
 * valid slot's weight as the arm hands it to P . V: bf16_rn(p), as f32). */
struct tw_plan {
    const float *dot;
    const int32_t *carrier;
    int32_t n_head, kv_rank, t_q, t_kv;
    float scale;
    int64_t cs, n_qh;
    int32_t n_chunks, max_tiles;
    float *m, *l, *alpha, *pb, *out;
    int32_t *ne;
};

/* Chunk ch of query i: its first slot, its end (the causal walk: query i sees rows
 * 0 ..= t_kv - t_q + i) and its tiles (0: an empty partial). */
static __host__ __device__ int32_t tw_chunk(const tw_plan &P, int64_t i, int32_t ch,
                                            int64_t *c_begin, int64_t *c_end) {
    const int64_t w_len = (int64_t)P.t_kv - P.t_q + i + 1;
    *c_begin = (int64_t)ch * P.cs;
    *c_end = *c_begin + P.cs < w_len ? *c_begin + P.cs : w_len;
    return *c_end > *c_begin ? (int32_t)((*c_end - *c_begin + TW_JT - 1) / TW_JT) : 0;
}

/* Item (chunk, i, h) = id: the chunk's walk. */
static __host__ __device__ void tw_walk_one(const tw_plan &P, int64_t id) {
    const int32_t chunk = (int32_t)(id / P.n_qh);
    const int64_t qh = id - (int64_t)chunk * P.n_qh;
    int64_t c_begin, c_end;
    const int32_t n_k = tw_chunk(P, qh / P.n_head, chunk, &c_begin, &c_end);
    const float *d = P.dot + qh * P.t_kv;
    float m = -INFINITY, l = 0.0f;
    for (int32_t k = 0; k < n_k; k++) {
        const int64_t s0 = c_begin + (int64_t)k * TW_JT;
        float lg[TW_JT], p[TW_JT];
        bool vd[TW_JT];
        float lm = -INFINITY;
        for (int t = 0; t < TW_JT; t++) {
            vd[t] = s0 + t < c_end;
            lg[t] = vd[t] ? TW_MUL(P.scale, d[s0 + t]) : 0.0f;
            if (vd[t]) lm = fmaxf(lm, lg[t]);
        }
        const float m_new = fmaxf(m, lm);
        const bool live = m_new != -INFINITY;
        float alpha = 1.0f;
        if (live) alpha = expf(TW_SUB(m, m_new));
        const float m_ref = live ? m_new : 0.0f;
        for (int t = 0; t < TW_JT; t++) p[t] = vd[t] ? expf(TW_SUB(lg[t], m_ref)) : 0.0f;
        float sq[4];
        for (int q = 0; q < 4; q++) {
            const float *x = p + 2 * q; /* thread q's slots 8n + 2q + e, as x = 2n + e */
            sq[q] = TW_ADD(TW_ADD(TW_ADD(x[0], x[1]), TW_ADD(x[8], x[9])),
                           TW_ADD(TW_ADD(x[16], x[17]), TW_ADD(x[24], x[25])));
        }
        const float ts = TW_ADD(TW_ADD(sq[0], sq[1]), TW_ADD(sq[2], sq[3]));
        l = TW_FMA(l, alpha, ts);
        m = m_new;
        P.alpha[id * P.max_tiles + k] = alpha;
        for (int t = 0; t < TW_JT; t++)
            if (vd[t]) P.pb[qh * P.t_kv + s0 + t] = __bfloat162float(__float2bfloat16_rn(p[t]));
    }
    P.m[id] = n_k ? m : -INFINITY;
    P.l[id] = n_k ? l : 0.0f;
    P.ne[id] = n_k > 0;
}

/* Column c's partial in chunk ch of (i, h) = qh: 0 unless its carrier row is in the chunk; then
 * P_j(c) from the carrier's tile on, times each later tile's alpha. */
static __host__ __device__ float tw_part(const tw_plan &P, int64_t qh, int32_t c, int32_t ch) {
    const int64_t j = P.carrier[c];
    int64_t c_begin, c_end;
    const int32_t n_k = tw_chunk(P, qh / P.n_head, ch, &c_begin, &c_end);
    if (j < c_begin || j >= c_end) return 0.0f;
    const float *al = P.alpha + ((int64_t)ch * P.n_qh + qh) * P.max_tiles;
    float o = P.pb[qh * P.t_kv + j];
    for (int32_t k = (int32_t)((j - c_begin) / TW_JT) + 1; k < n_k; k++) o = TW_MUL(o, al[k]);
    return o;
}

/* Item (i, h, c) = id: the output, by the one-chunk epilogue or the combine. */
static __host__ __device__ void tw_out_one(const tw_plan &P, int64_t id) {
    const int64_t qh = id / P.kv_rank;
    const int32_t c = (int32_t)(id - qh * P.kv_rank);
    if (P.n_chunks == 1) {
        const float m = P.m[qh];
        P.out[id] = !P.ne[qh]              ? 0.0f
                    : fabsf(m) == INFINITY ? NAN
                                           : TW_DIV(tw_part(P, qh, c, 0), P.l[qh]);
        return;
    }
    float M = -INFINITY;
    int nonempty = 0;
    for (int32_t ch = 0; ch < P.n_chunks; ch++) {
        const int64_t e = (int64_t)ch * P.n_qh + qh;
        nonempty |= P.ne[e];
        if (P.ne[e] && P.m[e] == P.m[e]) M = fmaxf(M, P.m[e]);
    }
    const bool live = M != -INFINITY;
    float L = 0.0f, o = 0.0f;
    for (int32_t ch = 0; ch < P.n_chunks; ch++) {
        const int64_t e = (int64_t)ch * P.n_qh + qh;
        const float m_s = P.ne[e] ? P.m[e] : -INFINITY, l_s = P.ne[e] ? P.l[e] : 0.0f;
        const float w = (live && m_s != -INFINITY) ? expf(TW_SUB(m_s, M)) : 0.0f;
        L = TW_FMA(w, l_s, L);
        /* the arm's partials are stored as bf16 (cvt.rn.bf16x2), and widen exactly */
        o = TW_FMA(w, __bfloat162float(__float2bfloat16_rn(tw_part(P, qh, c, ch))), o);
    }
    P.out[id] = !nonempty ? 0.0f : fabsf(M) == INFINITY ? NAN : TW_DIV(o, L);
}

static __global__ void tw_walk(tw_plan P) {
    const int64_t id = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (id < P.n_qh * P.n_chunks) tw_walk_one(P, id);
}

static __global__ void tw_out(tw_plan P) {
    const int64_t id = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (id < P.n_qh * P.kv_rank) tw_out_one(P, id);
}

static tw_plan tw_plan_of(const float *dot, const int32_t *carrier, int32_t n_head, int32_t kv_rank,
                          int32_t t_q, int32_t t_kv, float scale, int64_t cs) {
    tw_plan P;
    memset(&P, 0, sizeof P);
    P.dot = dot, P.carrier = carrier, P.n_head = n_head, P.kv_rank = kv_rank, P.t_q = t_q;
    P.t_kv = t_kv, P.scale = scale, P.cs = cs, P.n_qh = (int64_t)t_q * n_head;
    P.n_chunks = (int32_t)((t_kv + cs - 1) / cs);
    P.max_tiles = (int32_t)((cs + TW_JT - 1) / TW_JT);
    return P;
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
    tw_plan P = tw_plan_of(NULL, NULL, n_head, kv_rank, t_q, t_kv, scale, cs);
    const size_t n_dot = (size_t)P.n_qh * t_kv, n_part = (size_t)P.n_qh * P.n_chunks;
    const size_t n_out = (size_t)P.n_qh * kv_rank;
    float *d_dot = NULL, *d_out = NULL;
    int32_t *d_car = NULL;
    TW_TRY(cudaMalloc((void **)&d_dot, n_dot * 4));
    TW_TRY(cudaMalloc((void **)&P.pb, n_dot * 4));
    TW_TRY(cudaMalloc((void **)&P.m, n_part * 4));
    TW_TRY(cudaMalloc((void **)&P.l, n_part * 4));
    TW_TRY(cudaMalloc((void **)&P.ne, n_part * 4));
    TW_TRY(cudaMalloc((void **)&P.alpha, n_part * P.max_tiles * 4));
    TW_TRY(cudaMalloc((void **)&d_car, (size_t)kv_rank * 4));
    TW_TRY(cudaMalloc((void **)&d_out, n_out * 4));
    TW_TRY(cudaMemcpy(d_dot, dot, n_dot * 4, cudaMemcpyHostToDevice));
    TW_TRY(cudaMemcpy(d_car, carrier, (size_t)kv_rank * 4, cudaMemcpyHostToDevice));
    TW_TRY(cudaMemset(P.pb, 0, n_dot * 4));
    P.dot = d_dot, P.carrier = d_car, P.out = d_out;
    tw_walk<<<(unsigned)((n_part + 127) / 128), 128>>>(P);
    TW_TRY(cudaGetLastError());
    tw_out<<<(unsigned)((n_out + 127) / 128), 128>>>(P);
    TW_TRY(cudaGetLastError());
    TW_TRY(cudaMemcpy(out, d_out, n_out * 4, cudaMemcpyDeviceToHost));
done:
    cudaFree(d_dot), cudaFree(P.pb), cudaFree(P.m), cudaFree(P.l), cudaFree(P.ne);
    cudaFree(P.alpha), cudaFree(d_car), cudaFree(d_out);
    return rc;
}

extern "C" int wg_twin_absorbed_host(const float *dot, const int32_t *carrier, int32_t n_head,
                                     int32_t kv_rank, int32_t t_q, int32_t t_kv, float scale,
                                     int64_t cs, float *out) {
    tw_plan P = tw_plan_of(dot, carrier, n_head, kv_rank, t_q, t_kv, scale, cs);
    const size_t n_dot = (size_t)P.n_qh * t_kv, n_part = (size_t)P.n_qh * P.n_chunks;
    P.pb = (float *)calloc(n_dot, 4);
    P.m = (float *)calloc(n_part, 4);
    P.l = (float *)calloc(n_part, 4);
    P.ne = (int32_t *)calloc(n_part, 4);
    P.alpha = (float *)calloc(n_part * P.max_tiles, 4);
    P.out = out;
    const int ok = P.pb && P.m && P.l && P.ne && P.alpha;
    if (ok) {
        for (int64_t id = 0; id < (int64_t)n_part; id++) tw_walk_one(P, id);
        for (int64_t id = 0; id < P.n_qh * kv_rank; id++) tw_out_one(P, id);
    }
    free(P.pb), free(P.m), free(P.l), free(P.ne), free(P.alpha);
    return ok ? 0 : 1;
}

extern "C" int wg_twin_inputs(int32_t t_q, int32_t t_kv, uint32_t seed, wg_twin_in *in) {
    const int32_t H = WG_TWIN_HEADS, R = WG_TWIN_RANK, DR = WG_TWIN_ROPE, K = R + DR;
    const size_t nq = (size_t)t_q * H, nc = (size_t)t_kv * K;
    memset(in, 0, sizeof *in);
    in->q_lat = (float *)malloc(nq * R * 4);
    in->q_pe = (float *)malloc(nq * (DR + 1) * 4);
    in->cache = (float *)malloc(nc * 4);
    in->dot = (float *)malloc(nq * (size_t)t_kv * 4);
    in->carrier = (int32_t *)malloc((size_t)R * 4);
    if (!in->q_lat || !in->q_pe || !in->cache || !in->dot || !in->carrier) {
        wg_twin_inputs_free(in);
        return 1;
    }
    mla_fill_host_f32(in->q_lat, nq * R, MLA_FILL_REALISTIC, seed, "q_lat", 1.0f);
    mla_fill_host_f32(in->q_pe, nq * (DR + 1), MLA_FILL_REALISTIC, seed, "q_pe", 1.0f);
    mla_fill_host_f32(in->cache, nc, MLA_FILL_REALISTIC, seed, "cache", 1.0f);
    for (size_t e = 0; e < nq * R; e++) in->q_lat[e] = mla_fill_half(in->q_lat[e]);
    for (size_t e = 0; e < nq * (DR + 1); e++) in->q_pe[e] = mla_fill_half(in->q_pe[e]);
    for (int64_t r = 0; r < t_kv; r++)
        for (int32_t c = 0; c < K; c++)
            in->cache[r * K + c] = c < R ? 0.0f : mla_fill_half(in->cache[r * K + c]);
    for (int32_t c = 0; c < R; c++) {
        in->carrier[c] = (int32_t)((61 * (int64_t)c + 17) % t_kv);
        in->cache[(size_t)in->carrier[c] * K + c] = 1.0f;
    }
    /* the exact dot products: the rope part (halves: every partial sum exact), then each carried
     * column's q (a half) */
    for (size_t qh = 0; qh < nq; qh++)
        for (int64_t r = 0; r < t_kv; r++) {
            float acc = 0.0f;
            for (int32_t k = 0; k < DR; k++)
                acc += in->q_pe[qh * DR + k] * in->cache[r * K + R + k];
            in->dot[qh * t_kv + r] = acc;
        }
    for (int32_t c = 0; c < R; c++)
        for (size_t qh = 0; qh < nq; qh++)
            in->dot[qh * t_kv + in->carrier[c]] += in->q_lat[qh * R + c];
    return 0;
}

extern "C" void wg_twin_inputs_free(wg_twin_in *in) {
    free(in->q_lat), free(in->q_pe), free(in->cache), free(in->dot), free(in->carrier);
    memset(in, 0, sizeof *in);
}
