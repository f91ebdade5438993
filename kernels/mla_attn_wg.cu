/* mla_attn_wg.cu: the wgmma door arm, attn_tc_wg (MEMRA_MLA_TC_ATTN=wgmma; kernels/mla_door.h,
 * kernels/mla_attn_wg.h), built for sm_90a (wgmma, setmaxnreg: tools/cuda.bzl arch_srcs).
 *
 * The bf16 arm's operands and roundings (q, the cache and P rounded to bf16 by cvt.rn, f32
 * accumulators), its plan (64-head tiles, mla_attn_tcb_chunk_slots), workspace layout (the partial
 * O as bf16 since the thirty-fifth session), edge semantics and combine (its bf16 form), on a
 * warp-specialised walk whose two products are Hopper's asynchronous
 * warpgroup MMAs. Prototyped as tools/bench/probe_door_wgmma (twenty-seventh session,
 * docs/performance.md), whose second form ran at decode 32K in 49.6 us on an H100 against the
 * tf32 arm's 60.4. Block = (chunk, query i, 64-head group), 384 threads in three warpgroups, one
 * block per SM (227 KB of shared memory):
 *  - warpgroup 2, the producer: its first warp names the rows of each stage of 8 slots
 *    (walk.row, -1 for an invalid slot or one past the chunk) into rows_s, each of the 8 lanes
 *    arriving on the stage's mbarrier (lane 0 with the stage's bytes), and each lane of a valid
 *    slot issues one bulk copy of its row (the causal walk, whose valid rows are one run: lane 0
 *    one copy of the run) (2304 bytes, the tensor memory accelerator's
 *    1-D form) into one of 4 f32 stages, completing on the stage's mbarrier; setmaxnreg gives its
 *    registers to the other two groups;
 *  - warpgroup 1 converts each 32-slot tile (4 stages) once to bf16 in the 128-byte swizzled
 *    K-major layout wgmma reads (an invalid slot's row written as zeros, never read), into one
 *    of two tile buffers, tile k + 1 while warpgroup 0 computes tile k's logits, and records
 *    the tile's valid slots as a 32-bit mask;
 *  - q in bf16 in the same layout (heads past n_head as zeros): with one chunk both groups
 *    first load it (their 32 heads x 576, f32 to bf16); with several, attn_wg_qprep has written
 *    each 64-head tile once into the workspace and the producer copies the block's tile with one
 *    bulk copy (the thirty-seventh session: 1.7 us of the walk's prologue at decode 32K on the
 *    H100), the walk launched as the preparation's programmatic dependent where it is one wave;
 *  - warpgroup 0 computes the tile's 64 x 32 logits with 36 wgmma.m64n32k16 (A = q, B = the
 *    tile, both from shared memory, one f32 accumulator over all K), scales them, runs the online
 *    softmax in registers (a quad of threads a head row, 8 slots a thread), and hands P (bf16 A
 *    fragments) and the rescales to warpgroup 1 through shared memory and two mbarriers;
 *  - each group owns 256 output columns of all 64 heads (64 x 256 f32, 128 registers a thread):
 *    O *= alpha (f32), then two wgmma.m64n256k16 a tile, A = P from registers, B = the same bf16
 *    tile read N-major (the V view of the cache rows).
 * The softmax is the bf16 arm's, per head row: the tile max over valid, non-NaN logits; m' =
 * max(m, tile max); alpha = expf(m - m') (1 while m' = -inf); p = expf(logit - m') for a valid
 * slot (0 for an invalid one; -inf logits weigh 0 while m' = -inf); a NaN logit on a valid slot
 * poisons the row: its weight is NaN, so the row's l is NaN from then on, read at the walk's end
 * (an l NaN without a NaN logit means an infinite max, NaN by the same rule);
 * the tile sum of a row: each thread's 8 weights by a 3-level pairwise tree, then a 2-level
 * butterfly over the quad (5 roundings, inside the tf32 arm's stated 6: mla_attn_tc_walk);
 * l' = fmaf(l, alpha, tile sum). After the walk the partial (m, l, flags, O), O rounded to bf16
 * (cvt.rn.bf16x2: the thirty-fifth session's half-size partials, mla_attn_tcw_arith's part_rel),
 * or, with one chunk, o_lat = O / l in f32 (0 for an empty walk, NaN for a poisoned row or an
 * infinite max). No rare
 * path of an infinite logit (the bf16 arm's scan of the chunk's rows for a NaN, which poisons
 * every head of the block): a NaN in a valid row makes its logit NaN in every head here, so
 * every head row is poisoned without it. Its class: kernels/mla_door.h mla_attn_tcw_arith, under
 * the accumulator model (H16) measured for these two instructions by //tests:wgmma_model_gpu_test.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include <atomic>

#include "kernels/mla_attn_wg.h"
#include "kernels/mla_cuda_util.cuh"
#include "kernels/mla_wgmma.cuh"

#define WG_NT 384 /* warpgroup 0, warpgroup 1, the producer warpgroup */
#define WG_JT 32  /* slots a tile (MLA_TC_ATTN_TILE) */
#define WG_W 576  /* kv_rank 512 + d_rope 64 */
#define WG_R 512
#define WG_DR 64
#define WG_HT 64 /* heads a block */
#define WG_NS 4  /* f32 stages, WG_SR slots each: one tile */
#define WG_SR 8
#define WG_SF (WG_SR * WG_W) /* floats a stage */
#define WG_TILE 36864        /* bytes: 32 rows x 576 bf16, 9 column blocks of 32 x 128 B */
#define WG_Q 73728           /* bytes: 64 rows x 576 bf16, 9 column blocks of 64 x 128 B */
#define WG_PX 10             /* words a thread hands over: P (2 k16 steps x 4), two rescales */
#define WG_OFF_TILE WG_Q
#define WG_OFF_STAGE (WG_OFF_TILE + 2 * WG_TILE)
#define WG_OFF_PX (WG_OFF_STAGE + WG_NS * WG_SF * 4)
#define WG_OFF_ROWS (WG_OFF_PX + WG_PX * 128 * 4)     /* int32 [WG_NS][WG_SR] */
#define WG_OFF_MASK (WG_OFF_ROWS + WG_NS * WG_SR * 4) /* uint32 [2]: a tile's valid slots */
#define WG_OFF_BAR (WG_OFF_MASK + 8)
#define WG_NBAR 15 /* fullF[4] emptyF[4] fullB[2] emptyB[2] pready pfree qbar */
#define WG_SMEM (WG_OFF_BAR + WG_NBAR * 8 + 1024) /* + the 1024-byte alignment of the base */

