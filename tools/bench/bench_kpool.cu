/* bench_kpool.cu: checks, then times, the DSA k-pool indexer kernels (kernels/mla_kpool.cu).
 *
 *   bench_kpool [--quick]
 *
 * 1. Machine floors measured in the same run: D2D copy bandwidth (cudaMemcpy of 1 GiB, bytes
 *    read + written) and the f32 FMA rate (independent fmaf chains over the whole GPU).
 * 2. Small-shape checks against the CPU oracle (oracle/mla_oracle.h) and between the GPU twins:
 *    append (bytes), pool keys (flat == ring == incremental bytes; oracle max ulp), score
 *    (fast == ref == oracle bytes, NaN / -0 / inf injected), select (radix == ref == oracle bytes
 *    on random, tie-heavy and special-value rows, every radix path), gathered attention (oracle
 *    max error, run-to-run bytes).
 * 3. The shipped long-context shape (mla_geom_longctx_kpool(), tests/lib/geometry.h: t_q 512,
 *    heads 32, d 128, pool 4, 1M cached rows = 262144 pools, select_k 512, width 2051): fast vs
 *    reference timings, memcmp of fast vs ref bytes, peak device memory of the indexer step;
 *    gathered attention at glm5 (mla_geom_glm5_kpool()).
 * Inputs come from the golden fixtures' Philox generator (tests/lib/mla_fill.h), keyed by a seed
 * and the tensor's name: float tensors are MLA_FILL_REALISTIC fills (on the host for the small
 * checks, whose oracle needs them; on the device at the shipped shape), discrete draws (indices,
 * picks, score levels) come from mla_fill_stream. Each small check draws under its own seed.
 * Timings are the median of >= 20 warm launches, CUDA events. A markdown table is printed last.
 * With MLA_BENCH_JSON set, the timed rows also go to that file as JSON for tools/ledger.py
 * (tools/bench/bench_json.h: median / p10 / p90 us of the launches, the floor, fast == ref bytes,
 * out_sha256 = the SHA-256 of the output the row's timed launches wrote, downloaded right after
 * them: pool keys, score plane (row 0 for t_q 1; the last ref_q queries for the ref scorer),
 * selected indices, gathered o_lat (query 0's for t_q 1)); a failure to write it fails the run
 * (exit 1).
 * Exit status: 0 when every check passed, 1 otherwise (2: no device).
 */
#include "kernels/mla.h"
#include "kernels/mla_door.h"
#include "oracle/mla_oracle.h"
#include "tests/lib/geometry.h"
#include "tests/lib/mla_fill.h"
#include "tools/bench/bench_json.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#define CK(stmt)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (stmt);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "CUDA failure %d (%s) in `%s` at %s:%d\n", (int)e_,                    \
                    cudaGetErrorString(e_), #stmt, __FILE__, __LINE__);                            \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define RC(call)                                                                                   \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != 0) {                                                                            \
            fprintf(stderr, "launcher returned %d in `%s` at %s:%d\n", rc_, #call, __FILE__,       \
                    __LINE__);                                                                     \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static int g_fail = 0;
static void check(int ok, const char *what) {
    printf("  [%s] %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) g_fail = 1;
}

/* ------------------------------------------------------------------ host helpers ---------- */

/* Seeds: the shipped shape draws under BENCH_SEED, small check number k (1, 2, ... in the order
 * main runs them) under BENCH_SEED + k, so the checks' inputs are independent of each other. */
static const uint32_t BENCH_SEED = 1;
static uint32_t g_checks = 0;
static uint32_t check_seed(void) { return BENCH_SEED + ++g_checks; }
/* v = elements 0..size-1 of tensor `name`: uniform on the 2^24-point grid of [-scale, scale) */
static void fill(std::vector<float> &v, uint32_t seed, const char *name, float scale) {
    mla_fill_host_f32(v.data(), v.size(), MLA_FILL_REALISTIC, seed, name, scale);
}
/* a bounded draw: uniform on [0, n) up to a modulo bias below n / 2^32 */
static uint32_t draw_below(mla_fill_stream *s, size_t n) {
    return (uint32_t)(mla_fill_stream_u32(s) % n);
}

template <class T> static T *dev_from(const std::vector<T> &h) {
    T *d = nullptr;
    CK(cudaMalloc(&d, h.size() * sizeof(T) + 16));
    if (!h.empty()) CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}
template <class T> static T *dev_alloc(size_t n, int poison = 1) {
    T *d = nullptr;
    CK(cudaMalloc(&d, n * sizeof(T) + 16));
    if (poison) CK(cudaMemset(d, 0x7F, n * sizeof(T) + 16));
    return d;
}
template <class T> static std::vector<T> dev_to(const T *d, size_t n) {
    std::vector<T> h(n);
    CK(cudaDeviceSynchronize());
    if (n) CK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}
/* the SHA-256 of a host copy's bytes, 64 lowercase hex digits (the JSON rows' out_sha256) */
template <class T> static std::string sha256_of(const std::vector<T> &h) {
    char hex[65];
    bench_json_sha256_hex(h.data(), h.size() * sizeof(T), hex);
    return hex;
}
/* the same of n elements of device memory (downloaded after a device synchronize) */
template <class T> static std::string dev_sha256(const T *d, size_t n) {
    return sha256_of(dev_to(d, n));
}
template <class T> static int same_bytes(const std::vector<T> &a, const std::vector<T> &b) {
    return a.size() == b.size() && memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}
/* class `exact` against the oracle (docs/tolerances.md): bytes, except NaN == NaN whatever the
 * payload or sign (the GPU writes the canonical NaN, the CPU propagates payloads) */
static int same_exact(float a, float b) { return (isnan(a) && isnan(b)) || memcmp(&a, &b, 4) == 0; }
static int same_exact_all(const std::vector<float> &a, const std::vector<float> &b) {
    if (a.size() != b.size()) return 0;
    for (size_t e = 0; e < a.size(); e++)
        if (!same_exact(a[e], b[e])) return 0;
    return 1;
}
static int64_t ulp_dist(float a, float b) {
    if (isnan(a) || isnan(b)) return (isnan(a) && isnan(b)) ? 0 : INT64_MAX;
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    int64_t oa = ia < 0 ? (int64_t)INT32_MIN - ia : ia, ob = ib < 0 ? (int64_t)INT32_MIN - ib : ib;
    return oa > ob ? oa - ob : ob - oa;
}

/* median of reps timed launches of fn (after warm launches), ms; samples, when given, gets every
 * launch's time (sorted) for the JSON's p10 / p90 */
template <class F>
static double time_ms(F fn, int warm = 3, int reps = 20, std::vector<float> *samples = nullptr) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < warm; i++) fn();
    CK(cudaDeviceSynchronize());
    std::vector<float> t(reps);
    for (int i = 0; i < reps; i++) {
        CK(cudaEventRecord(a));
        fn();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        CK(cudaEventElapsedTime(&t[i], a, b));
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    std::sort(t.begin(), t.end());
    if (samples) *samples = t;
    return t[reps / 2];
}

