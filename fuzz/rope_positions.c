/* rope_positions: aborts when memra_mla_rope_interleaved_f32 leaves class rope of the oracle
 * (per-element bound 2^-21 (|x0| + |x1|) + 2^-148 from the input pair, docs/tolerances.md; NaN
 * only against a NaN oracle) for random positions, shapes and bases, or does not run twice to
 * the same bytes.
 *
 * With a device every launch goes through the fuzz testbed (fuzz/fuzz_gpu.h): it also aborts when
 * a launch fails, the kernel writes outside x (guard bands) or modifies positions. Without a GPU
 * (cudaGetDeviceCount fails or finds none) the kernel side is skipped: the target then checks
 * that the validator accepts the drawn tuple, that the launcher returns the CUDA band
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

#include "fuzz/fuzz_gpu.h"
#include "fuzz/fuzz_helpers.h"
#include "kernels/mla.h"
#include "kernels/mla_status.h"
#include "kernels/mla_validate.h"
#include "oracle/mla_oracle.h"
#include "tests/lib/compare.h"
#include "tests/lib/mla_fill.h"
#include "tests/lib/testbed.h"

FUZZ_TARGET_NAME("rope_positions");

#define MAX_POS 16

static int32_t draw_position(fuzz_producer *p) {
    static const int32_t INTERESTING[] = {0,
                                          1,
                                          2,
                                          202751,
                                          202752,
                                          1048575,
                                          1048576,
                                          (1 << 20) - 3,
                                          (1 << 20) + 5,
                                          (1 << 24) - 1,
                                          (1 << 24) + 1,
                                          INT32_MAX,
                                          INT32_MIN,
                                          -1,
                                          -202751,
                                          4096,
                                          8191};
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
    case 2:
        return ldexpf(1.0f + (float)fuzz_range(p, 0, 1023) / 1024.0f,
                      (int)fuzz_range(p, -4, 40)); /* a plausible theta */
    default: return FUZZ_PICK(p, NAMED);
    }
}

int fuzz_one_input(const uint8_t *data, size_t size) {
    tb *t = fuzz_tb_begin(data, size);
    fuzz_producer p = fuzz_producer_init(data, size);
    int32_t n_pos = (int32_t)fuzz_range(&p, 1, MAX_POS);
    int32_t n_vec =
        fuzz_range(&p, 0, 3) ? (int32_t)fuzz_range(&p, 1, 8) : (int32_t)fuzz_range(&p, 1, 64);
    int32_t d_rope = 2 * (int32_t)fuzz_range(&p, 1, 64);
    float base = draw_base(&p);
    uint32_t seed = fuzz_u32(&p);
    int scale_exp = (int)fuzz_range(&p, -20, 20);
    int32_t pos[MAX_POS];
    for (int32_t i = 0; i < n_pos; i++) pos[i] = draw_position(&p);

    char posl[MAX_POS * 12 + 16] = ""; /* "-2147483648," at most per position */
    for (int32_t i = 0, off = 0; i < n_pos; i++)
        off += snprintf(posl + off, sizeof posl - (size_t)off, "%s%d", i ? "," : "", pos[i]);
    fuzz_tb_casef(t,
                  "n_pos=%d n_vec=%d d_rope=%d base=%.9g (0x%08X) seed=0x%08X scale=2^%d "
                  "positions=%s",
                  n_pos, n_vec, d_rope, (double)base, fuzz_bits_of_f32(base), seed, scale_exp,
                  posl);

    size_t n = (size_t)n_pos * n_vec * d_rope;
    float *x = fuzz_alloc(t, n * 4), *ref = fuzz_alloc(t, n * 4);
    double *atol = fuzz_alloc(t, n * sizeof *atol);
    fuzz_fill_f32(x, n, MLA_FILL_REALISTIC, seed, "q_pe_raw", ldexpf(1.0f, scale_exp));
    memcpy(ref, x, n * 4);
    oracle_rope_interleaved_f32(ref, n_pos, n_vec, d_rope, pos, base);
    mla_tol_rope_bounds(x, n, atol);

    int v = mla_validate_rope_interleaved(x, n_pos, n_vec, d_rope, pos, base);
    FUZZ_TB_ASSERT(t, v == 0, "the validator refused a valid tuple: %d (%s)", v,
                   mla_status_message(v));

    if (fuzz_gpu_enabled()) {
        fuzz_buf *dpos = fuzz_in(t, "positions", (size_t)n_pos * 4);
        memcpy(dpos->host, pos, (size_t)n_pos * 4);
        fuzz_buf *dx[2];
        for (int k = 0; k < 2; k++) { /* in place: each run on its own copy of x */
            dx[k] = fuzz_inout(t, "x", n * 4, k ? "rope (run 2)" : "rope (run 1)");
            memcpy(dx[k]->host, x, n * 4);
        }
        fuzz_gpu_upload(t);
        for (int k = 0; k < 2; k++)
            fuzz_launched(t,
                          memra_mla_rope_interleaved_f32(dx[k]->dev, n_pos, n_vec, d_rope,
                                                         dpos->dev, base, NULL),
                          dx[k]->what);
        fuzz_gpu_check(t); /* in place: guards checked, no poison to find */
        const int64_t shape[3] = {n_pos, n_vec, d_rope};
        tb_compare(t, "x", ST_F32, 3, shape, dx[1]->got, "run 2", dx[0]->got, "run 1",
                   MLA_TOL_EXACT, NULL, 1);
        tb_compare(t, "x", ST_F32, 3, shape, dx[0]->got, "kernel", ref, "oracle", MLA_TOL_ROPE,
                   atol, 0);
    } else if (fuzz_no_device()) {
        float *scratch = fuzz_alloc(t, n * 4); /* never touched without a device */
        int rc = memra_mla_rope_interleaved_f32(scratch, n_pos, n_vec, d_rope, pos, base, NULL);
        FUZZ_ASSERT_CUDA_BAND(t, rc, "the rope launcher");
    }
    return 0;
}
