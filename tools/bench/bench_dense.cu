/* bench_dense.cu: roofline benchmark of the dense MLA kernels at the glm5 geometry
 * (mla_geom_glm5(), tests/lib/geometry.h).
 *
 * Measures the card's ceilings first (device-to-device copy bandwidth over 1 GiB, bytes read +
 * written; the f32 FMA rate of independent chains), then per kernel and width (decode t_q 1 /
 * t_kv 32768, verify t_q 4 / t_kv 32768, prefill t = 512): the median of REPS warm launches
 * (CUDA events), each after a read-only L2 flush so the operands come from HBM; the bytes and
 * FLOPs the kernel must move, GB/s and GFLOP/s with their fraction
 * of the ceilings. The arms of one (kernel, width) form an A/B: the first arm (the plain
 * launcher) is the base, the door arms (MEMRA_MLA_DECODE_SPLIT through mla_door_*, the
 * MEMRA_MLA_TC_PREFILL door) say whether their bytes are identical to it, and the doors'
 * dispatch counters (the receipts that the arm really ran) close the report. Every output is
 * checked finite (a benchmark of garbage is worthless); a
 * non-finite output or a non-zero status fails the run (exit 1). The markdown table is last.
 * With MLA_BENCH_JSON set, the rows also go to that file as JSON for tools/ledger.py
 * (tools/bench/bench_json.h: kernel, shape = the width, arm, median / p10 / p90 us of the launches
 * above, the roofline floor, out_sha256 = the SHA-256 of the first call's output bytes, so two
 * builds' files say per row whether their outputs are byte-identical); a failure to write it fails
 * the run (exit 1).
 * Inputs come from the golden fixtures' Philox fill (tests/lib/mla_fill.h), generated on the
 * device: element e of tensor `name` is mla_fill_realistic(BENCH_SEED, hash(name), e, scale).
 *
 * Usage: bench_dense [reps]   (default 25)
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "kernels/mla.h"
#include "kernels/mla_cuda_check.h"
#include "kernels/mla_door.h"
#include "tests/lib/geometry.h"
#include "tests/lib/mla_fill.h"
#include "tools/bench/bench_json.h"
#include "tools/bench/bench_read.cuh"

#define CK(stmt)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (stmt);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #stmt,                         \
                    cudaGetErrorString(e_));                                                       \
            exit(2);                                                                               \
        }                                                                                          \
    } while (0)

static int g_reps = 25;
static int g_failed = 0;

/* ---------------------------------------------------------------- ceilings --------------- */

static __global__ void fma_chains(float *out, int iters, float a, float b) {
    float x[8];
    for (int c = 0; c < 8; c++) x[c] = threadIdx.x * 1e-3f + c;
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int c = 0; c < 8; c++) x[c] = fmaf(x[c], a, b);
    }
    float s = 0.0f;
    for (int c = 0; c < 8; c++) s += x[c];
    if (s == 12345.678f) /* never true; keeps the chains live */
        out[0] = s;
}

/* The TF32 tensor-core ceiling of mma.sync (the instruction a tensor-core attention arm would
 * use, docs/performance.md): every warp runs 4 independent m16n8k8 accumulators, iters times;
 * 2 * 16 * 8 * 8 FLOPs per instruction. */
static __device__ __forceinline__ uint32_t to_tf32(float v) {
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
    return r;
}
static __global__ void tf32_mma_chains(float *out, int iters) {
    const uint32_t a0 = to_tf32(1.0f + threadIdx.x * 1e-3f), a1 = to_tf32(0.5f),
                   a2 = to_tf32(0.25f), a3 = to_tf32(0.125f), b0 = to_tf32(1e-3f),
                   b1 = to_tf32(-1e-3f);
    float c[4][4] = {};
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int k = 0; k < 4; k++)
            asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, "
                         "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                         : "+f"(c[k][0]), "+f"(c[k][1]), "+f"(c[k][2]), "+f"(c[k][3])
                         : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
    float s = 0.0f;
    for (int k = 0; k < 4; k++) s += c[k][0] + c[k][1] + c[k][2] + c[k][3];
    if (s == 12345.678f) /* never true; keeps the chains live */
        out[0] = s;
}