/* ------------------------------------------------------------------ machine floors -------- */

static __global__ void fma_peak_f32(float *out, int iters) {
    float a[8];
#pragma unroll
    for (int k = 0; k < 8; k++) a[k] = threadIdx.x * 1e-3f + k;
    const float b = 0.999f, c = 1e-3f;
    for (int it = 0; it < iters; it++)
#pragma unroll
        for (int k = 0; k < 8; k++) a[k] = fmaf(a[k], b, c);
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 8; k++) s += a[k];
    if (s == 12345.0f) out[0] = s; /* keeps the chains alive */
}

/* ------------------------------------------------------------------ device fills ---------- */

/* p[e] = element e of the tensor named by name_hash (MLA_FILL_REALISTIC, [-scale, scale)) */
static __global__ void fill_realistic_f32(float *p, int64_t n, uint32_t seed, uint32_t name_hash,
                                          float scale) {
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n;
         e += (int64_t)gridDim.x * blockDim.x)
        p[e] = mla_fill_realistic(seed, name_hash, (uint64_t)e, scale);
}
/* p[e] = (word of element e) % levels: integers 0..levels-1, a tie-heavy score plane */
static __global__ void fill_levels_f32(float *p, int64_t n, uint32_t seed, uint32_t name_hash,
                                       uint32_t levels) {
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n;
         e += (int64_t)gridDim.x * blockDim.x)
        p[e] = (float)(mla_fill_word(seed, name_hash, (uint64_t)e) % levels);
}
static void dev_fill(float *p, size_t n, uint32_t seed, const char *name, float scale) {
    fill_realistic_f32<<<1024, 256>>>(p, (int64_t)n, seed, mla_fill_name_hash(name), scale);
    CK(cudaGetLastError());
}

/* ------------------------------------------------------------------ small checks ---------- */

static void check_append(void) {
    const int wa = 5, wb = 3, rows = 7, t = 4, slot = 5;
    const uint32_t seed = check_seed();
    std::vector<float> a(t * wa), b(t * wb), plane(rows * (wa + wb));
    fill(a, seed, "a", 1.0f);
    fill(b, seed, "b", 1.0f);
    fill(plane, seed, "plane", 1.0f);
    std::vector<float> ref = plane;
    oracle_index_append_ring_f32(ref.data(), a.data(), b.data(), slot, t, wa, wb, rows);
    float *dp = dev_from(plane), *da = dev_from(a), *db = dev_from(b);
    RC(memra_mla_index_append_ring_f32(dp, da, db, slot, t, wa, wb, rows, 0));
    check(same_bytes(dev_to(dp, plane.size()), ref), "append ring (wraps) == oracle bytes");
    /* flat plane */
    std::vector<float> flat((slot + t) * (wa + wb), 0.0f), fref = flat;
    oracle_index_append_ring_f32(fref.data(), a.data(), b.data(), slot, t, wa, wb, 0);
    float *df = dev_from(flat);
    RC(memra_mla_index_append_ring_f32(df, da, db, slot, t, wa, wb, 0, 0));
    check(same_bytes(dev_to(df, flat.size()), fref), "append flat == oracle bytes");
    cudaFree(dp), cudaFree(da), cudaFree(db), cudaFree(df);
}

static void check_pool_keys(int pool, int d, int n_pools) {
    const int total = n_pools * pool, ring = pool * std::max(1, n_pools / 2); /* wraps */
    const uint32_t seed = check_seed();
    std::vector<float> state(total * 2 * d), ape(pool * d);
    fill(state, seed, "state", 3.0f);
    fill(ape, seed, "ape", 1.0f);
    /* ring plane: logical row r at r % ring */
    std::vector<float> rstate(ring * 2 * d, NAN);
    for (int r = 0; r < total; r++)
        memcpy(&rstate[(r % ring) * 2 * d], &state[r * 2 * d], 2 * d * sizeof(float));
    std::vector<float> oref(n_pools * d);
    oracle_kpool_pool_keys_f32(state.data(), ape.data(), oref.data(), 0, n_pools, pool, d, 0);
    float *ds = dev_from(state), *dr = dev_from(rstate), *da = dev_from(ape);
    float *k_full = dev_alloc<float>(n_pools * d), *k_inc = dev_alloc<float>(n_pools * d),
          *k_ring = dev_alloc<float>(n_pools * d);
    RC(memra_mla_kpool_pool_keys_f32(ds, da, k_full, 0, n_pools, pool, d, 0, 0));
    for (int p = 0; p < n_pools; p += 3)
        RC(memra_mla_kpool_pool_keys_f32(ds, da, k_inc, p, std::min(p + 3, n_pools), pool, d, 0,
                                         0));
    /* ring build: the last ring/pool pools are resident */
    const int rb = std::max(0, n_pools - ring / pool);
    RC(memra_mla_kpool_pool_keys_f32(dr, da, k_ring, rb, n_pools, pool, d, ring, 0));
    auto full = dev_to(k_full, n_pools * d), inc = dev_to(k_inc, n_pools * d),
         rng = dev_to(k_ring, n_pools * d);
    /* class pool_key: |kernel - oracle| <= tau * M per key (docs/tolerances.md) */
    const double u = ldexp(1.0, -24), gP = pool * u / (1 - pool * u);
    int64_t worst = 0;
    double worst_ratio = 0;
    for (int p = 0; p < n_pools; p++)
        for (int c = 0; c < d; c++) {
            double G = 0, M = 0;
            for (int sl = 0; sl < pool; sl++) {
                const size_t r = (size_t)(p * pool + sl) * 2 * d;
                G = std::max(G, fabs((double)state[r + d + c] + (double)ape[sl * d + c]));
                M = std::max(M, fabs((double)state[r + c]));
            }
            const double tau = expm1(2 * (3 * G + 4) * u) + 2 * gP + 3 * u;
            const size_t e = (size_t)p * d + c;
            const double err = fabs((double)full[e] - (double)oref[e]);
            worst_ratio = std::max(worst_ratio, err / (tau * M));
            worst = std::max(worst, ulp_dist(full[e], oref[e]));
        }
    char msg[200];
    snprintf(msg, sizeof msg, "pool keys pool=%d d=%d: full == incremental bytes", pool, d);
    check(same_bytes(full, inc), msg);
    snprintf(msg, sizeof msg, "pool keys pool=%d d=%d: ring (pools >= %d) == flat bytes", pool, d,
             rb);
    check(memcmp(&rng[(size_t)rb * d], &full[(size_t)rb * d], (size_t)(n_pools - rb) * d * 4) == 0,
          msg);
    snprintf(msg, sizeof msg,
             "pool keys pool=%d d=%d: vs oracle worst err / pool_key bound = %.3f (max %lld ulp)",
             pool, d, worst_ratio, (long long)worst);
    check(worst_ratio <= 1.0, msg);
    cudaFree(ds), cudaFree(dr), cudaFree(da), cudaFree(k_full), cudaFree(k_inc), cudaFree(k_ring);
}

