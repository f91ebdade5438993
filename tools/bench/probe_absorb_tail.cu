/* probe_absorb_tail: what keeps absorb_q's decode arm (absorb_q_reg_f32) 0.7 us above the read of
 * its weights? (issue "Ahead of the PyTorch peer", docs/performance.md, twenty-second session.)
 *
 * The arm: 128 blocks (64 heads x 2 column halves) of 256 threads; each thread loads its column's
 * 192 weights into registers, all at once, then the q_nope row into shared memory, a barrier, and
 * its output's serial chain of 192 __fmaf_rn. The fourteenth session's hypothesis (unmeasured):
 * the chain runs after the last load. The q_nope loads are issued after the weights, so the
 * barrier waits for them behind each thread's 192 loads, and the whole chain (192 dependent fmas,
 * about 0.4 us at 4 cycles) follows the block's last byte. Rows, each a standalone kernel:
 *   launcher          memra_mla_absorb_q_f32 (the reference bytes);
 *   R q after         a copy of the arm before a785bda (the launcher since: 128 x 2, q first);
 *   R q first         the q_nope element loaded into a register before the weights, stored after;
 *   R ... no chain    the same loads, the 192 products summed in 4 independent chains (other
 *                     bytes: a timing probe of the chain's cost, not a candidate);
 *   R loads only      the weights alone, xor-folded (no q, no barrier, no fma);
 *   R split NC x NS   NS threads a column (NC columns a block): part p loads rows
 *                     [p DN / NS, (p + 1) DN / NS) and continues the chain part p - 1 left in
 *                     shared memory (NS - 1 barriers): the same chain, the same bytes, and only
 *                     the last part's fmas after its own loads;
 *   read wk_b         the streaming read of the same bytes (bench_dense's read floor).
 * Each row is the median of 30 launches after an L2 flush, the median of 5 interleaved rounds.
 * Without a GPU it exits 77. */
#include "kernels/mla.h"
#include "tests/lib/geometry.h"
#include "tools/bench/probe_util.cuh"

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <functional>
#include <vector>

enum { H = MLA_GLM5_N_HEAD, R = MLA_GLM5_KV_RANK, DN = MLA_GLM5_D_NOPE };

/* MODE 0: the serial chain (the shipped bytes); 1: four independent chains (timing only);
 * 2: the weights xor-folded, no q (timing only). */
template <int NC, int NS, bool QFIRST, int MODE>
static __global__ void __launch_bounds__(NC *NS)
    ab_tail(const float *__restrict__ q_nope, const float *__restrict__ w,
            float *__restrict__ q_lat) {
    static_assert(DN % NS == 0 && R % NC == 0 && NC % 32 == 0, "whole parts and blocks");
    constexpr int NBH = R / NC, DP = DN / NS, NT = NC * NS;
    __shared__ float qs[DN];
    __shared__ float accs[NS > 1 ? NC : 1];
    const int tid = threadIdx.x, part = tid / NC, cl = tid % NC;
    const int h = blockIdx.x / NBH, c = (blockIdx.x % NBH) * NC + cl;
    const float *wc = w + ((size_t)h * DN + (size_t)part * DP) * R + c;
    constexpr int QV = (DN + NT - 1) / NT; /* q_nope elements a thread */
    float qv[QV];
#pragma unroll
    for (int u = 0; u < QV; u++)
        qv[u] = QFIRST && MODE != 2 && tid + u * NT < DN
                    ? ld_pinned(q_nope + (size_t)h * DN + tid + u * NT)
                    : 0.0f;
    float wr[DP];
#pragma unroll
    for (int d = 0; d < DP; d++) wr[d] = ld_pinned(wc + (size_t)d * R);
    if (MODE == 2) {
        uint32_t x = 0;
#pragma unroll
        for (int d = 0; d < DP; d++) x ^= __float_as_uint(wr[d]);
        if (x == 0x12345678u) q_lat[(size_t)h * R + c] = 1.0f; /* never: keeps the loads */
        return;
    }
    if (QFIRST) {
#pragma unroll
        for (int u = 0; u < QV; u++)
            if (tid + u * NT < DN) qs[tid + u * NT] = qv[u];
    } else {
        for (int d = tid; d < DN; d += NT) qs[d] = __ldg(q_nope + (size_t)h * DN + d);
    }
    __syncthreads(); /* qs */
    float acc = 0.0f;
    if (MODE == 1) {
        float a4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int d = 0; d < DP; d++) a4[d & 3] = __fmaf_rn(qs[part * DP + d], wr[d], a4[d & 3]);
        acc = (a4[0] + a4[1]) + (a4[2] + a4[3]);
        if (NS > 1) { /* timing only: the parts' sums, as many barriers as the chain's form */
            for (int p = 0; p < NS; p++) {
                if (part == p) accs[cl] = p ? accs[cl] + acc : acc;
                __syncthreads();
            }
            acc = accs[cl];
        }
    } else {
        /* part p continues the chain from part p - 1's value: ascending d from 0.0f */
#pragma unroll
        for (int p = 0; p < NS; p++) {
            if (part == p) {
                if (p) acc = accs[cl];
#pragma unroll
                for (int d = 0; d < DP; d++) acc = __fmaf_rn(qs[p * DP + d], wr[d], acc);
                if (p + 1 < NS) accs[cl] = acc;
            }
            if (p + 1 < NS) __syncthreads();
        }
    }
    if (part == NS - 1) q_lat[(size_t)h * R + c] = acc;
}

