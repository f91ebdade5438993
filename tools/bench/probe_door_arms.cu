/* probe_door_arms.cu: the MEMRA_MLA_TC_ATTN door arms (kernels/mla_attn.cu: attn_tc_f32, tf32,
 * 32-head tiles; attn_tc_bf16, bf16, 64-head tiles) side by side at glm5's attention rows, each
 * call through mla_attn_absorbed_tc_f32 (the arm itself, its walk and combine), timed as
 * bench_dense times (median of 30 launches, each after an L2 flush), in interleaved rounds.
 * With --once each row runs once per arm and untimed, for a profiler (ncu --kernel-name
 * regex:"attn_tc|attn_combine"): the rows in order decode 32K, verify, decode 8K, decode 128K,
 * each tf32 then bf16. The bytes of the two arms differ (each its own class); the probe prints
 * how far apart they are, not whether either is right (//tests:tc_attn_gpu_test and the golden
 * suites' _tctf32 / _tcbf16 checks do that).
 *     probe_door_arms [--once] [--rounds N] */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "kernels/mla.h"
#include "kernels/mla_door.h"
#include "tools/bench/probe_util.cuh"

int main(int argc, char **argv) {
    bool once = false;
    int rounds = 3;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--once")) once = true;
        if (!strcmp(argv[a], "--rounds") && a + 1 < argc) rounds = atoi(argv[++a]);
    }
    cudaDeviceProp prop;
    probe_device("probe_door_arms", &prop);
    const int32_t H = MLA_GLM5_N_HEAD, R = MLA_GLM5_KV_RANK, DR = MLA_GLM5_D_ROPE, W = R + DR;
    const int32_t T_KV_MAX = 131072, T_Q_MAX = 4;
    const float scale = MLA_GLM5_SCALE;
    float *cache, *ql, *qp, *o[2];
    CK(cudaMalloc(&cache, (size_t)T_KV_MAX * W * 4));
    CK(cudaMalloc(&ql, (size_t)T_Q_MAX * H * R * 4));
    CK(cudaMalloc(&qp, (size_t)T_Q_MAX * H * DR * 4));
    for (int a = 0; a < 2; a++) CK(cudaMalloc(&o[a], (size_t)T_Q_MAX * H * R * 4));
    fill<<<1024, 256>>>(cache, (int64_t)T_KV_MAX * W, mla_fill_name_hash("cache"), 1.0f);
    fill<<<256, 256>>>(ql, (int64_t)T_Q_MAX * H * R, mla_fill_name_hash("q_lat"), 0.1f);
    fill<<<64, 256>>>(qp, (int64_t)T_Q_MAX * H * DR, mla_fill_name_hash("q_pe"), 1.0f);
    CK(cudaDeviceSynchronize());
    struct row {
        const char *name;
        int32_t t_q, t_kv;
    } rows[] = {{"decode 32K", 1, 32768},
                {"verify (t_q 4)", 4, 32768},
                {"decode 8K", 1, 8192},
                {"decode 128K", 1, 131072}};
    const int arms[2] = {1, 2};
    const char *arm_name[2] = {"tf32", "bf16"};
    auto call = [&](const row &r, int a) {
        const int rc = mla_attn_absorbed_tc_f32(ql, qp, cache, o[a], H, R, DR, r.t_q, r.t_kv, scale,
                                                arms[a], NULL);
        if (rc != 0) {
            fprintf(stderr, "probe_door_arms: %s arm %s returned %d\n", r.name, arm_name[a], rc);
            exit(1);
        }
    };
    if (once) {
        for (const row &r : rows)
            for (int a = 0; a < 2; a++) call(r, a);
        CK(cudaDeviceSynchronize());
        printf("probe_door_arms --once: %zu rows x 2 arms ran\n", sizeof rows / sizeof rows[0]);
        return 0;
    }
    printf("| row | tf32 us | bf16 us | bf16 / tf32 | max |tf32 - bf16| / max |tf32| |\n");
    printf("| --- | ---: | ---: | ---: | ---: |\n");
    for (const row &r : rows) {
        std::vector<double> t[2];
        for (int k = 0; k < rounds; k++)
            for (int a = 0; a < 2; a++) t[a].push_back(median_us([&] { call(r, a); }));
        const size_t n = (size_t)r.t_q * H * R;
        std::vector<float> h[2];
        for (int a = 0; a < 2; a++) {
            h[a].resize(n);
            CK(cudaMemcpy(h[a].data(), o[a], n * 4, cudaMemcpyDeviceToHost));
        }
        double dmax = 0, vmax = 0;
        for (size_t e = 0; e < n; e++) {
            dmax = fmax(dmax, fabs((double)h[0][e] - h[1][e]));
            vmax = fmax(vmax, fabs((double)h[0][e]));
        }
        const double m0 = median_of(t[0]), m1 = median_of(t[1]);
        printf("| %s | %.2f | %.2f | %.3f | %.2e |\n", r.name, m0, m1, m1 / m0,
               vmax > 0 ? dmax / vmax : dmax);
    }
    return 0;
}