static void check_score(int t_q, int heads, int d, int n_pools, int pool, int first_pos,
                        int specials, int misalign) {
    const uint32_t seed = check_seed();
    std::vector<float> q((size_t)t_q * heads * d), keys((size_t)n_pools * d),
        hw((size_t)t_q * heads);
    fill(q, seed, "q", 1.0f);
    fill(keys, seed, "keys", 1.0f);
    fill(hw, seed, "hw", 1.0f);
    if (specials) { /* where the special values land */
        mla_fill_stream st = mla_fill_stream_init(seed, "specials");
        for (int e = 0; e < 5; e++) {
            keys[draw_below(&st, keys.size())] = -0.0f;
            q[draw_below(&st, q.size())] = 0.0f;
        }
        keys[draw_below(&st, keys.size())] = NAN;
        keys[draw_below(&st, keys.size())] = INFINITY;
        hw[draw_below(&st, hw.size())] = 0.0f;
        q[draw_below(&st, q.size())] = 1e-30f;
    }
    const float qk = 1.0f / sqrtf((float)d), hs = 1.0f / sqrtf((float)heads);
    std::vector<float> oref((size_t)t_q * n_pools);
    oracle_kpool_score_f32(q.data(), keys.data(), hw.data(), oref.data(), t_q, heads, d, n_pools,
                           pool, first_pos, qk, hs);
    /* misalign: pass q and keys one float past a 16-byte boundary (scalar cp.async path) */
    std::vector<float> q2(q.size() + 1), k2(keys.size() + 1);
    memcpy(q2.data() + misalign, q.data(), q.size() * 4);
    memcpy(k2.data() + misalign, keys.data(), keys.size() * 4);
    float *dq = dev_from(q2), *dk = dev_from(k2), *dh = dev_from(hw);
    float *s_fast = dev_alloc<float>(oref.size()), *s_ref = dev_alloc<float>(oref.size());
    RC(memra_mla_kpool_score_f32(dq + misalign, dk + misalign, dh, s_fast, t_q, heads, d, n_pools,
                                 pool, first_pos, qk, hs, 0));
    RC(memra_mla_kpool_score_ref_f32(dq + misalign, dk + misalign, dh, s_ref, t_q, heads, d,
                                     n_pools, pool, first_pos, qk, hs, 0));
    auto f = dev_to(s_fast, oref.size()), r = dev_to(s_ref, oref.size());
    char msg[240];
    snprintf(msg, sizeof msg,
             "score t_q=%d heads=%d d=%d n_pools=%d pool=%d first_pos=%d%s%s: fast == ref bytes, "
             "== oracle (class exact)",
             t_q, heads, d, n_pools, pool, first_pos, specials ? " specials" : "",
             misalign ? " misaligned" : "");
    int ok = same_bytes(f, r) && same_exact_all(r, oref);
    if (!ok)
        for (size_t e = 0, shown = 0; e < f.size() && shown < 4; e++)
            if (memcmp(&f[e], &r[e], 4) || !same_exact(r[e], oref[e])) {
                printf("    mismatch at (%zu, %zu): fast %a ref %a oracle %a\n", e / n_pools,
                       e % n_pools, f[e], r[e], oref[e]);
                shown++;
            }
    check(ok, msg);
    cudaFree(dq), cudaFree(dk), cudaFree(dh), cudaFree(s_fast), cudaFree(s_ref);
}

/* mode 0 random, 1 few distinct values (ties), 2 specials (NaN, +-inf, +-0), 3 all equal */
static void make_scores(std::vector<float> &s, uint32_t seed, int mode) {
    mla_fill_stream st = mla_fill_stream_init(seed, "scores");
    for (auto &x : s) {
        switch (mode) {
        case 0: x = mla_fill_stream_uniform(&st, -2.0f, 10.0f); break;
        case 1: x = (float)draw_below(&st, 5); break;
        case 2: {
            const float v[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1.0f, -1.0f, 3.5f};
            x = v[draw_below(&st, sizeof v / sizeof v[0])];
            break;
        }
        default: x = 2.0f; break;
        }
    }
}

/* the oracle's selected prefix sorted ascending (docs/kpool.md step 4); reports whether the
 * oracle already lists it ascending */
static void oracle_select_ascending(std::vector<int32_t> &idx, int t_q, int n_pools, int pool,
                                    int select_k, int width, int first_pos, int *was_sorted) {
    for (int i = 0; i < t_q; i++) {
        int64_t qr = (int64_t)first_pos + i, nv = std::min<int64_t>(n_pools, (qr + 1) / pool);
        int64_t ns = std::min<int64_t>(nv, select_k) * pool;
        int32_t *row = &idx[(size_t)i * width];
        if (!std::is_sorted(row, row + ns)) *was_sorted = 0;
        std::sort(row, row + ns);
    }
}

