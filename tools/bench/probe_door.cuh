/* probe_door.cuh: what the door prototypes (probe_door_pingpong.cu, probe_door_wgmma.cu) share
 * on the bf16 arm's chunk plan and workspace:
 *  - probe_block_of, a block's (query, 64-head group, chunk) and its chunk's visible slots;
 *  - probe_empty_partial, the partial of a chunk with no visible slot, as the bf16 arm writes it;
 *  - the split walk's combine: a copy of attn_combine_f32 (kernels/mla_attn.cu, static there), so
 *    a prototype's row pays the same combine as the shipped arms' rows;
 *  - on the host: probe_door_parse, the options; probe_door_io, glm5's inputs at the
 *    prototypes' largest row, their outputs and workspace; probe_door_base_arm, the shipped arms
 *    every prototype is timed and checked beside; probe_row, a table row. */
#ifndef MLA_PROBE_DOOR_CUH
#define MLA_PROBE_DOOR_CUH

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mla.h"
#include "kernels/mla_cuda_util.cuh"
#include "kernels/mla_door.h"
#include "tools/bench/probe_util.cuh"

#define PROBE_COMBINE_MAX_CHUNKS 256
#define PROBE_COMBINE_NT 128 /* threads (= columns) a block: attn_combine_f32's AC_NT */

/* A prototype block on the bf16 arm's plan: blockIdx.x = chunk * n_tiles + tile, tile = (query i,
 * head group h0 .. h0 + 63); or, given n_chunks (the cluster form of probe_door_wgmma), tile *
 * n_chunks + chunk, so that consecutive blocks are consecutive chunks of one tile. Its chunk's
 * slots [c_begin, c_end), c_end cut at the causal limit (t_kv - t_q + i + 1 visible slots); n_k
 * its row tiles of jt slots (0: an empty partial). */
struct probe_block {
    int64_t i, n_qh, c_begin, c_end;
    int32_t h0, chunk, n_k;
};
static __device__ __forceinline__ probe_block probe_block_of(int32_t n_head, int32_t t_q,
                                                             int32_t t_kv, int64_t chunk_slots,
                                                             int32_t jt, int32_t n_chunks = 0) {
    probe_block b;
    const int32_t n_hg = n_head / 64;
    const int64_t n_tiles = (int64_t)t_q * n_hg;
    const int64_t tile = n_chunks ? (int64_t)blockIdx.x / n_chunks : (int64_t)blockIdx.x % n_tiles;
    b.chunk =
        (int32_t)(n_chunks ? (int64_t)blockIdx.x - tile * n_chunks : (int64_t)blockIdx.x / n_tiles);
    b.i = tile / n_hg;
    b.h0 = (int32_t)(tile - b.i * n_hg) * 64;
    b.n_qh = (int64_t)t_q * n_head;
    b.c_begin = (int64_t)b.chunk * chunk_slots;
    b.c_end = b.c_begin + chunk_slots;
    const int64_t w_len = (int64_t)t_kv - t_q + b.i + 1; /* causal */
    if (b.c_end > w_len) b.c_end = w_len;
    b.n_k = b.c_end > b.c_begin ? (int32_t)((b.c_end - b.c_begin + jt - 1) / jt) : 0;
    return b;
}

/* The partial of a chunk with no visible slot, as the bf16 arm writes it (zeros, m = -inf, l = 0,
 * flag 0), by the block's nt threads. */
static __device__ void probe_empty_partial(const probe_block &b, float *ws_o, float *ws_ml,
                                           int32_t n_head, int32_t kv_rank, int nt) {
    const int tid = threadIdx.x;
    for (int32_t e = tid; e < 64 * kv_rank; e += nt) {
        const int32_t hh = e / kv_rank, h = b.h0 + hh;
        ws_o[((int64_t)b.chunk * b.n_qh + b.i * n_head + h) * kv_rank + (e - hh * kv_rank)] = 0.0f;
    }
    if (tid < 64) {
        float *ml = ws_ml + ((int64_t)b.chunk * b.n_qh + b.i * n_head + b.h0 + tid) * 3;
        ml[0] = -INFINITY;
        ml[1] = 0.0f;
        ml[2] = 0.0f;
    }
}

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