/* L2 flush buffer (twice the L2 size): read before every timed kernel launch so each launch
 * reads its operands from HBM, as a decode step does after the other layers' weights went
 * through the cache. Without it the 25-34 MB decode weight planes would sit in the 60 MB L2
 * between repetitions and the "bandwidth" would be partly the cache's. The flush only reads
 * (a memset would leave the L2 full of dirty lines whose write-back then competes with the
 * timed kernel, which no decode step sees). */
static void *g_flush;
static size_t g_flush_bytes;
static float *g_flush_sink;

static __global__ void flush_read(const float4 *__restrict__ p, int64_t n, float *sink) {
    float s = 0.0f;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n;
         e += (int64_t)gridDim.x * blockDim.x) {
        float4 v = p[e];
        s += v.x + v.y + v.z + v.w;
    }
    if (s == 12345.678f) /* never true: keeps the loads */
        sink[0] = s;
}

/* The median of reps timed launches of fn (ms); samples, when given, gets every launch's time
 * (sorted) for the JSON's p10 / p90. */
static float median_ms(const std::function<void()> &fn, int warm, int reps, bool flush = true,
                       std::vector<float> *samples = nullptr) {
    std::vector<float> t;
    CK(bench_timed_launches(
        fn,
        [&] {
            if (flush && g_flush)
                flush_read<<<1024, 256>>>((const float4 *)g_flush, (int64_t)(g_flush_bytes / 16),
                                          g_flush_sink);
        },
        warm, reps, &t));
    if (samples) *samples = t;
    return t[t.size() / 2];
}

/* The read floor at a kernel's own size: the fastest of a few plain streaming reads of `bytes`
 * (float4 loads, 4 in flight a thread, grid-stride over 4 / 8 / 16 blocks of 256 a SM), timed as
 * the kernels are (after the L2 flush, CUDA events, median), once per size. It includes what
 * every timed launch pays (the launch, the ramp of a one-wave grid), which the copy ceiling's
 * 1 GiB hides: H200 2026-12-01, seventh session, 9.2 us for 25.35 MB (2.75 TB/s) and 11.0 us for
 * 33.75 MB against 4.5 TB/s at 537 MB, with an empty kernel at 2.85 us. */

static double read_floor_us(double bytes) {
    static std::vector<std::pair<int64_t, double>> memo;
    static void *buf = NULL;
    static int64_t buf_n = 0;
    const int64_t n = (int64_t)(bytes / 16.0); /* float4s */
    if (n < 1) return NAN;
    for (const auto &m : memo)
        if (m.first == n) return m.second;
    if (n > buf_n) {
        if (buf) CK(cudaFree(buf));
        CK(cudaMalloc(&buf, (size_t)n * 16));
        CK(cudaMemset(buf, 0, (size_t)n * 16));
        buf_n = n;
    }
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    double best = INFINITY;
    for (int per_sm : {4, 8, 16}) {
        float ms = median_ms(
            [&] { stream_read<<<sms * per_sm, 256>>>((const float4 *)buf, n, g_flush_sink); }, 2,
            20);
        best = std::min(best, (double)ms * 1e3);
    }
    CK(cudaGetLastError());
    memo.emplace_back(n, best);
    return best;
}

/* --------------------------------------------------------------- fills / checks ---------- */

static const uint32_t BENCH_SEED = 1; /* the Philox key's seed word of every input */

/* p[e] = element e of the tensor named by name_hash: uniform on the 2^24-point grid of
 * [-scale, scale) (MLA_FILL_REALISTIC). */
static __global__ void fill_f32(float *p, int64_t n, uint32_t seed, uint32_t name_hash,
                                float scale) {
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n;
         e += (int64_t)gridDim.x * blockDim.x)
        p[e] = mla_fill_realistic(seed, name_hash, (uint64_t)e, scale);
}

/* A device tensor of n floats, filled with elements 0..n-1 of `name`. */
/* p[0, n) = the fill of the tensor called name (the same values wherever it is refilled) */
static void fill_dev(float *p, int64_t n, const char *name, float scale) {
    fill_f32<<<1024, 256>>>(p, n, BENCH_SEED, mla_fill_name_hash(name), scale);
    CK(cudaGetLastError());
}