static void check_select(int t_q, int n_pools, int pool, int select_k, int first_pos, int tail,
                         int mode, const char *label) {
    const int width = select_k * pool + pool - 1 + 3;
    std::vector<float> s((size_t)t_q * n_pools);
    make_scores(s, check_seed(), mode);
    std::vector<int32_t> oref((size_t)t_q * width);
    oracle_kpool_select_f32(s.data(), oref.data(), t_q, n_pools, pool, select_k, width, first_pos,
                            tail);
    int sorted = 1;
    oracle_select_ascending(oref, t_q, n_pools, pool, select_k, width, first_pos, &sorted);
    float *ds = dev_from(s);
    int32_t *i_fast = dev_alloc<int32_t>(oref.size()), *i_ref = dev_alloc<int32_t>(oref.size());
    RC(memra_mla_kpool_select_f32(ds, i_fast, t_q, n_pools, pool, select_k, width, first_pos, tail,
                                  0));
    RC(memra_mla_kpool_select_ref_f32(ds, i_ref, t_q, n_pools, pool, select_k, width, first_pos,
                                      tail, 0));
    auto f = dev_to(i_fast, oref.size()), r = dev_to(i_ref, oref.size());
    char msg[240];
    snprintf(msg, sizeof msg,
             "select %s t_q=%d n_pools=%d pool=%d k=%d first_pos=%d tail=%d: radix == ref == "
             "oracle bytes%s",
             label, t_q, n_pools, pool, select_k, first_pos, tail,
             sorted ? "" : " (oracle listed rank order; compared after sorting its prefix)");
    int ok = same_bytes(f, r) && same_bytes(r, oref);
    if (!ok)
        for (size_t e = 0, shown = 0; e < f.size() && shown < 4; e++)
            if (f[e] != oref[e] || r[e] != oref[e]) {
                printf("    mismatch at (%zu, %zu): radix %d ref %d oracle %d\n", e / width,
                       e % width, f[e], r[e], oref[e]);
                shown++;
            }
    check(ok, msg);
    cudaFree(ds), cudaFree(i_fast), cudaFree(i_ref);
}

static void check_gathered(int n_head, int kv_rank, int d_rope, int t_q, int n_slots, int t_kv) {
    const int D = kv_rank + d_rope;
    const uint32_t seed = check_seed();
    std::vector<float> ql((size_t)t_q * n_head * kv_rank), qp((size_t)t_q * n_head * d_rope + 1),
        cache((size_t)t_kv * D);
    fill(ql, seed, "q_lat", 1.0f);
    fill(qp, seed, "q_pe", 1.0f);
    fill(cache, seed, "cache", 1.0f);
    /* slots: query 1 all empty (-1), else one in 5 empty, the rest uniform over the t_kv rows */
    mla_fill_stream st = mla_fill_stream_init(seed, "idx");
    std::vector<int32_t> idx((size_t)t_q * n_slots);
    for (int i = 0; i < t_q; i++)
        for (int s = 0; s < n_slots; s++) {
            int32_t v = -1;
            if (i != 1 && draw_below(&st, 5) != 0) v = (int32_t)draw_below(&st, (size_t)t_kv);
            idx[(size_t)i * n_slots + s] = v;
        }
    const float scale = MLA_GLM5_SCALE; /* the glm5 softmax scale at every check shape */
    std::vector<float> oref((size_t)t_q * n_head * kv_rank);
    oracle_attn_gathered_f32(ql.data(), qp.data(), cache.data(), idx.data(), oref.data(), n_head,
                             kv_rank, d_rope, t_q, n_slots, scale);
    float *dql = dev_from(ql), *dqp = dev_from(qp), *dc = dev_from(cache);
    int32_t *di = dev_from(idx);
    float *o1 = dev_alloc<float>(oref.size()), *o2 = dev_alloc<float>(oref.size());
    RC(memra_mla_attn_gathered_f32(dql, dqp, dc, di, o1, n_head, kv_rank, d_rope, t_q, n_slots,
                                   scale, 0));
    RC(memra_mla_attn_gathered_f32(dql, dqp, dc, di, o2, n_head, kv_rank, d_rope, t_q, n_slots,
                                   scale, 0));
    auto a = dev_to(o1, oref.size()), b = dev_to(o2, oref.size());
    double worst = 0;
    int nan_bad = 0;
    for (size_t e = 0; e < a.size(); e++) {
        if (isnan(a[e]) != isnan(oref[e]))
            nan_bad++;
        else if (!isnan(a[e]))
            worst = std::max(worst, (double)fabsf(a[e] - oref[e]));
    }
    char msg[200];
    snprintf(msg, sizeof msg,
             "gathered heads=%d rank=%d rope=%d t_q=%d slots=%d: max abs err %.3g vs oracle, "
             "run-to-run bytes equal",
             n_head, kv_rank, d_rope, t_q, n_slots, worst);
    check(same_bytes(a, b) && nan_bad == 0 && worst < 1e-5, msg);
    cudaFree(dql), cudaFree(dqp), cudaFree(dc), cudaFree(di), cudaFree(o1), cudaFree(o2);
}

/* ------------------------------------------------------------------ main ------------------ */

