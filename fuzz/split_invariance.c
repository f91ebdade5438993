/* split_invariance: aborts when absorb_q_split / decompress_v_split at a drawn split give bytes
 * different from the unsplit launcher or from the oracle, for a random small shape and inputs.
 *
 * With a device every launch goes through the fuzz testbed (fuzz/fuzz_gpu.h): it also aborts when
 * a launch fails, a kernel writes outside its output (guard bands), leaves an output word
 * unwritten (poison) or modifies an input. Without a GPU (cudaGetDeviceCount fails or finds
 * none) the kernel side is skipped: the target then checks that the validator accepts the drawn
 * tuple, that every launcher returns the CUDA band (10000 + cudaError_t) for it, and runs the
 * oracle (so the corpus replays in CPU CI).
 *
 * Draws (from the input's end): t_q 1..8, n_head 1..80, d_nope and d_v 1..300, kv_rank
 * 1..1024 (= MLA_MAX_RANK), split 1..out_dim per kernel, a fill seed and kind (Philox fill of
 * tests/lib/mla_fill.h keyed by the drawn seed). Each dimension is drawn small most of the
 * time and at its edges sometimes; then n_head and t_q are shrunk until t_q * n_head *
 * head_dim * kv_rank <= 2^20 per kernel, so one execution stays in the milliseconds (a 2-minute
 * run does thousands). The property is byte equality (class exact: one fmaf chain per output).
 *
 * A last draw (the input's front; 0 when the input has run out, so an older corpus entry keeps
 * its shapes) may set the shipped head dimensions, which the draws above reach about once in
 * 2,400 inputs, so that the launchers' shape-keyed arms run (kernels/mla_dense.cu):
 *   1: t_q 1, d_nope 192, kv_rank as drawn: absorb_q_reg_f32, its 128-column blocks partial
 *      where kv_rank % 128 != 0;
 *   2: d_nope 192, d_v 256, kv_rank 512 (glm5), t_q as drawn: at t_q 1 the register arm, at
 *      t_q <= 4 decompress_v_flat_f32;
 *   3: d_nope 256, d_v 256, kv_rank 512 (glm5_next): absorb's bulk arm at d_nope 256.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz/fuzz_gpu.h"
#include "fuzz/fuzz_helpers.h"
#include "kernels/mla.h"
#include "kernels/mla_status.h"
#include "kernels/mla_validate.h"
#include "oracle/mla_oracle.h"
#include "tests/lib/geometry.h"
#include "tests/lib/mla_fill.h"
#include "tests/lib/testbed.h"

FUZZ_TARGET_NAME("split_invariance");

#define WORK_BUDGET (1LL << 20)

/* A dimension in lo..hi: small most of the time, the edges sometimes. */
static int32_t draw_dim(fuzz_producer *p, int32_t lo, int32_t hi, int32_t small) {
    switch (fuzz_range(p, 0, 7)) {
    case 0: return lo;
    case 1: return hi;
    case 2: return (int32_t)fuzz_range(p, lo, hi);
    default: return (int32_t)fuzz_range(p, lo, small < hi ? small : hi);
    }
}

typedef struct {
    int absorb;
    int32_t t_q, n_head, head_dim, kv_rank, split;
    uint32_t seed;
    int small_int;
    /* set by prepare() */
    char desc[200];
    int32_t out_dim;
    const char *out_name;
    fuzz_buf *in, *w, *out[2]; /* out[0]: the unsplit launcher's, out[1]: the split twin's */
    float *ref;
} draw;

/* Host side of one problem: inputs, oracle, validator; with a device its buffers (one
 * freshly poisoned output per launch), else the "no device" rule. */