static_assert(WG_SMEM <= 232448, "the wgmma arm's shared memory (227 KB a block)");
static_assert(WG_NS * WG_SR == WG_JT, "the stages hold one tile");
static_assert(WG_OFF_BAR % 8 == 0, "mbarrier alignment");
static_assert(WG_Q == MLA_ATTN_WG_Q_BYTES, "the workspace's q tiles are the walk's q layout");

/* q's heads h0 + 32 c .. + 31 of query i (c = warpgroup c of 256 threads, t its thread), f32 from
 * global to bf16 in the swizzled K-major layout wgmma reads (rows 32 c + hr), at dst: float4s
 * j0 .. j0 + NJ - 1 of the thread's 36 (NJ loads in flight, then NJ stores; 4-byte loads where
 * q_lat or q_pe is not 16-byte aligned), zeros past n_head. The walk's prologue (one chunk) takes
 * all 36 into shared memory; attn_wg_qprep's blocks a quarter each into the workspace: the same
 * element, conversion and address either way, so the same bytes. */
template <int NJ>
static __device__ __forceinline__ void wg_load_q(uint8_t *dst, const float *__restrict__ q_lat,
                                                 const float *__restrict__ q_pe, int64_t i,
                                                 int32_t h0, int32_t n_head, int c, int t, int j0) {
    const bool q16 = (((uintptr_t)q_lat | (uintptr_t)q_pe) & 15) == 0;
    float4 v[NJ];
#pragma unroll
    for (int j = 0; j < NJ; j++) {
        const int e = t + 128 * (j0 + j), hr = e / 144, col = 4 * (e - 144 * hr);
        const int32_t h = h0 + 32 * c + hr;
        const int64_t qh = i * n_head + (h < n_head ? h : 0);
        const float *src = col < WG_R ? q_lat + qh * WG_R + col : q_pe + qh * WG_DR + (col - WG_R);
        if (h >= n_head)
            v[j] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        else if (q16)
            v[j] = __ldg(reinterpret_cast<const float4 *>(src));
        else
            v[j] = make_float4(__ldg(src), __ldg(src + 1), __ldg(src + 2), __ldg(src + 3));
    }
#pragma unroll
    for (int j = 0; j < NJ; j++) {
        const int e = t + 128 * (j0 + j), hr = e / 144, col = 4 * (e - 144 * hr);
        mla_wg_st4(dst, mla_wg_sw(32 * c + hr, col, 64), v[j]);
    }
}

#define WG_QP_SPLIT 4 /* attn_wg_qprep's blocks a tile: 9 of each thread's 36 float4s a block */

/* q of each 64-head tile (tile = blockIdx.x = i * n_hg + g) in bf16, in the walk's shared-memory
 * layout, at qb + tile * WG_Q, a quarter of every thread's float4s a block (blockIdx.y): with
 * several chunks every block of a tile copies it (72 KB, one bulk copy) instead of loading q in
 * f32 (147 KB, 2,013 instructions a warp: the thirty-sixth session's profile). Spread over 4
 * blocks a tile (the thirty-seventh session's one block a tile took 7.6 us at decode, alone on
 * the stream); its first instruction lets a programmatic dependent walk start. */
