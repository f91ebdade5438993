/* probe_door_pingpong.cu (twenty-sixth session): the ping-pong schedule planned for the bf16 door
 * in the twenty-fourth session (docs/performance.md, "A plan for that schedule"), as a standalone
 * prototype at glm5's shape, timed beside the shipped door arms. It answers one question before
 * an arm is built: does overlapping one head group's softmax with the other group's mma take
 * the door's walk toward its read floor?
 *
 * The prototype (pp_walk) covers only what the question needs: n_head a multiple of 64,
 * kv_rank 512, d_rope 64, the causal walk, on the bf16 arm's chunk plan and workspace layout
 * (mla_attn_tcb_chunk_slots), combined by a copy of attn_combine_f32. Its edge semantics are the
 * bf16 arm's for NaN logits and empty lists, without the rare path of an infinite logit. It is
 * not a launcher and no engine can reach it. Per block (chunk, query, 64 heads), 256 threads:
 *  - two groups of 4 warps; group g owns heads 32 g .. 32 g + 31 of the tile, and both groups
 *    read every cache tile, so the cache is still read once for all 64 heads;
 *  - q as bf16 A fragments in registers (cvt.rn, as the bf16 arm): warp w of a group holds the
 *    k16 steps [9 w, 9 w + 9) of its group's two 16-head m-tiles (72 registers), converted once
 *    from two 32-head halves staged in buffers 2 and 3;
 *  - row tiles of 16 slots in 4 buffers (4 x 16 rows of 580 floats), 2 tiles ahead: each group
 *    copies 8 rows of every tile by cp.async, and each thread's copies arrive on the buffer's
 *    `full` mbarrier (256 arrivals, cp.async.mbarrier.arrive.noinc); every thread arrives on its
 *    `empty` mbarrier after its P . V, and a buffer is refilled only after that phase;
 *  - per tile and group: (1) each warp's partial logits of its 32 heads x 16 slots over its 9
 *    k16 steps; a group barrier (bar.sync 1 + g, 128); (2) the 4 partials summed in warp order,
 *    scaled, the online softmax by 4 threads a head (4 slots each), P as bf16; a group barrier;
 *    (3) O *= alpha, then O += P . V over the tile's one k16 step, warp w owning output columns
 *    [128 w, 128 w + 128) of its group's 32 heads (128 registers);
 *  - TURN 1: the logits of the two groups take turns (group g waits on named barrier 3 + g before
 *    its logits and arrives on the other's after them), so one group's softmax and P . V run
 *    while the other group's logits use the tensor pipe. TURN 0: the groups run free.
 * Arithmetic: the bf16 arm's operands and roundings, but 16-slot tiles (one more rescale every 16
 * slots) and the logits' partials in 4 accumulators over 9 k16 steps each, not 8 over 4 or 5, so
 * its bytes differ from the bf16 arm's; the probe prints how far each arm is from the f32
 * launcher (the class attn walk), not a verdict. A prototype that proves worth it becomes an arm
 * with its own walk and class, tests and sanitizer cases, as the bf16 arm did.
 * Every checked call starts from NaN outputs, and the prototype's from a NaN workspace. --check
 * runs only the untimed rows (for compute-sanitizer); --once the timed rows once each, untimed
 * (for ncu).
 *     probe_door_pingpong [--once | --check] [--rounds N] */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "kernels/mla.h"
#include "kernels/mla_cuda_util.cuh"
#include "kernels/mla_door.h"
#include "tools/bench/probe_door.cuh"
#include "tools/bench/probe_util.cuh"

#define PP_NT 256
#define PP_JT 16   /* slots a row tile */
#define PP_NB 4    /* cache buffers */
#define PP_W 576   /* kv_rank 512 + d_rope 64 */
#define PP_R 512   /* kv_rank */
#define PP_LDK 580 /* row stride: 4 mod 32, as the bf16 arm's */
#define PP_KS 9    /* k16 steps a warp: 36 over the group's 4 warps */
#define PP_PLB 24  /* P row stride in bf16 (48 bytes: ldmatrix rows distinct) */
#define PP_NNT 16  /* P . V n-tiles a warp: 128 columns */

