/* probe_door_wgmma.cu (twenty-seventh session): a warp-specialised wgmma walk for the door at
 * glm5's shape, as a standalone prototype timed beside the shipped door arms and the read floor.
 * It answers one question before an arm is built: with the cache converted to bf16 once per block
 * in shared memory and both products on wgmma (asynchronous, A or B from shared memory), does
 * the door's walk reach its read floor?
 *
 * Why this form (docs/performance.md, "Twenty-seventh session"): the mma.sync arms convert every
 * fragment in every warp from an f32 tile, keep q in registers (80 of the 255) and hand the
 * logits between 8 warps through shared memory, so their three phases are chains of dependent
 * latencies (the ninth, twenty-third and twenty-fourth sessions' profiles). Here:
 *  - warpgroup 2 (the producer, one thread; setmaxnreg gives its registers to the others) streams
 *    the chunk's cache rows by bulk copies (the copy engine, no registers) into f32 stages that
 *    hold one tile together: 4 of 8 rows (2 of 16 rows, the earlier forms, as a timed variant
 *    with the same bytes), each completing on an mbarrier's transaction count;
 *  - warpgroup 1 converts each stage to bf16 (cvt.rn, as the bf16 arm) into the 128-byte
 *    swizzled K-major layout wgmma reads, each 32-slot tile into one of two bf16 tile buffers,
 *    tile k + 1 while warpgroup 0 computes tile k's logits; it also owns output columns 256..511;
 *  - both warpgroups first load q (32 heads x 576 each, f32 from global to bf16 in the same
 *    layout, one batch of 36 float4 loads a thread) while the first tiles stream;
 *  - warpgroup 0 computes a tile's 64 x 32 logits by 36 wgmma.m64n32k16 (A = q,
 *    B = the tile, both from shared memory, one f32 accumulator over K), the online softmax in
 *    registers (a quad of threads a head row, no shared memory), hands P (bf16 A fragments) and
 *    the rescale to warpgroup 1 through 5 KB of shared memory, and owns output columns 0..255;
 *  - each warpgroup accumulates O (64 x 256 f32, 128 registers a thread) by two
 *    wgmma.m64n256k16 a tile with A = P from registers and B = the same bf16 tile read N-major
 *    (the V view of the cache rows), so the tile is converted once for both products;
 *  - each group waits for its own P . V at the end of a tile (deferring that wait past the next
 *    tile's logits made ptxas serialise every wgmma of the loop, C7515).
 * The first form (call 1 of the twenty-seventh session) converted tile k + 1 only after tile k's
 * P . V and staged q through the same two stages: every phase ran in series, 5 us a tile. The
 * second (call 2) had warpgroup 0 load q alone in 4 batches, the l handoff through a named
 * barrier, and warpgroup 1 released P's buffer before its rescale had read the alphas. The
 * third (call 3) is this one with 2 stages; 4 stages keep more of the tile's bytes in flight
 * while one stage is converted.
 * Arithmetic: the bf16 arm's operands and roundings (q, the cache and P rounded to bf16, f32
 * accumulators), 32-slot tiles on the bf16 arm's chunk plan, workspace and combine (a copy), the
 * logits in one accumulator over all 36 k16 steps. Not covered: NaN and infinite logits (no rare
 * paths), shapes other than glm5's. So its bytes differ from the bf16 arm's; the probe prints each
 * arm's distance from the f32 launcher, not a verdict. Built for sm_90a (wgmma).
 * The cluster form (wg_walk<0, 4, 4>, wg_run_cl; twenty-eighth session): 4 blocks of a cluster
 * merge their chunks' partials in distributed shared memory, so a quarter of the partials reach
 * global memory and the combine; the table's "cluster 4" columns. First run in the twenty-ninth
 * session's call 1 (H100): correct, the same bytes twice, but 53.3 us at decode 32K against the
 * plain form's 47.0 (30 clusters hold 120 blocks, so 9 tiles a block; docs/performance.md).
 * Twenty-ninth session, after its device time (NOT RUN): the shared base by pointer arithmetic
 * (LDS / STS, as the arm), and MODE 3, the "stream alone" column (the conversions skipped too).
 * Both ran in the thirtieth session's call 1 (H100): stream alone 32.22 us at decode 32K against
 * stream + convert 32.99 and the read floor 26.85. Thirtieth session, after its device time (NOT
 * RUN): the "walk + half combine" column, the walk then the combine over only the first half of
 * its chunks, with L2 as the walk left it. Minus the "walk" column it is what a plan with half
 * the chunks would pay for its combine (the pair form of docs/performance.md, "Thirtieth
 * session"), beside the whole combine (the "wgmma" column minus "walk").
 * Every checked call starts from NaN outputs and a NaN workspace. --check runs only the untimed
 * rows (for compute-sanitizer); --once the timed rows once each, untimed (for ncu).
 *     probe_door_wgmma [--once | --check] [--rounds N] */
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
#include "kernels/mla_wgmma.cuh"
#include "tools/bench/probe_door.cuh"
#include "tools/bench/probe_util.cuh"