static void prepare(tb *t, draw *d) {
    const char *kname = d->absorb ? "absorb_q" : "decompress_v";
    snprintf(d->desc, sizeof d->desc,
             "%s t_q=%d n_head=%d %s=%d kv_rank=%d split=%d fill=%s seed=0x%08X", kname, d->t_q,
             d->n_head, d->absorb ? "d_nope" : "d_v", d->head_dim, d->kv_rank, d->split,
             d->small_int ? "small_int" : "realistic", d->seed);
    fuzz_tb_casef(t, "%s", d->desc);
    const char *in_name = d->absorb ? "q_nope" : "o_lat", *w_name = d->absorb ? "wk_b" : "wv_b";
    d->out_name = d->absorb ? "q_lat" : "out";
    d->out_dim = d->absorb ? d->kv_rank : d->head_dim;
    size_t n_in = (size_t)d->t_q * d->n_head * (d->absorb ? d->head_dim : d->kv_rank);
    size_t n_w = (size_t)d->n_head * d->head_dim * d->kv_rank;
    size_t n_out = (size_t)d->t_q * d->n_head * d->out_dim;
    d->in = fuzz_in(t, in_name, n_in * 4);
    d->w = fuzz_in(t, w_name, n_w * 4);
    float *in = d->in->host, *w = d->w->host;
    d->ref = fuzz_alloc(t, n_out * 4);
    mla_fill_kind kind = d->small_int ? MLA_FILL_SMALL_INT : MLA_FILL_REALISTIC;
    fuzz_fill_f32(in, n_in, kind, d->seed, in_name, d->small_int ? 0.25f : 1.0f);
    fuzz_fill_f32(w, n_w, kind, d->seed, w_name, d->small_int ? 0.0625f : 0.125f);
    if (d->absorb)
        oracle_absorb_q_f32(in, w, d->ref, d->t_q, d->n_head, d->head_dim, d->kv_rank);
    else
        oracle_decompress_v_f32(in, w, d->ref, d->t_q, d->n_head, d->head_dim, d->kv_rank);

    int v = d->absorb ? mla_validate_absorb_q(in, w, d->ref, d->t_q, d->n_head, d->head_dim,
                                              d->kv_rank, d->split)
                      : mla_validate_decompress_v(in, w, d->ref, d->t_q, d->n_head, d->head_dim,
                                                  d->kv_rank, d->split);
    FUZZ_TB_ASSERT(t, v == 0, "the validator refused a valid tuple: %d (%s)", v,
                   mla_status_message(v));

    if (fuzz_gpu_enabled()) {
        char what[64];
        for (int k = 0; k < 2; k++) { /* k = 0: unsplit launcher, k = 1: split twin */
            snprintf(what, sizeof what, "%s %s launcher", kname, k ? "split" : "unsplit");
            d->out[k] = fuzz_out(t, d->out_name, n_out * 4, what, 1); /* poisoned */
        }
    } else if (fuzz_no_device()) {
        /* Host pointers are fine here: with no device nothing is dereferenced. */
        float *ref = d->ref;
        int rc1 = d->absorb ? memra_mla_absorb_q_f32(in, w, ref, d->t_q, d->n_head, d->head_dim,
                                                     d->kv_rank, NULL)
                            : memra_mla_decompress_v_f32(in, w, ref, d->t_q, d->n_head, d->head_dim,
                                                         d->kv_rank, NULL);
        int rc2 = d->absorb
                      ? memra_mla_absorb_q_split_f32(in, w, ref, d->t_q, d->n_head, d->head_dim,
                                                     d->kv_rank, d->split, NULL)
                      : memra_mla_decompress_v_split_f32(in, w, ref, d->t_q, d->n_head, d->head_dim,
                                                         d->kv_rank, d->split, NULL);
        FUZZ_ASSERT_CUDA_BAND(t, rc1, "the unsplit launcher");
        FUZZ_ASSERT_CUDA_BAND(t, rc2, "the split launcher");
    }
}

static void launch(tb *t, const draw *d) {
    const float *in = d->in->dev, *w = d->w->dev;
    for (int k = 0; k < 2; k++) {
        float *out = d->out[k]->dev;
        int rc;
        if (d->absorb)
            rc = k ? memra_mla_absorb_q_split_f32(in, w, out, d->t_q, d->n_head, d->head_dim,
                                                  d->kv_rank, d->split, NULL)
                   : memra_mla_absorb_q_f32(in, w, out, d->t_q, d->n_head, d->head_dim, d->kv_rank,
                                            NULL);
        else
            rc = k ? memra_mla_decompress_v_split_f32(in, w, out, d->t_q, d->n_head, d->head_dim,
                                                      d->kv_rank, d->split, NULL)
                   : memra_mla_decompress_v_f32(in, w, out, d->t_q, d->n_head, d->head_dim,
                                                d->kv_rank, NULL);
        fuzz_launched(t, rc, d->out[k]->what);
    }
}

