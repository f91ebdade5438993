/* mla_attn.cu: the two attention launchers of kernels/mla.h, memra_mla_attn_absorbed_f32 and
 * memra_mla_attn_gathered_f32, on ONE kernel body (attn_walk_f32) templated on the cache walk.
 *
 * Layering, one rule in every .cu file of kernels/ (ggml-cuda's):
 *  1. a `static __global__` kernel named for its op, with the dtype suffix (`attn_combine_f32`);
 *  2. `static void <kernel>_launch(...)`: picks the launch shape only (grid, block, dynamic shared
 *     memory, template arm) and launches; it neither validates nor checks errors;
 *  3. the `extern "C"` entry: validates (mla_validate.h), returns the documented no-ops, does the
 *     setup the launch needs, calls the helper, then MLA_CUDA_CHECK(cudaGetLastError()) and
 *     returns 0 (any CUDA failure: 10000 + cudaError_t).
 * Setup (cudaFuncSetAttribute opt-ins, cudaMallocAsync workspaces) is always the entry's, checked
 * there with MLA_CUDA_CHECK, never a helper's; where it depends on the launch shape, a `*_plan`
 * function picks that shape once and the entry passes it to the helper. Here: the shared-memory
 * opt-in of every attn_walk_f32 arm (at_ensure_attrs, once per device) and the split walk's
 * workspace, sized from at_plan, allocated before and freed (stream-ordered) after the launches.
 * The two entries differ only in validation and walk; attn_walk_run is their common remainder,
 * with two launches: the combine runs only when the walk launched, and a failed free outranks a
 * failed launch.
 *
 * ---------------------------------------------------------------------------- the walk ------
 * Query i's walk is a sequence of W slots, each naming a cache row or nothing:
 *   absorbed (walk_causal): W = t_kv - t_q + i + 1 slots, slot s = row s (all valid);
 *   gathered (walk_list):   W = n_slots, slot s = row idx[i][s], valid iff idx[i][s] >= 0
 *                           (repeats count once per occurrence; invalid slots are never loaded).
 * N = the number of valid slots (the softmax terms; absorbed N = W).
 *
 * Tiles. Block = (chunk c, tile (i, g)): query i, heads g*HT .. g*HT+HT-1 (HT = 32 when
 * kv_rank <= 512, else 8); every block reads each cache row of its chunk ONCE for all its heads
 * (MQA). The chunk's slots are walked in row tiles of T = 16 slots, double-buffered with cp.async
 * (invalid slots and slots past the chunk end land as zero rows and get weight exactly 0: no row
 * that is not listed is ever read, so NaN-filled unselected rows cannot leak, not even as 0*NaN).
 * Per row tile, 256 threads (8 warps):
 *  1. logits: S[16 rows][HT heads] = [q_lat | q_pe] . [c_kv | k_pe]. Warp w owns the float4
 *     columns [w*C4/8, (w+1)*C4/8) of the padded row (C4 = ceil((kv_rank + d_rope) / 4)) and
 *     the whole 16 x HT tile; lane (rg, hg) holds rows {t*4 + rg} x heads {u*8 + hg}
 *     (4 x 4 at HT 32, 4 x 1 at HT 8): each LDS.128 of K or Q feeds 4 (or 16) FMAs and a warp's
 *     loads touch 4 rows + 8 heads (broadcast, conflict-free with row strides = 4 mod 8 float4).
 *     The 8 per-warp partial dots go to shared memory; logit = scale * (((p0 + p1) + p2) .. + p7).
 *  2. online softmax (thread per (head, 2 rows) at HT 32): tile max over the valid, non-NaN
 *     logits; m' = max(m, tile max); alpha = expf(m - m') (1 while m' = -inf: nothing seen yet);
 *     p_j = expf(l_j - m') for valid rows (0 otherwise, and 0 while m' = -inf); tile sum
 *     ls = sum of the per-thread pair sums in ascending row-group order; l' = fmaf(l, alpha, ls).
 *  3. P . V: each thread owns HV = 16 (8) heads x 4 c_kv columns; the tile's partial
 *     o_t[h][r] = sum_j p_j * c_kv_j[r] is a fresh fmaf chain over the 16 rows (j ascending,
 *     from 0), then O = fmaf(O, alpha, o_t) (one rounding merges rescale and add).
 * Accurate expf throughout (never __expf); every reduction has a fixed order, so the bytes are a
 * function of the inputs and the shape only.
 *
 * Chunks (a function of the shape only, never of the device):
 *   tiles     = t_q * ceil(n_head / HT);   Wmax = t_kv (absorbed) or n_slots (gathered)
 *   want      = clamp(132 / tiles, 1, min(256, ceil(Wmax / 32)))    (132: one block per SM)
 *   C         = roundup(ceil(Wmax / want), 16)  slots per chunk;  chunks = ceil(Wmax / C)
 *   (chunk c = slots [c*C, (c+1)*C) of every query's walk, clipped to the query's W).
 * glm5 decode (t_q 1, 64 heads, t_kv 32768 or 2048 slots): 2 tiles x 64 chunks = 128 blocks.
 * With one chunk the block normalises and writes o_lat. Otherwise every block writes its
 * (m, l, flags, O) partial to a stream-ordered workspace (cudaMallocAsync / cudaFreeAsync on the
 * caller's stream; an empty chunk writes m = -inf, l = 0, O = 0) and attn_combine_f32 merges
 * them in ASCENDING chunk order: M = max over non-empty chunks, w_c = expf(m_c - M) (0 for an
 * empty chunk), L = sum_c fmaf(w_c, l_c), o = sum_c fmaf(w_c, O_c[r]), out = o / L.
 *
 * Edge semantics (the oracle's double max-then-exp): a NaN logit on a valid row makes the
 * (query, head) output NaN; all valid logits -inf (max -inf) or any +inf logit gives NaN;
 * -inf logits among finite ones weigh 0; a gathered query with no valid slot gets +0.0f.
 *
 * Tolerance-class walk parameters (docs/tolerances.md, class attn), T = 16, for a query with
 * N valid terms over W walk slots:
 *   R = min(N, ceil(W / 16))          rescales on a term's path: the alpha of each later tile of
 *                                     its chunk that holds a valid row (a tile without one has
 *                                     alpha = expf(0) = 1, exact) plus the combine weight;
 *   D = min(16, N) + min(N, ceil(W / 16)) + 1
 *                                     f32 roundings into the numerator or denominator on a
 *                                     term's path: <= 16 in its tile (fmaf chain / sum tree),
 *                                     one merge per later non-empty tile of its chunk, one per
 *                                     non-empty chunk in the combine (adding exact zeros of empty
 *                                     tiles and chunks does not round). Absorbed: W = N.
 * Tighter, with the plan's chunk length C: R <= min(N, C/16), D <= 16 + min(N, C/16) +
 * min(N, ceil(W / C)) (glm5 decode t_kv 32768: C = 512, R <= 32, D <= 112).
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include <mutex>

#include "kernels/mla.h"
#include "kernels/mla_cuda_check.h"
#include "kernels/mla_cuda_util.cuh"
#include "kernels/mla_attn_walk.cuh"
#include "kernels/mla_attn_wg.h"
#include "kernels/mla_door.h"
#include "kernels/mla_validate.h"

/* ------------------------------------------------------------------ device helpers -------- */

/* ------------------------------------------------------------------ configuration --------- */

#define AT_NT 256          /* threads per block */
#define AT_NW (AT_NT / 32) /* warps: the logit reduction is split over them */
#define AT_JT 16           /* T: slots per row tile */
#define AT_MAX_CHUNKS 256  /* the chunk plan's cap (kernels/mla.h, mla_attn_chunk_slots) */
#define AC_NT 128          /* combine: threads (= columns) per block */
static_assert(AT_JT == MLA_ATTN_WALK_TILE,
              "the row tile is part of the walk the contract states: restate mla_attn_walk "
              "(kernels/mla.h) for the new walk");

#if defined(MLA_BITE_ATTN_SATURATE_F16)
/* BITE (test-only, docs/fixtures-that-bite.md): o_lat saturated to the f16 range, as an
 * f16-ready epilogue would (glm5_next_large_latent: |o_lat| ~ 1e30). */
#define MLA_BITE_OUT(x) fminf(fmaxf((x), -65504.0f), 65504.0f)
#else
#define MLA_BITE_OUT(x) (x)
#endif

template <int HT> struct at_cfg {
    static constexpr int TR = AT_JT / 4;                /* logit rows per lane */
    static constexpr int TH = HT / 8;                   /* logit heads per lane */
    static constexpr int HV = HT < 16 ? HT : 16;        /* P . V heads per thread */
    static constexpr int NCOL = AT_NT / (HT / HV);      /* P . V float4 columns */
    static constexpr int MAX_RANK = 4 * NCOL;           /* kv_rank the layout covers */
    static constexpr int HTP = HT == 8 ? 8 : HT + 8;    /* [row][head] plane stride (8 mod 32) */
    static constexpr int NRG = AT_NT / HT;              /* softmax row groups */
    static constexpr int RPT = (AT_JT + NRG - 1) / NRG; /* softmax rows per thread */
    static_assert(HT % 8 == 0 && HT % HV == 0 && HV % 4 == 0, "head tile");
    static_assert(AT_NT % HT == 0 && TR * 4 == AT_JT, "thread layouts");
};
static_assert(at_cfg<32>::MAX_RANK == 512,
              "the head tile rule (32 heads up to kv_rank 512, else 8) is stated in kernels/mla.h "
              "(mla_attn_chunk_slots): restate it there");

/* ---- tensor-core arms (the MEMRA_MLA_TC_ATTN door, kernels/mla_door.h; docs/performance.md) ----
 * TC = 1: single-pass TF32 operands (attn_tc_f32, its own kernel); TC = 3: the f32 arm with its
 * logits as 3xTF32 (x = hi + lo, at_split_tf32; lo*hi + hi*lo + hi*hi, the small terms first, one
 * mma.sync.m16n8k8 with f32 accumulate a pass). Only the logits change; the walk, tiles, softmax,
 * P . V and combine are the f32 arm's (nineteenth session: before, P . V was 3xTF32 too, and the
 * arm ran 213.7 us at decode 32K against the f32 arm's 179.6; now 171.1).
 *
 * Special values. cvt.rna.tf32.f32 rounds and clears the low 13 bits, and it clears them for a NaN
 * too (H200 2026-12-01, eighth session: 0x7F800001 -> 0x7F800000, an infinity; 0x7FC00000 stays a
 * NaN), so a NaN whose payload lies only in the low 13 mantissa bits reaches the mma as an
 * infinity; and a 3xTF32 split of an infinity has lo = inf - inf = NaN, and hi(inf) * lo(q) is
 * inf * 0 wherever q is exactly a TF32 value. Every such case makes the logit non-finite (an
 * operand is not finite), and the oracle's logit is then non-finite too, so each arm settles it
 * where a valid logit is not finite, on a rare path: the single-pass door, where a logit was
 * infinite, searches its chunk's rows for a NaN after the walk (a NaN poisons every head); 3xTF32
 * recomputes the logit as an f32 dot of the sources. Measured at glm5 decode 32K (same session):
 * the door 82.5 against 75.0 us without the handling, 3xTF32 236 against 232 us; per-element
 * canonicalising selects, tried first, cost the door 12-25% and 3xTF32 17-32%
 * (docs/tolerances.md). */
static __device__ __forceinline__ uint32_t at_tf32(float x) {
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}
/* The door's cache elements as TF32 operands of the logits: at_tf32's (cvt.rna's) value in the
 * top 19 bits, the low 13 left as the add leaves them. They reach only the mma, which reads only a
 * TF32 operand's top 19 bits. For sm_90 nvcc compiles cvt.rna.tf32.f32
 * to FSETP.NAN, an add of 0x1000 skipped for a NaN, and a mask of the low 13 bits (and feeds the
 * mma the unmasked sum); this drops the mask, one LOP3 an element (72 a thread a tile). Checked
 * on the H200 (fifteenth session, docs/gpu-runs): the top 19 bits agree with cvt.rna's for all
 * 2^32 inputs, and the door's bench rows keep their out_sha256. (One NaN test for a row's pair of
 * elements, exact in its outputs, saved 36 FSETP a thread a tile but measured 1% slower at
 * verify, so each element keeps its own.) */
static __device__ __forceinline__ uint32_t at_tf32_hi(float x) {
    const uint32_t u = __float_as_uint(x);
    return x != x ? u : u + 0x1000u;
}
/* The door's c_kv elements as P . V's B operands: at_tf32_hi without its NaN test, the same top 19
 * bits for every non-NaN x (a zero-filled slot's 0 included). A NaN there needs no care: a NaN
 * c_kv element of a valid row makes that row's logit NaN for every head of the tile (NaN times any
 * q), or infinite where the logits' mma reads a low-payload NaN as an infinity, and the rescan
 * after the walk then finds the NaN; either way the whole tile is poisoned and its outputs are
 * NaN whatever P . V accumulated. (Invalid slots are zero-filled, never copied.) Until the
 * seventeenth session the logits wrote their conversions back into the tile for P . V to read:
 * 2.3 M of the kernel's 6.1 M shared-memory wavefronts at decode 32K (595 K of them bank
 * conflicts); converting here instead is one add an element (H200, ncu: 55.9 -> 51.7 us, every
 * bench row's out_sha256 unchanged). */
static __device__ __forceinline__ uint32_t at_tf32_v(float x) {
    return __float_as_uint(x) + 0x1000u;
}
/* at_tf32 with a NaN kept a NaN (the door's q, converted once a block) */
static __device__ __forceinline__ uint32_t at_tf32_nan(float x) {
    const uint32_t r = at_tf32(x);
    return x != x ? 0x7FFFFFFFu : r;
}
/* scale * (q . k) over [0, width) of shared memory, one f32 fma chain: 3xTF32's rare path. */
static __device__ __noinline__ float at_dot_f32(const float *q, const float *k, int32_t width,
                                                float scale) {
    float d = 0.0f;
    for (int32_t c = 0; c < width; c++) d = __fmaf_rn(q[c], k[c], d);
    return __fmul_rn(scale, d);
}
static __device__ __forceinline__ void at_mma(float c[4], const uint32_t a[4],
                                              const uint32_t b[2]) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
/* The 3xTF32 arm's split of x into TF32 operands hi + lo (docs/tolerances.md, "The 3xTF32 arm
 * as rebuilt"): hi is x with its low 13 bits cleared (x truncated to TF32, one LOP), lo = x - hi,
 * exact in f32 (x's low 13 bits), which the mma reads truncated to its own top 19 bits. So
 * |x - hi| < 2^-10 |x| and |x - hi - lo| < 2^-20 |x| for normal-range remainders, and the three
 * products hi hi + hi lo + lo hi are within 48u of x y. An infinity splits into (inf, NaN) and a
 * NaN into (NaN or inf, NaN): the logit is then not finite and takes the f32 rare path. Two
 * instructions an element, against seven for the round-to-nearest split (cvt.rna twice and a
 * subtraction), which q's elements paid again every tile. */