#define WG_NT 384 /* warpgroup 0, warpgroup 1, the producer warpgroup (one thread issues) */
#define WG_JT 32  /* slots a tile */
#define WG_W 576  /* kv_rank 512 + d_rope 64 */
#define WG_R 512
#define WG_DR 64
#define WG_STAGES 73728 /* bytes: the f32 stages, NS of 32 / NS rows x 576 f32 */
#define WG_TILE 36864   /* bytes: 32 rows x 576 bf16, 9 column blocks of 32 x 128 B */
#define WG_Q 73728      /* bytes: 64 rows x 576 bf16, 9 column blocks of 64 x 128 B */
#define WG_PX 10        /* words a thread hands over: P (2 k16 steps x 4) and two rescales */
#define WG_OFF_TILE WG_Q
#define WG_OFF_STAGE (WG_OFF_TILE + 2 * WG_TILE)
#define WG_OFF_PX (WG_OFF_STAGE + WG_STAGES)
#define WG_OFF_BAR (WG_OFF_PX + WG_PX * 128 * 4)
#define WG_NBAR 14 /* fullF[4] emptyF[4] fullB[2] emptyB[2] pready pfree */
#define WG_SMEM (WG_OFF_BAR + WG_NBAR * 8 + 1024) /* + the 1024-byte alignment of the base */

static_assert(WG_SMEM <= 232448, "the prototype's shared memory");
static_assert(WG_STAGES == WG_JT * WG_W * 4, "the stages hold one f32 tile");

/* ---- the cluster form (twenty-eighth session, NOT RUN: written after the device time ran out;
 * docs/performance.md "Twenty-eighth session"). CL blocks of a cluster walk CL consecutive chunks
 * of one (query, head group) and merge their partials in distributed shared memory before any
 * global write: CL times fewer partials (16.8 MB of stores at decode 32K become 4.2 with CL 4)
 * and a CL times shorter combine. The plan keeps every cluster in one wave: at most 30 clusters
 * of 4 blocks of this shape are co-resident on the H200 (twenty-fourth session, cluster_probe),
 * so chunks = 4 floor(30 / tiles) before the usual rounding to 32 slots, padded to a multiple of
 * CL with empty chunks (decode 32K: 114 chunks of 288 slots, 116 blocks). The merge, per row:
 * M = max_c m_c, w_c = expf(m_c - M) (0 for m_c = -inf), L = sum_c w_c l_c (c ascending, fmaf);
 * each block scales its O by its own w_c and stores column slice j (512 / CL columns) into block
 * j's shared memory, slot c; block j sums the CL slots in ascending c and writes the merged
 * partial (chunk / CL) with (M, L). One rescale and CL - 1 additions more on every term's path
 * than the plain form: its walk statement would gain one merge. */
static __device__ __forceinline__ uint32_t wg_cl_rank(void) {
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
static __device__ __forceinline__ uint32_t wg_cl_map(uint32_t saddr, uint32_t rank) {
    uint32_t r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(saddr), "r"(rank));
    return r;
}
static __device__ __forceinline__ float wg_cl_ld(uint32_t a) {
    float v;
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(a) : "memory");
    return v;
}
static __device__ __forceinline__ void wg_cl_st2(uint32_t a, float x, float y) {
    asm volatile("st.shared::cluster.v2.f32 [%0], {%1, %2};" ::"r"(a), "f"(x), "f"(y) : "memory");
}
/* every thread of every block of the cluster (none has exited: the producer warps wait here) */
static __device__ __forceinline__ void wg_cl_sync(void) {
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;\n" ::
                     : "memory");
}

/* O *= (a0 for row r0, a1 for row r0 + 8), the accumulator's layout (both warpgroups' rescale;
 * the arm's own is in kernels/mla_attn_wg.cu, static there so its mutants stay in that file) */
static __device__ __forceinline__ void wg_rescale(float (&o)[128], float a0, float a1) {
#pragma unroll
    for (int n = 0; n < 32; n++) {
        o[4 * n] = __fmul_rn(o[4 * n], a0);
        o[4 * n + 1] = __fmul_rn(o[4 * n + 1], a0);
        o[4 * n + 2] = __fmul_rn(o[4 * n + 2], a1);
        o[4 * n + 3] = __fmul_rn(o[4 * n + 3], a1);
    }
}

/* MODE (the time's split, timing only): 0 the walk; 1 without the epilogue's stores (no output);
 * 2 also without any wgmma (the stream, the conversions, the softmax's protocol: no output);
 * 3 also without the conversions (the stream and the protocol alone: warpgroup 1 releases each
 * stage as soon as it lands; twenty-ninth session, not yet run: whether the stream or the
 * conversions keep mode 2 above the read floor).
 * NS: the f32 stages (2 or 4) of 32 / NS rows each; the same arithmetic, so the same bytes. */