static void compare(tb *t, const draw *d) {
    fuzz_tb_casef(t, "%s", d->desc);
    const int64_t shape[3] = {d->t_q, d->n_head, d->out_dim};
    const float *got0 = d->out[0]->got, *got1 = d->out[1]->got;
    tb_compare(t, d->out_name, ST_F32, 3, shape, got0, "unsplit", d->ref, "oracle", MLA_TOL_EXACT,
               NULL, 1);
    tb_compare(t, d->out_name, ST_F32, 3, shape, got1, "split", got0, "unsplit", MLA_TOL_EXACT,
               NULL, 1);
}

int fuzz_one_input(const uint8_t *data, size_t size) {
    tb *t = fuzz_tb_begin(data, size);
    fuzz_producer p = fuzz_producer_init(data, size);
    int32_t t_q = draw_dim(&p, 1, 8, 4), n_head = draw_dim(&p, 1, 80, 8);
    int32_t d_nope = draw_dim(&p, 1, 300, 64), d_v = draw_dim(&p, 1, 300, 64);
    int32_t kv_rank = draw_dim(&p, 1, 1024, 128);
    uint32_t seed = fuzz_u32(&p);
    int small_int = (int)fuzz_range(&p, 0, 3) == 0;
    int64_t split_pick[2] = {fuzz_range(&p, 0, 7), fuzz_range(&p, 1, 1024)};
    int64_t split_pick_v[2] = {fuzz_range(&p, 0, 7), fuzz_range(&p, 1, 300)};
    switch (fuzz_range(&p, 0, 7)) { /* the shipped head dimensions (file comment) */
    case 1:
        t_q = 1;
        d_nope = MLA_GLM5_D_NOPE;
        break;
    case 2:
        d_nope = MLA_GLM5_D_NOPE;
        d_v = MLA_GLM5_D_V;
        kv_rank = MLA_GLM5_KV_RANK;
        break;
    case 3:
        d_nope = MLA_GLM5_NEXT_D_NOPE;
        d_v = MLA_GLM5_NEXT_D_V;
        kv_rank = MLA_GLM5_NEXT_KV_RANK;
        break;
    default: break;
    }
    draw ds[2];
    for (int absorb = 1; absorb >= 0; absorb--) {
        draw d = {.absorb = absorb,
                  .t_q = t_q,
                  .n_head = n_head,
                  .head_dim = absorb ? d_nope : d_v,
                  .kv_rank = kv_rank,
                  .split = 1,
                  .seed = seed,
                  .small_int = small_int};
        while ((int64_t)d.t_q * d.n_head * d.head_dim * d.kv_rank > WORK_BUDGET) {
            if (d.n_head > 1)
                d.n_head = (d.n_head + 1) / 2;
            else if (d.t_q > 1)
                d.t_q = (d.t_q + 1) / 2;
            else
                break; /* 300 * 1024 < 2^20: one (token, head) always fits */
        }
        int32_t out_dim = absorb ? d.kv_rank : d.head_dim;
        const int64_t *pick = absorb ? split_pick : split_pick_v;
        /* 1, 2, out_dim, out_dim - 1 at the edges; else anything in 1..out_dim. */
        switch (pick[0]) {
        case 0: d.split = 1; break;
        case 1: d.split = out_dim; break;
        case 2: d.split = out_dim > 1 ? out_dim - 1 : 1; break;
        case 3: d.split = out_dim >= 2 ? 2 : 1; break;
        default: d.split = (int32_t)((pick[1] - 1) % out_dim) + 1; break;
        }
        ds[1 - absorb] = d;
        prepare(t, &ds[1 - absorb]);
    }
    if (fuzz_gpu_enabled()) { /* both problems: one upload, four launches, one check */
        fuzz_gpu_upload(t);
        launch(t, &ds[0]);
        launch(t, &ds[1]);
        fuzz_tb_casef(t, "%s; %s", ds[0].desc, ds[1].desc);
        fuzz_gpu_check(t);
        compare(t, &ds[0]);
        compare(t, &ds[1]);
    }
    return 0;
}
