/* gathered_indices: aborts when attn_gathered over an adversarial index list (-1, other
 * negatives, repeats, out of order, the query's own row, all -1) leaves class attn of the
 * oracle, when a query with no valid entry is not exactly +0 (kernel or oracle), or when the
 * oracle's output depends on the list's order / padding beyond class attn.
 *
 * Parameters (from the input's end): n_head 1..8, kv_rank {1, 4, 63, 64, 128, 512} or 1..64,
 * d_rope {0, 2, 64}, t_q 1..3, t_kv 1..300, n_slots 1..96, per-query list style, a seed, scales.
 * Non-negative entries are always rows of the cache (the caller's guarantee). Values: the Philox
 * fill (tests/lib/mla_fill.h) of q_lat, q_pe and the cache, list entries from its stream "idx",
 * keyed by the drawn seed. With a device the launch goes through the fuzz testbed
 * (fuzz/fuzz_gpu.h): it also aborts when the launch fails, the kernel writes outside o_lat (guard
 * bands), leaves an o_lat word unwritten (poison) or modifies an input. Without a device the
 * launcher must return the CUDA band.
 *
 * The MEMRA_MLA_TC_ATTN arms (kernels/mla_door.h: mla_attn_gathered_tc_f32, tf32, 3xtf32 and
 * bf16) run on the same draw, each into its own poisoned o_lat: where the arm's coverage rule
 * holds (tests/lib/tc_attn.h, tc_attn_covers: about a fifth of the draws) each must launch,
 * write every word, give +0 for an empty list and stay within class attn of the oracle under
 * its own walk and arithmetic (tc_attn_walk / tc_attn_arith, the statement the stage files and
 * tests/test_tc_attn_gpu.c share); elsewhere each must return
 * MLA_TC_ATTN_DECLINED and leave its o_lat untouched. Without a device both return the CUDA band
 * (their attribute set-up runs before the coverage check). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_gpu.h"
#include "fuzz/fuzz_helpers.h"
#include "kernels/mla.h"
#include "kernels/mla_door.h"
#include "oracle/mla_oracle.h"
#include "tests/lib/compare.h"
#include "tests/lib/mla_fill.h"
#include "tests/lib/tc_attn.h"
#include "tests/lib/testbed.h"

FUZZ_TARGET_NAME("gathered_indices");

/* Slot s of a query's list (own: the query's row) under `style`; w: one Philox word. */
static int32_t gen_entry(int style, uint32_t w, int32_t s, int32_t tkv, int32_t own,
                         int32_t n_slots) {
    static const int32_t NEG[] = {-1, -1, -1, -2, -7, -1000000, INT32_MIN};
    switch (style) {
    case 0: return -1; /* all invalid */
    case 1: return w % 4u == 0 ? NEG[(w >> 8) % 7u] : (int32_t)((w >> 16) % (uint32_t)tkv);
    case 2: return (int32_t)((w >> 16) % (uint32_t)(tkv < 3 ? tkv : 3)); /* heavy repeats */
    case 3: return s % 3 == 0 ? own : (s % 3 == 1 ? -1 : (int32_t)((w >> 16) % (uint32_t)tkv));
    case 4: /* descending */ return n_slots - 1 - s < tkv ? tkv - 1 - (n_slots - 1 - s) % tkv : -1;
    default: return s < tkv ? s : -1; /* ascending, padded */
    }
}

/* Query i's o_lat[i] (H x R) must be exactly +0 when its list has no valid entry. */
static void check_empty_queries(tb *t, const float *o_lat, const char *who, const int *n_valid,
                                int32_t tq, int32_t H, int32_t R, const float *zeros) {
    const int64_t shape[2] = {H, R};
    for (int32_t i = 0; i < tq; i++)
        if (n_valid[i] == 0) {
            char tensor[48];
            snprintf(tensor, sizeof tensor, "o_lat_q%d", i);
            tb_compare(t, tensor, ST_F32, 2, shape, o_lat + (size_t)i * H * R, who, zeros,
                       "+0 (no valid entry)", MLA_TOL_EXACT, NULL, 1);
        }
}