template <int MODE, int NS, int CL = 1>
static __global__ void __launch_bounds__(WG_NT, 1)
    wg_walk(const float *__restrict__ q_lat, const float *__restrict__ q_pe,
            const float *__restrict__ cache, float *__restrict__ o_lat, float *__restrict__ ws_o,
            float *__restrict__ ws_ml, int32_t n_head, int32_t t_q, int32_t t_kv, float scale,
            int64_t chunk_slots, int32_t n_chunks) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ uint8_t wg_smem_raw[];
    /* the aligned base by pointer arithmetic on the shared array (LDS / STS), as the arm since
     * the twenty-ninth session */
    const uint32_t raw_a = (uint32_t)__cvta_generic_to_shared(wg_smem_raw);
    uint8_t *smem = wg_smem_raw + ((1024u - (raw_a & 1023u)) & 1023u);
    uint8_t *q_s = smem, *tiles = smem + WG_OFF_TILE;
    float *stages = (float *)(smem + WG_OFF_STAGE);
    uint32_t *px = (uint32_t *)(smem + WG_OFF_PX);
    uint64_t *bars = (uint64_t *)(smem + WG_OFF_BAR);
    uint64_t *fullF = bars, *emptyF = bars + 4, *fullB = bars + 8, *emptyB = bars + 10;
    uint64_t *pready = bars + 12, *pfree = bars + 13;
    constexpr int HT = WG_JT / NS;               /* rows a stage */
    constexpr unsigned SF = (unsigned)HT * WG_W; /* floats a stage */
    static_assert(NS == 2 || NS == 4, "stages");
    const int tid = threadIdx.x;

    static_assert(CL == 1 || (CL == 4 && MODE == 0), "the cluster form: 4 blocks, the walk");
    /* the cluster form: chunk-minor blocks, so a cluster is 4 consecutive chunks of one tile */
    const probe_block pb =
        probe_block_of(n_head, t_q, t_kv, chunk_slots, WG_JT, CL == 1 ? 0 : n_chunks);
    const int64_t i = pb.i, n_qh = pb.n_qh, c_begin = pb.c_begin, c_end = pb.c_end;
    const int32_t h0 = pb.h0, chunk = pb.chunk, n_k = pb.n_k;
    if (CL == 1 && n_k == 0) { /* an empty partial, as the bf16 arm's */
        probe_empty_partial(pb, ws_o, ws_ml, n_head, WG_R, WG_NT);
        return;
    }
    if (tid == 0) {
        for (int b = 0; b < NS; b++) {
            mla_mbar_init(&fullF[b], 1);
            mla_mbar_init(&emptyF[b], 128);
        }
        for (int b = 0; b < 2; b++) {
            mla_mbar_init(&fullB[b], 128);
            mla_mbar_init(&emptyB[b], 256);
        }
        mla_mbar_init(pready, 128);
        mla_mbar_init(pfree, 128);
        mla_mbar_fence_init();
    }
    __syncthreads();
    const int32_t n_h = NS * n_k; /* the staged stream: NS stages a tile */

    if (tid >= 256) { /* ---- the producer warpgroup: bulk copies into the two f32 stages ---- */
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (tid == 256) {
            for (int32_t h = 0; h < n_h; h++) {
                const int st = h % NS;
                if (h >= NS) mla_mbar_wait(&emptyF[st], (h / NS - 1) & 1);
                float *dst = stages + (size_t)st * SF;
                const int64_t s0 = c_begin + (int64_t)HT * h;
                int64_t rows = c_end - s0;
                rows = rows < 0 ? 0 : rows > HT ? HT : rows;
                mla_mbar_expect(&fullF[st], (unsigned)(rows * WG_W * 4));
                if (rows > 0)
                    mla_bulk_copy(dst, cache + s0 * WG_W, (unsigned)(rows * WG_W * 4), &fullF[st]);
            }
        }
        if (CL > 1) { /* the merge's two cluster barriers (A, B below) */
            __syncwarp();
            wg_cl_sync();
            wg_cl_sync();
        }
        return;
    }

    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    const int wg = tid >> 7, t = tid & 127, w = t >> 5, lane = t & 31;
    const int r0 = 16 * w + (lane >> 2); /* this thread's accumulator rows r0, r0 + 8 */
    const uint32_t q_a = (uint32_t)__cvta_generic_to_shared(q_s);
    const uint32_t tiles_a = (uint32_t)__cvta_generic_to_shared(tiles);
    {
        /* q: this block's 64 heads x 576, f32 from global (L2) to bf16 in the swizzled K-major
         * layout, warpgroup c heads 32 c .. 32 c + 31 in one batch of 36 float4 loads a thread,
         * while the producer streams the first tiles */
        const int64_t qh0 = i * n_head + h0 + 32 * wg;
        float4 v[36];
#pragma unroll
        for (int j = 0; j < 36; j++) {
            const int e = t + 128 * j, hr = e / 144, c = 4 * (e - 144 * hr);
            const float *src =
                c < WG_R ? q_lat + (qh0 + hr) * WG_R + c : q_pe + (qh0 + hr) * WG_DR + (c - WG_R);
            v[j] = __ldg(reinterpret_cast<const float4 *>(src));
        }
#pragma unroll
        for (int j = 0; j < 36; j++) {
            const int e = t + 128 * j, hr = e / 144, c = 4 * (e - 144 * hr);
            mla_wg_st4(q_s, mla_wg_sw(32 * wg + hr, c, 64), v[j]);
        }
        mla_wg_proxy_fence();
        mla_wg_named_sync<2, 256>(); /* q complete for warpgroup 0's wgmma */
    }
    float o[128];
