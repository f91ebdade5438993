/* rope_positions: aborts when memra_mla_rope_interleaved_f32 leaves class rope of the oracle
 * (per-element bound 2^-21 (|x0| + |x1|) + 2^-148 from the input pair, docs/tolerances.md; NaN
 * only against a NaN oracle) for random positions, shapes and bases, or does not run twice to
 * the same bytes.
 *
 * Without a GPU (cudaGetDeviceCount fails or finds none) the kernel side is skipped: the target
 * then checks that the validator accepts the drawn tuple, that the launcher returns the CUDA band
 * (10000 + cudaError_t) for it, and runs the oracle (so the corpus replays in CPU CI).
 *
 * Draws (from the input's end): n_pos 1..16, n_vec 1..64, even d_rope 2..128, base in {1e4, 1e6,
 * 8e6, a random positive finite f32 (edges included: FLT_MIN, FLT_MAX, 1, subnormal)}, and per
 * position a value from {0, 1, 202751, 202752, 1048575, 1048576, 2^20 +- small, 2^24 +- 1,
 * INT32_MAX, INT32_MIN, -1, -202751, any int32} (mla.h: "positions ... any value", so negative
 * ones are in the contract), x from the Philox fill keyed by the drawn seed at a drawn
 * power-of-two scale.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "fuzz/fuzz_gpu.h"
#include "fuzz/fuzz_helpers.h"
#include "kernels/mla.h"
#include "kernels/mla_status.h"
#include "kernels/mla_validate.h"
#include "oracle/mla_oracle.h"
#include "tests/lib/compare.h"
#include "tests/lib/mla_fill.h"

FUZZ_TARGET_NAME("rope_positions");

#define MAX_POS 16


static int32_t draw_position(fuzz_producer *p) {
    static const int32_t INTERESTING[] = {0, 1, 2, 202751, 202752, 1048575, 1048576,
                                          (1 << 20) - 3, (1 << 20) + 5, (1 << 24) - 1,
                                          (1 << 24) + 1, INT32_MAX, INT32_MIN, -1, -202751,
                                          4096, 8191};
    switch (fuzz_range(p, 0, 3)) {
    case 0: return (int32_t)fuzz_u32(p);
    case 1: return (int32_t)fuzz_range(p, 1048576 - 64, 1048576 + 64);
    default: return FUZZ_PICK(p, INTERESTING);
    }
}

static float draw_base(fuzz_producer *p) {
    static const float NAMED[] = {1e4f, 1e6f, 8e6f};
    static const float EDGES[] = {FLT_MIN, FLT_MAX, 1.0f, 0.5f, 1e-30f, 1e30f, 0x1p-149f, 2.0f};
    switch (fuzz_range(p, 0, 5)) {
    case 0: return FUZZ_PICK(p, EDGES);
    case 1: { /* any positive finite f32 */
        uint32_t u = fuzz_u32(p) & 0x7FFFFFFFu;
        if (u >= 0x7F800000u) u = 0x7F7FFFFFu;
        if (u == 0) u = 1;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    case 2: return ldexpf(1.0f + (float)fuzz_range(p, 0, 1023) / 1024.0f,
                          (int)fuzz_range(p, -4, 40)); /* a plausible theta */
    default: return FUZZ_PICK(p, NAMED);
    }
}