int fuzz_one_input(const uint8_t *data, size_t size) {
    tb *t = fuzz_tb_begin(data, size);
    fuzz_producer p = fuzz_producer_init(data, size);
    int32_t H = (int32_t)fuzz_range(&p, 1, 8);
    int32_t R = fuzz_range(&p, 0, 1) ? FUZZ_PICK(&p, ((const int32_t[]){1, 4, 63, 64, 128, 512}))
                                     : (int32_t)fuzz_range(&p, 1, 64);
    int32_t dr = FUZZ_PICK(&p, ((const int32_t[]){0, 0, 2, 64}));
    int32_t tq = (int32_t)fuzz_range(&p, 1, 3);
    int32_t tkv = (int32_t)fuzz_range(&p, tq, 300);
    int32_t ns = (int32_t)fuzz_range(&p, 1, 96);
    float scale = FUZZ_PICK(&p, ((const float[]){0.0625f, 1.0f, 0.0f, -0.5f, 4.0f}));
    float vscale = FUZZ_PICK(&p, ((const float[]){1.0f, 0.01f, 8.0f}));
    int style[3];
    for (int i = 0; i < 3; i++) style[i] = (int)fuzz_range(&p, 0, 5);
    uint32_t seed = fuzz_u32(&p);
    seed ^= fuzz_u32(&p); /* 8 bytes, as the seed always took: other draws keep their bytes */
    fuzz_tb_casef(t,
                  "n_head %d kv_rank %d d_rope %d t_q %d t_kv %d n_slots %d scale %g "
                  "value_scale %g styles %d %d %d seed 0x%08X",
                  H, R, dr, tq, tkv, ns, (double)scale, (double)vscale, style[0],
                  tq > 1 ? style[1] : -1, tq > 2 ? style[2] : -1, seed);

    int32_t W = R + dr;
    size_t nq = (size_t)tq * H * R, npe = (size_t)tq * H * dr, nc = (size_t)tkv * W;
    size_t ni = (size_t)tq * ns;
    fuzz_buf *dql = fuzz_in(t, "q_lat", nq * 4), *dqp = fuzz_in(t, "q_pe", npe * 4);
    fuzz_buf *dc = fuzz_in(t, "cache", nc * 4), *di = fuzz_in(t, "idx", ni * 4);
    float *ql = dql->host, *qp = dqp->host, *cache = dc->host;
    int32_t *idx = di->host;
    float *orc = fuzz_alloc(t, nq * 4), *alt = fuzz_alloc(t, nq * 4);
    float *zeros = fuzz_alloc(t, (size_t)H * R * 4);
    int32_t *idx2 = fuzz_alloc(t, ni * 4);
    uint32_t *words = fuzz_alloc(t, ni * 4);
    memset(zeros, 0, (size_t)H * R * 4);
    fuzz_fill_f32(ql, nq, MLA_FILL_REALISTIC, seed, "q_lat", vscale);
    fuzz_fill_f32(qp, npe, MLA_FILL_REALISTIC, seed, "q_pe", vscale);
    fuzz_fill_f32(cache, nc, MLA_FILL_REALISTIC, seed, "cache", 1.0f);
    fuzz_fill_words(words, ni, seed, "idx"); /* the stream "idx": one word per entry */
    int n_valid[3] = {0, 0, 0};
    for (int32_t i = 0; i < tq; i++) {
        int32_t own = tkv - tq + i;
        for (int32_t s = 0; s < ns; s++) {
            int32_t v = gen_entry(style[i], words[(size_t)i * ns + s], s, tkv, own, ns);
            idx[(size_t)i * ns + s] = v;
            n_valid[i] += v >= 0;
        }
        /* the same multiset, valid entries reversed and moved to the front, -1 padded */
        int32_t m = 0;
        for (int32_t s = ns - 1; s >= 0; s--)
            if (idx[(size_t)i * ns + s] >= 0) idx2[(size_t)i * ns + m++] = idx[(size_t)i * ns + s];
        while (m < ns) idx2[(size_t)i * ns + m++] = -1;
    }
    const float *qpe = dr ? qp : NULL;
    oracle_attn_gathered_f32(ql, qpe, cache, idx, orc, H, R, dr, tq, ns, scale);
    oracle_attn_gathered_f32(ql, qpe, cache, idx2, alt, H, R, dr, tq, ns, scale);
    /* oracle vs oracle: any walk; the kernel: the walk it states (kernels/mla.h) */
    double *atol = fuzz_alloc(t, nq * sizeof *atol), *katol = fuzz_alloc(t, nq * sizeof *katol);
    mla_tol_attn_gathered_bounds(ql, qpe, cache, idx, H, R, dr, tq, ns, scale, NULL, atol);
    mla_tol_attn_gathered_bounds(ql, qpe, cache, idx, H, R, dr, tq, ns, scale, mla_attn_walk,
                                 katol);
    const int64_t shape[3] = {tq, H, R};
    check_empty_queries(t, orc, "oracle", n_valid, tq, H, R, zeros);
    tb_compare(t, "o_lat", ST_F32, 3, shape, alt, "oracle (list reordered)", orc, "oracle",
               MLA_TOL_ATTN, atol, 0);
    enum { N_ARMS = 4 };
    static const char *const TC_WHAT[N_ARMS] = {
        "attn_gathered TC arm tf32", "attn_gathered TC arm 3xtf32", "attn_gathered TC arm bf16",
        "attn_gathered TC arm wgmma"};
    static const int TC_ARM[N_ARMS] = {TC_ATTN_TF32, TC_ATTN_3XTF32, TC_ATTN_BF16,
                                       TC_ATTN_WGMMA}; /* tests/lib/tc_attn.h */
    if (fuzz_gpu_enabled()) {
        fuzz_buf *dout = fuzz_out(t, "o_lat", nq * 4, "attn_gathered", 1); /* poisoned */
        /* the TC arms' outputs: full or untouched, decided after the upload (the alignment) */
        fuzz_buf *dtc[N_ARMS] = {fuzz_out(t, "o_lat", nq * 4, TC_WHAT[0], 0),
                                 fuzz_out(t, "o_lat", nq * 4, TC_WHAT[1], 0),
                                 fuzz_out(t, "o_lat", nq * 4, TC_WHAT[2], 0),
                                 fuzz_out(t, "o_lat", nq * 4, TC_WHAT[3], 0)};
        fuzz_gpu_upload(t);
        fuzz_launched(t,
                      memra_mla_attn_gathered_f32(dql->dev, dr ? dqp->dev : NULL, dc->dev, di->dev,
                                                  dout->dev, H, R, dr, tq, ns, scale, NULL),
                      "attn_gathered");
        int covered_by[N_ARMS];
        for (int a = 0; a < N_ARMS; a++) {
            const int covered = covered_by[a] = tc_attn_covers(TC_ARM[a], R, dr, dc->dev);
            const int rc =
                mla_attn_gathered_tc_f32(dql->dev, dr ? dqp->dev : NULL, dc->dev, di->dev,
                                         dtc[a]->dev, H, R, dr, tq, ns, scale, TC_ARM[a], NULL);
            if (covered)
                fuzz_launched(t, rc, TC_WHAT[a]);
            else
                FUZZ_TB_ASSERT(t, rc == MLA_TC_ATTN_DECLINED,
                               "%s: an uncovered shape returned %d, want MLA_TC_ATTN_DECLINED (%d)",
                               TC_WHAT[a], rc, MLA_TC_ATTN_DECLINED);
        }
        fuzz_gpu_check(t);
        check_empty_queries(t, dout->got, "kernel", n_valid, tq, H, R, zeros);
        tb_compare(t, "o_lat", ST_F32, 3, shape, dout->got, "kernel", orc, "oracle", MLA_TOL_ATTN,
                   katol, 0);
        for (int a = 0; a < N_ARMS; a++) {
            const size_t left = tb_count_poison(dtc[a]->got, nq);
            if (!covered_by[a]) {
                FUZZ_TB_ASSERT(t, left == nq, "%s declined but wrote %zu of o_lat's %zu words",
                               TC_WHAT[a], nq - left, nq);
                continue;
            }
            FUZZ_TB_ASSERT(t, left == 0, "%s left %zu of o_lat's %zu words unwritten", TC_WHAT[a],
                           left, nq);
            double *tatol = fuzz_alloc(t, nq * sizeof *tatol);
            const int tc = TC_ARM[a];
            mla_attn_arith tf;
            mla_tol_attn_gathered_bounds_arith(ql, qpe, cache, idx, H, R, dr, tq, ns, scale,
                                               tc_attn_walk(tc),
                                               tc_attn_arith(tc, H, R, dr, tq, ns, &tf), tatol);
            check_empty_queries(t, dtc[a]->got, TC_WHAT[a], n_valid, tq, H, R, zeros);
            tb_compare(t, "o_lat", ST_F32, 3, shape, dtc[a]->got, TC_WHAT[a], orc, "oracle",
                       MLA_TOL_ATTN, tatol, 0);
        }
    } else if (fuzz_no_device()) {
        FUZZ_ASSERT_CUDA_BAND(
            t, memra_mla_attn_gathered_f32(ql, qpe, cache, idx, alt, H, R, dr, tq, ns, scale, NULL),
            "attn_gathered");
        for (int a = 0; a < N_ARMS; a++)
            FUZZ_ASSERT_CUDA_BAND(t,
                                  mla_attn_gathered_tc_f32(ql, qpe, cache, idx, alt, H, R, dr, tq,
                                                           ns, scale, TC_ARM[a], NULL),
                                  TC_WHAT[a]);
    }
    return 0;
}