#pragma unroll
    for (int e = 0; e < 128; e++) o[e] = 0.0f;
    float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;

    if (wg == 1) { /* ---- warpgroup 1: the conversions, and columns 256..511 ---- */
        /* tile k's NS stages to bf16 into buffer k & 1, then fullB */
        auto convert = [&](int32_t k) {
            uint8_t *tb = tiles + (size_t)(k & 1) * WG_TILE;
            for (int st = 0; st < NS; st++) {
                mla_mbar_wait(&fullF[st], k & 1);
                const float *sc = stages + (size_t)st * SF;
                int64_t rv = c_end - (c_begin + (int64_t)WG_JT * k + HT * st);
                const int rows = rv < 0 ? 0 : rv > HT ? HT : (int)rv;
#pragma unroll 9
                for (int j = 0; j < (MODE == 3 ? 0 : HT * 144 / 128); j++) {
                    const int e = t + 128 * j, row = e / 144, c4 = e - 144 * (e / 144);
                    const float4 v =
                        row < rows ? *reinterpret_cast<const float4 *>(sc + row * WG_W + 4 * c4)
                                   : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                    mla_wg_st4(tb, mla_wg_sw(HT * st + row, 4 * c4, WG_JT), v);
                }
                mla_mbar_arrive(&emptyF[st]);
            }
            mla_wg_proxy_fence();
            mla_mbar_arrive(&fullB[k & 1]);
        };
        if (n_k > 0) convert(0); /* n_k 0: an empty chunk of the cluster form */
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
            for (int j = 0; j < (MODE >= 2 ? 0 : 2); j++)
                mla_wg_mma_rs_n256(
                    o, a[j], mla_wg_desc(tiles_a + bt * WG_TILE + 4 * 4096 + j * 2048, 4096, 1024));
            mla_wg_commit();
            mla_wg_wait<0>();
            mla_wg_keep(o);
            mla_mbar_arrive(&emptyB[bt]);
        }
        mla_mbar_wait(pready, n_k & 1); /* the denominators, after the last tile */
        l0 = __uint_as_float(px[t]);
        l1 = __uint_as_float(px[128 + t]);
    } else { /* ---- warpgroup 0: the logits, the softmax, and columns 0..255 ---- */
        for (int32_t k = 0; k < n_k; k++) {
            const int bt = k & 1;
            mla_mbar_wait(&fullB[bt], (k >> 1) & 1);
            float s[16]; /* written by the first wgmma (scale-d 0): no other instruction defines it
                          * while tile k - 1's P . V may still run */
            if (MODE >= 2) /* no wgmma: the softmax's inputs defined (the timing mode only) */
#pragma unroll
                for (int e = 0; e < 16; e++) s[e] = 0.0f;
            mla_wg_fence();
#pragma unroll
            for (int ks = 0; ks < (MODE >= 2 ? 0 : 36); ks++) {
                const uint32_t ko = (uint32_t)((ks & 3) * 32);
                mla_wg_mma_ss_n32(
                    s, mla_wg_desc(q_a + (ks >> 2) * 8192 + ko, 16, 1024),
                    mla_wg_desc(tiles_a + bt * WG_TILE + (ks >> 2) * 4096 + ko, 16, 1024), ks > 0);
            }
            mla_wg_commit();
            mla_wg_wait<0>();
            mla_wg_keep(s);
            /* the online softmax: rows r0 (s[4n], s[4n + 1]) and r0 + 8 (s[4n + 2], s[4n + 3]),
             * slots 8n + 2 (lane & 3) + {0, 1} of the tile */
            const int64_t sb = c_begin + (int64_t)WG_JT * k + 2 * (lane & 3);
            float x[16], mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
            for (int n = 0; n < 4; n++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const bool v = sb + 8 * n + e < c_end;
                    x[4 * n + e] = v ? __fmul_rn(scale, s[4 * n + e]) : -INFINITY;
                    x[4 * n + 2 + e] = v ? __fmul_rn(scale, s[4 * n + 2 + e]) : -INFINITY;
                    mx0 = fmaxf(mx0, x[4 * n + e]);
                    mx1 = fmaxf(mx1, x[4 * n + 2 + e]);
                }
            mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
            mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
            mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
            mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
            const float mn0 = fmaxf(m0, mx0), mn1 = fmaxf(m1, mx1);
            const float al0 = mn0 == -INFINITY ? 1.0f : expf(m0 - mn0);
            const float al1 = mn1 == -INFINITY ? 1.0f : expf(m1 - mn1);
            float p[16], sum0 = 0.0f, sum1 = 0.0f;
#pragma unroll
            for (int n = 0; n < 4; n++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const float a0 = x[4 * n + e], a1 = x[4 * n + 2 + e];
                    p[4 * n + e] = a0 == -INFINITY ? 0.0f : expf(a0 - mn0);
                    p[4 * n + 2 + e] = a1 == -INFINITY ? 0.0f : expf(a1 - mn1);
                    sum0 = __fadd_rn(sum0, p[4 * n + e]);
                    sum1 = __fadd_rn(sum1, p[4 * n + 2 + e]);
                }
            sum0 = __fadd_rn(sum0, __shfl_xor_sync(0xffffffffu, sum0, 1));
            sum0 = __fadd_rn(sum0, __shfl_xor_sync(0xffffffffu, sum0, 2));
            sum1 = __fadd_rn(sum1, __shfl_xor_sync(0xffffffffu, sum1, 1));
            sum1 = __fadd_rn(sum1, __shfl_xor_sync(0xffffffffu, sum1, 2));
            l0 = __fmaf_rn(l0, al0, sum0);
            l1 = __fmaf_rn(l1, al1, sum1);
            m0 = mn0;
            m1 = mn1;
            uint32_t a[2][4];
#pragma unroll
            for (int j = 0; j < 2; j++) {
                a[j][0] = mla_bf16x2(p[8 * j], p[8 * j + 1]);
                a[j][1] = mla_bf16x2(p[8 * j + 2], p[8 * j + 3]);
                a[j][2] = mla_bf16x2(p[8 * j + 4], p[8 * j + 5]);
                a[j][3] = mla_bf16x2(p[8 * j + 6], p[8 * j + 7]);
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
            for (int j = 0; j < (MODE >= 2 ? 0 : 2); j++)
                mla_wg_mma_rs_n256(o, a[j],
                                   mla_wg_desc(tiles_a + bt * WG_TILE + j * 2048, 4096, 1024));
            mla_wg_commit();
            /* waited here, not under the next tile's logits: with the wait deferred, ptxas
             * serialises every wgmma of the loop (C7515) */
            mla_wg_wait<0>();
            mla_wg_keep(o);
            mla_mbar_arrive(&emptyB[bt]);
        }
        mla_mbar_wait(pfree, (n_k - 1) & 1); /* the last tile's P read: px free */
        px[t] = __float_as_uint(l0);
        px[128 + t] = __float_as_uint(l1);
        mla_mbar_arrive(pready);
    }
    const int32_t cb = 256 * wg + 2 * (lane & 3);
    if (CL > 1) {                         /* the cluster's merge (above the kernel) */
        constexpr int32_t SW = WG_R / CL; /* columns of a block's slice */
        /* [64][2]: this block's (m, l), in the exchange past the words the epilogue's handoff
         * used (px[0 .. 255]): warpgroup 1 read all of px for the last tile before its last
         * P . V, which may still read tile buffer 1 (offset 131072 lies in it: the review found
         * that race there, for an even number of tiles) */
        float *ml_s = (float *)(px + 256);
        const float *recv = (const float *)smem; /* [CL][64][SW]: the slots */
        const uint32_t ml_a = (uint32_t)__cvta_generic_to_shared(ml_s);
        const uint32_t recv_a = (uint32_t)__cvta_generic_to_shared(smem);
        if (wg == 0 && (lane & 3) == 0) {
            ml_s[2 * r0] = m0;
            ml_s[2 * r0 + 1] = l0;
            ml_s[2 * (r0 + 8)] = m1;
            ml_s[2 * (r0 + 8) + 1] = l1;
        }
        __syncwarp();
        wg_cl_sync(); /* A: every block's walk done, its (m, l) written */
        float mc[2][CL], lc[2][CL], M[2] = {-INFINITY, -INFINITY}, L[2] = {0.0f, 0.0f}, wc[2][CL];
#pragma unroll
        for (int c = 0; c < CL; c++)
#pragma unroll
            for (int hr = 0; hr < 2; hr++) {
                const uint32_t a = wg_cl_map(ml_a + 8u * (uint32_t)(r0 + 8 * hr), (uint32_t)c);
                mc[hr][c] = wg_cl_ld(a);
                lc[hr][c] = wg_cl_ld(a + 4);
                M[hr] = fmaxf(M[hr], mc[hr][c]);
            }
#pragma unroll
        for (int hr = 0; hr < 2; hr++)
#pragma unroll
            for (int c = 0; c < CL; c++) {
                wc[hr][c] =
                    (M[hr] != -INFINITY && mc[hr][c] != -INFINITY) ? expf(mc[hr][c] - M[hr]) : 0.0f;
                L[hr] = __fmaf_rn(wc[hr][c], lc[hr][c], L[hr]);
            }
        const uint32_t me = wg_cl_rank();
        float w0 = wc[0][0], w1 = wc[1][0];
#pragma unroll
        for (int c = 1; c < CL; c++)
            if ((uint32_t)c == me) w0 = wc[0][c], w1 = wc[1][c];
#pragma unroll
        for (int n = 0; n < 32; n++) { /* this block's w O, column slice j into block j, slot me */
            const int32_t c = cb + 8 * n, j = c / SW, lcol = c - j * SW;
            const uint32_t d0 =
                wg_cl_map(recv_a + 4u * (uint32_t)(((int32_t)me * 64 + r0) * SW + lcol), j);
            wg_cl_st2(d0, __fmul_rn(o[4 * n], w0), __fmul_rn(o[4 * n + 1], w0));
            wg_cl_st2(d0 + 4u * 8u * SW, __fmul_rn(o[4 * n + 2], w1), __fmul_rn(o[4 * n + 3], w1));
        }
        wg_cl_sync(); /* B: every slot delivered; no remote access after this */
        const int32_t mchunk = chunk / CL;
        for (int32_t e = tid; e < 64 * SW; e += 256) {
            const int32_t row = e / SW, lcol = e - row * SW;
            float acc = recv[row * SW + lcol];
#pragma unroll
            for (int c = 1; c < CL; c++) acc = __fadd_rn(acc, recv[(c * 64 + row) * SW + lcol]);
            ws_o[((int64_t)mchunk * n_qh + i * n_head + h0 + row) * WG_R + (int32_t)me * SW +
                 lcol] = acc;
        }
        if (me == 0 && wg == 0 && (lane & 3) == 0) {
            float *ml = ws_ml + ((int64_t)mchunk * n_qh + i * n_head + h0 + r0) * 3;
            ml[0] = M[0];
            ml[1] = L[0];
            ml[2] = M[0] == -INFINITY ? 0.0f : 1.0f;
            ml[24] = M[1];
            ml[25] = L[1];
            ml[26] = M[1] == -INFINITY ? 0.0f : 1.0f;
        }
        return;
    }
    if (MODE != 0) {
        bool hit = l0 == 12345.678f; /* never true: keeps every accumulator's work */
#pragma unroll
        for (int e = 0; e < 128; e++) hit |= o[e] == 12345.678f;
        if (hit) o_lat[0] = 1.0f;
    } else if (n_chunks > 1) {
        float *row0 = ws_o + ((int64_t)chunk * n_qh + i * n_head + h0 + r0) * WG_R + cb;
        float *row1 = row0 + 8 * WG_R;
#pragma unroll
        for (int n = 0; n < 32; n++) {
            *reinterpret_cast<float2 *>(row0 + 8 * n) = make_float2(o[4 * n], o[4 * n + 1]);
            *reinterpret_cast<float2 *>(row1 + 8 * n) = make_float2(o[4 * n + 2], o[4 * n + 3]);
        }
        if (wg == 0 && (lane & 3) == 0) {
            float *ml = ws_ml + ((int64_t)chunk * n_qh + i * n_head + h0 + r0) * 3;
            ml[0] = m0;
            ml[1] = l0;
            ml[2] = 1.0f;
            ml[24] = m1;
            ml[25] = l1;
            ml[26] = 1.0f;
        }
    } else {
        float *row0 = o_lat + (i * n_head + h0 + r0) * WG_R + cb, *row1 = row0 + 8 * WG_R;
#pragma unroll
        for (int n = 0; n < 32; n++) {
            row0[8 * n] = __fdiv_rn(o[4 * n], l0);
            row0[8 * n + 1] = __fdiv_rn(o[4 * n + 1], l0);
            row1[8 * n] = __fdiv_rn(o[4 * n + 2], l1);
            row1[8 * n + 1] = __fdiv_rn(o[4 * n + 3], l1);
        }
    }
#else
    __trap(); /* built without sm_90a */
#endif
}