static float *dev_f32(const char *name, int64_t n, float scale) {
    float *p = NULL;
    CK(cudaMalloc(&p, (size_t)n * sizeof(float)));
    fill_dev(p, n, name, scale);
    return p;
}

static bool all_finite(const float *d, int64_t n) {
    std::vector<float> h((size_t)n);
    CK(cudaMemcpy(h.data(), d, (size_t)n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(h[(size_t)i])) return false;
    return true;
}

/* ------------------------------------------------------------------ rows ------------------ */

struct row {
    std::string kernel, width, note;
    double us, bytes, flops;
    bool finite;
    std::string vs_base;        /* the A/B column: this arm's bytes against the width's first arm */
    std::vector<float> samples; /* every timed launch, ms, sorted (the JSON's p10 / p90) */
    std::string out_sha256;     /* SHA-256 of the first call's output bytes (the JSON's) */
    double read_floor_us;       /* read_floor_us(bytes): a streaming read of as many bytes */
};
/* First arm's output per (kernel, width): the base every other arm (decode split, TC door) is
 * compared with, so one run shows per case whether the door changed any byte. */
static std::vector<std::pair<std::string, std::vector<float>>> g_base;
static std::vector<row> g_rows;
static double g_copy_gbs, g_fma_gflops, g_tf32_mma_gflops;

static void bench(const char *kernel, const char *width, const char *note, double bytes,
                  double flops, const float *out, int64_t out_n, const std::function<int()> &fn) {
    /* $BENCH_ONLY=SUBSTRING: only the rows whose "kernel width arm" contains it (a profiler run
     * of one arm, e.g. ncu); the ceilings are measured regardless */
    const char *only = getenv("BENCH_ONLY");
    if (only && only[0]) {
        const std::string id = std::string(kernel) + " " + width + " " + note;
        if (id.find(only) == std::string::npos) return;
    }
    int rc = fn();
    if (rc) {
        fprintf(stderr, "FAIL %s %s %s: rc %d (%s) %s\n", kernel, width, note, rc,
                mla_status_message(rc), mla_cuda_last_failure());
        g_failed = 1;
        return;
    }
    CK(cudaDeviceSynchronize());
    bool fin = all_finite(out, out_n);
    if (!fin) {
        fprintf(stderr, "FAIL %s %s %s: non-finite output\n", kernel, width, note);
        g_failed = 1;
    }
    std::vector<float> got((size_t)out_n);
    CK(cudaMemcpy(got.data(), out, (size_t)out_n * sizeof(float), cudaMemcpyDeviceToHost));
    char sha[65];
    bench_json_sha256_hex(got.data(), got.size() * sizeof(float), sha);
    std::string key = std::string(kernel) + "/" + width, vs = "base";
    auto it = std::find_if(
        g_base.begin(), g_base.end(),
        [&](const std::pair<std::string, std::vector<float>> &b) { return b.first == key; });
    if (it == g_base.end()) {
        g_base.emplace_back(key, got);
    } else if (memcmp(it->second.data(), got.data(), got.size() * sizeof(float)) == 0) {
        vs = "bytes identical";
    } else {
        double worst = 0, scale = 0;
        for (size_t i = 0; i < got.size(); i++) {
            worst = std::max(worst, (double)fabsf(got[i] - it->second[i]));
            scale = std::max(scale, (double)fabsf(it->second[i]));
        }
        char b[96];
        snprintf(b, sizeof b, "differs: max abs %.3g (max |base| %.3g)", worst, scale);
        vs = b;
    }
    std::vector<float> samples;
    float ms = median_ms([&] { (void)fn(); }, 3, g_reps, true, &samples);
    CK(cudaGetLastError());
    row r{kernel, width, note, ms * 1e3, bytes, flops, fin, vs, samples, sha, read_floor_us(bytes)};
    g_rows.push_back(r);
    fprintf(stderr, "  %-22s %-8s %-16s %9.2f us  %8.1f GB/s  %8.1f GFLOP/s\n", kernel, width, note,
            r.us, bytes / (r.us * 1e3), flops / (r.us * 1e3));
}

/* ------------------------------------------------------------------ main ------------------ */

int main(int argc, char **argv) {
    if (argc > 1) g_reps = std::max(20, atoi(argv[1]));
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
        fprintf(stderr, "bench_dense: no CUDA device\n");
        return 77;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    fprintf(stderr, "device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);

    { /* copy ceiling: 1 GiB D2D, bytes read + written */
        size_t n = (size_t)1 << 30;
        void *a, *b;
        CK(cudaMalloc(&a, n));
        CK(cudaMalloc(&b, n));
        CK(cudaMemset(a, 1, n));
        float ms = median_ms([&] { CK(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice)); }, 2, 20,
                             false);
        g_copy_gbs = 2.0 * (double)n / (ms * 1e6);
        CK(cudaFree(a));
        CK(cudaFree(b));
    }
    { /* FMA ceiling */
        float *o;
        CK(cudaMalloc(&o, 4));
        int blocks = prop.multiProcessorCount * 8, iters = 4096;
        float ms =
            median_ms([&] { fma_chains<<<blocks, 256>>>(o, iters, 0.999f, 1e-3f); }, 2, 20, false);
        g_fma_gflops = 2.0 * 8 * iters * (double)blocks * 256 / (ms * 1e6);
        CK(cudaFree(o));
    }
    { /* TF32 mma.sync ceiling (no arm uses tensor cores for attention yet: the floor a
       * tensor-core arm would be measured against) */
        float *o;
        CK(cudaMalloc(&o, 4));
        int blocks = prop.multiProcessorCount * 8, iters = 4096;
        float ms = median_ms([&] { tf32_mma_chains<<<blocks, 256>>>(o, iters); }, 2, 20, false);
        g_tf32_mma_gflops = 2.0 * 16 * 8 * 8 * 4 * (double)iters * blocks * (256 / 32) / (ms * 1e6);
        CK(cudaFree(o));
    }
    fprintf(stderr, "copy %.1f GB/s, fma %.1f GFLOP/s, tf32 mma.sync %.1f GFLOP/s\n", g_copy_gbs,
            g_fma_gflops, g_tf32_mma_gflops);
    g_flush_bytes = 2 * (size_t)prop.l2CacheSize;
    CK(cudaMalloc(&g_flush, g_flush_bytes));
    CK(cudaMemset(g_flush, 0, g_flush_bytes));
    CK(cudaMalloc(&g_flush_sink, sizeof(float)));

    /* glm5 geometry (tests/lib/geometry.h); the widths below set t_q and t_kv */
    const int32_t T_KV_LONG = 32768;
    const int32_t T_MAX = 512;
    const mla_geom g = mla_geom_glm5(T_MAX, T_KV_LONG);
    const int32_t H = g.n_head, R = g.kv_rank, DR = g.d_rope, DN = g.d_nope, DV = g.d_v;
    const int32_t W = R + DR;
    const float scale = g.scale, theta = g.rope_base;

    /* activations and cache rows ~ U(-1, 1), weights ~ U(-1, 1) / sqrt(fan_in) */
    float *wk_b = dev_f32("wk_b", (int64_t)H * DN * R, mla_weight_scale(DN));
    float *wv_b = dev_f32("wv_b", (int64_t)H * DV * R, mla_weight_scale(R));
    /* attention also at decode over t_kv 8192 and 131072 (the peer's shapes) */
    const int32_t T_KV_MAX = 131072;
    float *cache = dev_f32("cache", (int64_t)T_KV_MAX * W, 1.0f);
    float *q_nope = dev_f32("q_nope", (int64_t)T_MAX * H * DN, 1.0f);
    float *q_pe = dev_f32("q_pe", (int64_t)T_MAX * H * DR, 1.0f);
    float *q_lat = dev_f32("q_lat", (int64_t)T_MAX * H * R, 0.1f); /* rewritten by absorb_q */
    float *o_lat = dev_f32("o_lat", (int64_t)T_MAX * H * R, 1.0f);
    float *out_v = dev_f32("out_v", (int64_t)T_MAX * H * DV, 1.0f);
    float *kv = dev_f32("kv", (int64_t)T_MAX * W, 1.0f);
    float *c_kv = dev_f32("c_kv", (int64_t)T_MAX * R, 1.0f);
    float *k_pe = dev_f32("k_pe", (int64_t)T_MAX * DR, 1.0f);
    float *cache_scratch = dev_f32("cache_scratch", (int64_t)T_MAX * W, 1.0f);
    int32_t *pos;
    CK(cudaMalloc(&pos, T_MAX * sizeof(int32_t)));
    { /* the last T_MAX positions of glm5's context */
        std::vector<int32_t> hp(T_MAX);
        for (int i = 0; i < T_MAX; i++) hp[i] = MLA_GLM5_MAX_POS - T_MAX + i;
        CK(cudaMemcpy(pos, hp.data(), T_MAX * sizeof(int32_t), cudaMemcpyHostToDevice));
    }
    uint16_t *wk_t_bf16, *wv_bf16, *x_bf16;
    CK(cudaMalloc(&wk_t_bf16, (size_t)H * DN * R * 2));
    CK(cudaMalloc(&wv_bf16, (size_t)H * DV * R * 2));
    CK(cudaMalloc(&x_bf16, (size_t)T_MAX * H * R * 2));
    size_t lt_ws_bytes = 32u << 20;
    void *lt_ws;
    CK(cudaMalloc(&lt_ws, lt_ws_bytes));
    if (mla_bf16_transpose_heads(wk_b, wk_t_bf16, H, DN, R, NULL) ||
        mla_f32_to_bf16(wv_b, wv_bf16, (int64_t)H * DV * R, NULL)) {
        fprintf(stderr, "bf16 weight preparation failed\n");
        return 1;
    }
    CK(cudaDeviceSynchronize());

    /* attn_absorbed at (t queries, t_kv rows): the f32 arm, then the tensor-core arms through
     * their door with the receipt */
    auto bench_attn = [&](const char *name, int32_t t, int32_t t_kv) {
        const double f4 = 4.0;
        /* attention: cache rows read once; FLOPs over the visible rows of every query */
        double visible = 0;
        for (int32_t i = 0; i < t; i++) visible += (double)(t_kv - t + i + 1);
        double at_bytes = f4 * ((double)t_kv * W + (double)t * H * (R + DR) + (double)t * H * R);
        double at_flops = 2.0 * visible * H * (W + R);
        bench("attn_absorbed", name, "", at_bytes, at_flops, o_lat, (int64_t)t * H * R, [&] {
            return memra_mla_attn_absorbed_f32(q_lat, q_pe, cache, o_lat, H, R, DR, t, t_kv, scale,
                                               NULL);
        });
        /* the tensor-core arms through their door (EXPERIMENTAL; not the f32 arm's bytes: the
         * "vs first arm" column says so), with the receipt */
        for (const char *mode : {"tf32", "bf16", "3xtf32", "wgmma"}) {
            setenv("MEMRA_MLA_TC_ATTN", mode, 1);
            uint64_t before = mla_tc_attn_dispatches();
            char note[32];
            snprintf(note, sizeof note, "TC door: %s", mode);
            bench("attn_absorbed", name, note, at_bytes, at_flops, o_lat, (int64_t)t * H * R, [&] {
                return mla_door_attn_absorbed_f32(q_lat, q_pe, cache, o_lat, H, R, DR, t, t_kv,
                                                  scale, NULL);
            });
            fprintf(stderr, "receipt: MEMRA_MLA_TC_ATTN=%s at %s: %llu TC dispatches%s\n", mode,
                    name, (unsigned long long)(mla_tc_attn_dispatches() - before),
                    mla_tc_attn_dispatches() == before ? " (declined: the f32 arm ran)" : "");
            unsetenv("MEMRA_MLA_TC_ATTN");
        }
    };

    struct width {
        const char *name;
        int32_t t_q, t_kv;
    } widths[] = {{"decode", 1, T_KV_LONG}, {"verify", 4, T_KV_LONG}, {"prefill", T_MAX, T_MAX}};

    for (const width &w : widths) {
        const int32_t t = w.t_q;
        const double f4 = 4.0;
        fprintf(stderr, "%s (t_q %d, t_kv %d)\n", w.name, t, w.t_kv);

        /* rope on q_pe: read + write */
        bench("rope_interleaved", w.name, "q_pe", 2 * f4 * t * H * DR, 6.0 * t * H * DR / 2, q_pe,
              (int64_t)t * H * DR,
              [&] { return memra_mla_rope_interleaved_f32(q_pe, t, H, DR, pos, theta, NULL); });
        bench("split_latent", w.name, "", 2 * f4 * t * W, 0, c_kv, (int64_t)t * R,
              [&] { return memra_mla_split_latent_f32(kv, c_kv, k_pe, t, R, DR, NULL); });
        bench("append_latent", w.name, "", 2 * f4 * t * W, 0, cache_scratch, (int64_t)t * W, [&] {
            return memra_mla_append_latent_f32(cache_scratch, c_kv, k_pe, 0, t, R, DR, NULL);
        });

        double ab_bytes = f4 * ((double)H * DN * R + (double)t * H * DN + (double)t * H * R);
        double ab_flops = 2.0 * t * H * DN * R;
        bench("absorb_q", w.name, "split off", ab_bytes, ab_flops, q_lat, (int64_t)t * H * R,
              [&] { return memra_mla_absorb_q_f32(q_nope, wk_b, q_lat, t, H, DN, R, NULL); });
        /* The decode-split arm goes through the door, as the engine does: its receipt (the
         * dispatch counter) is printed under the table. */
        setenv("MEMRA_MLA_DECODE_SPLIT", "1", 1);
        int32_t sa = mla_decode_split_for((long)t * H, R);
        if (sa > 0) {
            char note[32];
            snprintf(note, sizeof note, "door: split %d", sa);
            bench("absorb_q", w.name, note, ab_bytes, ab_flops, q_lat, (int64_t)t * H * R,
                  [&] { return mla_door_absorb_q_f32(q_nope, wk_b, q_lat, t, H, DN, R, NULL); });
        }
        /* decompress_v's input is the fill, not the previous shape's last attention output
         * (until the twenty-first session o_lat held whichever arm ran last, so the verify and
         * prefill rows' bytes moved with any attention change) */
        fill_dev(o_lat, (int64_t)T_MAX * H * R, "o_lat", 1.0f);
        double dv_bytes = f4 * ((double)H * DV * R + (double)t * H * R + (double)t * H * DV);
        double dv_flops = 2.0 * t * H * DV * R;
        bench("decompress_v", w.name, "split off", dv_bytes, dv_flops, out_v, (int64_t)t * H * DV,
              [&] { return memra_mla_decompress_v_f32(o_lat, wv_b, out_v, t, H, DV, R, NULL); });
        int32_t sd = mla_decode_split_for((long)t * H, DV);
        if (sd > 0) {
            char note[32];
            snprintf(note, sizeof note, "door: split %d", sd);
            bench("decompress_v", w.name, note, dv_bytes, dv_flops, out_v, (int64_t)t * H * DV,
                  [&] { return mla_door_decompress_v_f32(o_lat, wv_b, out_v, t, H, DV, R, NULL); });
        }
        unsetenv("MEMRA_MLA_DECODE_SPLIT");
        if (t == 1) {
            /* The split sweep at decode (docs/performance.md, decompress_v and absorb_q): the
             * output-range split is a launch parameter (same bytes for every split), so the
             * sweep shows the wave and occupancy effects the ncu profile points at. */
            for (int32_t sp : {2, 4, 10, 12, 20, 24, 32}) {
                char note[32];
                snprintf(note, sizeof note, "sweep: split %d", sp);
                bench("absorb_q", w.name, note, ab_bytes, ab_flops, q_lat, (int64_t)t * H * R, [&] {
                    return memra_mla_absorb_q_split_f32(q_nope, wk_b, q_lat, t, H, DN, R, sp, NULL);
                });
                bench("decompress_v", w.name, note, dv_bytes, dv_flops, out_v, (int64_t)t * H * DV,
                      [&] {
                          return memra_mla_decompress_v_split_f32(o_lat, wv_b, out_v, t, H, DV, R,
                                                                  sp, NULL);
                      });
            }
        }
        if (t >= MLA_TC_PREFILL_MIN_TQ) {
            setenv("MEMRA_MLA_TC_PREFILL", "1", 1);
            uint64_t before = mla_tc_prefill_dispatches();
            bench("absorb_q", w.name, "TC door", ab_bytes, ab_flops, q_lat, (int64_t)t * H * R,
                  [&] {
                      return mla_door_tc_absorb_q(q_nope, wk_b, wk_t_bf16, q_lat, x_bf16, lt_ws,
                                                  lt_ws_bytes, t, H, DN, R, NULL);
                  });
            bench("decompress_v", w.name, "TC door", dv_bytes, dv_flops, out_v, (int64_t)t * H * DV,
                  [&] {
                      return mla_door_tc_decompress_v(o_lat, wv_b, wv_bf16, out_v, x_bf16, lt_ws,
                                                      lt_ws_bytes, t, H, DV, R, NULL);
                  });
            if (mla_tc_prefill_dispatches() == before)
                fprintf(stderr, "note: TC door declined at %s (fell back to f32)\n", w.name);
            unsetenv("MEMRA_MLA_TC_PREFILL");
        }

        bench_attn(w.name, t, w.t_kv);
    }
    bench_attn("decode t_kv 8192", 1, 8192);
    bench_attn("decode t_kv 131072", 1, T_KV_MAX);

    printf("\n**Ceilings** (%s): copy %.1f GB/s (1 GiB D2D, read + write), f32 FMA %.1f "
           "GFLOP/s, TF32 mma.sync %.1f GFLOP/s (m16n8k8, f32 accumulate). Kernel times: median "
           "of %d launches, each after reading %zu MB (an L2 of clean lines, the operands in "
           "HBM), CUDA events.\n\n",
           prop.name, g_copy_gbs, g_fma_gflops, g_tf32_mma_gflops, g_reps, g_flush_bytes >> 20);
    printf("| kernel | width | arm | median us | MB moved | GB/s | %% copy | read floor us | "
           "%% read floor | GFLOP/s | %% FMA | finite | vs first arm |\n");
    printf("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- "
           "|\n");
    for (const row &r : g_rows) {
        double gbs = r.bytes / (r.us * 1e3), gfl = r.flops / (r.us * 1e3);
        printf("| %s | %s | %s | %.2f | %.2f | %.1f | %.1f | %.2f | %.1f | %.1f | %.1f | %s | %s "
               "|\n",
               r.kernel.c_str(), r.width.c_str(), r.note.c_str(), r.us, r.bytes / 1e6, gbs,
               100.0 * gbs / g_copy_gbs, r.read_floor_us, 100.0 * r.read_floor_us / r.us, gfl,
               100.0 * gfl / g_fma_gflops, r.finite ? "yes" : "NO", r.vs_base.c_str());
    }
    printf("\n\"read floor\": the fastest plain streaming read of the row's bytes at that size, "
           "timed the same way (after the flush, events), so it carries the launch and one-wave "
           "ramp every kernel pays; %% read floor = read floor / median.\n");
    printf("\nDoor receipts: MEMRA_MLA_DECODE_SPLIT dispatches %llu, MEMRA_MLA_TC_PREFILL "
           "dispatches %llu (every call of the door arms above, warm-up included).\n",
           (unsigned long long)mla_decode_split_dispatches(),
           (unsigned long long)mla_tc_prefill_dispatches());

    /* $MLA_BENCH_JSON: the rows for the nightly ledger (tools/bench/bench_json.h) */
    std::vector<bench_json_record> recs;
    for (const row &r : g_rows) {
        bench_json_record j =
            bench_json_record_init(r.kernel.c_str(), r.width.c_str(), r.note.c_str());
        bench_json_set_samples(&j, r.samples.data(), r.samples.size());
        j.floor_us = std::max(r.bytes / (g_copy_gbs * 1e3), r.flops / (g_fma_gflops * 1e3));
        j.read_floor_us = r.read_floor_us;
        j.bytes = r.bytes;
        j.flops = r.flops;
        j.finite = r.finite;
        if (r.vs_base != "base") j.bytes_identical = r.vs_base == "bytes identical";
        j.note = r.vs_base.c_str();
        j.out_sha256 = r.out_sha256.c_str();
        recs.push_back(j);
    }
    int json_rc = bench_json_write_env("bench_dense", prop.name, g_copy_gbs, g_fma_gflops,
                                       recs.data(), recs.size());
    return g_failed ? g_failed : json_rc;
}