static __global__ void __launch_bounds__(256)
    attn_wg_qprep(const float *__restrict__ q_lat, const float *__restrict__ q_pe,
                  uint8_t *__restrict__ qb, int32_t n_head, int32_t n_hg) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
    const int64_t tile = blockIdx.x, i = tile / n_hg;
    const int32_t h0 = (int32_t)(tile - i * n_hg) * WG_HT;
    wg_load_q<36 / WG_QP_SPLIT>(qb + (size_t)tile * WG_Q, q_lat, q_pe, i, h0, n_head,
                                threadIdx.x >> 7, threadIdx.x & 127,
                                (int)blockIdx.y * (36 / WG_QP_SPLIT));
#else
    __trap();
#endif
}
static_assert(36 % WG_QP_SPLIT == 0, "the preparation's blocks split a thread's float4s evenly");

/* A thread's 8 weights of one head row, summed by a 3-level pairwise tree. */
static __device__ __forceinline__ float wg_sum8(const float (&p)[8]) {
    return __fadd_rn(__fadd_rn(__fadd_rn(p[0], p[1]), __fadd_rn(p[2], p[3])),
                     __fadd_rn(__fadd_rn(p[4], p[5]), __fadd_rn(p[6], p[7])));
}

/* The online softmax of one head row over a thread's 8 slots of the tile (lg: the scaled
 * logits, vd: their slots' validity), the quad's reductions included; writes the weights into
 * p and updates m, l; returns alpha. No NaN bookkeeping a tile: a NaN logit on a valid slot is
 * left out of the max (fmaxf) and its weight expf(NaN) is NaN, so the row's l is NaN from that
 * tile on (fmaf keeps it), and the walk reads the row's poison once, at its end, as l != l
 * (thirtieth session: the per-tile ballots cost verify and prefill 8-9 us on the H100). */
static __device__ __forceinline__ float wg_softmax_row(const float (&lg)[8], const bool (&vd)[8],
                                                       float (&p)[8], float &m, float &l) {
    float lm = -INFINITY;
#pragma unroll
    for (int x = 0; x < 8; x++)
        if (vd[x]) lm = fmaxf(lm, lg[x]);
    lm = fmaxf(lm, __shfl_xor_sync(0xffffffffu, lm, 1));
    lm = fmaxf(lm, __shfl_xor_sync(0xffffffffu, lm, 2));
    const float m_new = fmaxf(m, lm);
    const bool live = m_new != -INFINITY;
    float alpha = 1.0f;
    if (live) alpha = expf(m - m_new); /* m = -inf: 0; the same max: exactly 1 */
    /* while m' = -inf every valid logit is -inf (weight 0) or NaN (weight NaN): subtract 0 */
    const float m_ref = live ? m_new : 0.0f;
#pragma unroll
    for (int x = 0; x < 8; x++) p[x] = vd[x] ? expf(lg[x] - m_ref) : 0.0f;
    float ls = wg_sum8(p);
    ls = __fadd_rn(ls, __shfl_xor_sync(0xffffffffu, ls, 1));
    ls = __fadd_rn(ls, __shfl_xor_sync(0xffffffffu, ls, 2));
    l = __fmaf_rn(l, alpha, ls);
    m = m_new;
    return alpha;
}

/* O *= (a0 for row r0, a1 for row r0 + 8), the accumulator's layout */
static __device__ __forceinline__ void wg_rescale(float (&o)[128], float a0, float a1) {
#pragma unroll
    for (int n = 0; n < 32; n++) {
        o[4 * n] = __fmul_rn(o[4 * n], a0);
        o[4 * n + 1] = __fmul_rn(o[4 * n + 1], a0);
        o[4 * n + 2] = __fmul_rn(o[4 * n + 2], a1);
        o[4 * n + 3] = __fmul_rn(o[4 * n + 3], a1);
    }
}