/* The prototype on the bf16 arm's plan with ns f32 stages; ws holds the plan's workspace at its
 * largest. mode -1: the walk and the combine; 0, 1, 2, 3: the walk alone in that MODE (the split of
 * the row's time). */
static void wg_run(const float *ql, const float *qp, const float *cache, float *o, float *ws,
                   int32_t H, int32_t t_q, int32_t t_kv, float scale, int ns, int mode = -1) {
    /* mode: -1 the walk and the combine; 0-3 the kernel's MODE alone; 4 MODE 0, then the combine
     * over the first half of the chunks (timing only: its output is not the attention) */
    const int64_t w_max = t_kv, cs = mla_attn_tcb_chunk_slots(H, t_q, w_max);
    const int32_t n_chunks = (int32_t)((w_max + cs - 1) / cs);
    const int64_t n_qh = (int64_t)t_q * H, n_tiles = (int64_t)t_q * (H / 64);
    float *ws_ml = ws + (size_t)n_chunks * n_qh * WG_R;
    auto kern = ns == 2     ? wg_walk<0, 2>
                : mode == 1 ? wg_walk<1, 4>
                : mode == 2 ? wg_walk<2, 4>
                : mode == 3 ? wg_walk<3, 4>
                            : wg_walk<0, 4>; /* -1, 0 and 4 */
    kern<<<(unsigned)(n_tiles * n_chunks), WG_NT, WG_SMEM>>>(ql, qp, cache, o, ws, ws_ml, H, t_q,
                                                             t_kv, scale, cs, n_chunks);
    if (n_chunks > 1 && mode < 0) probe_combine_launch(ws, ws_ml, o, n_qh, WG_R, n_chunks);
    if (n_chunks > 3 && mode == 4) probe_combine_launch(ws, ws_ml, o, n_qh, WG_R, n_chunks / 2);
}