struct row {
    const char *name;
    std::function<void()> fn;
    float *out; /* NULL: a read */
    int same;   /* 1 / 0: bytes equal the launcher's or not; -1: the reference or a read;
                 * -2: a timing probe with other bytes */
    std::vector<double> t;
};

template <int NC, int NS, bool QFIRST, int MODE>
static void launch(const float *q, const float *w, float *o) {
    ab_tail<NC, NS, QFIRST, MODE><<<H *(R / NC), NC * NS>>>(q, w, o);
}

int main(void) {
    cudaDeviceProp prop;
    probe_device("probe_absorb_tail", &prop);
    const dense_decode_inputs in = dense_decode_inputs_make();
    const float *wk = in.wk, *q = in.q_nope;
    const size_t n = (size_t)H * R;
    std::vector<row> rows;
    auto add = [&](const char *name, void (*k)(const float *, const float *, float *), int same) {
        float *o = NULL;
        CK(cudaMalloc(&o, n * 4));
        rows.push_back({name, [=] { k(q, wk, o); }, o, same, {}});
    };
    float *o_ref = NULL;
    CK(cudaMalloc(&o_ref, n * 4));
    rows.push_back({"absorb_q: launcher",
                    [=] {
                        if (memra_mla_absorb_q_f32(q, wk, o_ref, 1, H, DN, R, NULL))
                            exit((fprintf(stderr, "absorb_q failed\n"), 1));
                    },
                    o_ref,
                    -1,
                    {}});
    add("R 256 x 1, q after (the arm before a785bda)", launch<256, 1, false, 0>, 0);
    add("R 256 x 1, q first", launch<256, 1, true, 0>, 0);
    add("R 256 x 1, q after, no chain (4 sums: timing only)", launch<256, 1, false, 1>, -2);
    add("R 256 x 1, q first, no chain (4 sums: timing only)", launch<256, 1, true, 1>, -2);
    add("R 256 x 1, loads only (timing only)", launch<256, 1, false, 2>, -2);
    add("R split 256 x 2, q first", launch<256, 2, true, 0>, 0);
    add("R split 128 x 2, q first", launch<128, 2, true, 0>, 0);
    add("R split 128 x 2, q after", launch<128, 2, false, 0>, 0);
    add("R split 64 x 2, q first", launch<64, 2, true, 0>, 0);
    add("R split 64 x 3, q first", launch<64, 3, true, 0>, 0);
    add("R split 128 x 3, q first", launch<128, 3, true, 0>, 0);
    add("R split 64 x 4, q first", launch<64, 4, true, 0>, 0);
    add("R split 32 x 4, q first", launch<32, 4, true, 0>, 0);
    add("R split 128 x 4, q first", launch<128, 4, true, 0>, 0);
    add("R split 256 x 4, q first", launch<256, 4, true, 0>, 0);
    add("R split 128 x 4, q first, no chain (timing only)", launch<128, 4, true, 1>, -2);
    add("R split 128 x 4, loads only (timing only)", launch<128, 4, false, 2>, -2);
    rows.push_back({"read wk_b, 128 x 8 blocks",
                    [=] { stream_read<<<128 * 8, 256>>>((const float4 *)wk, in.nwk / 4, g_sink); },
                    NULL,
                    -1,
                    {}});
    rows.push_back({"read wk_b, 132 x 8 blocks",
                    [=] {
                        stream_read<<<(unsigned)prop.multiProcessorCount * 8, 256>>>(
                            (const float4 *)wk, in.nwk / 4, g_sink);
                    },
                    NULL,
                    -1,
                    {}});
    double t_empty = 1e30;
    for (int rep = 0; rep < 5; rep++) { /* interleaved, so drift hits every row alike */
        for (auto &r : rows) r.t.push_back(median_us(r.fn));
        t_empty = std::min(t_empty, median_us([&] { empty_kernel<<<132, 256>>>(g_sink); }));
    }
    CK(cudaDeviceSynchronize());
    std::vector<float> ref(n), got(n);
    CK(cudaMemcpy(ref.data(), o_ref, n * 4, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (auto &r : rows) {
        if (r.same != 0) continue;
        CK(cudaMemcpy(got.data(), r.out, n * 4, cudaMemcpyDeviceToHost));
        r.same = memcmp(got.data(), ref.data(), n * 4) == 0;
        bad += !r.same;
    }
    printf("probe_absorb_tail on %s (%d SMs): glm5 decode absorb_q; medians of 30 launches after "
           "an L2 flush, the median of 5 interleaved rounds (min / max of the rounds beside); "
           "empty kernel %.2f us\n\n",
           prop.name, prop.multiProcessorCount, t_empty);
    printf("| row | us | rounds | bytes == launcher |\n| --- | ---: | --- | --- |\n");
    for (auto &r : rows) {
        const auto mm = std::minmax_element(r.t.begin(), r.t.end());
        printf("| %s | %.2f | %.2f-%.2f | %s |\n", r.name, median_of(r.t), *mm.first, *mm.second,
               !r.out         ? "(a read)"
               : r.same == -1 ? "(the reference)"
               : r.same == -2 ? "(timing only)"
               : r.same       ? "yes"
                              : "NO");
    }
    if (bad) fprintf(stderr, "probe_absorb_tail: %d variant(s) changed the bytes\n", bad);
    return bad ? 1 : 0;
}