/* See the file comment. Block b = chunk * n_tiles + tile, tile = i * n_hg + g. */
template <class Walk>
static __global__ void __launch_bounds__(WG_NT, 1)
    attn_tc_wg(const float *__restrict__ q_lat, const float *__restrict__ q_pe,
               const float *__restrict__ cache, Walk walk, float *__restrict__ o_lat,
               __nv_bfloat16 *__restrict__ ws_o, float *__restrict__ ws_ml, int32_t n_head,
               int32_t t_q, float scale, int32_t n_hg, int64_t chunk_slots, int32_t n_chunks,
               const uint8_t *__restrict__ qb) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ uint8_t wg_smem_raw[];
    /* the 1024-byte aligned base by pointer arithmetic on the shared array, not through an
     * integer: the compiler keeps the shared window, so the conversions, the exchange and the
     * masks are LDS / STS, not generic LD / ST (twenty-eighth session's SASS; in a cluster build
     * of this kernel, 4.4% of the door's time at decode 32K on the H100, twenty-ninth session's
     * call 1) */
    const uint32_t raw_a = (uint32_t)__cvta_generic_to_shared(wg_smem_raw);
    uint8_t *smem = wg_smem_raw + ((1024u - (raw_a & 1023u)) & 1023u);
    uint8_t *q_s = smem, *tiles = smem + WG_OFF_TILE;
    float *stages = (float *)(smem + WG_OFF_STAGE);
    uint32_t *px = (uint32_t *)(smem + WG_OFF_PX);
    int32_t *rows_s = (int32_t *)(smem + WG_OFF_ROWS);
    uint32_t *tmask = (uint32_t *)(smem + WG_OFF_MASK);
    uint64_t *bars = (uint64_t *)(smem + WG_OFF_BAR);
    uint64_t *fullF = bars, *emptyF = bars + 4, *fullB = bars + 8, *emptyB = bars + 10;
    uint64_t *pready = bars + 12, *pfree = bars + 13, *qbar = bars + 14;
    const int tid = threadIdx.x;

    const int64_t n_tiles = (int64_t)t_q * n_hg;
    const int64_t tile = (int64_t)blockIdx.x % n_tiles;
    const int32_t chunk = (int32_t)((int64_t)blockIdx.x / n_tiles);
    const int64_t i = tile / n_hg;
    const int32_t h0 = (int32_t)(tile - i * n_hg) * WG_HT;
    const int64_t n_qh = (int64_t)t_q * n_head;
    const int64_t c_begin = (int64_t)chunk * chunk_slots;
    int64_t c_end = c_begin + chunk_slots;
    const int64_t w_len = walk.length(i);
    if (c_end > w_len) c_end = w_len;
    const int32_t n_k = c_end > c_begin ? (int32_t)((c_end - c_begin + WG_JT - 1) / WG_JT) : 0;

    if (n_k == 0) { /* an empty partial (only with several chunks), as the bf16 arm */
        mla_shake_empty_partial(); /* nothing but in the shake build */
        for (int32_t e = tid; e < WG_HT * WG_R; e += WG_NT) {
            const int32_t hh = e / WG_R, h = h0 + hh;
            if (h < n_head)
                ws_o[((int64_t)chunk * n_qh + i * n_head + h) * WG_R + (e - hh * WG_R)] =
                    __float2bfloat16_rn(0.0f);
        }
        if (tid < WG_HT && h0 + tid < n_head) {
            float *ml = ws_ml + ((int64_t)chunk * n_qh + i * n_head + h0 + tid) * 3;
            ml[0] = -INFINITY;
            ml[1] = 0.0f;
            ml[2] = 0.0f;
        }
        return;
    }
    if (tid == 0) {
        for (int b = 0; b < WG_NS; b++) {
            mla_mbar_init(&fullF[b], WG_SR); /* the naming lanes, lane 0 with the bytes */
            mla_mbar_init(&emptyF[b], 128);
        }
        for (int b = 0; b < 2; b++) {
            mla_mbar_init(&fullB[b], 128);
            mla_mbar_init(&emptyB[b], 256);
        }
        mla_mbar_init(pready, 128);
        mla_mbar_init(pfree, 128);
        mla_mbar_init(qbar, 1); /* the producer's expectation of q's bulk copy */
        mla_mbar_fence_init();
    }
    __syncthreads();

    if (tid >= 256) { /* ---- the producer warpgroup: its first warp streams the stages ---- */
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (tid >= 256 + 32) return;
        const int lane = tid & 31;
        const int32_t n_h = WG_NS * n_k; /* stages over the chunk, WG_NS a tile */
        for (int32_t h = 0; h < n_h; h++) {
            const int st = h % WG_NS;
            const int64_t s = c_begin + (int64_t)WG_SR * h + (lane & (WG_SR - 1));
            const int32_t row = lane < WG_SR && s < c_end ? walk.row(i, s) : -1;
            if (h >= WG_NS) mla_mbar_wait(&emptyF[st], (h / WG_NS - 1) & 1);
            const uint32_t valid = __ballot_sync(0xffffffffu, row >= 0);
            if (lane < WG_SR) { /* each naming lane publishes its row by its own arrival */
                rows_s[st * WG_SR + lane] = row;
                if (lane == 0)
                    mla_mbar_expect(&fullF[st], (unsigned)__popc(valid) * (WG_W * 4));
                else
                    mla_mbar_arrive(&fullF[st]);
            }
            __syncwarp();           /* the expectation before any copy completes on it */
            if (Walk::contiguous) { /* the causal walk: the valid rows are one run, one copy */
                if (lane == 0 && valid)
                    mla_bulk_copy(stages + (size_t)st * WG_SF, cache + (int64_t)row * WG_W,
                                  (unsigned)__popc(valid) * (WG_W * 4), &fullF[st]);
            } else if (row >= 0) {
                mla_bulk_copy(stages + (size_t)st * WG_SF + (size_t)lane * WG_W,
                              cache + (int64_t)row * WG_W, WG_W * 4, &fullF[st]);
            }
            /* q prepared in bf16 (attn_wg_qprep, launched just before: the programmatic
             * predecessor where this walk is one wave): one bulk copy once the first tile's
             * stages are on their way (n_h >= WG_NS: n_k >= 1 here) and the preparation has
             * finished (griddepcontrol.wait, which returns at once without a programmatic
             * launch), before any wait on a stage, which needs q */
            if (qb && h == WG_NS - 1 && lane == 0) {
                asm volatile("griddepcontrol.wait;\n" ::: "memory");
                mla_mbar_expect(qbar, WG_Q);
                mla_bulk_copy(q_s, qb + (size_t)tile * WG_Q, WG_Q, qbar);
            }
        }
        return;
    }

    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    const int wg = tid >> 7, t = tid & 127, w = t >> 5, lane = t & 31;
    const int r0 = 16 * w + (lane >> 2); /* this thread's accumulator rows r0, r0 + 8 */
    const uint32_t q_a = (uint32_t)__cvta_generic_to_shared(q_s);
    const uint32_t tiles_a = (uint32_t)__cvta_generic_to_shared(tiles);
    if (!qb) { /* q from f32 here (one chunk: no workspace to prepare it in), while the producer
                * streams: warpgroup c's heads h0 + 32 c .. + 31 */
        wg_load_q<36>(q_s, q_lat, q_pe, i, h0, n_head, wg, t, 0);
        mla_wg_proxy_fence();
        mla_wg_named_sync<2, 256>(); /* q complete for warpgroup 0's wgmma */
    }
    float o[128];