/* ---- host ---- */

#define PROBE_DOOR_T_KV_MAX 131072 /* the prototypes' largest row: decode 128K */
#define PROBE_DOOR_T_Q_MAX 4       /* and verify */
#define PROBE_DOOR_ARMS 6          /* outputs: the 3 base arms and up to 3 prototype arms */

/* The prototypes' options: [--once | --check] [--rounds N]. */
struct probe_door_opts {
    bool once = false, check = false;
    int rounds = 3;
};
static probe_door_opts probe_door_parse(int argc, char **argv) {
    probe_door_opts op;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--once")) op.once = true;
        if (!strcmp(argv[a], "--check")) op.check = true;
        if (!strcmp(argv[a], "--rounds") && a + 1 < argc) op.rounds = atoi(argv[++a]);
    }
    return op;
}

/* A table row: its shape and whether it is timed (else only checked). */
struct probe_row {
    const char *name;
    int32_t t_q, t_kv;
    bool timed;
};

/* glm5's q_lat, q_pe and cache at the largest row (the realistic fill, as bench_dense's), an
 * output per arm and the bf16 plan's workspace at its largest (ws_floats). */
struct probe_door_io {
    float *cache, *ql, *qp, *ws, *o[PROBE_DOOR_ARMS];
    size_t ws_floats;
};
static probe_door_io probe_door_io_make(void) {
    const int32_t H = MLA_GLM5_N_HEAD, R = MLA_GLM5_KV_RANK, DR = MLA_GLM5_D_ROPE, W = R + DR;
    const int64_t T_KV = PROBE_DOOR_T_KV_MAX, T_Q = PROBE_DOOR_T_Q_MAX;
    probe_door_io io;
    CK(cudaMalloc(&io.cache, (size_t)T_KV * W * 4));
    CK(cudaMalloc(&io.ql, (size_t)T_Q * H * R * 4));
    CK(cudaMalloc(&io.qp, (size_t)T_Q * H * DR * 4));
    for (int a = 0; a < PROBE_DOOR_ARMS; a++) CK(cudaMalloc(&io.o[a], (size_t)T_Q * H * R * 4));
    io.ws_floats = (size_t)PROBE_COMBINE_MAX_CHUNKS * T_Q * H * (R + 3);
    CK(cudaMalloc(&io.ws, io.ws_floats * 4));
    fill<<<1024, 256>>>(io.cache, T_KV * W, mla_fill_name_hash("cache"), 1.0f);
    fill<<<256, 256>>>(io.ql, T_Q * H * R, mla_fill_name_hash("q_lat"), 0.1f);
    fill<<<64, 256>>>(io.qp, T_Q * H * DR, mla_fill_name_hash("q_pe"), 1.0f);
    CK(cudaDeviceSynchronize());
    return io;
}

/* Base arm a into io.o[a]: 0 the f32 launcher (the reference), 1 the tf32 door arm, 2 the bf16
 * door arm. @return the launcher's status. */
static int probe_door_base_arm(const probe_door_io &io, int a, int32_t t_q, int32_t t_kv) {
    const int32_t H = MLA_GLM5_N_HEAD, R = MLA_GLM5_KV_RANK, DR = MLA_GLM5_D_ROPE;
    if (a == 0)
        return memra_mla_attn_absorbed_f32(io.ql, io.qp, io.cache, io.o[0], H, R, DR, t_q, t_kv,
                                           MLA_GLM5_SCALE, NULL);
    return mla_attn_absorbed_tc_f32(io.ql, io.qp, io.cache, io.o[a], H, R, DR, t_q, t_kv,
                                    MLA_GLM5_SCALE, a, NULL);
}

#endif /* MLA_PROBE_DOOR_CUH */