static_assert(PP_W / 16 == 4 * PP_KS && PP_R / 4 == 8 * PP_NNT, "the prototype's fixed shape");

static size_t pp_smem_bytes(void) {
    return (size_t)PP_NB * PP_JT * PP_LDK * 4 /* ks [4][16][580] */
           + (size_t)2 * 4 * 32 * PP_JT * 4   /* sp [2 groups][4 warps][32 heads][16] */
           + (size_t)2 * 32 * PP_PLB * 2      /* ps [2][32][PLB] (bf16) */
           + (size_t)64 * 4 * 4               /* alpha, fin m / l / poison */
           + (size_t)2 * PP_NB * 8;           /* full, empty mbarriers */
}

static __device__ __forceinline__ void pp_mma(float c[4], const uint32_t a[4],
                                              const uint32_t b[2]) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
static __device__ __forceinline__ void pp_bar_sync(int id, int n) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory");
}
static __device__ __forceinline__ void pp_bar_arrive(int id, int n) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(n) : "memory");
}
/* this thread's earlier cp.async copies arrive on bar when they land (counted in its init) */
static __device__ __forceinline__ void pp_cp_arrive(uint64_t *bar) {
    const unsigned b = (unsigned)__cvta_generic_to_shared(bar);
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(b) : "memory");
}
template <int TURN>
static __global__ void __launch_bounds__(PP_NT, 1)
    pp_walk(const float *__restrict__ q_lat, const float *__restrict__ q_pe,
            const float *__restrict__ cache, float *__restrict__ o_lat, float *__restrict__ ws_o,
            float *__restrict__ ws_ml, int32_t n_head, int32_t t_q, int32_t t_kv, float scale,
            int64_t chunk_slots, int32_t n_chunks) {
    extern __shared__ __align__(16) float smem[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int g = warp >> 2, wg = warp & 3, gt = tid & 127; /* group, warp in group, its thread */
    const int fg = lane >> 2, ft = lane & 3;
    float *ks = smem;                                     /* [4][16][LDK] */
    float *sp = ks + (size_t)PP_NB * PP_JT * PP_LDK;      /* [2][4][32][16] */
    uint16_t *ps = (uint16_t *)(sp + 2 * 4 * 32 * PP_JT); /* [2][32][PLB] */
    float *alpha_s = (float *)(ps + 2 * 32 * PP_PLB);     /* [64] */
    float *fin_m = alpha_s + 64, *fin_l = fin_m + 64, *fin_p = fin_l + 64;
    uint64_t *full = (uint64_t *)(fin_p + 64), *empty = full + PP_NB;

    const probe_block pb = probe_block_of(n_head, t_q, t_kv, chunk_slots, PP_JT);
    const int64_t i = pb.i, n_qh = pb.n_qh, c_begin = pb.c_begin, c_end = pb.c_end;
    const int32_t h0 = pb.h0, chunk = pb.chunk, n_k = pb.n_k;
    if (n_k == 0) { /* an empty partial, as the bf16 arm's */
        probe_empty_partial(pb, ws_o, ws_ml, n_head, PP_R, PP_NT);
        return;
    }

    if (tid == 0) {
        for (int b = 0; b < PP_NB; b++) {
            mla_mbar_init(&full[b], PP_NT);
            mla_mbar_init(&empty[b], PP_NT);
        }
        mla_mbar_fence_init();
    }
    __syncthreads();

    /* group g's 8 rows of tile k into buffer k % 4: row 8 g + gt / 16, 9 float4s a thread */
    const int32_t cr = 8 * g + (gt >> 4), cq = gt & 15;
    auto issue = [&](int32_t k) {
        const int64_t s = c_begin + (int64_t)k * PP_JT + cr;
        const bool ok = s < c_end;
        float *dst = ks + ((size_t)(k & 3) * PP_JT + cr) * PP_LDK + 4 * cq;
        const float *src = cache + (ok ? s : 0) * PP_W + 4 * cq;
#pragma unroll
        for (int u = 0; u < PP_W / 64; u++) mla_cp_async16(dst + 64 * u, src + 64 * u, ok);
        pp_cp_arrive(&full[k & 3]);
    };
    issue(0);
    if (n_k > 1) issue(1);

    /* q's A fragments: the 64 heads in two 32-head halves through buffers 2 and 3 (32 rows of
     * LDK, free until tile 2's copies), a row per 8 threads; group h converts half h. */
    uint32_t qf[2][PP_KS][4];
    {
        float *qb = ks + (size_t)2 * PP_JT * PP_LDK;
        const int32_t qr = tid >> 3, qc = tid & 7;
        for (int half = 0; half < 2; half++) {
            const int64_t qh = i * n_head + h0 + 32 * half + qr;
            const float *ql = q_lat + qh * PP_R, *qp = q_pe + qh * (PP_W - PP_R);
            float *qd = qb + (size_t)qr * PP_LDK;
            for (int32_t c4 = qc; c4 < PP_W / 4; c4 += 8) {
                const int32_t c = 4 * c4;
                mla_cp_async16(qd + c, c < PP_R ? ql + c : qp + (c - PP_R), true);
            }
            mla_cp_async_commit();
            mla_cp_async_wait<0>();
            __syncthreads();
            if (g == half) {
#pragma unroll
                for (int mt = 0; mt < 2; mt++)
#pragma unroll
                    for (int s = 0; s < PP_KS; s++) {
                        const int32_t k16 = PP_KS * wg + s;
                        const int32_t c = 32 * (k16 >> 1) + 8 * ft + 4 * (k16 & 1);
                        const float *ra = qb + (size_t)(mt * 16 + fg) * PP_LDK + c;
                        const float4 lo = *reinterpret_cast<const float4 *>(ra);
                        const float4 hi = *reinterpret_cast<const float4 *>(ra + 8 * PP_LDK);
                        qf[mt][s][0] = mla_bf16x2(lo.x, lo.y);
                        qf[mt][s][1] = mla_bf16x2(hi.x, hi.y);
                        qf[mt][s][2] = mla_bf16x2(lo.z, lo.w);
                        qf[mt][s][3] = mla_bf16x2(hi.z, hi.w);
                    }
            }
            __syncthreads(); /* the half's reads done before the next half or tile 2 */
        }
    }

    /* softmax ownership: head sh of the group (4 threads a head), slots 4 sq .. 4 sq + 3 */
    const int sh = gt >> 2, sq = gt & 3;
    float m_run = -INFINITY, l_run = 0.0f;
    bool poison = false, any_valid = false;
    const int32_t vc0 = wg * (8 * PP_NNT);
    float o[2][PP_NNT][4];
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int nt = 0; nt < PP_NNT; nt++)
            o[mt][nt][0] = o[mt][nt][1] = o[mt][nt][2] = o[mt][nt][3] = 0.0f;
    float *spg = sp + (size_t)g * 4 * 32 * PP_JT;
    uint16_t *psg = ps + (size_t)g * 32 * PP_PLB;
    float *alg = alpha_s + 32 * g;
    const uint32_t pa = (uint32_t)__cvta_generic_to_shared(
        psg + ((lane & 7) + ((lane >> 3) & 1) * 8) * PP_PLB + (lane >> 4) * 8);

    if (TURN && g == 1) pp_bar_arrive(3, PP_NT); /* group 0's first logits may start */

    for (int32_t k = 0; k < n_k; k++) {
        if (k + 2 < n_k) {
            if (k >= 2) mla_mbar_wait(&empty[(k + 2) & 3], (((k + 2) >> 2) - 1) & 1);
            issue(k + 2);
        }
        mla_mbar_wait(&full[k & 3], (k >> 2) & 1);
        const float *buf = ks + (size_t)(k & 3) * PP_JT * PP_LDK;
        if (TURN) pp_bar_sync(3 + g, PP_NT);

        /* 1. this warp's partial logits: 32 heads x 16 slots over its 9 k16 steps */
        {
            float sa[2][2][4];
#pragma unroll
            for (int nt = 0; nt < 2; nt++)
#pragma unroll
                for (int mt = 0; mt < 2; mt++)
                    sa[nt][mt][0] = sa[nt][mt][1] = sa[nt][mt][2] = sa[nt][mt][3] = 0.0f;
            const float *bs = buf + fg * PP_LDK + 8 * ft;
#pragma unroll
            for (int s = 0; s < PP_KS; s++) {
                const int32_t k16 = PP_KS * wg + s;
                const int32_t c = 32 * (k16 >> 1) + 4 * (k16 & 1);
#pragma unroll
                for (int nt = 0; nt < 2; nt++) {
                    const float4 kv4 = *reinterpret_cast<const float4 *>(bs + nt * 8 * PP_LDK + c);
                    const uint32_t b[2] = {mla_bf16x2(kv4.x, kv4.y), mla_bf16x2(kv4.z, kv4.w)};
#pragma unroll
                    for (int mt = 0; mt < 2; mt++) pp_mma(sa[nt][mt], qf[mt][s], b);
                }
            }
            if (TURN && !(g == 1 && k == n_k - 1)) pp_bar_arrive(4 - g, PP_NT);
            float *spw = spg + (size_t)wg * 32 * PP_JT;
#pragma unroll
            for (int nt = 0; nt < 2; nt++)
#pragma unroll
                for (int mt = 0; mt < 2; mt++) {
                    const int hr = mt * 16 + fg;
                    const int col = (nt * 8 + 2 * ft) ^ (8 * ((fg >> 1) & 1));
                    *reinterpret_cast<float2 *>(spw + hr * PP_JT + col) =
                        make_float2(sa[nt][mt][0], sa[nt][mt][1]);
                    *reinterpret_cast<float2 *>(spw + (hr + 8) * PP_JT + col) =
                        make_float2(sa[nt][mt][2], sa[nt][mt][3]);
                }
        }
        pp_bar_sync(1 + g, 128); /* (b) the group's partials */

        /* 2. the logits of head sh, slots 4 sq .. 4 sq + 3; the online softmax */
        {
            const int col = (4 * sq) ^ (8 * ((sh >> 1) & 1));
            float4 d = *reinterpret_cast<const float4 *>(spg + sh * PP_JT + col);
#pragma unroll
            for (int w = 1; w < 4; w++) {
                const float4 e =
                    *reinterpret_cast<const float4 *>(spg + ((size_t)w * 32 + sh) * PP_JT + col);
                d.x = __fadd_rn(d.x, e.x);
                d.y = __fadd_rn(d.y, e.y);
                d.z = __fadd_rn(d.z, e.z);
                d.w = __fadd_rn(d.w, e.w);
            }
            const float lg[4] = {__fmul_rn(scale, d.x), __fmul_rn(scale, d.y),
                                 __fmul_rn(scale, d.z), __fmul_rn(scale, d.w)};
            const int64_t s0 = c_begin + (int64_t)k * PP_JT + 4 * sq;
            bool vd[4];
            float lm = -INFINITY;
            int nan_here = 0;
#pragma unroll
            for (int x = 0; x < 4; x++) {
                vd[x] = s0 + x < c_end;
                if (vd[x]) {
                    any_valid = true;
                    if (lg[x] != lg[x])
                        nan_here = 1;
                    else
                        lm = fmaxf(lm, lg[x]);
                }
            }
            lm = fmaxf(lm, __shfl_xor_sync(0xffffffffu, lm, 1));
            lm = fmaxf(lm, __shfl_xor_sync(0xffffffffu, lm, 2));
            const uint32_t nan_lanes = __ballot_sync(0xffffffffu, nan_here != 0);
            poison = poison || ((nan_lanes >> (lane & 28)) & 0xFu) != 0;
            const float m_new = fmaxf(m_run, lm);
            const bool live = m_new != -INFINITY;
            float alpha = 1.0f;
            if (live) alpha = expf(m_run - m_new);
            float p[4];
#pragma unroll
            for (int x = 0; x < 4; x++)
                p[x] = (live && vd[x] && lg[x] == lg[x]) ? expf(lg[x] - m_new) : 0.0f;
            *reinterpret_cast<uint2 *>(psg + sh * PP_PLB + 4 * sq) =
                make_uint2(mla_bf16x2(p[0], p[1]), mla_bf16x2(p[2], p[3]));
            float ls = __fadd_rn(__fadd_rn(__fadd_rn(p[0], p[1]), p[2]), p[3]);
            ls = __fadd_rn(ls, __shfl_xor_sync(0xffffffffu, ls, 1));
            ls = __fadd_rn(ls, __shfl_xor_sync(0xffffffffu, ls, 2));
            l_run = __fmaf_rn(l_run, alpha, ls);
            m_run = m_new;
            if (sq == 0) alg[sh] = alpha;
        }
        pp_bar_sync(1 + g, 128); /* (c) the group's P and alpha */

        /* 3. O = O * alpha + P . V over this warp's 128 columns of the group's 32 heads */
#pragma unroll
        for (int mt = 0; mt < 2; mt++) {
            const float a0 = alg[mt * 16 + fg], a1 = alg[mt * 16 + fg + 8];
#pragma unroll
            for (int nt = 0; nt < PP_NNT; nt++) {
                o[mt][nt][0] = __fmul_rn(o[mt][nt][0], a0);
                o[mt][nt][1] = __fmul_rn(o[mt][nt][1], a0);
                o[mt][nt][2] = __fmul_rn(o[mt][nt][2], a1);
                o[mt][nt][3] = __fmul_rn(o[mt][nt][3], a1);
            }
        }
        {
            uint32_t a[2][4];
#pragma unroll
            for (int mt = 0; mt < 2; mt++)
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                             : "=r"(a[mt][0]), "=r"(a[mt][1]), "=r"(a[mt][2]), "=r"(a[mt][3])
                             : "r"(pa + (uint32_t)(mt * 16 * PP_PLB) * 2u));
            const float *bv = buf + 2 * ft * PP_LDK + vc0 + fg;
#pragma unroll
            for (int nt = 0; nt < PP_NNT; nt++) {
                const float *bk = bv + nt * 8;
                const uint32_t b[2] = {mla_bf16x2(bk[0], bk[PP_LDK]),
                                       mla_bf16x2(bk[8 * PP_LDK], bk[9 * PP_LDK])};
#pragma unroll
                for (int mt = 0; mt < 2; mt++) pp_mma(o[mt][nt], a[mt], b);
            }
        }
        mla_mbar_arrive(&empty[k & 3]); /* this thread's reads of buffer k % 4 are done */
        /* the next tile's barrier (b) orders the group's P and alpha reads before their writes */
    }

    if (sq == 0) {
        fin_m[32 * g + sh] = m_run;
        fin_l[32 * g + sh] = l_run;
        fin_p[32 * g + sh] = poison ? 1.0f : 0.0f;
    }
    const bool nonempty = __syncthreads_or(any_valid) != 0; /* also orders fin_* */
    if (n_chunks > 1) {
        const bool odd = ft & 1;
        const int hh = fg + (odd ? 8 : 0);
        const int32_t cb = vc0 + 4 * (ft >> 1);
#pragma unroll
        for (int mt = 0; mt < 2; mt++) {
            const int32_t h = h0 + 32 * g + mt * 16 + hh;
            float *row = ws_o + ((int64_t)chunk * n_qh + i * n_head + h) * PP_R + cb;
#pragma unroll
            for (int nt = 0; nt < PP_NNT; nt++) {
                const float *v = o[mt][nt];
                const float r0 = __shfl_xor_sync(0xffffffffu, odd ? v[0] : v[2], 1);
                const float r1 = __shfl_xor_sync(0xffffffffu, odd ? v[1] : v[3], 1);
                *reinterpret_cast<float4 *>(row + nt * 8) =
                    odd ? make_float4(r0, r1, v[2], v[3]) : make_float4(v[0], v[1], r0, r1);
            }
        }
        if (sq == 0) {
            float *ml = ws_ml + ((int64_t)chunk * n_qh + i * n_head + h0 + 32 * g + sh) * 3;
            ml[0] = m_run;
            ml[1] = l_run;
            ml[2] = !nonempty ? 0.0f : poison ? 2.0f : 1.0f;
        }
    } else {
#pragma unroll
        for (int mt = 0; mt < 2; mt++)
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const int hh = 32 * g + mt * 16 + fg + 8 * half;
                const float m = fin_m[hh], l = fin_l[hh];
                const bool nan_out = fin_p[hh] != 0.0f || fabsf(m) == INFINITY;
                float *dst = o_lat + (i * n_head + h0 + hh) * PP_R + vc0 + 2 * ft;
#pragma unroll
                for (int nt = 0; nt < PP_NNT; nt++) {
                    const float v0 = o[mt][nt][2 * half], v1 = o[mt][nt][2 * half + 1];
                    dst[nt * 8] = !nonempty ? 0.0f : nan_out ? NAN : __fdiv_rn(v0, l);
                    dst[nt * 8 + 1] = !nonempty ? 0.0f : nan_out ? NAN : __fdiv_rn(v1, l);
                }
            }
    }
}