#pragma unroll
    for (int e = 0; e < 128; e++) o[e] = 0.0f;
    /* the rows' final state: m, l, and flags (bit 0 row r0 poisoned, bit 1 row r0 + 8, bit 2 a
     * valid slot in the chunk), warpgroup 0's, handed to warpgroup 1 after the walk */
    float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;
    uint32_t flags = 0;

    if (wg == 1) { /* ---- warpgroup 1: the conversions, and columns 256..511 ---- */
        /* tile k's stages to bf16 into buffer k & 1 (zeros for invalid slots), its mask, fullB */
        auto convert = [&](int32_t k) {
            uint8_t *tb = tiles + (size_t)(k & 1) * WG_TILE;
            uint32_t mask = 0;
            for (int st = 0; st < WG_NS; st++) {
                mla_mbar_wait(&fullF[st], k & 1);
                const float *sc = stages + (size_t)st * WG_SF;
                /* the stage's valid rows as a register mask, read once: a load of rows_s inside
                 * the loop below could alias its bf16 stores, which would order every element's
                 * load after the previous element's store */
                const uint32_t vb =
                    __ballot_sync(0xffffffffu, rows_s[st * WG_SR + (lane & 7)] >= 0) & 0xFFu;
#pragma unroll 9
                for (int j = 0; j < WG_SR * 144 / 128; j++) {
                    const int e = t + 128 * j, row = e / 144, c4 = e - 144 * (e / 144);
                    const float4 v =
                        (vb >> row) & 1u
                            ? *reinterpret_cast<const float4 *>(sc + row * WG_W + 4 * c4)
                            : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                    mla_wg_st4(tb, mla_wg_sw(WG_SR * st + row, 4 * c4, WG_JT), v);
                }
                mask |= vb << (WG_SR * st);
                mla_mbar_arrive(&emptyF[st]); /* after every read of the stage and its rows */
            }
            mla_wg_proxy_fence();
            if (t == 0) tmask[k & 1] = mask;
            mla_mbar_arrive(&fullB[k & 1]);
        };
        convert(0);
        for (int32_t k = 0; k < n_k; k++) {
            const int bt = k & 1;
            /* tile k + 1 while warpgroup 0 computes tile k's logits: its buffer is tile k - 1's,
             * free once both groups' P . V of tile k - 1 are done */
            if (k + 1 < n_k) {
                if (k >= 1) mla_mbar_wait(&emptyB[bt ^ 1], (((k + 1) >> 1) - 1) & 1);
                convert(k + 1);
            }
            mla_mbar_wait(pready, k & 1);
            uint32_t a[2][4];
#pragma unroll
            for (int j = 0; j < 2; j++)
#pragma unroll
                for (int x = 0; x < 4; x++) a[j][x] = px[(4 * j + x) * 128 + t];
            const float al0 = __uint_as_float(px[8 * 128 + t]);
            const float al1 = __uint_as_float(px[9 * 128 + t]);
            wg_rescale(o, al0, al1);
            mla_mbar_arrive(pfree); /* after the rescale has consumed the loads */
            mla_wg_fence();
#pragma unroll
            for (int j = 0; j < 2; j++)
                mla_wg_mma_rs_n256(
                    o, a[j], mla_wg_desc(tiles_a + bt * WG_TILE + 4 * 4096 + j * 2048, 4096, 1024));
            mla_wg_commit();
            mla_wg_wait<0>();
            mla_wg_keep(o);
            mla_mbar_arrive(&emptyB[bt]);
        }
    } else { /* ---- warpgroup 0: the logits, the softmax, and columns 0..255 ---- */
        bool any_valid = false;
        if (qb) mla_mbar_wait(qbar, 0); /* q's bulk copy landed */
        for (int32_t k = 0; k < n_k; k++) {
            const int bt = k & 1;
            mla_mbar_wait(&fullB[bt], (k >> 1) & 1);
            const uint32_t mask = tmask[bt];
            float s[16]; /* written by the first wgmma (scale-d 0) */
            mla_wg_fence();
#pragma unroll
            for (int ks = 0; ks < 36; ks++) {
                const uint32_t ko = (uint32_t)((ks & 3) * 32);
                mla_wg_mma_ss_n32(
                    s, mla_wg_desc(q_a + (ks >> 2) * 8192 + ko, 16, 1024),
                    mla_wg_desc(tiles_a + bt * WG_TILE + (ks >> 2) * 4096 + ko, 16, 1024), ks > 0);
            }
            mla_wg_commit();
            mla_wg_wait<0>();
            mla_wg_keep(s);
            /* rows r0 (s[4n], s[4n + 1]) and r0 + 8 (s[4n + 2], s[4n + 3]), slots
             * 8n + 2 (lane & 3) + {0, 1} of the tile */
            float lg0[8], lg1[8], pa[8], pb[8];
            bool vd[8];
#pragma unroll
            for (int n = 0; n < 4; n++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const int x = 2 * n + e;
                    vd[x] = (mask >> (8 * n + 2 * (lane & 3) + e)) & 1u;
                    lg0[x] = __fmul_rn(scale, s[4 * n + e]);
                    lg1[x] = __fmul_rn(scale, s[4 * n + 2 + e]);
                }
            any_valid |= mask != 0;
            const float al0 = wg_softmax_row(lg0, vd, pa, m0, l0);
            const float al1 = wg_softmax_row(lg1, vd, pb, m1, l1);
            /* P's A fragments: k16 step j holds slots 16 j + 2 (lane & 3) + {0, 1} (n = 2 j) and
             * + 8 + {0, 1} (n = 2 j + 1) of rows r0 and r0 + 8 */
            uint32_t a[2][4];
#pragma unroll
            for (int j = 0; j < 2; j++) {
                a[j][0] = mla_bf16x2(pa[4 * j], pa[4 * j + 1]);
                a[j][1] = mla_bf16x2(pb[4 * j], pb[4 * j + 1]);
                a[j][2] = mla_bf16x2(pa[4 * j + 2], pa[4 * j + 3]);
                a[j][3] = mla_bf16x2(pb[4 * j + 2], pb[4 * j + 3]);
            }
            if (k >= 1) mla_mbar_wait(pfree, (k - 1) & 1);
#pragma unroll
            for (int j = 0; j < 2; j++)
#pragma unroll
                for (int xx = 0; xx < 4; xx++) px[(4 * j + xx) * 128 + t] = a[j][xx];
            px[8 * 128 + t] = __float_as_uint(al0);
            px[9 * 128 + t] = __float_as_uint(al1);
            mla_mbar_arrive(pready);
            wg_rescale(o, al0, al1);
            mla_wg_fence();
#pragma unroll
            for (int j = 0; j < 2; j++)
                mla_wg_mma_rs_n256(o, a[j],
                                   mla_wg_desc(tiles_a + bt * WG_TILE + j * 2048, 4096, 1024));
            mla_wg_commit();
            /* waited here, not under the next tile's logits: with the wait deferred, ptxas
             * serialises every wgmma of the loop (C7515) */
            mla_wg_wait<0>();
            mla_wg_keep(o);
            mla_mbar_arrive(&emptyB[bt]);
        }
        /* a row poisoned by a NaN logit: its l is NaN (wg_softmax_row) */
        flags = (l0 != l0 ? 1u : 0u) | (l1 != l1 ? 2u : 0u) | (any_valid ? 4u : 0u);
    }

    /* No rare path of an infinite logit (the bf16 arm's scan of the chunk's rows for a NaN,
     * which poisons every head of the block): here a NaN in any of a valid row's 576 columns
     * stays NaN through cvt.rn.bf16x2 and makes that slot's logit NaN in every head (NaN times
     * any q), so every row's l is NaN already and the scan could only set bits that are set
     * (thirty-first session: the scan at stride 64 passed every wgmma case on the H100). */
    if (wg == 0) { /* the final state to warpgroup 1, through the exchange */
        mla_mbar_wait(pfree, (n_k - 1) & 1); /* the last tile's P read: px free */
        px[t] = __float_as_uint(m0);
        px[128 + t] = __float_as_uint(m1);
        px[256 + t] = __float_as_uint(l0);
        px[384 + t] = __float_as_uint(l1);
        px[512 + t] = flags;
        mla_mbar_arrive(pready);
    } else {
        mla_mbar_wait(pready, n_k & 1);
        m0 = __uint_as_float(px[t]);
        m1 = __uint_as_float(px[128 + t]);
        l0 = __uint_as_float(px[256 + t]);
        l1 = __uint_as_float(px[384 + t]);
        flags = px[512 + t];
    }
    const bool nonempty = (flags & 4u) != 0;
    const int32_t cb = 256 * wg + 2 * (lane & 3);
    const int32_t ha = h0 + r0, hb = ha + 8;
    if (n_chunks > 1) {
        /* The partials as bf16 in whole 32-byte sectors (thirty-fifth session): a thread holds
         * columns 8n + 2q, + 1 (q = lane & 3) of each accumulator n, so one 4-byte store a thread
         * would write half a sector a quad. The H100 measured that first bf16 form (calls A, B):
         * as many L2 write sectors as the f32 stores (508 K against 533 K at decode 32K, each half
         * sector a whole request) and the walk 43.1 -> 44.7 us; DRAM reads unchanged. Here the
         * quad trades its packed pairs so thread q holds columns 4q .. 4q + 3 of each 16-column
         * block m (those of accumulators 2m, from threads 2q and 2q + 1 for q < 2, and 2m + 1 for
         * q >= 2) and stores them as one 8-byte word: a whole sector a quad, 265 K write sectors,
         * the walk 40.0 us. Same values, same rounding. */
        const int q = lane & 3;
        const int s0 = (lane & ~3) | ((2 * q) & 3), s1 = s0 | 1;
        const bool lo = q < 2;
        __nv_bfloat16 *ra =
            ws_o + ((int64_t)chunk * n_qh + i * n_head + ha) * WG_R + 256 * wg + 4 * q;
        __nv_bfloat16 *rb = ra + 8 * WG_R;
#pragma unroll
        for (int m = 0; m < 16; m++) {
            const uint32_t a0 = mla_bf16x2(o[8 * m], o[8 * m + 1]);
            const uint32_t a1 = mla_bf16x2(o[8 * m + 4], o[8 * m + 5]);
            const uint32_t b0 = mla_bf16x2(o[8 * m + 2], o[8 * m + 3]);
            const uint32_t b1 = mla_bf16x2(o[8 * m + 6], o[8 * m + 7]);
            const uint32_t fa0 = __shfl_sync(0xffffffffu, a0, s0),
                           fa1 = __shfl_sync(0xffffffffu, a1, s0);
            const uint32_t ga0 = __shfl_sync(0xffffffffu, a0, s1),
                           ga1 = __shfl_sync(0xffffffffu, a1, s1);
            const uint32_t fb0 = __shfl_sync(0xffffffffu, b0, s0),
                           fb1 = __shfl_sync(0xffffffffu, b1, s0);
            const uint32_t gb0 = __shfl_sync(0xffffffffu, b0, s1),
                           gb1 = __shfl_sync(0xffffffffu, b1, s1);
            if (ha < n_head)
                *reinterpret_cast<uint2 *>(ra + 16 * m) =
                    make_uint2(lo ? fa0 : fa1, lo ? ga0 : ga1);
            if (hb < n_head)
                *reinterpret_cast<uint2 *>(rb + 16 * m) =
                    make_uint2(lo ? fb0 : fb1, lo ? gb0 : gb1);
        }
        if (wg == 0 && (lane & 3) == 0) {
            if (ha < n_head) {
                float *ml = ws_ml + ((int64_t)chunk * n_qh + i * n_head + ha) * 3;
                ml[0] = m0;
                ml[1] = l0;
                ml[2] = !nonempty ? 0.0f : (flags & 1u) ? 2.0f : 1.0f;
            }
            if (hb < n_head) {
                float *ml = ws_ml + ((int64_t)chunk * n_qh + i * n_head + hb) * 3;
                ml[0] = m1;
                ml[1] = l1;
                ml[2] = !nonempty ? 0.0f : (flags & 2u) ? 2.0f : 1.0f;
            }
        }
    } else {
        const bool nan0 = (flags & 1u) || fabsf(m0) == INFINITY;
        const bool nan1 = (flags & 2u) || fabsf(m1) == INFINITY;
        if (ha < n_head) {
            float *row = o_lat + (i * n_head + ha) * WG_R + cb;
#pragma unroll
            for (int n = 0; n < 32; n++) {
                row[8 * n] = !nonempty ? 0.0f : nan0 ? NAN : __fdiv_rn(o[4 * n], l0);
                row[8 * n + 1] = !nonempty ? 0.0f : nan0 ? NAN : __fdiv_rn(o[4 * n + 1], l0);
            }
        }
        if (hb < n_head) {
            float *row = o_lat + (i * n_head + hb) * WG_R + cb;
#pragma unroll
            for (int n = 0; n < 32; n++) {
                row[8 * n] = !nonempty ? 0.0f : nan1 ? NAN : __fdiv_rn(o[4 * n + 2], l1);
                row[8 * n + 1] = !nonempty ? 0.0f : nan1 ? NAN : __fdiv_rn(o[4 * n + 3], l1);
            }
        }
    }