/* The cluster form (CL 4) on its own plan (above the kernel): at most 30 clusters, chunks a
 * multiple of 32 slots, padded to a multiple of 4; its merged partials, then the combine. */
static void wg_run_cl(const float *ql, const float *qp, const float *cache, float *o, float *ws,
                      int32_t H, int32_t t_q, int32_t t_kv, float scale) {
    const int64_t w_max = t_kv, n_qh = (int64_t)t_q * H, n_tiles = (int64_t)t_q * (H / 64);
    int64_t n_cl = 30 / n_tiles, want, by_len = (w_max + 31) / 32;
    if (n_cl < 1) n_cl = 1;
    want = 4 * n_cl;
    if (want > by_len) want = by_len;
    const int64_t cs = ((w_max + want - 1) / want + 31) / 32 * 32;
    const int32_t n_pad = (int32_t)(((w_max + cs - 1) / cs + 3) / 4 * 4);
    float *ws_ml = ws + (size_t)(n_pad / 4) * n_qh * WG_R;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)(n_tiles * n_pad));
    cfg.blockDim = dim3(WG_NT);
    cfg.dynamicSmemBytes = WG_SMEM;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = 4;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    CK(cudaLaunchKernelEx(&cfg, wg_walk<0, 4, 4>, ql, qp, cache, o, ws, ws_ml, H, t_q, t_kv, scale,
                          cs, n_pad));
    probe_combine_launch(ws, ws_ml, o, n_qh, WG_R, n_pad / 4);
}