static __device__ __forceinline__ void at_split_tf32(float x, uint32_t &hi, uint32_t &lo) {
    hi = __float_as_uint(x) & 0xFFFFE000u;
    lo = __float_as_uint(__fsub_rn(x, __uint_as_float(hi)));
}

#define AT_TC_MAX_NT 8 /* P . V n-tiles of 8 columns per warp: kv_rank <= 8 warps x 64 */

/* The doors' final o_lat with one chunk, from their output fragments (MT m-tiles of 16 heads:
 * the tf32 arm's 2, the bf16 arm's 4): acc[mt][nt] is the m16n8
 * accumulator of heads h0 + 16 mt + fg and + 8 (values 0, 1 and 2, 3), columns c0 + 8 nt + 2 ft
 * and + 1; fin_m / fin_l / fin_p the block's final max, denominator and poison flag per head of
 * the tile. Each lane writes its pairs: +0 for an empty row, NaN for a poisoned or infinite-max
 * one, else v / l. */
template <int MT>
static __device__ __forceinline__ void
at_store_frags(float *o_lat, int64_t i, int32_t n_head, int32_t h0, int32_t kv_rank, int32_t c0,
               int32_t nnt, const float (&acc)[MT][AT_TC_MAX_NT][4], const float *fin_m,
               const float *fin_l, const float *fin_p, bool nonempty, int fg, int ft) {
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int hh = mt * 16 + fg + 8 * half;
            const int32_t h = h0 + hh;
            if (h >= n_head) continue;
            const int64_t qh = i * n_head + h;
            const float m = fin_m[hh], l = fin_l[hh];
            const bool nan_out = fin_p[hh] != 0.0f || fabsf(m) == INFINITY;
#pragma unroll
            for (int nt = 0; nt < AT_TC_MAX_NT; nt++) {
                if (nt >= nnt) break;
                const int32_t r = c0 + nt * 8 + 2 * ft;
                float *dst = o_lat + qh * kv_rank + r;
                const float v0 = acc[mt][nt][2 * half], v1 = acc[mt][nt][2 * half + 1];
                dst[0] = !nonempty ? 0.0f : nan_out ? NAN : __fdiv_rn(v0, l);
                dst[1] = !nonempty ? 0.0f : nan_out ? NAN : __fdiv_rn(v1, l);
            }
        }
}

/* Row stride (floats) of the shared query / cache tiles: the row padded to whole float4s, plus
 * one float4 when that count is even, so consecutive rows start in different float4 banks. */
static __host__ __device__ __forceinline__ int32_t at_ld(int32_t width) {
    int32_t wpad = (width + 3) & ~3;
    return ((wpad >> 2) & 1) ? wpad : wpad + 4;
}

/* Row stride of the tensor-core arms' query and cache tiles: the width rounded up to 8, then to
 * 8 mod 32 (8-byte fragment loads of 16 lanes over 4 rows: conflict-free). */
static __host__ __device__ constexpr int32_t tca_ldk(int32_t width) {
    int32_t l = (width + 7) & ~7;
    while ((l & 31) != 8) l += 8;
    return l;
}

/* attn_walk_f32's row stride for arm TC: at_ld for the f32 arm, tca_ldk for the 3xTF32 arm. */
static __host__ __device__ __forceinline__ int32_t at_ld_arm(int32_t width, int tc) {
    return tc ? tca_ldk(width) : at_ld(width);
}

/* Shared-memory floats (the int32 row ring included), in kernel order. */
template <int HT> static size_t at_smem_bytes(int32_t ld) {
    typedef at_cfg<HT> C;
    size_t f = (size_t)HT * ld                  /* qs   [HT][ld] */
               + 2 * (size_t)AT_JT * ld         /* ks   [2][T][ld] */
               + (size_t)AT_NW * AT_JT * C::HTP /* sp   [NW][T][HTP] */
               + (size_t)AT_JT * C::HTP         /* ps   [T][HTP] */
               + 2 * (size_t)C::NRG * HT        /* lmax, psum [NRG][HT] */
               + (size_t)HT                     /* alpha */
               + 3 * (size_t)HT                 /* final m, l, poison */
               + 3 * (size_t)AT_JT;             /* rows_s [3][T] (int32) */
    return f * sizeof(float);
}

/* --------------------------------------------------------------------------- walks -------- */

/* walk_causal and walk_list: kernels/mla_attn_walk.cuh (shared with the wgmma door arm,
 * kernels/mla_attn_wg.cu). */

/* ---------------------------------------------------------------------- the kernel -------- */