/* The prototype on the bf16 arm's plan; ws holds the plan's workspace at its largest. */
static void pp_run(int turn, const float *ql, const float *qp, const float *cache, float *o,
                   float *ws, int32_t H, int32_t t_q, int32_t t_kv, float scale) {
    const int64_t w_max = t_kv, cs = mla_attn_tcb_chunk_slots(H, t_q, w_max);
    const int32_t n_chunks = (int32_t)((w_max + cs - 1) / cs);
    const int64_t n_qh = (int64_t)t_q * H, n_tiles = (int64_t)t_q * (H / 64);
    float *ws_ml = ws + (size_t)n_chunks * n_qh * PP_R;
    auto kern = turn ? pp_walk<1> : pp_walk<0>;
    kern<<<(unsigned)(n_tiles * n_chunks), PP_NT, pp_smem_bytes()>>>(
        ql, qp, cache, o, ws, ws_ml, H, t_q, t_kv, scale, cs, n_chunks);
    if (n_chunks > 1) {
        probe_combine_launch(ws, ws_ml, o, n_qh, PP_R, n_chunks);
    }
}

int main(int argc, char **argv) {
    const probe_door_opts op = probe_door_parse(argc, argv);
    const bool once = op.once, check = op.check;
    const int rounds = op.rounds;
    cudaDeviceProp prop;
    probe_device("probe_door_pingpong", &prop);
    const int32_t H = MLA_GLM5_N_HEAD, R = MLA_GLM5_KV_RANK;
    static_assert(MLA_GLM5_KV_RANK == PP_R && MLA_GLM5_KV_RANK + MLA_GLM5_D_ROPE == PP_W &&
                      MLA_GLM5_N_HEAD % 64 == 0,
                  "the prototype's shape is glm5's");
    const int32_t T_Q_MAX = PROBE_DOOR_T_Q_MAX;
    const float scale = MLA_GLM5_SCALE;
    CK(cudaFuncSetAttribute(pp_walk<0>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)pp_smem_bytes()));
    CK(cudaFuncSetAttribute(pp_walk<1>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)pp_smem_bytes()));
    const probe_door_io io = probe_door_io_make();
    float *const cache = io.cache, *const ql = io.ql, *const qp = io.qp, *const ws = io.ws;
    float *const *o = io.o;
    const size_t ws_floats = io.ws_floats;
    typedef probe_row row;
    const row rows[] = {{"decode 32K", 1, 32768, true},
                        {"verify (t_q 4)", 4, 32768, true},
                        {"decode 8K", 1, 8192, true},
                        {"decode 128K", 1, 131072, true},
                        {"t_kv 1", 1, 1, false},
                        {"t_kv 17", 1, 17, false},
                        {"t_kv 40, t_q 4", 4, 40, false},
                        {"t_kv 289, t_q 4", 4, 289, false},
                        {"t_kv 4099", 1, 4099, false},
                        /* 96-slot chunks (6 tiles: both rings wrap, each parity flips), the last
                         * chunk 3 and 5 tiles */
                        {"t_kv 10600", 1, 10600, false},
                        {"t_kv 10630", 1, 10630, false}};
    /* arms: 0 the f32 launcher (the reference), 1 tf32, 2 bf16, 3 ping-pong free, 4 ping-pong
     * with turns */
    const char *arm_name[5] = {"f32", "tf32", "bf16", "pp free", "pp turns"};
    auto call = [&](const row &r, int a) {
        int rc = 0;
        if (a < 3)
            rc = probe_door_base_arm(io, a, r.t_q, r.t_kv);
        else
            pp_run(a - 3, ql, qp, cache, o[a], ws, H, r.t_q, r.t_kv, scale);
        CK(cudaGetLastError());
        if (rc != 0) {
            fprintf(stderr, "probe_door_pingpong: %s arm %s returned %d\n", r.name, arm_name[a],
                    rc);
            exit(1);
        }
    };
    if (once) {
        for (const row &r : rows)
            if (r.timed)
                for (int a = 2; a < 5; a++) call(r, a);
        CK(cudaDeviceSynchronize());
        printf("probe_door_pingpong --once: the timed rows x bf16, pp free, pp turns ran\n");
        return 0;
    }
    printf("| row | bf16 us | pp free us | pp turns us | turns / bf16 | tf32 us | max |arm - f32| "
           "/ max |f32|: tf32, bf16, pp free, pp turns | pp vs bf16 bytes |\n");
    printf("| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |\n");
    int bad = 0;
    for (const row &r : rows) {
        if (check && r.timed) continue;
        const size_t n = (size_t)r.t_q * H * R;
        /* every output NaN before its call, and the prototype's workspace NaN (as the shake
         * build's): an element or a partial left unwritten shows as NaN */
        for (int a = 0; a < 5; a++) {
            CK(cudaMemset(o[a], 0xFF, (size_t)T_Q_MAX * H * R * 4));
            if (a >= 3) CK(cudaMemset(ws, 0xFF, ws_floats * 4));
            call(r, a);
        }
        CK(cudaDeviceSynchronize());
        std::vector<float> h[5];
        for (int a = 0; a < 5; a++) {
            h[a].resize(n);
            CK(cudaMemcpy(h[a].data(), o[a], n * 4, cudaMemcpyDeviceToHost));
        }
        double vmax = 0, d[5] = {0, 0, 0, 0, 0};
        size_t nonfinite[5] = {0, 0, 0, 0, 0}, same_pp = 0;
        for (size_t e = 0; e < n; e++) {
            vmax = fmax(vmax, fabs((double)h[0][e]));
            for (int a = 1; a < 5; a++) {
                if (!isfinite(h[a][e])) nonfinite[a]++;
                d[a] = fmax(d[a], fabs((double)h[a][e] - h[0][e]));
            }
            same_pp += h[3][e] == h[4][e];
        }
        double t[5] = {0, 0, 0, 0, 0};
        if (r.timed && !check) {
            std::vector<double> tv[5];
            for (int k = 0; k < rounds; k++)
                for (int a = 1; a < 5; a++) tv[a].push_back(median_us([&] { call(r, a); }));
            for (int a = 1; a < 5; a++) t[a] = median_of(tv[a]);
        }
        const double rel[5] = {0, d[1] / vmax, d[2] / vmax, d[3] / vmax, d[4] / vmax};
        /* a prototype far outside the bf16 arm's distance from the f32 launcher is broken */
        const bool broken = nonfinite[3] || nonfinite[4] || rel[3] > 4 * rel[2] + 1e-6 ||
                            rel[4] > 4 * rel[2] + 1e-6 || same_pp != n;
        bad |= broken;
        printf("| %s | %.2f | %.2f | %.2f | %.3f | %.2f | %.2e, %.2e, %.2e, %.2e | free == turns "
               "%s%s |\n",
               r.name, t[2], t[3], t[4], t[2] > 0 ? t[4] / t[2] : 0.0, t[1], rel[1], rel[2], rel[3],
               rel[4], same_pp == n ? "yes" : "NO", broken ? "; BROKEN" : "");
    }
    printf("probe_door_pingpong: %s\n", bad ? "a prototype row is broken (see BROKEN)"
                                            : "every prototype row within 4x the bf16 arm's "
                                              "distance from the f32 launcher");
    return bad ? 1 : 0;
}