int main(int argc, char **argv) {
    const probe_door_opts op = probe_door_parse(argc, argv);
    const bool once = op.once, check = op.check;
    const int rounds = op.rounds;
    cudaDeviceProp prop;
    probe_device("probe_door_wgmma", &prop);
    const int32_t H = MLA_GLM5_N_HEAD, R = MLA_GLM5_KV_RANK, W = R + MLA_GLM5_D_ROPE;
    static_assert(MLA_GLM5_KV_RANK == WG_R && MLA_GLM5_D_ROPE == WG_DR && MLA_GLM5_N_HEAD % 64 == 0,
                  "the prototype's shape is glm5's");
    const int32_t T_Q_MAX = PROBE_DOOR_T_Q_MAX;
    const float scale = MLA_GLM5_SCALE;
    CK(cudaFuncSetAttribute(wg_walk<0, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, WG_SMEM));
    CK(cudaFuncSetAttribute(wg_walk<0, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize, WG_SMEM));
    CK(cudaFuncSetAttribute(wg_walk<1, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize, WG_SMEM));
    CK(cudaFuncSetAttribute(wg_walk<2, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize, WG_SMEM));
    CK(cudaFuncSetAttribute(wg_walk<3, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize, WG_SMEM));
    CK(cudaFuncSetAttribute(wg_walk<0, 4, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            WG_SMEM));
    const probe_door_io io = probe_door_io_make();
    float *const cache = io.cache, *const ql = io.ql, *const qp = io.qp, *const ws = io.ws;
    float *const *o = io.o;
    const size_t ws_floats = io.ws_floats;
    typedef probe_row row;
    const row rows[] = {
        {"decode 32K", 1, 32768, true},     {"decode 4K (one tile a block)", 1, 4096, true},
        {"verify (t_q 4)", 4, 32768, true}, {"decode 8K", 1, 8192, true},
        {"decode 128K", 1, 131072, true},   {"t_kv 1", 1, 1, false},
        {"t_kv 17", 1, 17, false},          {"t_kv 40, t_q 4", 4, 40, false},
        {"t_kv 289, t_q 4", 4, 289, false}, {"t_kv 4099", 1, 4099, false},
        {"t_kv 10600", 1, 10600, false},    {"t_kv 10630", 1, 10630, false}};
    /* arms: 0 the f32 launcher (the reference), 1 tf32, 2 bf16, 3 the wgmma prototype with 4
     * stages, 4 with 2 stages (the same arithmetic: the same bytes as arm 3) */
    const char *arm_name[6] = {"f32", "tf32", "bf16", "wgmma", "wgmma 2 stages", "wgmma cluster 4"};
    auto call = [&](const row &r, int a) {
        int rc = 0;
        if (a < 3)
            rc = probe_door_base_arm(io, a, r.t_q, r.t_kv);
        else if (a < 5)
            wg_run(ql, qp, cache, o[a], ws, H, r.t_q, r.t_kv, scale, a == 3 ? 4 : 2);
        else
            wg_run_cl(ql, qp, cache, o[a], ws, H, r.t_q, r.t_kv, scale);
        CK(cudaGetLastError());
        if (rc != 0) {
            fprintf(stderr, "probe_door_wgmma: %s arm %s returned %d\n", r.name, arm_name[a], rc);
            exit(1);
        }
    };
    if (once) {
        for (const row &r : rows)
            if (r.timed)
                for (int a = 1; a < 6; a++) call(r, a);
        CK(cudaDeviceSynchronize());
        printf("probe_door_wgmma --once: the timed rows x tf32, bf16, wgmma (4, 2 stages, "
               "cluster 4) ran\n");
        return 0;
    }
    printf(
        "| row | read floor us | tf32 us | bf16 us | wgmma us | 2 stages us | walk us | walk, no "
        "stores us | stream + convert us | stream alone us | walk + half combine us | wgmma / best "
        "arm | max |arm - f32| / max |f32|: tf32, "
        "bf16, wgmma | wgmma run twice, 2 stages | cluster 4 us | its max |arm - f32| / max |f32|, "
        "run twice |\n");
    printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
           "--- | --- | ---: | --- |\n");
    int bad = 0;
    std::vector<float> again;
    for (const row &r : rows) {
        if (check && r.timed) continue;
        const size_t n = (size_t)r.t_q * H * R;
        std::vector<float> h[6];
        for (int a = 0; a < 6; a++) {
            CK(cudaMemset(o[a], 0xFF, (size_t)T_Q_MAX * H * R * 4));
            if (a >= 3) CK(cudaMemset(ws, 0xFF, ws_floats * 4));
            call(r, a);
            CK(cudaDeviceSynchronize());
        }
        for (int a = 0; a < 6; a++) {
            h[a].resize(n);
            CK(cudaMemcpy(h[a].data(), o[a], n * 4, cudaMemcpyDeviceToHost));
        }
        /* run twice: the same bytes (a race or an unwritten element shows) */
        CK(cudaMemset(o[3], 0xFF, (size_t)T_Q_MAX * H * R * 4));
        CK(cudaMemset(ws, 0xFF, ws_floats * 4));
        call(r, 3);
        CK(cudaDeviceSynchronize());
        again.resize(n);
        CK(cudaMemcpy(again.data(), o[3], n * 4, cudaMemcpyDeviceToHost));
        const bool same = memcmp(again.data(), h[3].data(), n * 4) == 0;
        const bool same2 = memcmp(h[4].data(), h[3].data(), n * 4) == 0;
        CK(cudaMemset(o[5], 0xFF, (size_t)T_Q_MAX * H * R * 4));
        CK(cudaMemset(ws, 0xFF, ws_floats * 4));
        call(r, 5);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(again.data(), o[5], n * 4, cudaMemcpyDeviceToHost));
        const bool same_cl = memcmp(again.data(), h[5].data(), n * 4) == 0;
        double vmax = 0, d[6] = {0, 0, 0, 0, 0, 0};
        size_t nonfinite[6] = {0, 0, 0, 0, 0, 0};
        for (size_t e = 0; e < n; e++) {
            vmax = fmax(vmax, fabs((double)h[0][e]));
            for (int a = 1; a < 6; a++) {
                if (!isfinite(h[a][e])) nonfinite[a]++;
                d[a] = fmax(d[a], fabs((double)h[a][e] - h[0][e]));
            }
        }
        double t[6] = {0, 0, 0, 0, 0, 0}, t_walk[5] = {0, 0, 0, 0, 0}, t_read = 0;
        if (r.timed && !check) {
            std::vector<double> tv[6], tw[5], tr;
            const int64_t n4 = (int64_t)r.t_kv * W / 4;
            for (int k = 0; k < rounds; k++) {
                for (int a = 1; a < 6; a++) tv[a].push_back(median_us([&] { call(r, a); }));
                for (int md = 0; md < 5; md++)
                    tw[md].push_back(median_us(
                        [&] { wg_run(ql, qp, cache, o[3], ws, H, r.t_q, r.t_kv, scale, 4, md); }));
                double rf = INFINITY; /* the read floor as bench_dense takes it */
                for (int per_sm : {4, 8, 16})
                    rf = fmin(rf, median_us([&] {
                                  stream_read<<<per_sm * prop.multiProcessorCount, 256>>>(
                                      (const float4 *)cache, n4, g_sink);
                              }));
                tr.push_back(rf);
            }
            for (int a = 1; a < 6; a++) t[a] = median_of(tv[a]);
            for (int md = 0; md < 5; md++) t_walk[md] = median_of(tw[md]);
            t_read = median_of(tr);
        }
        const double rel[6] = {0, d[1] / vmax, d[2] / vmax, d[3] / vmax, 0, d[5] / vmax};
        /* a prototype far outside the bf16 arm's distance from the f32 launcher is broken */
        const bool broken = nonfinite[3] || rel[3] > 4 * rel[2] + 1e-6 || !same || !same2 ||
                            nonfinite[5] || rel[5] > 4 * rel[2] + 1e-6 || !same_cl;
        bad |= broken;
        const double best = fmin(t[1], t[2]);
        printf(
            "| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.3f | "
            "%.2e, %.2e, %.2e | %s, %s | %.2f | %.2e, %s%s |\n",
            r.name, t_read, t[1], t[2], t[3], t[4], t_walk[0], t_walk[1], t_walk[2], t_walk[3],
            t_walk[4], best > 0 ? t[3] / best : 0.0, rel[1], rel[2], rel[3],
            same ? "same bytes" : "DIFFERENT", same2 ? "same bytes" : "DIFFERENT", t[5], rel[5],
            same_cl ? "same bytes" : "DIFFERENT", broken ? "; BROKEN" : "");
        fflush(stdout);
    }
    printf("probe_door_wgmma: %s\n", bad ? "a prototype row is broken (see BROKEN)"
                                         : "every prototype row within 4x the bf16 arm's "
                                           "distance from the f32 launcher, the same bytes twice "
                                           "(and with 2 stages)");
    return bad ? 1 : 0;
}