/* See the file comment. Block b = chunk * n_tiles + tile, tile = i * n_hg + g. */
template <int HT, class Walk, bool VEC, int TC = 0>
static __global__ void __launch_bounds__(AT_NT, 1)
    attn_walk_f32(const float *__restrict__ q_lat, const float *__restrict__ q_pe,
                  const float *__restrict__ cache, Walk walk, float *__restrict__ o_lat,
                  float *__restrict__ ws_o, float *__restrict__ ws_ml, int32_t n_head,
                  int32_t kv_rank, int32_t d_rope, int32_t t_q, float scale, int32_t n_hg,
                  int64_t chunk_slots, int32_t n_chunks) {
    typedef at_cfg<HT> C;
    constexpr int JT = AT_JT;
    extern __shared__ __align__(16) float smem[];

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int32_t width = kv_rank + d_rope;
    const int32_t wpad = (width + 3) & ~3, wp4 = wpad >> 2;
    const int32_t ld = at_ld_arm(width, TC);

    float *qs = smem;                              /* [HT][ld] */
    float *ks = qs + (size_t)HT * ld;              /* [2][JT][ld] */
    float *sp = ks + 2 * (size_t)JT * ld;          /* [NW][JT][HTP] */
    float *ps = sp + (size_t)AT_NW * JT * C::HTP;  /* [JT][HTP] */
    float *lmax_s = ps + (size_t)JT * C::HTP;      /* [NRG][HT] */
    float *psum_s = lmax_s + (size_t)C::NRG * HT;  /* [NRG][HT] */
    float *alpha_s = psum_s + (size_t)C::NRG * HT; /* [HT] */
    float *fin_m = alpha_s + HT, *fin_l = fin_m + HT, *fin_p = fin_l + HT;
    int32_t *rows_s = (int32_t *)(fin_p + HT); /* [3][JT] */

    const int64_t n_tiles = (int64_t)t_q * n_hg;
    const int64_t tile = (int64_t)blockIdx.x % n_tiles;
    const int32_t chunk = (int32_t)((int64_t)blockIdx.x / n_tiles);
    const int64_t i = tile / n_hg;
    const int32_t h0 = (int32_t)(tile - i * n_hg) * HT;
    const int64_t n_qh = (int64_t)t_q * n_head;
    const int64_t c_begin = (int64_t)chunk * chunk_slots;
    int64_t c_end = c_begin + chunk_slots;
    const int64_t w_len = walk.length(i);
    if (c_end > w_len) c_end = w_len;
    const int32_t n_k = c_end > c_begin ? (int32_t)((c_end - c_begin + JT - 1) / JT) : 0;

    /* P . V ownership: heads hv0 .. hv0 + HV of the tile, c_kv columns 4*vcol .. 4*vcol + 3 */
    const int vcol = tid % C::NCOL, hv0 = (tid / C::NCOL) * C::HV;
    const bool v_on = 4 * vcol < kv_rank;

    if (n_k == 0) {
        /* The chunk holds none of this query's slots (only with several chunks): an empty
         * partial, weight 0 in the combine. */
        mla_shake_empty_partial(); /* nothing but in the shake build */
        if (v_on) {
            for (int hh = 0; hh < C::HV; hh++) {
                int32_t h = h0 + hv0 + hh;
                if (h >= n_head) break;
                float *dst = ws_o + ((int64_t)chunk * n_qh + i * n_head + h) * kv_rank;
                for (int x = 0; x < 4 && 4 * vcol + x < kv_rank; x++) dst[4 * vcol + x] = 0.0f;
            }
        }
        if (tid < HT && h0 + tid < n_head) {
            float *ml = ws_ml + ((int64_t)chunk * n_qh + i * n_head + h0 + tid) * 3;
            ml[0] = -INFINITY;
            ml[1] = 0.0f;
            ml[2] = 0.0f;
        }
        return;
    }

    /* rows_s[k % 3]: the cache row of each slot of row tile k (-1: none), staged two tiles
     * ahead so the copies never wait on a dependent global load of idx. */
    auto stage = [&](int32_t k) {
        if (tid < JT) {
            int64_t s = c_begin + (int64_t)k * JT + tid;
            rows_s[(k % 3) * JT + tid] = (k < n_k && s < c_end) ? walk.row(i, s) : -1;
        }
    };
    /* Row tile k into buffer k & 1; slots without a row are zero-filled, never read. */
    auto issue = [&](int32_t k) {
        float *buf = ks + (size_t)(k & 1) * JT * ld;
        const int32_t *rt = rows_s + (k % 3) * JT;
        if (VEC) {
            /* a row per AT_NT / JT = 16 threads: float4 columns tid % 16 + 16 u of row tid / 16,
             * the row's address computed once a tile (as attn_tc_f32's copies); a slot without a
             * row copies nothing from row 0's address */
            static_assert(AT_NT % JT == 0, "the copy layout");
            constexpr int CPR = AT_NT / JT;
            const int32_t jr = tid / CPR, cq = tid % CPR;
            const int32_t row = rt[jr];
            const bool ok = row >= 0;
            const float *src = cache + (int64_t)(ok ? row : 0) * width + 4 * cq;
            float *dst = buf + (size_t)jr * ld + 4 * cq;
            for (int32_t c4 = cq; c4 < wp4; c4 += CPR, dst += 4 * CPR, src += 4 * CPR)
                mla_cp_async16(dst, src, ok);
        } else {
            for (int32_t e = tid; e < JT * wpad; e += AT_NT) {
                int32_t jr = e / wpad, c = e - jr * wpad;
                int32_t row = rt[jr];
                bool ok = row >= 0 && c < width;
                const float *src = ok ? cache + (int64_t)row * width + c : cache;
                mla_cp_async4(buf + jr * ld + c, src, ok);
            }
        }
        mla_cp_async_commit();
    };

    /* Logit ownership: k-slice of this warp, rows t*4 + rg, heads u*8 + hg. */
    const int rg = lane & 3, hg = lane >> 2;
    const int32_t c4a = warp * wp4 / AT_NW, c4b = (warp + 1) * wp4 / AT_NW;
    /* Softmax ownership: head sh, rows sg*RPT .. sg*RPT + RPT. */
    const int sh = tid % HT, sg = tid / HT;

    float acc[C::HV][4];
#pragma unroll
    for (int hh = 0; hh < C::HV; hh++) acc[hh][0] = acc[hh][1] = acc[hh][2] = acc[hh][3] = 0.0f;
    /* the 3xTF32 arm's logit fragments: lane coordinates */
    const int fg = lane >> 2, ft = lane & 3;
    float m_run = -INFINITY, l_run = 0.0f; /* head sh's running stats (same in every row group) */
    bool poison = false;                   /* head sh saw a NaN logit on a valid row */
    bool any_valid = false;                /* this thread saw a valid slot */

    stage(0);
    stage(1);
    __syncthreads(); /* rows_s[0], rows_s[1] */
    issue(0);

    /* Query tile [q_lat | q_pe], zero rows for heads past n_head, zero pad columns; after tile
     * 0's copies are issued (visible to all at the loop's first barrier). AT_QU loads a thread
     * in flight, branch-free (an element out of range loads q_lat[0] and keeps 0): written as
     * one load and store an element under branches, each store waited on its load before the
     * next load went out, one round trip after another (twelfth session). */
    {
        constexpr int AT_QU = 8;
        const int32_t n_q = HT * wpad;
        for (int32_t e0 = tid; e0 < n_q; e0 += AT_QU * AT_NT) {
            float v[AT_QU];
#pragma unroll
            for (int u = 0; u < AT_QU; u++) {
                const int32_t e = e0 + u * AT_NT, hh = e / wpad, c = e - hh * wpad;
                const int32_t h = h0 + hh;
                const bool ok = e < n_q && h < n_head && c < width;
                const int64_t qh = i * n_head + h;
                const float *src =
                    c < kv_rank ? q_lat + qh * kv_rank + c : q_pe + qh * d_rope + (c - kv_rank);
                const float x = __ldg(ok ? src : q_lat);
                v[u] = ok ? x : 0.0f;
            }
#pragma unroll
            for (int u = 0; u < AT_QU; u++) {
                const int32_t e = e0 + u * AT_NT, hh = e / wpad, c = e - hh * wpad;
                if (e < n_q) qs[(size_t)hh * ld + c] = v[u];
            }
        }
    }

    for (int32_t k = 0; k < n_k; k++) {
        mla_cp_async_wait<0>(); /* tile k (the only group in flight) */
        __syncthreads();        /* (a) tile k visible; every thread is done with tile k - 1 */
        if (k + 1 < n_k) issue(k + 1); /* buffer (k+1) & 1 was last read in tile k - 1 */
        stage(k + 2);                  /* slot (k+2) % 3 was last read in tile k - 1 */
        const float *buf = ks + (size_t)(k & 1) * JT * ld;
        const int32_t *rt = rows_s + (k % 3) * JT;

        /* 1. partial logits of this warp's k-slice */
        if constexpr (TC != 0) {
            /* S[16 rows][HT heads] = K tile (A, 16 x 8) . Q^T (B, 8 x 8 heads), this warp's k8
             * steps, three mma a fragment (lo hi, hi lo, hi hi: at_split_tf32); a fresh
             * accumulator per 16 columns (2 k8 steps), the chunk sums added in f32 RN
             * (docs/tolerances.md). Within a k8 step the k index t maps to column 2t and t + 4 to
             * 2t + 1, the same permutation for both operands (the step's 8 products are the
             * same), so each fragment pair is one 8-byte load; ld = 8 mod 32 (tca_ldk) keeps
             * them conflict-free. */
            const int32_t nks = width >> 3, ka = warp * nks / AT_NW, kb = (warp + 1) * nks / AT_NW;
            const float *ab = buf + (size_t)fg * ld + 2 * ft;
            const float *bb = qs + (size_t)fg * ld + 2 * ft;
            float tot[HT / 8][4];
#pragma unroll
            for (int n = 0; n < HT / 8; n++) tot[n][0] = tot[n][1] = tot[n][2] = tot[n][3] = 0.0f;
            for (int32_t k0 = ka; k0 < kb; k0 += 2) {
                float ch[HT / 8][4];
#pragma unroll
                for (int n = 0; n < HT / 8; n++) ch[n][0] = ch[n][1] = ch[n][2] = ch[n][3] = 0.0f;
#pragma unroll
                for (int32_t kk = k0; kk < k0 + 2; kk++) {
                    if (kk >= kb) break;
                    const float2 r0 = *reinterpret_cast<const float2 *>(ab + kk * 8);
                    const float2 r1 = *reinterpret_cast<const float2 *>(ab + 8 * ld + kk * 8);
                    uint32_t ah[4], al[4];
                    at_split_tf32(r0.x, ah[0], al[0]); /* (row fg, k ft): column 2 ft */
                    at_split_tf32(r1.x, ah[1], al[1]); /* (row fg + 8, k ft) */
                    at_split_tf32(r0.y, ah[2], al[2]); /* (row fg, k ft + 4): column 2 ft + 1 */
                    at_split_tf32(r1.y, ah[3], al[3]); /* (row fg + 8, k ft + 4) */
#pragma unroll
                    for (int n = 0; n < HT / 8; n++) {
                        const float2 qv =
                            *reinterpret_cast<const float2 *>(bb + (size_t)n * 8 * ld + kk * 8);
                        uint32_t bh[2], bl[2];
                        at_split_tf32(qv.x, bh[0], bl[0]); /* (k ft, head n 8 + fg) */
                        at_split_tf32(qv.y, bh[1], bl[1]); /* (k ft + 4, head n 8 + fg) */
                        at_mma(ch[n], al, bh);
                        at_mma(ch[n], ah, bl);
                        at_mma(ch[n], ah, bh);
                    }
                }
#pragma unroll
                for (int n = 0; n < HT / 8; n++)
#pragma unroll
                    for (int x = 0; x < 4; x++) tot[n][x] = __fadd_rn(tot[n][x], ch[n][x]);
            }
            float *spw = sp + (size_t)warp * JT * C::HTP;
#pragma unroll
            for (int n = 0; n < HT / 8; n++) {
                spw[fg * C::HTP + n * 8 + 2 * ft] = tot[n][0];
                spw[fg * C::HTP + n * 8 + 2 * ft + 1] = tot[n][1];
                spw[(fg + 8) * C::HTP + n * 8 + 2 * ft] = tot[n][2];
                spw[(fg + 8) * C::HTP + n * 8 + 2 * ft + 1] = tot[n][3];
            }
        } else {
            float s[C::TR][C::TH];
#pragma unroll
            for (int t = 0; t < C::TR; t++)
#pragma unroll
                for (int u = 0; u < C::TH; u++) s[t][u] = 0.0f;
            const float *kb = buf + (size_t)rg * ld;
            const float *qb = qs + (size_t)hg * ld;
#pragma unroll 2
            for (int32_t c4 = c4a; c4 < c4b; c4++) {
                float4 kf[C::TR], qf[C::TH];
#pragma unroll
                for (int t = 0; t < C::TR; t++)
                    kf[t] = *(const float4 *)(kb + (size_t)(t * 4) * ld + 4 * c4);
#pragma unroll
                for (int u = 0; u < C::TH; u++)
                    qf[u] = *(const float4 *)(qb + (size_t)(u * 8) * ld + 4 * c4);
#pragma unroll
                for (int t = 0; t < C::TR; t++)
#pragma unroll
                    for (int u = 0; u < C::TH; u++) {
                        s[t][u] = __fmaf_rn(qf[u].x, kf[t].x, s[t][u]);
                        s[t][u] = __fmaf_rn(qf[u].y, kf[t].y, s[t][u]);
                        s[t][u] = __fmaf_rn(qf[u].z, kf[t].z, s[t][u]);
                        s[t][u] = __fmaf_rn(qf[u].w, kf[t].w, s[t][u]);
                    }
            }
            float *spw = sp + (size_t)warp * JT * C::HTP;
#pragma unroll
            for (int t = 0; t < C::TR; t++)
#pragma unroll
                for (int u = 0; u < C::TH; u++) spw[(t * 4 + rg) * C::HTP + u * 8 + hg] = s[t][u];
        }
        __syncthreads(); /* (b) partials */

        /* 2a. logits of my rows, tile max over valid non-NaN logits */
        float lg[C::RPT];
        bool vd[C::RPT];
        {
            float lm = -INFINITY;
            bool nan_here = false;
#pragma unroll
            for (int q = 0; q < C::RPT; q++) {
                const int j = sg * C::RPT + q;
                lg[q] = 0.0f;
                vd[q] = false;
                if (j < JT) {
                    float d = sp[j * C::HTP + sh];
#pragma unroll
                    for (int w = 1; w < AT_NW; w++)
                        d = __fadd_rn(d, sp[((size_t)w * JT + j) * C::HTP + sh]);
                    lg[q] = __fmul_rn(scale, d);
                    vd[q] = rt[j] >= 0;
                    if constexpr (TC == 3)
                        if (vd[q] && !(fabsf(lg[q]) < INFINITY)) /* rare: see at_tf32 */
                            lg[q] = at_dot_f32(qs + (size_t)sh * ld, buf + (size_t)j * ld, width,
                                               scale);
                    if (vd[q]) {
                        any_valid = true;
                        if (lg[q] != lg[q])
                            nan_here = true;
                        else
                            lm = fmaxf(lm, lg[q]);
                    }
                }
            }
            lmax_s[sg * HT + sh] = nan_here ? NAN : lm;
        }
        __syncthreads(); /* (c) row-group maxima */

        /* 2b. running max, weights, rescale factor (every row group computes the same m', alpha
         * for its head: same inputs, same order) */
        float alpha = 1.0f;
        {
            float mt = -INFINITY;
            bool pz = false;
#pragma unroll 8
            for (int g2 = 0; g2 < C::NRG; g2++) {
                float x = lmax_s[g2 * HT + sh];
                if (x != x)
                    pz = true;
                else
                    mt = fmaxf(mt, x);
            }
#if defined(MLA_BITE_ATTN_NAN_AS_MASK)
            /* BITE (test-only, docs/fixtures-that-bite.md): a NaN logit is treated as masked
             * (weight 0) instead of poisoning the row (glm5_tp8_nonfinite). */
            (void)pz;
#else
            poison = poison || pz;
#endif
#if defined(MLA_BITE_ATTN_NO_MAX)
            /* BITE (test-only, docs/fixtures-that-bite.md): no running max, pinned at 0: weights
             * expf(l) directly, never rescaled; overflows at |logit| ~90 (glm5_peaked_verify). */
            (void)mt;
            const float m_new = 0.0f;
            const bool live = true;
#else
            const float m_new = fmaxf(m_run, mt);
            const bool live = m_new != -INFINITY;
#endif
            if (live) alpha = expf(m_run - m_new); /* m_run = -inf: 0; unchanged max: exactly 1 */
            float part = 0.0f;
#pragma unroll
            for (int q = 0; q < C::RPT; q++) {
                const int j = sg * C::RPT + q;
                if (j < JT) {
                    float p = (live && vd[q] && lg[q] == lg[q]) ? expf(lg[q] - m_new) : 0.0f;
                    ps[j * C::HTP + sh] = p;
                    part = q == 0 ? p : __fadd_rn(part, p);
                }
            }
            psum_s[sg * HT + sh] = part;
            if (sg == 0) alpha_s[sh] = alpha;
            m_run = m_new;
        }
        __syncthreads(); /* (d) P, row-group sums, alpha */

        /* 2c. denominator: l' = fmaf(l, alpha, tile sum), row groups ascending */
        {
            float ls = psum_s[sh];
#pragma unroll 8
            for (int g2 = 1; g2 < C::NRG; g2++) ls = __fadd_rn(ls, psum_s[g2 * HT + sh]);
            l_run = __fmaf_rn(l_run, alpha, ls);
        }

        /* 3. O = fmaf(O, alpha, P . c_kv) (every arm of this kernel: f32 fmaf chains) */
        if (v_on) {
            float ta[C::HV][4];
#pragma unroll
            for (int hh = 0; hh < C::HV; hh++) ta[hh][0] = ta[hh][1] = ta[hh][2] = ta[hh][3] = 0.0f;
            const float *vb = buf + 4 * vcol;
#pragma unroll
            for (int j = 0; j < JT; j++) {
                const float4 v = *(const float4 *)(vb + (size_t)j * ld);
                const float *pr = ps + j * C::HTP + hv0;
#pragma unroll
                for (int u = 0; u < C::HV / 4; u++) {
                    const float4 p4 = *(const float4 *)(pr + 4 * u);
                    const float pj[4] = {p4.x, p4.y, p4.z, p4.w};
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        float *a = ta[4 * u + e];
                        a[0] = __fmaf_rn(pj[e], v.x, a[0]);
                        a[1] = __fmaf_rn(pj[e], v.y, a[1]);
                        a[2] = __fmaf_rn(pj[e], v.z, a[2]);
                        a[3] = __fmaf_rn(pj[e], v.w, a[3]);
                    }
                }
            }
#pragma unroll
            for (int hh = 0; hh < C::HV; hh++) {
                const float a = alpha_s[hv0 + hh];
#pragma unroll
                for (int x = 0; x < 4; x++) acc[hh][x] = __fmaf_rn(acc[hh][x], a, ta[hh][x]);
            }
        }
        /* no barrier here: the next tile's barrier (a) orders these reads of buf, ps, psum_s and
         * alpha_s before their next writes */
    }
    mla_cp_async_wait<0>(); /* nothing is in flight (the last tile issued none); kept for safety */

    if (sg == 0) {
        fin_m[sh] = m_run;
        fin_l[sh] = l_run;
        fin_p[sh] = poison ? 1.0f : 0.0f;
    }
    const bool nonempty = __syncthreads_or(any_valid) != 0; /* also orders fin_* */

    static_assert(TC == 0 || HT == 32, "the 3xTF32 arm's head tile (at_tc_eligible)");
    if (v_on) {
#pragma unroll
        for (int hh = 0; hh < C::HV; hh++) {
            const int32_t h = h0 + hv0 + hh;
            if (h >= n_head) continue;
            const int64_t qh = i * n_head + h;
            if (n_chunks == 1) {
                const float m = fin_m[hv0 + hh], l = fin_l[hv0 + hh];
                const bool nan_out = fin_p[hv0 + hh] != 0.0f || fabsf(m) == INFINITY;
                float *dst = o_lat + qh * kv_rank;
#pragma unroll
                for (int x = 0; x < 4; x++) {
                    const int32_t r = 4 * vcol + x;
#if defined(MLA_BITE_GATHER_EMPTY_NAN)
                    /* BITE (test-only, docs/fixtures-that-bite.md): an empty list divides 0 / 0
                     * (NaN) instead of writing +0 (glm5_kpool_gather_edges). */
                    if (r < kv_rank) dst[r] = nan_out ? NAN : __fdiv_rn(acc[hh][x], l);
#else
                    if (r < kv_rank)
                        dst[r] = !nonempty ? 0.0f
                                 : nan_out ? NAN
                                           : MLA_BITE_OUT(__fdiv_rn(acc[hh][x], l));
#endif
                }
            } else {
                float *dst = ws_o + ((int64_t)chunk * n_qh + qh) * kv_rank;
#pragma unroll
                for (int x = 0; x < 4; x++) {
                    const int32_t r = 4 * vcol + x;
                    if (r < kv_rank) dst[r] = acc[hh][x]; /* 0 when the chunk had no valid slot */
                }
            }
        }
    }
    if (n_chunks > 1 && sg == 0 && h0 + sh < n_head) {
        float *ml = ws_ml + ((int64_t)chunk * n_qh + i * n_head + h0 + sh) * 3;
        ml[0] = m_run;
        ml[1] = l_run;
        ml[2] = !nonempty ? 0.0f : poison ? 2.0f : 1.0f;
    }
}

/* Block (qh, column block): merges the n_chunks partials of (query, head) qh in ascending chunk
 * order (see the file comment). Flags: 0 empty, 1 non-empty, 2 non-empty with a NaN logit.
 * Each thread's column partials are loaded CB chunks at a time into registers, the first two
 * batches before the weights are known and each next one as soon as the batch two before it is
 * merged, so a thread has up to 2 CB loads in flight; the merge is the same fmaf chain in
 * ascending chunk order. ncu (H200, fifteenth session, L2 cold, glm5 decode at t_kv 8192 and
 * 32768, 64 chunks): with the loads inside the chain (8 a thread in flight) the combine took
 * 11.2-11.8 us, latency-bound, beside the door's own 22 us at t_kv 8192; with batches of 16, the
 * second issued after the weights, 6.7-6.8 us. Eighteenth session (H200, L2 as the walk left it,
 * decode 32K): 64 chunks all in flight (CB 32) 5.76 -> 5.06 us, the door's bench row 60.7 -> 59.7
 * us with every out_sha256 unchanged; but CB 32 at verify (16 chunks, 1,024 blocks) took the
 * door's bench row from 193.7 to 196.8 us: 96 registers a thread against CB 16's 64 (ptxas) leave 5
 * blocks an SM against 8, two waves instead of one. So CB is 16 up to 32 chunks (all in flight
 * either way). Thirty-third session (H100, ncu at decode 32K, 128 chunks): the combine was bound
 * by its instruction stream, not by memory: each warp issued every 3.6 cycles (L2 at 28% of its
 * throughput), about 4,100 instructions a thread, some 30 a column and chunk (a predicated load
 * with a 64-bit multiply for its address, the merge's guard, two shared loads, two fmaf); 4x the
 * warps over the same chunks (branch combine-split) issued 68% of cycles and took 7.26 us against
 * 7.65. So a whole batch is now loaded by one pointer stepped a chunk a load and merged without
 * guards (only the last, partial batch is guarded), and a thread takes VEC = 2 adjacent columns
 * (one 8-byte load a chunk) where kv_rank is even and o_lat 8-byte aligned: each column's chains
 * (o and L, chunks ascending) are the scalar form's, so the bytes are the same. */
/* Thirty-fifth session: the partials' element type P, f32 or bf16 (the wgmma arm's, stored by
 * cvt.rn.bf16x2); a bf16 partial widens to f32 exactly on its load, so the chains are the f32
 * form's on the rounded partials. */
template <class P, int VEC> struct ac_vec;
template <> struct ac_vec<float, 1> { typedef float t; };
template <> struct ac_vec<float, 2> { typedef float2 t; };
template <> struct ac_vec<__nv_bfloat16, 1> { typedef __nv_bfloat16 t; };
template <> struct ac_vec<__nv_bfloat16, 2> { typedef __nv_bfloat162 t; };
static __device__ __forceinline__ float ac_get(const float &v, int) { return v; }
static __device__ __forceinline__ float ac_get(const float2 &v, int k) { return k ? v.y : v.x; }
static __device__ __forceinline__ float ac_get(const __nv_bfloat16 &v, int) {
    return __bfloat162float(v);
}
static __device__ __forceinline__ float ac_get(const __nv_bfloat162 &v, int k) {
    return k ? __high2float(v) : __low2float(v);
}
static __device__ __forceinline__ void ac_set(float &v, int, float x) { v = x; }
static __device__ __forceinline__ void ac_set(float2 &v, int k, float x) { (k ? v.y : v.x) = x; }