int main(int argc, char **argv) {
    const int quick = argc > 1 && !strcmp(argv[1], "--quick");
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("no CUDA device: nothing measured\n");
        return 2;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);

    /* 1. floors */
    double copy_gbs, fma_tfma;
    {
        const size_t bytes = (size_t)1 << 30;
        void *a, *b;
        CK(cudaMalloc(&a, bytes));
        CK(cudaMalloc(&b, bytes));
        CK(cudaMemset(a, 1, bytes));
        double ms = time_ms([&] { CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); });
        copy_gbs = 2.0 * bytes / (ms * 1e-3) / 1e9;
        cudaFree(a), cudaFree(b);
        float *o;
        CK(cudaMalloc(&o, 4));
        const int blocks = prop.multiProcessorCount * 8, iters = 8192;
        ms = time_ms([&] { fma_peak_f32<<<blocks, 256>>>(o, iters); });
        fma_tfma = (double)blocks * 256 * iters * 8 / (ms * 1e-3) / 1e12;
        cudaFree(o);
        printf("copy bandwidth %.0f GB/s (read + write), f32 FMA %.2f TFMA/s (%.1f TFLOP/s)\n",
               copy_gbs, fma_tfma, 2 * fma_tfma);
    }

    /* 2. small checks */
    printf("checks:\n");
    check_append();
    check_pool_keys(MLA_GLM5_NEXT_POOL, MLA_INDEXER_DIM, 9);
    check_pool_keys(1, 7, 5);
    check_pool_keys(64, 3, 4);
    check_score(1, MLA_INDEXER_HEADS, MLA_INDEXER_DIM, 300, 4, 1199 - 4, 1, 0);
    check_score(5, 3, 7, 130, 1, 100, 1, 0);
    check_score(3, 7, 130, 300, 4, 1190, 1, 0);
    check_score(4, MLA_INDEXER_HEADS, MLA_INDEXER_DIM, 1000, 4, 3996, 1, 1);
    check_score(70, MLA_INDEXER_HEADS, MLA_INDEXER_DIM, 300, 4, 1120, 1, 0);
    check_score(130, 5, 130, 257, 2, 300, 1, 0);
    check_score(131, 2, 200, 140, 1, 2, 0, 1);
    check_score(9, 1, 1, 40, 3, 0, 0, 0);
    check_score(64, 4, 64, 200, 4, 300, 0, 1);
    check_select(6, 1000, 4, 10, 3990, 1, 0, "random");
    check_select(6, 1000, 4, 10, 3990, 1, 1, "ties");
    check_select(6, 1000, 4, 10, 3990, 0, 2, "specials");
    check_select(6, 1000, 4, 10, 3990, 1, 3, "all-equal");
    check_select(4, 20000, 1, 2048, 19990, 0, 0, "random-k2048");
    check_select(3, 20000, 1, 9000, 19996, 0, 1, "ties-k9000(fallback)");
    check_select(3, 30000, 1, 9000, 29997, 1, 0, "random-k9000(fallback)");
    check_select(4, 40000, 2, 300, 80000 - 5, 1, 3, "all-equal-big(fallback)");
    check_select(5, 50, 4, 64, 2, 1, 0, "few-visible");
    check_select(3, 0, 4, 3, 0, 1, 0, "no-pools");
    check_select(7, 4001, 3, 17, 11990, 1, 0, "unaligned-rows");
    check_gathered(MLA_GLM5_N_HEAD, MLA_GLM5_KV_RANK, MLA_GLM5_D_ROPE, 3, 300, 1000);
    check_gathered(5, 33, 6, 4, 40, 100);
    check_gathered(3, 700, 2, 2, 50, 80);

    /* 3. shipped shape: the long-context indexer step, queries the last t_q of `rows` rows */
    const mla_geom lc = mla_geom_longctx_kpool();
    const int t_q = lc.t_q, heads = lc.idx_heads, d = lc.idx_dim, pool = lc.pool;
    const int n_pools = lc.n_pools, select_k = lc.select_k, width = lc.width;
    const int rows = lc.t_kv, first_pos = lc.first_pos, tail = lc.always_tail;
    printf("shipped shape: t_q %d heads %d d %d pool %d n_pools %d select_k %d width %d\n", t_q,
           heads, d, pool, n_pools, select_k, width);
    size_t free0, free1, total;
    CK(cudaDeviceSynchronize());
    CK(cudaMemGetInfo(&free0, &total));
    const size_t b_state = (size_t)rows * 2 * d * 4, b_ape = (size_t)pool * d * 4,
                 b_keys = (size_t)n_pools * d * 4, b_q = (size_t)t_q * heads * d * 4,
                 b_hw = (size_t)t_q * heads * 4, b_score = (size_t)t_q * n_pools * 4,
                 b_idx = (size_t)t_q * width * 4;
    float *state, *ape, *keys, *q, *hw, *score, *score2, *score_ref;
    int32_t *idx_fast, *idx_ref;
    CK(cudaMalloc(&state, b_state));
    CK(cudaMalloc(&ape, b_ape));
    CK(cudaMalloc(&keys, b_keys));
    CK(cudaMalloc(&q, b_q));
    CK(cudaMalloc(&hw, b_hw));
    CK(cudaMalloc(&score, b_score));
    CK(cudaMalloc(&idx_fast, b_idx));
    CK(cudaDeviceSynchronize());
    CK(cudaMemGetInfo(&free1, &total));
    const size_t step_bytes = b_state + b_ape + b_keys + b_q + b_hw + b_score + b_idx;
    printf("indexer step buffers: %.1f MiB summed, %.1f MiB by cudaMemGetInfo; kernel workspace 0 "
           "(selection scratch lives in shared memory)\n",
           step_bytes / 1048576.0, (free0 - free1) / 1048576.0);
    CK(cudaMalloc(&score2, b_score));
    const int ref_q = 4; /* reference scorer on a subset of queries: O(t_q * n_pools) blocks */
    CK(cudaMalloc(&score_ref, (size_t)ref_q * n_pools * 4));
    CK(cudaMalloc(&idx_ref, b_idx));
    dev_fill(state, (size_t)rows * 2 * d, BENCH_SEED, "idx_state", 2.0f);
    dev_fill(q, (size_t)t_q * heads * d, BENCH_SEED, "idx_q", 1.0f);
    dev_fill(hw, (size_t)t_q * heads, BENCH_SEED, "idx_hw", 1.0f);
    dev_fill(ape, (size_t)pool * d, BENCH_SEED, "idx_ape", 0.5f);
    const float qk = lc.qk_scale, hs = lc.head_scale;
    const int reps = quick ? 5 : 20;
    /* every timed launch of each row, ms (the JSON's p10 / p90) */
    std::vector<float> s_sel_full, s_sel_ties_full;
    std::vector<float> s_keys, s_score, s_score_ref, s_score_small, s_sel, s_sel_ref, s_sel_ties,
        s_g512, s_g1;

    double t_keys = time_ms(
        [&] { RC(memra_mla_kpool_pool_keys_f32(state, ape, keys, 0, n_pools, pool, d, 0, 0)); }, 2,
        reps, &s_keys);
    const std::string h_keys = dev_sha256(keys, (size_t)n_pools * d);
    double t_score = time_ms(
        [&] {
            RC(memra_mla_kpool_score_f32(q, keys, hw, score, t_q, heads, d, n_pools, pool,
                                         first_pos, qk, hs, 0));
        },
        2, reps, &s_score);
    RC(memra_mla_kpool_score_f32(q, keys, hw, score2, t_q, heads, d, n_pools, pool, first_pos, qk,
                                 hs, 0));
    std::string h_score; /* the fast scorer's whole plane, before the t_q 1 row rewrites row 0 */
    int score_det;
    {
        const auto plane = dev_to(score, (size_t)t_q * n_pools);
        h_score = sha256_of(plane);
        score_det = same_bytes(plane, dev_to(score2, (size_t)t_q * n_pools));
    }
    /* reference rows: queries 0..ref_q-1 and the last ref_q */
    int score_same = 1;
    double t_score_ref = 0;
    std::string h_score_ref; /* the last run's (queries t_q - ref_q..t_q - 1), as its samples */
    for (int i0 : {0, t_q - ref_q}) {
        auto run = [&] {
            RC(memra_mla_kpool_score_ref_f32(q + (size_t)i0 * heads * d, keys,
                                             hw + (size_t)i0 * heads, score_ref, ref_q, heads, d,
                                             n_pools, pool, first_pos + i0, qk, hs, 0));
        };
        t_score_ref = time_ms(run, 1, quick ? 3 : 20, &s_score_ref);
        auto r = dev_to(score_ref, (size_t)ref_q * n_pools);
        h_score_ref = sha256_of(r);
        std::vector<float> f(r.size());
        CK(cudaMemcpy(f.data(), score + (size_t)i0 * n_pools, r.size() * 4,
                      cudaMemcpyDeviceToHost));
        score_same &= same_bytes(f, r);
    }
    printf("checks at the shipped shape:\n");
    char msg[240];
    snprintf(msg, sizeof msg,
             "score fast == ref bytes (memcmp, queries 0..%d and %d..%d, all %d pools)", ref_q - 1,
             t_q - ref_q, t_q - 1, n_pools);
    check(score_same, msg);
    snprintf(msg, sizeof msg, "score fast run-to-run bytes equal (whole %zu MiB plane)",
             b_score >> 20);
    check(score_det, msg);

    double t_sel = time_ms(
        [&] {
            RC(memra_mla_kpool_select_f32(score, idx_fast, t_q, n_pools, pool, select_k, width,
                                          first_pos, tail, 0));
        },
        2, reps, &s_sel);
    double t_sel_ref = time_ms(
        [&] {
            RC(memra_mla_kpool_select_ref_f32(score, idx_ref, t_q, n_pools, pool, select_k, width,
                                              first_pos, tail, 0));
        },
        1, 3, &s_sel_ref);
    snprintf(msg, sizeof msg,
             "select radix == ref bytes (memcmp, all %d queries, realistic scores)", t_q);
    std::string h_sel, h_sel_ref;
    int sel_same;
    {
        const auto f = dev_to(idx_fast, (size_t)t_q * width),
                   r = dev_to(idx_ref, (size_t)t_q * width);
        h_sel = sha256_of(f);
        h_sel_ref = sha256_of(r);
        sel_same = same_bytes(f, r);
    }
    check(sel_same, msg);
    /* an arm's idx: its SHA-256 into *sha, and whether its bytes equal `want`'s */
    auto idx_vs = [&](const int32_t *got, const int32_t *want, std::string *sha) {
        const auto f = dev_to(got, (size_t)t_q * width);
        *sha = sha256_of(f);
        return same_bytes(f, dev_to(want, (size_t)t_q * width));
    };
    /* the receipts of the launcher's sampled route over one launch, and the rollback arm
     * (MEMRA_MLA_SELECT_SAMPLED=0: every row's full passes, the launcher before 2026-12-01) */
    uint64_t sh0 = 0, sf0 = 0, sh1 = 0, sf1 = 0;
    RC(mla_select_sampled_counts(&sh0, &sf0));
    RC(memra_mla_kpool_select_f32(score, idx_fast, t_q, n_pools, pool, select_k, width, first_pos,
                                  tail, 0));
    CK(cudaDeviceSynchronize());
    RC(mla_select_sampled_counts(&sh1, &sf1));
    setenv("MEMRA_MLA_SELECT_SAMPLED", "0", 1);
    double t_sel_full = time_ms(
        [&] {
            RC(mla_door_kpool_select_f32(score, idx_fast, t_q, n_pools, pool, select_k, width,
                                         first_pos, tail, 0));
        },
        2, reps, &s_sel_full);
    unsetenv("MEMRA_MLA_SELECT_SAMPLED");
    std::string h_sel_full;
    const int sel_full_same = idx_vs(idx_fast, idx_ref, &h_sel_full);
    snprintf(msg, sizeof msg,
             "select full passes (MEMRA_MLA_SELECT_SAMPLED=0) == ref bytes (all %d queries); the "
             "launcher's sampled route settled %llu rows, handed back %llu",
             t_q, (unsigned long long)(sh1 - sh0), (unsigned long long)(sf1 - sf0));
    check(sel_full_same, msg);
    /* tie-heavy plane at the same shape: scores quantised to 8 levels (radix fallback path) */
    fill_levels_f32<<<1024, 256>>>(score2, (int64_t)t_q * n_pools, BENCH_SEED,
                                   mla_fill_name_hash("score_ties"), 8u);
    CK(cudaGetLastError());
    double t_sel_ties = time_ms(
        [&] {
            RC(memra_mla_kpool_select_f32(score2, idx_fast, t_q, n_pools, pool, select_k, width,
                                          first_pos, tail, 0));
        },
        2, reps, &s_sel_ties);
    std::string h_sel_ties_full;
    setenv("MEMRA_MLA_SELECT_SAMPLED", "0", 1);
    double t_sel_ties_full = time_ms(
        [&] {
            RC(mla_door_kpool_select_f32(score2, idx_ref, t_q, n_pools, pool, select_k, width,
                                         first_pos, tail, 0));
        },
        2, reps, &s_sel_ties_full);
    unsetenv("MEMRA_MLA_SELECT_SAMPLED");
    const int sel_ties_full_same = idx_vs(idx_ref, idx_fast, &h_sel_ties_full);
    snprintf(msg, sizeof msg, "select 8-level ties: full passes == launcher bytes (all %d queries)",
             t_q);
    check(sel_ties_full_same, msg);
    RC(memra_mla_kpool_select_ref_f32(score2, idx_ref, t_q, n_pools, pool, select_k, width,
                                      first_pos, tail, 0));
    snprintf(msg, sizeof msg,
             "select radix == ref bytes (memcmp, all %d queries, 8-level tie-heavy scores)", t_q);
    std::string h_sel_ties;
    const int sel_ties_same = idx_vs(idx_fast, idx_ref, &h_sel_ties);
    check(sel_ties_same, msg);
    cudaFree(state), cudaFree(ape), cudaFree(score_ref), cudaFree(idx_ref), cudaFree(score2);

    /* gathered attention at glm5 (64 heads, kv_rank 512, d_rope 64): t_q queries, each gathering
     * the select width (2048 slots at pool 1) of 65536 cached rows */
    const mla_geom gg = mla_geom_glm5_kpool(t_q, 65536);
    const int g_heads = gg.n_head, g_rank = gg.kv_rank, g_rope = gg.d_rope, g_slots = gg.width;
    const int g_kv = gg.t_kv;
    const float g_scale = gg.scale;
    float *ql, *qp, *cache, *o;
    int32_t *gidx;
    CK(cudaMalloc(&ql, (size_t)t_q * g_heads * g_rank * 4));
    CK(cudaMalloc(&qp, (size_t)t_q * g_heads * g_rope * 4));
    CK(cudaMalloc(&cache, (size_t)g_kv * (g_rank + g_rope) * 4));
    CK(cudaMalloc(&o, (size_t)t_q * g_heads * g_rank * 4));
    CK(cudaMalloc(&gidx, (size_t)t_q * g_slots * 4));
    dev_fill(cache, (size_t)g_kv * (g_rank + g_rope), BENCH_SEED, "cache", 1.0f);
    dev_fill(ql, (size_t)t_q * g_heads * g_rank, BENCH_SEED, "q_lat", 1.0f);
    dev_fill(qp, (size_t)t_q * g_heads * g_rope, BENCH_SEED, "q_pe", 1.0f);
    { /* every slot a row drawn uniformly from the g_kv cached rows */
        mla_fill_stream st = mla_fill_stream_init(BENCH_SEED, "gathered_idx");
        std::vector<int32_t> hi((size_t)t_q * g_slots);
        for (auto &x : hi) x = (int32_t)draw_below(&st, (size_t)g_kv);
        CK(cudaMemcpy(gidx, hi.data(), hi.size() * 4, cudaMemcpyHostToDevice));
    }
    double t_g512 = time_ms(
        [&] {
            RC(memra_mla_attn_gathered_f32(ql, qp, cache, gidx, o, g_heads, g_rank, g_rope, t_q,
                                           g_slots, g_scale, 0));
        },
        2, reps, &s_g512);
    const std::string h_g512 = dev_sha256(o, (size_t)t_q * g_heads * g_rank);
    double t_g1 = time_ms(
        [&] {
            RC(memra_mla_attn_gathered_f32(ql, qp, cache, gidx, o, g_heads, g_rank, g_rope, 1,
                                           g_slots, g_scale, 0));
        },
        2, reps, &s_g1);
    const std::string h_g1 = dev_sha256(o, (size_t)g_heads * g_rank); /* query 0's rows */
    /* the door arms (MEMRA_MLA_TC_ATTN=tf32, bf16 and wgmma; each its own class, not the f32
     * bytes), each with its receipt */
    /* mode, and the JSON's arm and note: string literals, which the records keep until the
     * JSON is written (H200, twenty-third session, call 4: names built in a loop were
     * temporaries, both arms were named by the last, and the writer refused the duplicates) */
    struct door_arm {
        const char *mode, *arm, *note;
        std::vector<float> s512, s1;
        double t512 = 0, t1 = 0;
        std::string h512, h1;
        uint64_t receipts = 0;
    } doors[3] = {{"tf32", "TC door: tf32", "MEMRA_MLA_TC_ATTN=tf32 (own class)", {}, {}},
                  {"bf16", "TC door: bf16", "MEMRA_MLA_TC_ATTN=bf16 (own class)", {}, {}},
                  {"wgmma", "TC door: wgmma", "MEMRA_MLA_TC_ATTN=wgmma (own class)", {}, {}}};
    for (door_arm &da : doors) {
        setenv("MEMRA_MLA_TC_ATTN", da.mode, 1);
        const uint64_t tc0 = mla_tc_attn_dispatches();
        da.t512 = time_ms(
            [&] {
                RC(mla_door_attn_gathered_f32(ql, qp, cache, gidx, o, g_heads, g_rank, g_rope, t_q,
                                              g_slots, g_scale, 0));
            },
            2, reps, &da.s512);
        da.h512 = dev_sha256(o, (size_t)t_q * g_heads * g_rank);
        da.t1 = time_ms(
            [&] {
                RC(mla_door_attn_gathered_f32(ql, qp, cache, gidx, o, g_heads, g_rank, g_rope, 1,
                                              g_slots, g_scale, 0));
            },
            2, reps, &da.s1);
        da.h1 = dev_sha256(o, (size_t)g_heads * g_rank);
        unsetenv("MEMRA_MLA_TC_ATTN");
        da.receipts = mla_tc_attn_dispatches() - tc0;
        fprintf(stderr, "receipt: MEMRA_MLA_TC_ATTN=%s attn_gathered: %llu TC dispatches\n",
                da.mode, (unsigned long long)da.receipts);
    }
    cudaFree(ql), cudaFree(qp), cudaFree(cache), cudaFree(o), cudaFree(gidx);

    double t_score_small = time_ms(
        [&] {
            RC(memra_mla_kpool_score_f32(q, keys, hw, score, 1, heads, d, n_pools, pool, rows - 1,
                                         qk, hs, 0));
        },
        2, reps, &s_score_small);
    const std::string h_score_small = dev_sha256(score, (size_t)n_pools); /* query 0's row */

    /* floors */
    const double fma_score = (double)t_q * n_pools * heads * d;
    const double score_floor = fma_score / (fma_tfma * 1e12) * 1e3;
    const double score_plane_read = (double)b_score / (copy_gbs * 1e9) * 1e3;
    const double keys_floor = ((double)b_state + b_keys) / (copy_gbs * 1e9) * 1e3;
    const double g_fma = (double)t_q * g_heads * g_slots * (g_rank + g_rope + g_rank);
    const double g_floor = g_fma / (fma_tfma * 1e12) * 1e3;
    printf("\n| kernel (shipped shape unless noted) | time ms | floor ms | floor basis | of floor "
           "|\n");
    printf("|---|---|---|---|---|\n");
    printf("| pool_keys full build (%d x %d, pool %d) | %.3f | %.3f | read state %g GiB + "
           "write keys at copy BW | %.0f%% |\n",
           n_pools, d, pool, t_keys, keys_floor, b_state / 1073741824.0, 100 * keys_floor / t_keys);
    printf("| score fast (t_q %d) | %.3f | %.3f | %.0f GFMA at measured FMA rate | %.0f%% |\n", t_q,
           t_score, score_floor, fma_score / 1e9, 100 * score_floor / t_score);
    printf("| score ref (t_q %d subset; x%d = %.0f ms extrapolated) | %.3f | - | not a serving "
           "path | - |\n",
           ref_q, t_q / ref_q, t_score_ref * t_q / ref_q, t_score_ref);
    printf("| score fast decode (t_q 1) | %.3f | %.3f | read keys %g MiB at copy BW | %.0f%% |\n",
           t_score_small, (double)b_keys / (copy_gbs * 1e9) * 2e3 / 2, b_keys / 1048576.0,
           100 * ((double)b_keys / (copy_gbs * 1e9) * 1e3) / t_score_small);
    printf("| select radix (realistic scores) | %.3f | %.3f | one read of the %g MiB score plane "
           "| %.0f%% |\n",
           t_sel, score_plane_read, b_score / 1048576.0, 100 * score_plane_read / t_sel);
    printf("| select radix, full passes (MEMRA_MLA_SELECT_SAMPLED=0) | %.3f | %.3f | same | %.0f%% "
           "|\n",
           t_sel_full, score_plane_read, 100 * score_plane_read / t_sel_full);
    printf("| select radix (8-level ties) | %.3f | %.3f | same | %.0f%% |\n", t_sel_ties,
           score_plane_read, 100 * score_plane_read / t_sel_ties);
    printf("| select radix (8-level ties), full passes | %.3f | %.3f | same | %.0f%% |\n",
           t_sel_ties_full, score_plane_read, 100 * score_plane_read / t_sel_ties_full);
    printf("| select reads of the score plane: realistic %.2f, full passes %.2f, 8-level ties "
           "%.2f, ties full passes %.2f | - | - | goal <= 1.5 and <= 3 | - |\n",
           t_sel / score_plane_read, t_sel_full / score_plane_read, t_sel_ties / score_plane_read,
           t_sel_ties_full / score_plane_read);
    printf("| select ref (rounds, median of 3) | %.3f | - | not a serving path | - |\n", t_sel_ref);
    printf("| attn_gathered glm5 t_q %d, %d slots | %.3f | %.3f | %.0f GFMA at measured FMA "
           "rate | %.0f%% |\n",
           t_q, g_slots, t_g512, g_floor, g_fma / 1e9, 100 * g_floor / t_g512);
    printf("| attn_gathered glm5 t_q 1, %d slots | %.3f | - | decode, latency-bound | - |\n",
           g_slots, t_g1);
    for (const door_arm &da : doors) {
        printf("| attn_gathered glm5 t_q %d, %d slots, TC door %s (receipt %llu) | %.3f | %.3f | "
               "own class | %.0f%% |\n",
               t_q, g_slots, da.mode, (unsigned long long)da.receipts, da.t512, g_floor,
               100 * g_floor / da.t512);
        printf("| attn_gathered glm5 t_q 1, %d slots, TC door %s | %.3f | - | decode | - |\n",
               g_slots, da.mode, da.t1);
    }
    printf("| machine: copy BW / f32 FMA | %.0f GB/s | %.2f TFMA/s | measured in this run | - |\n",
           copy_gbs, fma_tfma);
    printf("| indexer step device memory | %.1f MiB | - | buffers summed (cudaMemGetInfo %.1f "
           "MiB), no workspace | - |\n",
           step_bytes / 1048576.0, (free0 - free1) / 1048576.0);
    printf("\nchecks: %s\n", g_fail ? "SOME FAILED" : "all passed");
    cudaFree(keys), cudaFree(q), cudaFree(hw), cudaFree(score), cudaFree(idx_fast);

    /* $MLA_BENCH_JSON: the timed rows for the nightly ledger (tools/bench/bench_json.h); shape
     * names the geometry preset and t_q, floors in us */
    auto shape = [](const char *preset, int tq, const char *extra) {
        char b[96];
        snprintf(b, sizeof b, "%s t_q %d%s", preset, tq, extra);
        return std::string(b);
    };
    const std::string sh_lc = shape("longctx_kpool", t_q, ""),
                      sh_lc_ref = shape("longctx_kpool", ref_q, ""),
                      sh_lc_1 = shape("longctx_kpool", 1, ""),
                      sh_lc_ties = shape("longctx_kpool", t_q, ", 8-level ties"),
                      sh_g = shape("glm5_kpool", t_q, ""), sh_g1 = shape("glm5_kpool", 1, "");
    std::vector<bench_json_record> recs;
    auto add = [&](const char *kernel, const std::string &sh, const char *arm,
                   const std::vector<float> &s, double floor_ms, double bytes, double flops,
                   int identical, const char *note, const std::string &out_sha256) {
        bench_json_record j = bench_json_record_init(kernel, sh.c_str(), arm);
        bench_json_set_samples(&j, s.data(), s.size());
        j.floor_us = floor_ms * 1e3;
        j.bytes = bytes;
        j.flops = flops;
        j.bytes_identical = identical;
        j.note = note;
        j.out_sha256 = out_sha256.c_str();
        recs.push_back(j);
    };
    add("kpool_pool_keys", sh_lc, "full build", s_keys, keys_floor, (double)b_state + b_keys, NAN,
        -1, NULL, h_keys);
    add("kpool_score", sh_lc, "fast", s_score, score_floor, NAN, 2 * fma_score, score_same,
        "bytes_identical: fast == ref on the first and last 4 queries", h_score);
    add("kpool_score", sh_lc_ref, "ref", s_score_ref, NAN, NAN, NAN, -1,
        "reference scorer on the last 4 queries; not a serving path", h_score_ref);
    add("kpool_score", sh_lc_1, "fast", s_score_small, (double)b_keys / (copy_gbs * 1e9) * 1e3,
        (double)b_keys, NAN, -1, NULL, h_score_small);
    add("kpool_select", sh_lc, "radix", s_sel, score_plane_read, (double)b_score, NAN, sel_same,
        "bytes_identical: radix == ref on every query", h_sel);
    add("kpool_select", sh_lc, "radix full passes", s_sel_full, score_plane_read, (double)b_score,
        NAN, sel_full_same,
        "bytes_identical: full passes (MEMRA_MLA_SELECT_SAMPLED=0) == ref on every query",
        h_sel_full);
    add("kpool_select", sh_lc_ties, "radix", s_sel_ties, score_plane_read, (double)b_score, NAN,
        sel_ties_same, "bytes_identical: radix == ref on every query", h_sel_ties);
    add("kpool_select", sh_lc_ties, "radix full passes", s_sel_ties_full, score_plane_read,
        (double)b_score, NAN, sel_ties_full_same,
        "bytes_identical: full passes == radix on every query", h_sel_ties_full);
    add("kpool_select", sh_lc, "ref", s_sel_ref, NAN, NAN, NAN, -1,
        "reference selection (rounds), 3 launches; not a serving path", h_sel_ref);
    add("attn_gathered", sh_g, "", s_g512, g_floor, NAN, 2 * g_fma, -1, NULL, h_g512);
    add("attn_gathered", sh_g1, "", s_g1, NAN, NAN, NAN, -1, "decode, latency-bound", h_g1);
    for (const door_arm &da : doors) {
        add("attn_gathered", sh_g, da.arm, da.s512, g_floor, NAN, 2 * g_fma, -1, da.note, da.h512);
        add("attn_gathered", sh_g1, da.arm, da.s1, NAN, NAN, NAN, -1, da.note, da.h1);
    }
    const int json_rc = bench_json_write_env("bench_kpool", prop.name, copy_gbs, 2 * fma_tfma * 1e3,
                                             recs.data(), recs.size());
    return g_fail ? g_fail : json_rc;
}