#else
    __trap(); /* built without sm_90a */
#endif
}

/* The registers ptxas gives each thread under __launch_bounds__(384, 1), which the setmaxnreg
 * split assumes: 384 x 168 = 128 x 40 + 256 x 232 (with fewer, setmaxnreg.inc would wait for
 * registers that never free). */
#define WG_REGS 168

/* Per device (by id, as the workspace pools): 1 when both walk kernels are the real sm_90a ones
 * with WG_REGS registers; 0 when not (a build whose gencode override left the __trap() stub, a
 * device without their image): the door then declines and the f32 launcher runs. Written once
 * per device under at_ensure_attrs' lock, read by every call after it. */
static std::atomic<int> wg_ready_dev[MLA_MAX_DEVICES];
/* Per device: its SM count (written with wg_ready_dev): a walk of at most this many blocks is one
 * wave, launched as attn_wg_qprep's programmatic dependent. */
static std::atomic<int> wg_sms_dev[MLA_MAX_DEVICES];

cudaError_t mla_attn_wg_set_attrs(void) {
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) return e;
    if (dev >= MLA_MAX_DEVICES) return cudaErrorInvalidDevice; /* one slot per device id */
    cudaFuncAttributes fa;
    bool ok =
        cudaFuncGetAttributes(&fa, attn_tc_wg<walk_causal>) == cudaSuccess && fa.numRegs == WG_REGS;
    ok = ok && cudaFuncGetAttributes(&fa, attn_tc_wg<walk_list>) == cudaSuccess &&
         fa.numRegs == WG_REGS;
    if (!ok) {
        (void)cudaGetLastError(); /* no image for this device is not an error of the library */
        wg_ready_dev[dev].store(0);
        return cudaSuccess;
    }
    e = cudaFuncSetAttribute(attn_tc_wg<walk_causal>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             WG_SMEM);
    if (e != cudaSuccess) return e;
    e = cudaFuncSetAttribute(attn_tc_wg<walk_list>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             WG_SMEM);
    if (e != cudaSuccess) return e;
    int sms = 0;
    e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e != cudaSuccess) return e;
    wg_sms_dev[dev].store(sms);
    wg_ready_dev[dev].store(1);
    return cudaSuccess;
}