int fuzz_one_input(const uint8_t *data, size_t size) {
    fuzz_producer p = fuzz_producer_init(data, size);
    int32_t n_pos = (int32_t)fuzz_range(&p, 1, MAX_POS);
    int32_t n_vec = fuzz_range(&p, 0, 3) ? (int32_t)fuzz_range(&p, 1, 8)
                                          : (int32_t)fuzz_range(&p, 1, 64);
    int32_t d_rope = 2 * (int32_t)fuzz_range(&p, 1, 64);
    float base = draw_base(&p);
    uint32_t seed = fuzz_u32(&p);
    int scale_exp = (int)fuzz_range(&p, -20, 20);
    int32_t pos[MAX_POS];
    for (int32_t i = 0; i < n_pos; i++) pos[i] = draw_position(&p);

    char what[512];
    uint32_t base_bits;
    memcpy(&base_bits, &base, 4);
    int off = snprintf(what, sizeof what,
                       "n_pos=%d n_vec=%d d_rope=%d base=%.9g (0x%08X) seed=0x%08X scale=2^%d "
                       "positions=",
                       n_pos, n_vec, d_rope, (double)base, base_bits, seed, scale_exp);
    for (int32_t i = 0; i < n_pos && off < (int)sizeof what - 16; i++)
        off += snprintf(what + off, sizeof what - (size_t)off, "%s%d", i ? "," : "", pos[i]);

    size_t n = (size_t)n_pos * n_vec * d_rope;
    float *x = malloc(n * 4), *ref = malloc(n * 4);
    double *atol = malloc(n * sizeof *atol);
    FUZZ_ASSERT_MSG(x && ref && atol, "out of memory (%s)", what);
    mla_fill_host_f32(x, n, MLA_FILL_REALISTIC, seed, "q_pe_raw", ldexpf(1.0f, scale_exp));
    memcpy(ref, x, n * 4);
    oracle_rope_interleaved_f32(ref, n_pos, n_vec, d_rope, pos, base);
    mla_tol_rope_bounds(x, n, atol);

    int v = mla_validate_rope_interleaved(x, n_pos, n_vec, d_rope, pos, base);
    FUZZ_ASSERT_MSG(v == 0, "%s: the validator refused a valid tuple: %d (%s)", what, v,
                    mla_status_message(v));

    if (!fuzz_gpu_enabled()) {
        float *scratch = malloc(n * 4); /* never touched without a device */
        int rc = memra_mla_rope_interleaved_f32(scratch, n_pos, n_vec, d_rope, pos, base, NULL);
        FUZZ_ASSERT_MSG(rc > 10000 && rc < 20000,
                        "%s without a device: returned %d (%s); want the CUDA band", what, rc,
                        mla_status_message(rc));
        free(scratch);
    } else {
        static float *dx;
        static int32_t *dpos;
        static size_t cap;
        cudaError_t e = cudaSuccess;
        if (!dpos) e = cudaMalloc((void **)&dpos, MAX_POS * sizeof(int32_t));
        FUZZ_ASSERT_MSG(e == cudaSuccess, "cudaMalloc: %d", (int)e);
        if (n > cap) {
            if (dx) cudaFree(dx);
            e = cudaMalloc((void **)&dx, n * 4);
            FUZZ_ASSERT_MSG(e == cudaSuccess, "cudaMalloc(%zu): %d", n * 4, (int)e);
            cap = n;
        }
        float *got[2] = {malloc(n * 4), malloc(n * 4)};
        FUZZ_ASSERT_MSG(got[0] && got[1], "out of memory (%s)", what);
        e = cudaMemcpy(dpos, pos, (size_t)n_pos * 4, cudaMemcpyHostToDevice);
        FUZZ_ASSERT_MSG(e == cudaSuccess, "%s: upload positions: %d", what, (int)e);
        for (int k = 0; k < 2; k++) {
            e = cudaMemcpy(dx, x, n * 4, cudaMemcpyHostToDevice);
            FUZZ_ASSERT_MSG(e == cudaSuccess, "%s: upload x: %d", what, (int)e);
            int rc = memra_mla_rope_interleaved_f32(dx, n_pos, n_vec, d_rope, dpos, base, NULL);
            FUZZ_ASSERT_MSG(rc == 0, "%s: launcher returned %d (%s)", what, rc,
                            mla_status_message(rc));
            e = cudaMemcpy(got[k], dx, n * 4, cudaMemcpyDeviceToHost);
            FUZZ_ASSERT_MSG(e == cudaSuccess, "%s: kernel failed: %d (%s)", what, (int)e,
                            cudaGetErrorString(e));
        }
        FUZZ_ASSERT_MSG(memcmp(got[0], got[1], n * 4) == 0,
                        "%s: two runs of the same call gave different bytes", what);
        mla_tol tol = mla_tol_exact();
        tol.cls = MLA_TOL_ROPE;
        tol.atol_elem = atol;
        mla_cmp_result r = mla_compare_f32(got[0], ref, n, &tol);
        if (!r.pass) {
            size_t i = r.worst_index, per_pos = (size_t)n_vec * d_rope;
            size_t pi = i / per_pos, vi = (i % per_pos) / (size_t)d_rope,
                   ci = i % (size_t)d_rope;
            FUZZ_ASSERT_MSG(r.pass,
                            "%s: kernel outside class rope: %zu of %zu elements fail; worst "
                            "x[%zu][%zu][%zu] (position %d, pair j=%zu, angle %.9g): got %.9g "
                            "oracle %.9g input pair (%.9g, %.9g) abs error %.3g bound %.3g",
                            what, r.n_fail, n, pi, vi, ci, pos[pi], ci / 2,
                            (double)oracle_rope_angle(pos[pi], (int32_t)(ci / 2), d_rope, base),
                            (double)r.got_worst, (double)r.ref_worst, (double)x[i & ~(size_t)1],
                            (double)x[i | 1], r.worst_abs, r.worst_bound);
        }
        free(got[0]);
        free(got[1]);
    }
    free(x);
    free(ref);
    free(atol);
    return 0;
}