template <int CB, int VEC, class P>
static __global__ void __launch_bounds__(AC_NT)
    attn_combine_f32(const P *__restrict__ ws_o, const float *__restrict__ ws_ml,
                     float *__restrict__ o_lat, int64_t n_qh, int32_t kv_rank, int32_t n_chunks) {
    typedef typename ac_vec<P, VEC>::t V;     /* a thread's partials of one chunk */
    typedef typename ac_vec<float, VEC>::t F; /* its accumulators and output */
    __shared__ float m_s[AT_MAX_CHUNKS], l_s[AT_MAX_CHUNKS], w_s[AT_MAX_CHUNKS];
    __shared__ float red_s[AC_NT / 32];
    const int tid = threadIdx.x;
    const int64_t qh = blockIdx.x;
    const int32_t r = (blockIdx.y * AC_NT + tid) * VEC; /* this thread's first column */
    const bool col = r < kv_rank;                       /* VEC divides kv_rank (the launch) */
    const V *src = reinterpret_cast<const V *>(ws_o + qh * kv_rank + (col ? r : 0));
    const int64_t stride = n_qh * kv_rank / VEC; /* one chunk, in V */
    const V zero = {};
    /* batch b of this thread's column partials (0 past n_chunks or past kv_rank); a whole batch
     * by one pointer stepped a chunk a load, the last, partial batch load by load */
    auto load = [&](V(&v)[CB], int32_t b) {
        const V *p = src + (int64_t)b * CB * stride;
        if (col && (b + 1) * CB <= n_chunks) {
#pragma unroll
            for (int j = 0; j < CB; j++, p += stride) v[j] = __ldg(p);
        } else {
#pragma unroll
            for (int j = 0; j < CB; j++, p += stride)
                v[j] = (col && b * CB + j < n_chunks) ? __ldg(p) : zero;
        }
    };
    V va[CB], vb[CB];
    load(va, 0);
    load(vb, 1);

    float m_loc = -INFINITY;
    int nonempty = 0, poison = 0;
    for (int32_t c = tid; c < n_chunks; c += AC_NT) {
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
    for (int w = 1; w < AC_NT / 32; w++) M = fmaxf(M, red_s[w]);
    const bool live = M != -INFINITY;
    for (int32_t c = tid; c < n_chunks; c += AC_NT)
        w_s[c] = (live && m_s[c] != -INFINITY) ? expf(m_s[c] - M) : 0.0f;
    __syncthreads();

    if (!col) return;
    float L = 0.0f;
    F o = {};
    /* batch b into the chains, chunks ascending: per column o = fmaf(w, v, o), and L, each the
     * scalar form's chain (VEC only packs columns) */
    auto merge = [&](const V(&v)[CB], int32_t b) {
        auto one = [&](int j) {
            const int32_t c = b * CB + j;
            const float w = w_s[c];
            L = __fmaf_rn(w, l_s[c], L);
#pragma unroll
            for (int k = 0; k < VEC; k++) ac_set(o, k, __fmaf_rn(w, ac_get(v[j], k), ac_get(o, k)));
        };
        if ((b + 1) * CB <= n_chunks) {
#pragma unroll
            for (int j = 0; j < CB; j++) one(j);
        } else {
#pragma unroll
            for (int j = 0; j < CB; j++)
                if (b * CB + j < n_chunks) one(j);
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
    F out;
#pragma unroll
    for (int k = 0; k < VEC; k++) {
        float x;
#if defined(MLA_BITE_GATHER_EMPTY_NAN)
        /* BITE (test-only, docs/fixtures-that-bite.md): an empty list divides 0 / 0 (NaN). */
        if (false)
#else
        if (!nonempty)
#endif
            x = 0.0f;
        else if (poison || fabsf(M) == INFINITY)
            x = NAN;
        else
            x = MLA_BITE_OUT(__fdiv_rn(ac_get(o, k), L));
        ac_set(out, k, x);
    }
    *reinterpret_cast<F *>(o_lat + qh * kv_rank + r) = out;
}

/* ---- the tf32 door arm: attn_tc_f32 (MEMRA_MLA_TC_ATTN=tf32, kernels/mla_door.h) -----------
 * Block = (chunk, tile (i, g)) of the f32 arm's plan (head tile HT = 32, the same chunks, the
 * same workspace and attn_combine_f32), 256 threads (8 warps), one block per SM. Per block:
 *  - q: the tile's [q_lat | q_pe] rows as TF32 A fragments in registers, warp w holding the k8
 *    steps [w * K8 / 8, (w + 1) * K8 / 8) of both 16-head m-tiles (K8 = width / 8 <= 80, so at
 *    most TCA_KS = 10 steps, 80 registers). Within a k8 step the k index t maps to column 2t and
 *    t + 4 to 2t + 1 (a permutation of the step's 8 columns, the same for q and the cache), so the
 *    cache's B fragment is one 8-byte load;
 *  - row tiles of TCA_JT = 32 slots, double-buffered with cp.async into rows of ldk floats
 *    (ldk = 8 mod 32: the B fragments of both products are conflict-free), a row per 8 threads
 *    with the row's address computed once a tile;
 *  - per tile: (1) each warp's partial logits S[32 heads][32 slots] over its k8 steps, one mma
 *    accumulator per 16 x 8 fragment (the cache elements converted by at_tf32_hi);
 *    (2) the 8 partials summed in f32 in warp order and scaled,
 *    the online softmax of the f32 arm (tile max over valid non-NaN logits, m' = max(m, tile
 *    max), alpha = expf(m - m'), p = expf(l - m'), the tile sum and l' = fmaf(l, alpha, sum)), by
 *    8 threads per head (4 slots each, butterfly reductions); P stored as TF32; (3) warp w owns
 *    the kv_rank / 8 output columns [w * kv_rank / 8, ...): O *= alpha (f32), then
 *    O += P . V by mma over the tile's 4 k8 steps (V's elements converted by at_tf32_v);
 *  - 3 barriers per tile; the edge semantics (NaN poison, +-inf, empty lists, zero-filled
 *    invalid slots never read) and the partial / final writes are the f32 arm's. */
#define TCA_NT 256
#define TCA_JT MLA_TC_ATTN_TILE
#define TCA_KS (MLA_TC_ATTN_MAX_WIDTH / 64) /* k8 steps per warp, at most */
#define TCA_SPL 40                          /* partial-logit row stride (8 mod 32, even) */
#define TCA_PL 36                           /* P row stride (4 mod 32, 16-byte rows) */
static_assert(TCA_JT == 32 && TCA_NT == 256, "the tf32 arm's thread layouts assume these");

static size_t tca_smem_bytes(int32_t width) {
    const size_t f = 2 * (size_t)TCA_JT * tca_ldk(width)    /* ks [2][32][ldk] */
                     + (size_t)(TCA_NT / 32) * 32 * TCA_SPL /* sp [8][32][SPL] */
                     + (size_t)32 * TCA_PL                  /* ps [32][PL] (TF32 bits) */
                     + 32 + 3 * 32                          /* alpha, final m / l / poison */
                     + 3 * (size_t)TCA_JT;                  /* rows_s [3][32] (int32) */
    return f * sizeof(float);
}

/* KSW > 0: the arm of width 64 * KSW (K8 = 8 * KSW: KSW k8 steps per warp) with kv_rank
 * 64 * NNT (NNT > 0), every stride and loop bound a constant (ncu, H200 2026-12-01: the
 * runtime-width arm was bound by integer address arithmetic, ALU the busiest pipe at 1.6 IPC);
 * KSW = NNT = 0: any covered shape, from the arguments. */
template <class Walk, int KSW, int NNT>
static __global__ void __launch_bounds__(TCA_NT, 1)
    attn_tc_f32(const float *__restrict__ q_lat, const float *__restrict__ q_pe,
                const float *__restrict__ cache, Walk walk, float *__restrict__ o_lat,
                float *__restrict__ ws_o, float *__restrict__ ws_ml, int32_t n_head,
                int32_t kv_rank, int32_t d_rope, int32_t t_q, float scale, int32_t n_hg,
                int64_t chunk_slots, int32_t n_chunks) {
    extern __shared__ __align__(16) float smem[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int fg = lane >> 2, ft = lane & 3; /* fragment row group, thread in group */
    static_assert(KSW >= 0 && KSW <= TCA_KS && NNT >= 0 && NNT <= 8, "arm");
    constexpr int32_t C_LDK = tca_ldk(64 * KSW);
    const int32_t width = KSW ? 64 * KSW : kv_rank + d_rope;
    const int32_t ldk = KSW ? C_LDK : tca_ldk(width), wp4 = width >> 2;
    const int32_t nks = width >> 3, ka = warp * nks / 8, kb = (warp + 1) * nks / 8;
    const int32_t ksw = KSW ? KSW : kb - ka; /* this warp's k8 steps */

    float *ks = smem;                                           /* [2][32][ldk] */
    float *sp = ks + 2 * (size_t)TCA_JT * ldk;                  /* [8][32][SPL] */
    uint32_t *ps = (uint32_t *)(sp + (size_t)8 * 32 * TCA_SPL); /* [32][PL] */
    float *alpha_s = (float *)(ps + 32 * TCA_PL);               /* [32] */
    float *fin_m = alpha_s + 32, *fin_l = fin_m + 32, *fin_p = fin_l + 32;
    int32_t *rows_s = (int32_t *)(fin_p + 32); /* [3][32] */

    const int64_t n_tiles = (int64_t)t_q * n_hg;
    const int64_t tile = (int64_t)blockIdx.x % n_tiles;
    const int32_t chunk = (int32_t)((int64_t)blockIdx.x / n_tiles);
    const int64_t i = tile / n_hg;
    const int32_t h0 = (int32_t)(tile - i * n_hg) * 32;
    const int64_t n_qh = (int64_t)t_q * n_head;
    const int64_t c_begin = (int64_t)chunk * chunk_slots;
    int64_t c_end = c_begin + chunk_slots;
    const int64_t w_len = walk.length(i);
    if (c_end > w_len) c_end = w_len;
    const int32_t n_k = c_end > c_begin ? (int32_t)((c_end - c_begin + TCA_JT - 1) / TCA_JT) : 0;

    if (n_k == 0) { /* an empty partial (only with several chunks), as the f32 arm */
        /* nothing but in the shake build */
        mla_shake_empty_partial();
        for (int32_t e = tid; e < 32 * kv_rank; e += TCA_NT) {
            const int32_t hh = e / kv_rank, h = h0 + hh;
            if (h < n_head)
                ws_o[((int64_t)chunk * n_qh + i * n_head + h) * kv_rank + (e - hh * kv_rank)] =
                    0.0f;
        }
        if (tid < 32 && h0 + tid < n_head) {
            float *ml = ws_ml + ((int64_t)chunk * n_qh + i * n_head + h0 + tid) * 3;
            ml[0] = -INFINITY;
            ml[1] = 0.0f;
            ml[2] = 0.0f;
        }
        return;
    }

    /* The q tile [32 heads][width] is staged in buffer 1 (free until tile 1's copies), a row per
     * 8 threads as the cache rows (cp.async from 16-byte aligned q_lat / q_pe, else plain loads),
     * zero for heads past n_head, and issued before tile 0's copies so that the two overlap. Then
     * each thread reads its A fragments from it, two float2 an (m-tile, k8 step), and converts
     * them (the same values and conversions as loads from global memory: the same bits). ncu,
     * H200 (fourteenth session, decode 32K): the fragments' 80 global loads a thread, each with
     * its own select between q_lat and q_pe, took 2.0 M of the arm's 18.5 M instructions and 11%
     * of its warp samples, waiting on their loads before tile 0's copies went out. */
    const int32_t cr = tid >> 3, cq = tid & 7;
    {
        float *qd = ks + (size_t)TCA_JT * ldk + (size_t)cr * ldk + 4 * cq;
        const int32_t h = h0 + cr;
        const bool ok = h < n_head;
        const int64_t qh = i * n_head + (ok ? h : 0);
        const float *ql = q_lat + qh * kv_rank, *qp = q_pe + qh * d_rope;
        /* kv_rank and d_rope are multiples of 8 here (at_tc_eligible): whole float4s */
        const bool q16 = (((uintptr_t)q_lat | (uintptr_t)q_pe) & 15) == 0;
        if (q16) {
            for (int32_t c4 = cq; c4 < wp4; c4 += 8, qd += 32) {
                const int32_t c = 4 * c4;
                mla_cp_async16(qd, c < kv_rank ? ql + c : qp + (c - kv_rank), ok);
            }
        } else {
            for (int32_t c4 = cq; c4 < wp4; c4 += 8, qd += 32)
#pragma unroll
                for (int x = 0; x < 4; x++) {
                    const int32_t c = 4 * c4 + x;
                    qd[x] = ok ? __ldg(c < kv_rank ? ql + c : qp + (c - kv_rank)) : 0.0f;
                }
        }
        mla_cp_async_commit();
    }
    auto stage = [&](int32_t k) {
        if (tid < TCA_JT) {
            const int64_t s = c_begin + (int64_t)k * TCA_JT + tid;
            rows_s[(k % 3) * TCA_JT + tid] = (k < n_k && s < c_end) ? walk.row(i, s) : -1;
        }
    };
    /* Row tile k into buffer k & 1, a row per 8 threads: thread tid copies float4 columns
     * tid % 8 + 8 u of row tid / 8, so its row's address is computed once a tile and each copy
     * is one instruction at a constant offset (ncu, H200 2026-12-01, seventh session: a copy
     * per element index e, with e's row and column divided out and the row read from
     * shared memory per copy, took 35 instructions a copy and 41% of the arm's instructions).
     * A slot without a row copies nothing (src-size 0: zero-filled, never read); its source
     * address is row 0's, which every non-empty walk has. */
    auto issue = [&](int32_t k) {
        float *dst = ks + (size_t)(k & 1) * TCA_JT * ldk + (size_t)cr * ldk + 4 * cq;
        const int32_t row = rows_s[(k % 3) * TCA_JT + cr];
        const bool ok = row >= 0;
        const float *src = cache + (int64_t)(ok ? row : 0) * width + 4 * cq;
        if (KSW) {
#pragma unroll
            for (int32_t u = 0; u < 2 * KSW; u++) /* wp4 / 8 = 2 KSW float4 a thread */
                mla_cp_async16(dst + 32 * u, src + 32 * u, ok);
        } else {
            for (int32_t c4 = cq; c4 < wp4; c4 += 8, dst += 32, src += 32)
                mla_cp_async16(dst, src, ok);
        }
        mla_cp_async_commit();
    };

    /* softmax ownership: head sh, slots 4 * sq .. 4 * sq + 3 */
    const int sh = tid >> 3, sq = tid & 7;
    float m_run = -INFINITY, l_run = 0.0f;
    bool poison = false, any_valid = false, inf_seen = false;
    /* P . V ownership: this warp's output columns, nnt n-tiles of 8 */
    const int32_t vc0 = warp * (kv_rank / 8), nnt = NNT ? NNT : kv_rank / 64;
    float o[2][8][4];
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int nt = 0; nt < 8; nt++)
            o[mt][nt][0] = o[mt][nt][1] = o[mt][nt][2] = o[mt][nt][3] = 0.0f;

    stage(0);
    stage(1);
    __syncthreads();
    issue(0);
    /* the A fragments from the staged q tile (zero past this warp's k8 steps) */
    mla_cp_async_wait<1>(); /* the q group; tile 0's may still be in flight */
    __syncthreads();
    uint32_t qf[2][TCA_KS][4];
    {
        const float *qb = ks + (size_t)TCA_JT * ldk + (size_t)fg * ldk + 2 * ft;
#pragma unroll
        for (int mt = 0; mt < 2; mt++)
#pragma unroll
            for (int s = 0; s < TCA_KS; s++) {
                const int32_t k8 = ka + s;
                float2 lo = make_float2(0.0f, 0.0f), hi = lo;
                if (k8 < kb) {
                    const float *qr = qb + (size_t)mt * 16 * ldk + k8 * 8;
                    lo = *reinterpret_cast<const float2 *>(qr);
                    hi = *reinterpret_cast<const float2 *>(qr + 8 * ldk);
                }
                qf[mt][s][0] = at_tf32_nan(lo.x); /* (head fg, column 2 ft) */
                qf[mt][s][1] = at_tf32_nan(hi.x); /* (head fg + 8, column 2 ft) */
                qf[mt][s][2] = at_tf32_nan(lo.y); /* (head fg, column 2 ft + 1) */
                qf[mt][s][3] = at_tf32_nan(hi.y); /* (head fg + 8, column 2 ft + 1) */
            }
    }

    for (int32_t k = 0; k < n_k; k++) {
        mla_cp_async_wait<0>();
        __syncthreads(); /* (a) tile k visible; tile k - 1's buffer (at k = 0 the q tile's), sp, ps
                          * and alpha_s are free */
        if (k + 1 < n_k) issue(k + 1);
        stage(k + 2);
        float *buf = ks + (size_t)(k & 1) * TCA_JT * ldk;
        const int32_t *rt = rows_s + (k % 3) * TCA_JT;
        /* per-thread fragment bases: the logits' B (row fg, this warp's first k8 step, column 2
         * ft) and P . V's B (row ft, this warp's first column + fg) */
        const float *bs = buf + fg * ldk + ka * 8 + 2 * ft;
        const float *bv = buf + ft * ldk + vc0 + fg;

        /* 1. this warp's partial logits */
        {
            float sa[2][4][4];
#pragma unroll
            for (int mt = 0; mt < 2; mt++)
#pragma unroll
                for (int nt = 0; nt < 4; nt++)
                    sa[mt][nt][0] = sa[mt][nt][1] = sa[mt][nt][2] = sa[mt][nt][3] = 0.0f;
#pragma unroll
            for (int s = 0; s < TCA_KS; s++) {
                if (s >= ksw) break;
#pragma unroll
                for (int nt = 0; nt < 4; nt++) {
                    const float2 kv2 = *reinterpret_cast<const float2 *>(bs + nt * 8 * ldk + s * 8);
                    const uint32_t b[2] = {at_tf32_hi(kv2.x), at_tf32_hi(kv2.y)};
                    at_mma(sa[0][nt], qf[0][s], b);
                    at_mma(sa[1][nt], qf[1][s], b);
                }
            }
            float *spw = sp + (size_t)warp * 32 * TCA_SPL;
#pragma unroll
            for (int mt = 0; mt < 2; mt++)
#pragma unroll
                for (int nt = 0; nt < 4; nt++) {
                    const int hr = mt * 16 + fg, col = nt * 8 + 2 * ft;
                    *reinterpret_cast<float2 *>(spw + hr * TCA_SPL + col) =
                        make_float2(sa[mt][nt][0], sa[mt][nt][1]);
                    *reinterpret_cast<float2 *>(spw + (hr + 8) * TCA_SPL + col) =
                        make_float2(sa[mt][nt][2], sa[mt][nt][3]);
                }
        }
        __syncthreads(); /* (b) partials */

        /* 2. logits of head sh, slots 4 sq .. 4 sq + 3; the online softmax */
        {
            float4 d = *reinterpret_cast<const float4 *>(sp + sh * TCA_SPL + 4 * sq);
#pragma unroll
            for (int w = 1; w < 8; w++) {
                const float4 e = *reinterpret_cast<const float4 *>(
                    sp + ((size_t)w * 32 + sh) * TCA_SPL + 4 * sq);
                d.x = __fadd_rn(d.x, e.x);
                d.y = __fadd_rn(d.y, e.y);
                d.z = __fadd_rn(d.z, e.z);
                d.w = __fadd_rn(d.w, e.w);
            }
            const float lg[4] = {__fmul_rn(scale, d.x), __fmul_rn(scale, d.y),
                                 __fmul_rn(scale, d.z), __fmul_rn(scale, d.w)};
            bool vd[4];
            float lm = -INFINITY;
            int nan_here = 0;
#pragma unroll
            for (int x = 0; x < 4; x++) {
                vd[x] = rt[4 * sq + x] >= 0;
                /* an infinite logit: an infinity in the row, or a NaN the mma read as one */
                inf_seen |= vd[x] & (fabsf(lg[x]) == INFINITY); /* no branch: | and & */
                if (vd[x]) {
                    any_valid = true;
                    if (lg[x] != lg[x])
                        nan_here = 1;
                    else
                        lm = fmaxf(lm, lg[x]);
                }
            }
#pragma unroll
            for (int off = 1; off < 8; off <<= 1)
                lm = fmaxf(lm, __shfl_xor_sync(0xffffffffu, lm, off));
            /* the head's 8 lanes are lanes (lane & 24) .. + 7: one ballot, not 3 shuffles */
            const uint32_t nan_lanes = __ballot_sync(0xffffffffu, nan_here != 0);
            poison = poison || ((nan_lanes >> (lane & 24)) & 0xFFu) != 0;
            const float m_new = fmaxf(m_run, lm);
            const bool live = m_new != -INFINITY;
            float alpha = 1.0f;
            if (live) alpha = expf(m_run - m_new); /* m_run = -inf: 0; unchanged max: exactly 1 */
            float p[4];
#pragma unroll
            for (int x = 0; x < 4; x++)
                p[x] = (live && vd[x] && lg[x] == lg[x]) ? expf(lg[x] - m_new) : 0.0f;
            *reinterpret_cast<uint4 *>(ps + sh * TCA_PL + 4 * sq) =
                make_uint4(at_tf32(p[0]), at_tf32(p[1]), at_tf32(p[2]), at_tf32(p[3]));
            float ls = __fadd_rn(__fadd_rn(__fadd_rn(p[0], p[1]), p[2]), p[3]);
#pragma unroll
            for (int off = 1; off < 8; off <<= 1)
                ls = __fadd_rn(ls, __shfl_xor_sync(0xffffffffu, ls, off));
            l_run = __fmaf_rn(l_run, alpha, ls);
            m_run = m_new;
            if (sq == 0) alpha_s[sh] = alpha;
        }
        __syncthreads(); /* (c) P, alpha */

        /* 3. O = O * alpha + P . V over this warp's columns */
#pragma unroll
        for (int mt = 0; mt < 2; mt++) {
            const float a0 = alpha_s[mt * 16 + fg], a1 = alpha_s[mt * 16 + fg + 8];
#pragma unroll
            for (int nt = 0; nt < 8; nt++) {
                if (nt >= nnt) break;
                o[mt][nt][0] = __fmul_rn(o[mt][nt][0], a0);
                o[mt][nt][1] = __fmul_rn(o[mt][nt][1], a0);
                o[mt][nt][2] = __fmul_rn(o[mt][nt][2], a1);
                o[mt][nt][3] = __fmul_rn(o[mt][nt][3], a1);
            }
        }
        /* P's A fragments by ldmatrix.x4: lanes 8 j .. 8 j + 7 address the rows of 8 x 8 b16
         * matrix j (rows (j & 1) * 8 + lane % 8, TF32 columns (j >> 1) * 4 .. + 3), so lane l
         * receives a[j] = P[row l / 4 (+ 8)][column l % 4 (+ 4)]: the fragment, one instruction
         * for four (each P row 16-byte aligned: TCA_PL = 36; conflict-free, rows 4 banks apart) */
        const uint32_t pa = (uint32_t)__cvta_generic_to_shared(
            ps + ((lane & 7) + ((lane >> 3) & 1) * 8) * TCA_PL + (lane >> 4) * 4);
#pragma unroll
        for (int kk = 0; kk < TCA_JT / 8; kk++) {
            uint32_t a[2][4];
#pragma unroll
            for (int mt = 0; mt < 2; mt++)
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                             : "=r"(a[mt][0]), "=r"(a[mt][1]), "=r"(a[mt][2]), "=r"(a[mt][3])
                             : "r"(pa + (uint32_t)(mt * 16 * TCA_PL + kk * 8) * 4u));
#pragma unroll
            for (int nt = 0; nt < 8; nt++) {
                if (nt >= nnt) break;
                const float *bk = bv + kk * 8 * ldk + nt * 8;
                const uint32_t b[2] = {at_tf32_v(bk[0]), at_tf32_v(bk[4 * ldk])};
                at_mma(o[0][nt], a[0], b);
                at_mma(o[1][nt], a[1], b);
            }
        }
        /* no barrier: the next tile's (a) orders these reads before the next writes */
    }

    /* The rare path of an infinite logit (see at_tf32): a NaN in a valid row of the chunk makes
     * every head's oracle logit for it NaN, so the whole tile is poisoned. The search can wait
     * until here: whatever an infinite logit did to m, l and O, a poisoned head's output is NaN. */
    if (__syncthreads_or(inf_seen)) {
        bool nan = false;
        for (int64_t s = c_begin + cr; s < c_end; s += TCA_NT / 8) { /* the copies' layout */
            const int64_t row = walk.row(i, s);
            if (row < 0) continue;
            const float4 *r4 = reinterpret_cast<const float4 *>(cache + row * width);
            for (int32_t c4 = cq; c4 < wp4; c4 += 8) {
                const float4 v = __ldg(r4 + c4);
                nan = nan || v.x != v.x || v.y != v.y || v.z != v.z || v.w != v.w;
            }
        }
        if (__syncthreads_or(nan)) poison = true;
    }
    if (sq == 0) {
        fin_m[sh] = m_run;
        fin_l[sh] = l_run;
        fin_p[sh] = poison ? 1.0f : 0.0f;
    }
    const bool nonempty = __syncthreads_or(any_valid) != 0; /* also orders fin_* */
    if (n_chunks > 1) {
        /* The partial O, one 16-byte store per (m-tile, n-tile) a lane, not two 8-byte ones:
         * lanes ft and ft ^ 1 swap a pair, so the even lane holds columns 4 (ft / 2) .. + 3 of
         * head fg, the odd lane those of head fg + 8 (the same values and addresses as the pair
         * stores; ws_o's rows are 16-byte aligned, kv_rank a multiple of 64). ncu (fourteenth
         * session, decode 32K): the pair stores held 10% of the arm's warp samples, 61% of them
         * waiting on the store queue. */
        const bool odd = ft & 1;
        const int hh = fg + (odd ? 8 : 0);
        const int32_t cb = vc0 + 4 * (ft >> 1);
#pragma unroll
        for (int mt = 0; mt < 2; mt++) {
            const int32_t h = h0 + mt * 16 + hh;
            float *row = ws_o + ((int64_t)chunk * n_qh + i * n_head + h) * kv_rank + cb;
#pragma unroll
            for (int nt = 0; nt < 8; nt++) {
                if (nt >= nnt) break;
                const float *v = o[mt][nt];
                const float r0 = __shfl_xor_sync(0xffffffffu, odd ? v[0] : v[2], 1);
                const float r1 = __shfl_xor_sync(0xffffffffu, odd ? v[1] : v[3], 1);
                if (h < n_head)
                    *reinterpret_cast<float4 *>(row + nt * 8) =
                        odd ? make_float4(r0, r1, v[2], v[3]) : make_float4(v[0], v[1], r0, r1);
            }
        }
    } else {
        at_store_frags<2>(o_lat, i, n_head, h0, kv_rank, vc0, nnt, o, fin_m, fin_l, fin_p, nonempty,
                          fg, ft);
    }
    if (n_chunks > 1 && sq == 0 && h0 + sh < n_head) {
        float *ml = ws_ml + ((int64_t)chunk * n_qh + i * n_head + h0 + sh) * 3;
        ml[0] = m_run;
        ml[1] = l_run;
        ml[2] = !nonempty ? 0.0f : poison ? 2.0f : 1.0f;
    }
}

/* ---- the bf16 door arm: attn_tc_bf16 (MEMRA_MLA_TC_ATTN=bf16, kernels/mla_door.h) -----------
 * The tf32 arm's walk with a 64-head tile, so that every cache tile serves all 64 heads of a
 * glm5 query (the tf32 arm's 32-head tiles read each row twice, the second time from L2) and
 * every B fragment feeds four m-tiles. Block = (chunk, query i, 64-head group) of its own plan
 * (mla_attn_tcb_chunk_slots: about 132 blocks), 256 threads (8 warps), one block per SM:
 *  - q: the tile's [q_lat | q_pe] rows as bf16 A fragments in registers (cvt.rn, round to nearest
 *    even), converted once a block from two 32-head halves staged in buffer 1; warp w holds
 *    k16 steps [w K16 / 8, (w + 1) K16 / 8) of the four 16-head m-tiles (K16 = width / 16 <= 36:
 *    at most TCB_KS = 5 steps, 80 registers). Within k16 step k the thread of fragment column t
 *    holds the k positions 2t, 2t + 1, 2t + 8, 2t + 9; they map to the four columns
 *    32 (k / 2) + 8 t + 4 (k % 2) .. + 3 (a permutation of each 32 columns, the same for q and
 *    the cache), so a B fragment is one 16-byte load;
 *  - row tiles of TCB_JT = 32 slots, double-buffered with cp.async into f32 rows of ldk floats
 *    (ldk = 4 mod 32: the logits' 16-byte loads and P . V's 4-byte loads are conflict-free),
 *    a row per 8 threads, as the tf32 arm;
 *  - per tile: (1) each warp's partial logits S[64 heads][32 slots] over its k16 steps, an
 *    n-tile of 8 slots at a time (one accumulator per m-tile, the cache elements converted to
 *    bf16 by cvt.rn as they are loaded), stored to sp with the column XOR (8 (head % 4));
 *    (2) the 8 partials summed in f32 in warp order and scaled, and the tf32 arm's online
 *    softmax for heads sh and sh + 32 (8 threads a head, 4 slots each); P stored as bf16 (cvt.rn),
 *    l from the f32 weights; (3) warp w owns output columns [w kv_rank / 8, ...) of all 64 heads:
 *    O *= alpha (f32), then O += P . V by mma over the tile's 2 k16 steps (V's elements converted
 *    by cvt.rn as loaded: the slots in natural order);
 *  - 3 barriers per tile; the edge semantics (NaN poison, +-inf, empty lists, zero-filled invalid
 *    slots never read), the rare path of an infinite logit, the partials and the combine are the
 *    tf32 arm's. A NaN stays a NaN through cvt.rn.bf16x2 (there is no low-payload case).
 * Measured on the H200 (bench_dense, twenty-fourth session, docs/performance.md), against the
 * tf32 arm in one run: decode 32K 64.1 / 60.1 us, verify 175.5 / 194.9, prefill 254.9 / 269.4,
 * decode 8K 35.4 / 26.7, decode 128K 179.4 / 189.3. A row tile of 64 heads costs about twice one of
 * 32 (ncu: 74% of cycles with no eligible warp, the tensor pipe 14% busy): the three phases'
 * dependent chains, not the bytes or the mma, set the time, and each block also loads q (147 KB)
 * and writes a 128 KB partial. Withdrawn after measuring: 16 warps in two 32-head groups sharing
 * the tile (72.2 us at decode 32K: 128 registers, the softmax state spilled, the groups still in
 * lockstep at each barrier), and 64 chunks at decode (100.6 us: half the SMs idle). */
#define TCB_NT 256
#define TCB_HT 64
#define TCB_JT MLA_TC_ATTN_TILE
#define TCB_KS 5   /* k16 steps per warp, at most (width <= MLA_TC_BF16_MAX_WIDTH) */
#define TCB_PLB 40 /* P row stride in bf16 (80 bytes: ldmatrix's 8 rows hit 8 distinct 16 B) */
static_assert(TCB_JT == 32 && TCB_NT == 256 && MLA_TC_BF16_MAX_WIDTH <= 16 * 8 * TCB_KS,
              "the bf16 arm's thread layouts assume these");

/* Row stride (floats) of the bf16 arm's cache tile: the width rounded up to 4, then to 4 mod 32. */
static __host__ __device__ constexpr int32_t tcb_ldk(int32_t width) {
    int32_t l = (width + 3) & ~3;
    while ((l & 31) != 4) l += 4;
    return l;
}

static size_t tcb_smem_bytes(int32_t width) {
    return (2 * (size_t)TCB_JT * tcb_ldk(width) /* ks [2][32][ldk] */
            + (size_t)8 * TCB_HT * TCB_JT       /* sp [8][64][32] (swizzled) */
            + (size_t)TCB_HT * 4                /* alpha, final m / l / poison */
            + 3 * (size_t)TCB_JT) *
               sizeof(float)               /* rows_s [3][32] (int32) */
           + (size_t)TCB_HT * TCB_PLB * 2; /* ps [64][PLB] (bf16) */
}

/* The bf16x2 operand registers: mla_bf16x2 (kernels/mla_cuda_util.cuh), lo in the low half (the
 * lower k position), each rounded to nearest even (cvt.rn). */
static __device__ __forceinline__ void tcb_mma(float c[4], const uint32_t a[4],
                                               const uint32_t b[2]) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* KSW > 0: width 64 KSW with kv_rank 512, every stride and bound a constant; KSW = 0: any
 * covered shape (at_tcb_eligible), from the arguments. */
template <class Walk, int KSW>
static __global__ void __launch_bounds__(TCB_NT, 1)
    attn_tc_bf16(const float *__restrict__ q_lat, const float *__restrict__ q_pe,
                 const float *__restrict__ cache, Walk walk, float *__restrict__ o_lat,
                 float *__restrict__ ws_o, float *__restrict__ ws_ml, int32_t n_head,
                 int32_t kv_rank, int32_t d_rope, int32_t t_q, float scale, int32_t n_hg,
                 int64_t chunk_slots, int32_t n_chunks) {
    extern __shared__ __align__(16) float smem[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int fg = lane >> 2, ft = lane & 3; /* fragment row group, thread in group */
    constexpr int32_t C_LDK = tcb_ldk(64 * KSW);
    const int32_t width = KSW ? 64 * KSW : kv_rank + d_rope;
    const int32_t ldk = KSW ? C_LDK : tcb_ldk(width), wp4 = width >> 2;
    const int32_t nks = width >> 4, ka = warp * nks / 8, kb = (warp + 1) * nks / 8;
    const int32_t ksw = kb - ka; /* this warp's k16 steps */

    float *ks = smem;                                  /* [2][32][ldk] */
    float *sp = ks + 2 * (size_t)TCB_JT * ldk;         /* [8][64][32] */
    float *alpha_s = sp + (size_t)8 * TCB_HT * TCB_JT; /* [64] */
    float *fin_m = alpha_s + TCB_HT, *fin_l = fin_m + TCB_HT, *fin_p = fin_l + TCB_HT;
    int32_t *rows_s = (int32_t *)(fin_p + TCB_HT);    /* [3][32] */
    uint16_t *ps = (uint16_t *)(rows_s + 3 * TCB_JT); /* [64][PLB] */

    const int64_t n_tiles = (int64_t)t_q * n_hg;
    const int64_t tile = (int64_t)blockIdx.x % n_tiles;
    const int32_t chunk = (int32_t)((int64_t)blockIdx.x / n_tiles);
    const int64_t i = tile / n_hg;
    const int32_t h0 = (int32_t)(tile - i * n_hg) * TCB_HT;
    const int64_t n_qh = (int64_t)t_q * n_head;
    const int64_t c_begin = (int64_t)chunk * chunk_slots;
    int64_t c_end = c_begin + chunk_slots;
    const int64_t w_len = walk.length(i);
    if (c_end > w_len) c_end = w_len;
    const int32_t n_k = c_end > c_begin ? (int32_t)((c_end - c_begin + TCB_JT - 1) / TCB_JT) : 0;

    if (n_k == 0) { /* an empty partial (only with several chunks), as the f32 arm */
        /* nothing but in the shake build */
        mla_shake_empty_partial();
        for (int32_t e = tid; e < TCB_HT * kv_rank; e += TCB_NT) {
            const int32_t hh = e / kv_rank, h = h0 + hh;
            if (h < n_head)
                ws_o[((int64_t)chunk * n_qh + i * n_head + h) * kv_rank + (e - hh * kv_rank)] =
                    0.0f;
        }
        if (tid < TCB_HT && h0 + tid < n_head) {
            float *ml = ws_ml + ((int64_t)chunk * n_qh + i * n_head + h0 + tid) * 3;
            ml[0] = -INFINITY;
            ml[1] = 0.0f;
            ml[2] = 0.0f;
        }
        return;
    }

    const int32_t cr = tid >> 3, cq = tid & 7;
    auto stage = [&](int32_t k) {
        if (tid < TCB_JT) {
            const int64_t s = c_begin + (int64_t)k * TCB_JT + tid;
            rows_s[(k % 3) * TCB_JT + tid] = (k < n_k && s < c_end) ? walk.row(i, s) : -1;
        }
    };
    /* Row tile k into buffer k & 1, a row per 8 threads (the tf32 arm's copies). */
    auto issue = [&](int32_t k) {
        float *dst = ks + (size_t)(k & 1) * TCB_JT * ldk + (size_t)cr * ldk + 4 * cq;
        const int32_t row = rows_s[(k % 3) * TCB_JT + cr];
        const bool ok = row >= 0;
        const float *src = cache + (int64_t)(ok ? row : 0) * width + 4 * cq;
        if (KSW) {
#pragma unroll
            for (int32_t u = 0; u < 2 * KSW; u++) mla_cp_async16(dst + 32 * u, src + 32 * u, ok);
        } else {
            for (int32_t c4 = cq; c4 < wp4; c4 += 8, dst += 32, src += 32)
                mla_cp_async16(dst, src, ok);
        }
        mla_cp_async_commit();
    };

    stage(0);
    stage(1);
    __syncthreads();
    issue(0);

    /* q's A fragments, staged through buffer 1 (free until tile 1's copies) in two halves of 32
     * heads (m-tiles 0, 1 then 2, 3; the 64-head tile, 147 KB in f32, does not fit the 74 KB
     * buffer), a row per 8 threads as the cache rows: cp.async from 16-byte aligned q_lat / q_pe,
     * else plain loads; zero for heads past n_head. The first half is issued right after tile 0,
     * so both are one round trip, the second half a second one. Then for m-tile mt and step s the
     * thread reads rows 16 mt + fg (+ 8) at the step's four columns c .. c + 3 of this thread and
     * converts them (zero for steps past this warp's): the same values and conversions as loads
     * from global memory, so the same bits. ncu (H200, twenty-third session, decode 32K): with the
     * fragments loaded from global memory, two 16-byte loads an (m-tile, step) before each pair of
     * conversions, the 20 dependent round trips held 15.8% of the warp samples (the tf32 arm's
     * own staging removed the same cost in the fourteenth session). */
    uint32_t qf[4][TCB_KS][4];
    {
        const bool q16 = (((uintptr_t)q_lat | (uintptr_t)q_pe) & 15) == 0;
        float *qb = ks + (size_t)TCB_JT * ldk; /* buffer 1 */
        auto stage_q = [&](int32_t half) {
            float *qd = qb + (size_t)cr * ldk + 4 * cq;
            const int32_t h = h0 + 32 * half + cr;
            const bool ok = h < n_head;
            const int64_t qh = i * n_head + (ok ? h : 0);
            const float *ql = q_lat + qh * kv_rank, *qp = q_pe + qh * d_rope;
            if (q16) {
                for (int32_t c4 = cq; c4 < wp4; c4 += 8, qd += 32) {
                    const int32_t c = 4 * c4;
                    mla_cp_async16(qd, c < kv_rank ? ql + c : qp + (c - kv_rank), ok);
                }
            } else {
                for (int32_t c4 = cq; c4 < wp4; c4 += 8, qd += 32)
#pragma unroll
                    for (int x = 0; x < 4; x++) {
                        const int32_t c = 4 * c4 + x;
                        qd[x] = ok ? __ldg(c < kv_rank ? ql + c : qp + (c - kv_rank)) : 0.0f;
                    }
            }
            mla_cp_async_commit();
        };
        auto frags_q = [&](int32_t half) {
#pragma unroll
            for (int m2 = 0; m2 < 2; m2++)
#pragma unroll
                for (int s = 0; s < TCB_KS; s++) {
                    const int mt = 2 * half + m2;
                    float4 lo = make_float4(0.0f, 0.0f, 0.0f, 0.0f), hi = lo;
                    const int32_t k16 = ka + s;
                    if (s < ksw) {
                        const int32_t c = 32 * (k16 >> 1) + 8 * ft + 4 * (k16 & 1);
                        const float *ra = qb + (size_t)(m2 * 16 + fg) * ldk + c;
                        lo = *reinterpret_cast<const float4 *>(ra);
                        hi = *reinterpret_cast<const float4 *>(ra + 8 * ldk);
                    }
                    qf[mt][s][0] = mla_bf16x2(lo.x, lo.y); /* (head fg, k 2 ft, 2 ft + 1) */
                    qf[mt][s][1] = mla_bf16x2(hi.x, hi.y); /* (head fg + 8, k 2 ft, 2 ft + 1) */
                    qf[mt][s][2] = mla_bf16x2(lo.z, lo.w); /* (head fg, k 2 ft + 8, 2 ft + 9) */
                    qf[mt][s][3] = mla_bf16x2(hi.z, hi.w); /* (head fg + 8, k 2 ft + 8, 2 ft + 9) */
                }
        };
        stage_q(0);
        mla_cp_async_wait<0>(); /* tile 0 too: the loop waits for it first anyway */
        __syncthreads();
        frags_q(0);
        __syncthreads(); /* every read of the first half done */
        stage_q(1);
        mla_cp_async_wait<0>();
        __syncthreads();
        frags_q(1);
        /* the loop's barrier (a) orders these reads before tile 1's copies into buffer 1 */
    }

    /* softmax ownership: heads sh and sh + 32, slots 4 sq .. 4 sq + 3 */
    const int sh = tid >> 3, sq = tid & 7;
    float m_run[2] = {-INFINITY, -INFINITY}, l_run[2] = {0.0f, 0.0f};
    bool poison[2] = {false, false};
    bool any_valid = false, inf_seen = false;
    /* P . V ownership: this warp's output columns, nnt n-tiles of 8, all four m-tiles */
    const int32_t vc0 = warp * (kv_rank / 8), nnt = KSW ? 8 : kv_rank / 64;
    float o[4][8][4];
#pragma unroll
    for (int mt = 0; mt < 4; mt++)
#pragma unroll
        for (int nt = 0; nt < 8; nt++)
            o[mt][nt][0] = o[mt][nt][1] = o[mt][nt][2] = o[mt][nt][3] = 0.0f;
    /* P's A fragments by ldmatrix.x4: lanes 8 j .. 8 j + 7 address the rows of 8 x 8 matrix j
     * (rows (j & 1) * 8 + lane % 8, columns (j >> 1) * 8 .. + 7), the standard m16n8k16 layout */
    const uint32_t pa = (uint32_t)__cvta_generic_to_shared(
        ps + ((lane & 7) + ((lane >> 3) & 1) * 8) * TCB_PLB + (lane >> 4) * 8);

    for (int32_t k = 0; k < n_k; k++) {
        mla_cp_async_wait<0>();
        __syncthreads(); /* (a) tile k visible; tile k - 1's buffer, sp, ps and alpha_s free */
        if (k + 1 < n_k) issue(k + 1);
        stage(k + 2);
        float *buf = ks + (size_t)(k & 1) * TCB_JT * ldk;
        const int32_t *rt = rows_s + (k % 3) * TCB_JT;

        /* 1. this warp's partial logits, an n-tile of 8 slots at a time */
        {
            const float *bs = buf + fg * ldk + 8 * ft;
            float *spw = sp + (size_t)warp * TCB_HT * TCB_JT;
            /* not unrolled: unrolled, the four n-tiles' addresses and accumulators spilled 136 B
             * a thread beside q's 80 registers and O's 128 (ptxas, 255 registers) */
#pragma unroll 1
            for (int nt = 0; nt < 4; nt++) {
                float sa[4][4];
#pragma unroll
                for (int mt = 0; mt < 4; mt++) sa[mt][0] = sa[mt][1] = sa[mt][2] = sa[mt][3] = 0.0f;
#pragma unroll
                for (int s = 0; s < TCB_KS; s++) {
                    if (s >= ksw) break;
                    const int32_t k16 = ka + s;
                    const float4 kv4 = *reinterpret_cast<const float4 *>(
                        bs + nt * 8 * ldk + 32 * (k16 >> 1) + 4 * (k16 & 1));
                    const uint32_t b[2] = {mla_bf16x2(kv4.x, kv4.y), mla_bf16x2(kv4.z, kv4.w)};
#pragma unroll
                    for (int mt = 0; mt < 4; mt++) tcb_mma(sa[mt], qf[mt][s], b);
                }
#pragma unroll
                for (int mt = 0; mt < 4; mt++) {
                    const int hr = mt * 16 + fg;
                    const int col = (nt * 8 + 2 * ft) ^ (8 * (fg & 3));
                    *reinterpret_cast<float2 *>(spw + hr * TCB_JT + col) =
                        make_float2(sa[mt][0], sa[mt][1]);
                    *reinterpret_cast<float2 *>(spw + (hr + 8) * TCB_JT + col) =
                        make_float2(sa[mt][2], sa[mt][3]);
                }
            }
        }
        __syncthreads(); /* (b) partials */

        /* 2. logits of heads sh and sh + 32, slots 4 sq .. 4 sq + 3; the online softmax */
        bool vd[4];
#pragma unroll
        for (int x = 0; x < 4; x++) vd[x] = rt[4 * sq + x] >= 0;
#pragma unroll
        for (int hp = 0; hp < 2; hp++) {
            const int hh = sh + 32 * hp;
            const int col = (4 * sq) ^ (8 * (hh & 3));
            float4 d = *reinterpret_cast<const float4 *>(sp + hh * TCB_JT + col);
#pragma unroll
            for (int w = 1; w < 8; w++) {
                const float4 e = *reinterpret_cast<const float4 *>(
                    sp + ((size_t)w * TCB_HT + hh) * TCB_JT + col);
                d.x = __fadd_rn(d.x, e.x);
                d.y = __fadd_rn(d.y, e.y);
                d.z = __fadd_rn(d.z, e.z);
                d.w = __fadd_rn(d.w, e.w);
            }
            const float lg[4] = {__fmul_rn(scale, d.x), __fmul_rn(scale, d.y),
                                 __fmul_rn(scale, d.z), __fmul_rn(scale, d.w)};
            float lm = -INFINITY;
            int nan_here = 0;
#pragma unroll
            for (int x = 0; x < 4; x++) {
                inf_seen |= vd[x] & (fabsf(lg[x]) == INFINITY); /* no branch: | and & */
                if (vd[x]) {
                    any_valid = true;
                    if (lg[x] != lg[x])
                        nan_here = 1;
                    else
                        lm = fmaxf(lm, lg[x]);
                }
            }
#pragma unroll
            for (int off = 1; off < 8; off <<= 1)
                lm = fmaxf(lm, __shfl_xor_sync(0xffffffffu, lm, off));
            const uint32_t nan_lanes = __ballot_sync(0xffffffffu, nan_here != 0);
            poison[hp] = poison[hp] || ((nan_lanes >> (lane & 24)) & 0xFFu) != 0;
            const float m_new = fmaxf(m_run[hp], lm);
            const bool live = m_new != -INFINITY;
            float alpha = 1.0f;
            if (live) alpha = expf(m_run[hp] - m_new); /* m_run = -inf: 0; same max: exactly 1 */
            float p[4];
#pragma unroll
            for (int x = 0; x < 4; x++)
                p[x] = (live && vd[x] && lg[x] == lg[x]) ? expf(lg[x] - m_new) : 0.0f;
            *reinterpret_cast<uint2 *>(ps + hh * TCB_PLB + 4 * sq) =
                make_uint2(mla_bf16x2(p[0], p[1]), mla_bf16x2(p[2], p[3]));
            float ls = __fadd_rn(__fadd_rn(__fadd_rn(p[0], p[1]), p[2]), p[3]);
#pragma unroll
            for (int off = 1; off < 8; off <<= 1)
                ls = __fadd_rn(ls, __shfl_xor_sync(0xffffffffu, ls, off));
            l_run[hp] = __fmaf_rn(l_run[hp], alpha, ls);
            m_run[hp] = m_new;
            if (sq == 0) alpha_s[hh] = alpha;
        }
        __syncthreads(); /* (c) P, alpha */

        /* 3. O = O * alpha + P . V over this warp's columns, all four m-tiles */
#pragma unroll
        for (int mt = 0; mt < 4; mt++) {
            const float a0 = alpha_s[mt * 16 + fg], a1 = alpha_s[mt * 16 + fg + 8];
#pragma unroll
            for (int nt = 0; nt < 8; nt++) {
                if (nt >= nnt) break;
                o[mt][nt][0] = __fmul_rn(o[mt][nt][0], a0);
                o[mt][nt][1] = __fmul_rn(o[mt][nt][1], a0);
                o[mt][nt][2] = __fmul_rn(o[mt][nt][2], a1);
                o[mt][nt][3] = __fmul_rn(o[mt][nt][3], a1);
            }
        }
        const float *bv = buf + 2 * ft * ldk + vc0 + fg;
#pragma unroll
        for (int kk = 0; kk < TCB_JT / 16; kk++) {
            uint32_t a[4][4];
#pragma unroll
            for (int mt = 0; mt < 4; mt++)
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                             : "=r"(a[mt][0]), "=r"(a[mt][1]), "=r"(a[mt][2]), "=r"(a[mt][3])
                             : "r"(pa + (uint32_t)(mt * 16 * TCB_PLB + kk * 16) * 2u));
#pragma unroll
            for (int nt = 0; nt < 8; nt++) {
                if (nt >= nnt) break;
                /* B: slots 16 kk + 2 ft, + 1, + 8, + 9 of column vc0 + 8 nt + fg */
                const float *bk = bv + kk * 16 * ldk + nt * 8;
                const uint32_t b[2] = {mla_bf16x2(bk[0], bk[ldk]),
                                       mla_bf16x2(bk[8 * ldk], bk[9 * ldk])};
#pragma unroll
                for (int mt = 0; mt < 4; mt++) tcb_mma(o[mt][nt], a[mt], b);
            }
        }
        /* no barrier: the next tile's (a) orders these reads before the next writes */
    }

    /* The rare path of an infinite logit (the tf32 arm's): a NaN in a valid row of the chunk
     * poisons every head of the tile. */
    if (__syncthreads_or(inf_seen)) {
        bool nan = false;
        for (int64_t s = c_begin + cr; s < c_end; s += TCB_NT / 8) {
            const int64_t row = walk.row(i, s);
            if (row < 0) continue;
            const float4 *r4 = reinterpret_cast<const float4 *>(cache + row * width);
            for (int32_t c4 = cq; c4 < wp4; c4 += 8) {
                const float4 v = __ldg(r4 + c4);
                nan = nan || v.x != v.x || v.y != v.y || v.z != v.z || v.w != v.w;
            }
        }
        if (__syncthreads_or(nan)) poison[0] = poison[1] = true;
    }
    if (sq == 0) {
#pragma unroll
        for (int hp = 0; hp < 2; hp++) {
            fin_m[sh + 32 * hp] = m_run[hp];
            fin_l[sh + 32 * hp] = l_run[hp];
            fin_p[sh + 32 * hp] = poison[hp] ? 1.0f : 0.0f;
        }
    }
    const bool nonempty = __syncthreads_or(any_valid) != 0; /* also orders fin_* */
    if (n_chunks > 1) {
        /* the partial O, one 16-byte store per (m-tile, n-tile) a lane (the tf32 arm's pairing) */
        const bool odd = ft & 1;
        const int hh = fg + (odd ? 8 : 0);
        const int32_t cb = vc0 + 4 * (ft >> 1);
#pragma unroll
        for (int mt = 0; mt < 4; mt++) {
            const int32_t h = h0 + mt * 16 + hh;
            float *row = ws_o + ((int64_t)chunk * n_qh + i * n_head + h) * kv_rank + cb;
#pragma unroll
            for (int nt = 0; nt < 8; nt++) {
                if (nt >= nnt) break;
                const float *v = o[mt][nt];
                const float r0 = __shfl_xor_sync(0xffffffffu, odd ? v[0] : v[2], 1);
                const float r1 = __shfl_xor_sync(0xffffffffu, odd ? v[1] : v[3], 1);
                if (h < n_head)
                    *reinterpret_cast<float4 *>(row + nt * 8) =
                        odd ? make_float4(r0, r1, v[2], v[3]) : make_float4(v[0], v[1], r0, r1);
            }
        }
        if (sq == 0) {
#pragma unroll
            for (int hp = 0; hp < 2; hp++) {
                const int32_t h = h0 + sh + 32 * hp;
                if (h >= n_head) continue;
                float *ml = ws_ml + ((int64_t)chunk * n_qh + i * n_head + h) * 3;
                ml[0] = m_run[hp];
                ml[1] = l_run[hp];
                ml[2] = !nonempty ? 0.0f : poison[hp] ? 2.0f : 1.0f;
            }
        }
    } else {
        at_store_frags<4>(o_lat, i, n_head, h0, kv_rank, vc0, nnt, o, fin_m, fin_l, fin_p, nonempty,
                          fg, ft);
    }
}

/* ------------------------------------------------------------------------ launchers ------- */

/* The launch plan of both entries (file comment), a function of the shape only: head tile HT
 * (the template arm), chunks, and the workspace of a split walk (n_chunks > 1): for the wgmma arm
 * first q's bf16 tiles (t_q n_hg of MLA_ATTN_WG_Q_BYTES, qb_floats floats), then at ws (the
 * allocation + qb_floats) the partial O [n_chunks][n_qh][kv_rank] (f32, or bf16 where bf16_o: the
 * wgmma arm's) then (m, l, flags) [n_chunks][n_qh][3] at ws + o_floats (16-byte aligned). (m, l,
 * flags) stay last, so a stray write past them leaves the allocation, where the shake build's
 * exact allocation lets memcheck see it (attn_shake's stray_rows cases). */
struct at_launch_plan {
    int32_t ht, n_hg;
    int64_t n_tiles, n_qh, chunk_slots;
    int32_t n_chunks;
    bool bf16_o;
    size_t o_floats, ws_bytes; /* 0 with one chunk */
    size_t qb_floats;          /* the wgmma arm's bf16 q tiles ahead of ws (0: none) */
};

static at_launch_plan at_plan(int32_t n_head, int32_t kv_rank, int32_t t_q, int64_t w_max,
                              int tc = 0) {
    at_launch_plan p;
    /* the bf16 and wgmma door arms (tc 2, 4): 64-head tiles on their own chunks */
    const bool tc64 = tc == 2 || tc == 4;
    p.ht = tc64 ? TCB_HT : kv_rank <= at_cfg<32>::MAX_RANK ? 32 : 8;
    p.n_hg = (n_head + p.ht - 1) / p.ht;
    p.n_tiles = (int64_t)t_q * p.n_hg;
    p.n_qh = (int64_t)t_q * n_head;
    const int64_t cs = tc64 ? mla_attn_tcb_chunk_slots(n_head, t_q, w_max)
                            : mla_attn_chunk_slots(n_head, kv_rank, t_q, w_max); /* mla.h */
    p.chunk_slots = cs;
    p.n_chunks = (int32_t)((w_max + cs - 1) / cs);
    /* the wgmma arm's partials as bf16 (thirty-fifth session): half the bytes of its stores and
     * of the combine's reads; its class pays the rounding (mla_attn_tcw_arith's part_rel) */
    p.bf16_o = tc == 4;
    p.o_floats = 0;
    p.ws_bytes = 0;
    p.qb_floats = 0;
    if (p.n_chunks > 1) {
        const size_t o_elems = (size_t)p.n_chunks * (size_t)p.n_qh * (size_t)kv_rank;
        p.o_floats = p.bf16_o ? (o_elems + 7) / 8 * 4 : o_elems;
        /* q's bf16 tiles first (MLA_ATTN_WG_Q_BYTES a tile, a multiple of 1024: the partials
         * keep the allocation's alignment) */
        if (tc == 4) p.qb_floats = (size_t)p.n_tiles * (MLA_ATTN_WG_Q_BYTES / sizeof(float));
        p.ws_bytes =
            (p.qb_floats + p.o_floats + 3 * (size_t)p.n_chunks * (size_t)p.n_qh) * sizeof(float);
    }
    return p;
}

/* Dynamic shared memory above 48 KiB: set once per device for every instantiation, to the
 * largest request that instantiation can make (so concurrent callers never race on it). */
template <int HT, class Walk> static cudaError_t at_set_attrs(void) {
    const int32_t max_w =
        HT == 32 ? at_cfg<32>::MAX_RANK + MLA_MAX_ROPE : MLA_MAX_RANK + MLA_MAX_ROPE;
    const int bytes = (int)at_smem_bytes<HT>(at_ld(max_w));
    cudaError_t e = cudaFuncSetAttribute(attn_walk_f32<HT, Walk, true>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (e != cudaSuccess) return e;
    e = cudaFuncSetAttribute(attn_walk_f32<HT, Walk, false>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (e != cudaSuccess || HT != 32) return e;
    /* the tensor-core arms (HT 32, float4 rows only): 3xTF32 in the f32 arm's kernel (its own row
     * stride), tf32 its own */
    e = cudaFuncSetAttribute(attn_walk_f32<32, Walk, true, 3>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)at_smem_bytes<32>(at_ld_arm(max_w, 3)));
    if (e != cudaSuccess) return e;
    const int tcb = (int)tca_smem_bytes(MLA_TC_ATTN_MAX_WIDTH);
    e = cudaFuncSetAttribute(attn_tc_f32<Walk, 0, 0>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             tcb);
    if (e != cudaSuccess) return e;
    e = cudaFuncSetAttribute(attn_tc_f32<Walk, 8, 8>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             tcb);
    if (e != cudaSuccess) return e;
    e = cudaFuncSetAttribute(attn_tc_f32<Walk, 9, 8>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             tcb);
    if (e != cudaSuccess) return e;
    e = cudaFuncSetAttribute(attn_tc_f32<Walk, 10, 8>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             tcb);
    if (e != cudaSuccess) return e;
    const int tbb = (int)tcb_smem_bytes(MLA_TC_BF16_MAX_WIDTH);
    e = cudaFuncSetAttribute(attn_tc_bf16<Walk, 0>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             tbb);
    if (e != cudaSuccess) return e;
    e = cudaFuncSetAttribute(attn_tc_bf16<Walk, 8>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             tbb);
    if (e != cudaSuccess) return e;
    return cudaFuncSetAttribute(attn_tc_bf16<Walk, 9>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                tbb);
}

static int at_ensure_attrs(void) {
    static mla_device_once once;
    return mla_device_once_run(once, [] {
        MLA_CUDA_CHECK((at_set_attrs<32, walk_causal>()));
        MLA_CUDA_CHECK((at_set_attrs<8, walk_causal>()));
        MLA_CUDA_CHECK((at_set_attrs<32, walk_list>()));
        MLA_CUDA_CHECK((at_set_attrs<8, walk_list>()));
        MLA_CUDA_CHECK(mla_attn_wg_set_attrs()); /* the wgmma door arm (mla_attn_wg.cu) */
        return 0;
    });
}

/* The tensor-core arms' shapes (the door falls back to the f32 arm otherwise): the HT 32 plan,
 * float4 rows whose width is a whole number of k8 steps, and kv_rank a multiple of 64 (eight
 * warps of whole 8-column P . V tiles). */
static bool at_tc_eligible(const at_launch_plan &p, int32_t kv_rank, int32_t d_rope,
                           const float *cache) {
    const int32_t width = kv_rank + d_rope;
    return p.ht == 32 && (width & 7) == 0 && width <= MLA_TC_ATTN_MAX_WIDTH &&
           kv_rank % (8 * AT_NW) == 0 && kv_rank / AT_NW <= 8 * AT_TC_MAX_NT &&
           (((uintptr_t)cache) & 15) == 0;
}

/* The bf16 arm's shapes (kernels/mla_door.h): kv_rank a multiple of 64 up to 512 (8 warps of
 * whole 8-column P . V tiles), the width a whole number of 32-column blocks up to
 * MLA_TC_BF16_MAX_WIDTH, float4 rows. */
static bool at_tcb_eligible(int32_t kv_rank, int32_t d_rope, const float *cache) {
    const int32_t width = kv_rank + d_rope;
    return kv_rank > 0 && kv_rank % 64 == 0 && kv_rank <= 512 && (width & 31) == 0 &&
           width <= MLA_TC_BF16_MAX_WIDTH && (((uintptr_t)cache) & 15) == 0;
}

/* ws: the plan's workspace (NULL with one chunk). tc: 0 the f32 arm, 1 / 3 a tensor-core arm
 * (only where at_tc_eligible), 2 the bf16 door arm (only where at_tcb_eligible, on its plan), 4
 * the wgmma door arm (only where mla_attn_wg_covers, on the bf16 arm's plan). */
template <class Walk>
static void attn_walk_f32_launch(const at_launch_plan &p, const float *q_lat, const float *q_pe,
                                 const float *cache, Walk walk, float *o_lat, float *ws,
                                 int32_t n_head, int32_t kv_rank, int32_t d_rope, int32_t t_q,
                                 float scale, cudaStream_t st, int tc = 0) {
    const int32_t width = kv_rank + d_rope;
    const bool vec = (width & 3) == 0 && (((uintptr_t)cache) & 15) == 0;
    float *ws_ml = ws ? ws + p.o_floats : NULL;
    const unsigned blocks = (unsigned)(p.n_tiles * p.n_chunks);
    const bool ht32 = p.ht == 32;
    if (tc == 4) { /* the wgmma door arm (mla_attn_wg.cu) on the bf16 arm's plan */
        mla_attn_wg_launch(blocks, q_lat, q_pe, cache, walk, o_lat,
                           reinterpret_cast<__nv_bfloat16 *>(ws), ws_ml, n_head, t_q, scale, p.n_hg,
                           p.chunk_slots, p.n_chunks,
                           p.qb_floats ? reinterpret_cast<uint8_t *>(ws - p.qb_floats) : NULL, st);
        return;
    }
    if (tc == 2) { /* the bf16 door arm: its own kernel on its own plan (64-head tiles) */
        auto tbk = kv_rank != 512 ? attn_tc_bf16<Walk, 0>
                   : width == 512 ? attn_tc_bf16<Walk, 8>
                   : width == 576 ? attn_tc_bf16<Walk, 9>
                                  : attn_tc_bf16<Walk, 0>;
        tbk<<<blocks, TCB_NT, tcb_smem_bytes(width), st>>>(
            q_lat, q_pe, cache, walk, o_lat, ws, ws_ml, n_head, kv_rank, d_rope, t_q, scale, p.n_hg,
            p.chunk_slots, p.n_chunks);
        return;
    }
    if (tc == 1) { /* the tf32 door arm: its own kernel on the same plan */
        /* the constant-width arms at kv_rank 512 with d_rope 0, 64, 128; any other width the
         * general arm */
        auto tck = kv_rank != 512 ? attn_tc_f32<Walk, 0, 0>
                   : width == 512 ? attn_tc_f32<Walk, 8, 8>
                   : width == 576 ? attn_tc_f32<Walk, 9, 8>
                   : width == 640 ? attn_tc_f32<Walk, 10, 8>
                                  : attn_tc_f32<Walk, 0, 0>;
        tck<<<blocks, TCA_NT, tca_smem_bytes(width), st>>>(
            q_lat, q_pe, cache, walk, o_lat, ws, ws_ml, n_head, kv_rank, d_rope, t_q, scale, p.n_hg,
            p.chunk_slots, p.n_chunks);
        return;
    }
    auto kern = tc == 3 ? attn_walk_f32<32, Walk, true, 3>
                : ht32  ? (vec ? attn_walk_f32<32, Walk, true> : attn_walk_f32<32, Walk, false>)
                        : (vec ? attn_walk_f32<8, Walk, true> : attn_walk_f32<8, Walk, false>);
    const int32_t ld = at_ld_arm(width, tc);
    const size_t smem = ht32 ? at_smem_bytes<32>(ld) : at_smem_bytes<8>(ld);
    kern<<<blocks, AT_NT, smem, st>>>(q_lat, q_pe, cache, walk, o_lat, ws, ws_ml, n_head, kv_rank,
                                      d_rope, t_q, scale, p.n_hg, p.chunk_slots, p.n_chunks);
}

/* The split walk's workspace comes from a memory pool of this library's own (one per device),
 * which keeps up to AT_WS_POOL_KEEP bytes of freed workspace reserved between calls. The
 * default pool releases freed memory at every synchronisation (release threshold 0), so each
 * call's cudaMallocAsync after a synchronize allocated afresh: about 50 us per call measured on
 * the H200 (2026-12-01, fourth session: the attention times had a ~53 us intercept in t_kv).
 * The caller's default pool is left untouched. */
#define AT_WS_POOL_KEEP ((uint64_t)64 << 20)
static cudaMemPool_t at_ws_pools[MLA_MAX_DEVICES];

static int at_ensure_ws_pool(cudaMemPool_t *pool) {
    static mla_device_once once;
    int dev = 0;
    MLA_CUDA_CHECK(cudaGetDevice(&dev));
    if (dev >= MLA_MAX_DEVICES) MLA_CUDA_CHECK(cudaErrorInvalidDevice); /* a pool a device id */
    int rc = mla_device_once_run(once, [dev] {
        cudaMemPoolProps props = {};
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = dev;
        MLA_CUDA_CHECK(cudaMemPoolCreate(&at_ws_pools[dev], &props));
        uint64_t keep = AT_WS_POOL_KEEP;
        MLA_CUDA_CHECK(
            cudaMemPoolSetAttribute(at_ws_pools[dev], cudaMemPoolAttrReleaseThreshold, &keep));
        return 0;
    });
    *pool = at_ws_pools[dev];
    return rc;
}

/* ws: the plan's workspace, n_chunks > 1, its partials of element type P (the plan's bf16_o). */
template <class P>
static void attn_combine_launch_of(const at_launch_plan &p, const float *ws, float *o_lat,
                                   int32_t kv_rank, cudaStream_t st) {
    /* two columns a thread where kv_rank is even and o_lat 8-byte aligned (every row of the
     * workspace and of o_lat then starts 8-byte aligned), else one */
    const int vec = kv_rank % 2 == 0 && ((uintptr_t)o_lat & 7u) == 0 ? 2 : 1;
    dim3 grid((unsigned)p.n_qh, (unsigned)((kv_rank + vec * AC_NT - 1) / (vec * AC_NT)));
    auto kern = vec == 2
                    ? (p.n_chunks > 32 ? attn_combine_f32<32, 2, P> : attn_combine_f32<16, 2, P>)
                    : (p.n_chunks > 32 ? attn_combine_f32<32, 1, P> : attn_combine_f32<16, 1, P>);
    kern<<<grid, AC_NT, 0, st>>>(reinterpret_cast<const P *>(ws), ws + p.o_floats, o_lat, p.n_qh,
                                 kv_rank, p.n_chunks);
}
static void attn_combine_f32_launch(const at_launch_plan &p, const float *ws, float *o_lat,
                                    int32_t kv_rank, cudaStream_t st) {
    if (p.bf16_o) /* the wgmma arm's bf16 partials */
        attn_combine_launch_of<__nv_bfloat16>(p, ws, o_lat, kv_rank, st);
    else
        attn_combine_launch_of<float>(p, ws, o_lat, kv_rank, st);
}

/* What both entries do once validated and opted in (file comment). */
template <class Walk>
static int attn_walk_run(const float *q_lat, const float *q_pe, const float *cache, Walk walk,
                         int64_t w_max, float *o_lat, int32_t n_head, int32_t kv_rank,
                         int32_t d_rope, int32_t t_q, float scale, cudaStream_t st, int tc = 0) {
    const at_launch_plan p = at_plan(n_head, kv_rank, t_q, w_max, tc);
    if (tc == 4   ? !(mla_attn_wg_covers(kv_rank, d_rope, cache) && mla_attn_wg_ready())
        : tc == 2 ? !at_tcb_eligible(kv_rank, d_rope, cache)
                  : tc && !at_tc_eligible(p, kv_rank, d_rope, cache))
        return MLA_TC_ATTN_DECLINED;
    float *ws_base = NULL; /* the allocation: the wgmma arm's q tiles, then ws (at_plan) */
    if (p.n_chunks > 1) {
#if defined(MLA_SHAKE_ATTN)
        /* SHAKE: the workspace its own allocation of exactly ws_bytes (cudaMalloc, freed after
         * the combine), so compute-sanitizer's memcheck reports a write past its end. From the
         * pool it did not: the wgmma arm's mutant "ha <= n_head" writes a partial row past the
         * workspace's end at 3 heads (partial_heads__wgmma) and survived memcheck (thirty-second
         * session, call 2; attn_shake's stray_rows__wgmma) */
        MLA_CUDA_CHECK(cudaMalloc((void **)&ws_base, p.ws_bytes));
        /* SHAKE (test-only, never in a product build: //kernels:mla_kernels_shake,
         * docs/mutation.md): the workspace all NaN (0xFF bytes) before the walk, so a partial the
         * walk leaves unwritten reaches the combine as NaN, which an empty partial's weight 0
         * does not remove, not as the finite stale values a pool allocation holds */
        MLA_CUDA_CHECK(cudaMemsetAsync(ws_base, 0xFF, p.ws_bytes, st));
#else
        cudaMemPool_t pool;
        const int rc = at_ensure_ws_pool(&pool);
        if (rc) return rc;
        MLA_CUDA_CHECK(cudaMallocFromPoolAsync((void **)&ws_base, p.ws_bytes, pool, st));
#endif
    }
    float *ws = ws_base ? ws_base + p.qb_floats : NULL;
    attn_walk_f32_launch(p, q_lat, q_pe, cache, walk, o_lat, ws, n_head, kv_rank, d_rope, t_q,
                         scale, st, tc);
    cudaError_t launch = cudaGetLastError();
    if (launch == cudaSuccess && p.n_chunks > 1) {
        attn_combine_f32_launch(p, ws, o_lat, kv_rank, st);
        launch = cudaGetLastError();
    }
#if defined(MLA_SHAKE_ATTN)
    if (ws_base) MLA_CUDA_CHECK(cudaFree(ws_base)); /* synchronizes: after both kernels */
#else
    if (ws_base)
        MLA_CUDA_CHECK(cudaFreeAsync(ws_base, st)); /* stream-ordered: after both kernels */
#endif
    MLA_CUDA_CHECK(launch);
    return 0;
}

extern "C" int memra_mla_attn_absorbed_f32(const float *q_lat, const float *q_pe,
                                           const float *cache, float *o_lat, int32_t n_head,
                                           int32_t kv_rank, int32_t d_rope, int32_t t_q,
                                           int32_t t_kv, float scale, void *stream) {
    int rc = mla_validate_attn_absorbed(q_lat, q_pe, cache, o_lat, n_head, kv_rank, d_rope, t_q,
                                        t_kv, scale);
    if (rc) return rc;
    rc = at_ensure_attrs();
    if (rc) return rc;
    walk_causal walk = {t_kv, t_q};
    return attn_walk_run(q_lat, q_pe, cache, walk, t_kv, o_lat, n_head, kv_rank, d_rope, t_q, scale,
                         (cudaStream_t)stream);
}

extern "C" int memra_mla_attn_gathered_f32(const float *q_lat, const float *q_pe,
                                           const float *cache, const int32_t *idx, float *o_lat,
                                           int32_t n_head, int32_t kv_rank, int32_t d_rope,
                                           int32_t t_q, int32_t n_slots, float scale,
                                           void *stream) {
    int rc = mla_validate_attn_gathered(q_lat, q_pe, cache, idx, o_lat, n_head, kv_rank, d_rope,
                                        t_q, n_slots, scale);
    if (rc) return rc;
    rc = at_ensure_attrs();
    if (rc) return rc;
    walk_list walk = {idx, n_slots};
    return attn_walk_run(q_lat, q_pe, cache, walk, n_slots, o_lat, n_head, kv_rank, d_rope, t_q,
                         scale, (cudaStream_t)stream);
}

/* ---- the tensor-core arms, through the MEMRA_MLA_TC_ATTN door (kernels/mla_door.h) ---------
 * Same validation and codes as the launchers above; MLA_TC_ATTN_DECLINED (nothing launched)
 * where the shape is not one the arms cover, so the door falls back to the f32 arm. */
extern "C" int mla_attn_absorbed_tc_f32(const float *q_lat, const float *q_pe, const float *cache,
                                        float *o_lat, int32_t n_head, int32_t kv_rank,
                                        int32_t d_rope, int32_t t_q, int32_t t_kv, float scale,
                                        int tc, void *stream) {
    int rc = mla_validate_attn_absorbed(q_lat, q_pe, cache, o_lat, n_head, kv_rank, d_rope, t_q,
                                        t_kv, scale);
    if (rc) return rc;
    if (tc < 1 || tc > 4) return MLA_TC_ATTN_DECLINED;
    rc = at_ensure_attrs();
    if (rc) return rc;
    walk_causal walk = {t_kv, t_q};
    return attn_walk_run(q_lat, q_pe, cache, walk, t_kv, o_lat, n_head, kv_rank, d_rope, t_q, scale,
                         (cudaStream_t)stream, tc);
}

extern "C" int mla_attn_gathered_tc_f32(const float *q_lat, const float *q_pe, const float *cache,
                                        const int32_t *idx, float *o_lat, int32_t n_head,
                                        int32_t kv_rank, int32_t d_rope, int32_t t_q,
                                        int32_t n_slots, float scale, int tc, void *stream) {
    int rc = mla_validate_attn_gathered(q_lat, q_pe, cache, idx, o_lat, n_head, kv_rank, d_rope,
                                        t_q, n_slots, scale);
    if (rc) return rc;
    if (tc < 1 || tc > 4) return MLA_TC_ATTN_DECLINED;
    rc = at_ensure_attrs();
    if (rc) return rc;
    walk_list walk = {idx, n_slots};
    return attn_walk_run(q_lat, q_pe, cache, walk, n_slots, o_lat, n_head, kv_rank, d_rope, t_q,
                         scale, (cudaStream_t)stream, tc);
}