bool mla_attn_wg_ready(void) {
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= MLA_MAX_DEVICES) return false;
    return wg_ready_dev[dev].load() != 0;
}

template <class Walk>
void mla_attn_wg_launch(unsigned blocks, const float *q_lat, const float *q_pe, const float *cache,
                        Walk walk, float *o_lat, __nv_bfloat16 *ws_o, float *ws_ml, int32_t n_head,
                        int32_t t_q, float scale, int32_t n_hg, int64_t chunk_slots,
                        int32_t n_chunks, uint8_t *qb, cudaStream_t st) {
    const uint8_t *qbc = qb;
    if (qb)
        attn_wg_qprep<<<dim3((unsigned)((int64_t)t_q * n_hg), WG_QP_SPLIT), 256, 0, st>>>(
            q_lat, q_pe, qb, n_head, n_hg);
    int dev = 0;
    const bool one_wave = qb && cudaGetDevice(&dev) == cudaSuccess && dev >= 0 &&
                          dev < MLA_MAX_DEVICES && blocks <= (unsigned)wg_sms_dev[dev].load();
    if (!one_wave) { /* one chunk, or several waves (whose early blocks would hold SMs waiting:
                        gathered t_q 512 lost 12% so, thirty-seventh session) */
        attn_tc_wg<Walk><<<blocks, WG_NT, WG_SMEM, st>>>(q_lat, q_pe, cache, walk, o_lat, ws_o,
                                                         ws_ml, n_head, t_q, scale, n_hg,
                                                         chunk_slots, n_chunks, qbc);
        return;
    }
    /* one wave: the walk as the preparation's programmatic dependent, streaming its first tile
     * while q is prepared (it reads nothing else the preparation writes) */
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(WG_NT);
    cfg.dynamicSmemBytes = WG_SMEM;
    cfg.stream = st;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    (void)cudaLaunchKernelEx(&cfg, attn_tc_wg<Walk>, q_lat, q_pe, cache, walk, o_lat, ws_o, ws_ml,
                             n_head, t_q, scale, n_hg, chunk_slots, n_chunks, qbc);
}

template void mla_attn_wg_launch<walk_causal>(unsigned, const float *, const float *, const float *,
                                              walk_causal, float *, __nv_bfloat16 *, float *,
                                              int32_t, int32_t, float, int32_t, int64_t, int32_t,
                                              uint8_t *, cudaStream_t);
template void mla_attn_wg_launch<walk_list>(unsigned, const float *, const float *, const float *,
                                            walk_list, float *, __nv_bfloat16 *, float *, int32_t,
                                            int32_t, float, int32_t, int64_t, int32_t, uint8_t *,
                                            cudaStream_t);
