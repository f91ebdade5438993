/* stages_kpool.c: the DSA k-pool indexer's stage descriptors (case.h), each with its oracle
 * half (inputs from the fill, outputs from oracle/) and its GPU half (the kernels on the
 * testbed). Tolerance classes: docs/tolerances.md; the rules: docs/kpool.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mla.h"
#include "kernels/mla_door.h"
#include "kernels/mla_status.h"
#include "oracle/mla_oracle.h"
#include "tests/lib/case.h"
#include "tests/lib/stage_util.h"

/* ------------------------------------------------------------------ oracle halves ---------- */
/* Indexer inputs: idx_k, idx_gate [t_kv][idx_dim] (the rows [k | gate] appended to the state),
 * idx_ape [pool][idx_dim], idx_q [t_q][heads][idx_dim], idx_hw [t_q][heads]. Fill scales: k, q,
 * ape ~ U(-1, 1); gate ~ U(-4, 4) so the pool softmax is far from uniform; hw ~ U(-1, 1) (head
 * weights of either sign, so scores are a signed mix and rarely tie). */
/* geometry idx_repeat R > 0: rows r >= R of an indexer row input are row r % R (in place;
 * idempotent, so a tensor shared by stages stays the same). tools/golden/mla_golden.py
 * (repeat_rows) restates it. */
static void kpool_repeat_rows(const mla_ctx *ctx, float *x) {
    const int64_t R = G->idx_repeat, d = G->idx_dim;
    if (R <= 0 || !x) return;
    for (int64_t r = R; r < G->t_kv; r++) memcpy(x + r * d, x + (r % R) * d, (size_t)d * sizeof *x);
}

static int kpool_rows_inputs(mla_ctx *ctx, const float **k, const float **gate) {
    *k = mla_ctx_input_f32(ctx, "idx_k", 2, SHAPE(G->t_kv, G->idx_dim), EXACT_FILL, 1.0f);
    *gate = mla_ctx_input_f32(ctx, "idx_gate", 2, SHAPE(G->t_kv, G->idx_dim), MLA_FILL_REALISTIC,
                              G->gate_scale != 0.0f ? G->gate_scale : MLA_KPOOL_GATE_SCALE);
    if (G->idx_repeat < 0 || (G->idx_repeat > 0 && G->idx_repeat % G->pool != 0))
        return mla_ctx_fail(ctx, "idx_repeat %d: 0 or a positive multiple of pool %d",
                            G->idx_repeat, G->pool);
    kpool_repeat_rows(ctx, (float *)*k);
    kpool_repeat_rows(ctx, (float *)*gate);
    return *k && *gate ? 0 : -1;
}

/* index_append_ring: the state plane [k | gate] after appending every t_kv row.
 * Flat (state_rows == 0): two calls, rows 0..t_kv-t_q-1 (the cached prefix) then the t_q rows
 * of the queries at slot t_kv - t_q; output idx_state [t_kv][2 idx_dim].
 * Ring (state_rows > 0): the chunks of mla_kpool_ring_chunk at slot = logical row (the call
 * wraps it mod state_rows); output idx_state [state_rows][2 idx_dim], the ring's final content. */
static int index_append_ring_oracle(mla_ctx *ctx) {
    const float *k, *gate;
    if (kpool_rows_inputs(ctx, &k, &gate)) return -1;
    int32_t d = G->idx_dim, rows = G->state_rows ? G->state_rows : G->t_kv;
    float *plane = mla_ctx_output(ctx, "idx_state", ST_F32, 2, SHAPE(rows, 2 * d));
    if (!plane) return -1;
    if (G->state_rows == 0) {
        int32_t pre = G->t_kv - G->t_q;
        if (pre > 0) oracle_index_append_ring_f32(plane, k, gate, 0, pre, d, d, 0);
        oracle_index_append_ring_f32(plane, k + (size_t)pre * d, gate + (size_t)pre * d, pre,
                                     G->t_q, d, d, 0);
        return 0;
    }
    int32_t done = 0;
    for (int32_t ck = 0; done < G->t_kv; ck++) {
        int32_t n = mla_kpool_ring_chunk(ck, done, G->t_kv, G->state_rows, G->pool);
        oracle_index_append_ring_f32(plane, k + (size_t)done * d, gate + (size_t)done * d, done, n,
                                     d, d, G->state_rows);
        done += n;
    }
    return 0;
}

/* pool_keys [n_pools][idx_dim], class pool_key. Flat: one full build over idx_state. Ring: the
 * append schedule replayed on a ring with an incremental build (pool_begin = the pools complete
 * before the chunk) after each chunk; the result must equal the flat full build bit for bit
 * (docs/kpool.md), else the stage fails. */
static int pool_keys_oracle(mla_ctx *ctx) {
    int32_t d = G->idx_dim, np = G->n_pools, pool = G->pool;
    const float *ape = mla_ctx_input_f32(ctx, "idx_ape", 2, SHAPE(pool, d), MLA_FILL_REALISTIC,
                                         G->ape_scale != 0.0f ? G->ape_scale : 1.0f);
    const float *state = mla_ctx_need_f32(ctx, "idx_state");
    if (!ape || !state) return -1;
    if ((int64_t)np * pool > G->t_kv) return mla_ctx_fail(ctx, "n_pools * pool > t_kv");
    float *keys = mla_ctx_output(ctx, "pool_keys", ST_F32, 2, SHAPE(np, d));
    if (!keys) return -1;
    if (G->state_rows == 0) {
        oracle_kpool_pool_keys_f32(state, ape, keys, 0, np, pool, d, 0);
        return 0;
    }
    const float *k, *gate;
    if (kpool_rows_inputs(ctx, &k, &gate)) return -1;
    size_t wrow = (size_t)2 * d;
    float *ring = calloc((size_t)G->state_rows * wrow, sizeof *ring);
    float *flat = calloc((size_t)G->t_kv * wrow, sizeof *flat);
    float *full = calloc((size_t)np * d + 1, sizeof *full);
    if (!ring || !flat || !full) {
        free(ring), free(flat), free(full);
        return mla_ctx_fail(ctx, "out of memory");
    }
    int32_t done = 0, built = 0;
    for (int32_t ck = 0; done < G->t_kv; ck++) {
        int32_t n = mla_kpool_ring_chunk(ck, done, G->t_kv, G->state_rows, pool);
        oracle_index_append_ring_f32(ring, k + (size_t)done * d, gate + (size_t)done * d, done, n,
                                     d, d, G->state_rows);
        done += n;
        int32_t now = done / pool < np ? done / pool : np;
        oracle_kpool_pool_keys_f32(ring, ape, keys, built, now, pool, d, G->state_rows);
        built = now;
    }
    oracle_index_append_ring_f32(flat, k, gate, 0, G->t_kv, d, d, 0);
    oracle_kpool_pool_keys_f32(flat, ape, full, 0, np, pool, d, 0);
    int same = built == np && memcmp(full, keys, (size_t)np * d * sizeof *keys) == 0;
    int ring_same = memcmp(ring, state, (size_t)G->state_rows * wrow * sizeof *ring) == 0;
    free(ring), free(flat), free(full);
    if (!ring_same) return mla_ctx_fail(ctx, "the replayed ring differs from idx_state");
    if (!same)
        return mla_ctx_fail(ctx,
                            "oracle: incremental ring build (%d of %d pools) differs from "
                            "the flat full build",
                            built, np);
    return 0;
}

/* score [t_q][n_pools], class exact (the six-step sequence, -inf on pools not yet complete). */
static int score_oracle(mla_ctx *ctx) {
    int32_t d = G->idx_dim, H = G->idx_heads;
    const float *q = mla_ctx_input_f32(ctx, "idx_q", 3, SHAPE(G->t_q, H, d), EXACT_FILL, 1.0f);
    const float *hw = mla_ctx_input_f32(ctx, "idx_hw", 2, SHAPE(G->t_q, H), EXACT_FILL, 1.0f);
    const float *keys = mla_ctx_need_f32(ctx, "pool_keys");
    if (!q || !hw || !keys) return -1;
    float *score = mla_ctx_output(ctx, "score", ST_F32, 2, SHAPE(G->t_q, G->n_pools));
    if (!score) return -1;
    oracle_kpool_score_f32(q, keys, hw, score, G->t_q, H, d, G->n_pools, G->pool, G->first_pos,
                           G->qk_scale, G->head_scale);
    return 0;
}

/* The special-value overlay of the select stage's own score plane (geometry select_scores):
 * element e of "sel_score" with Philox word w = mla_fill_word(seed, "sel_score", e) is, by
 * k = w & 15 (the realistic fill reads only w >> 8):
 *   0: NaN, sign bit 31 of w, payload ((w >> 8) & 0x7FFFFF) | 1 (quiet or signalling);
 *   1: -inf; 2: +inf; 3: +0; 4: -0;
 *   5..9: an exact tie level, {0.5, -0.75, 1.0}[(w >> 8) % 3] (-0.75: the select_k cut of a
 *         case with more candidates than select_k falls inside that tie group);
 *   10..15: the realistic fill's value (U(-1, 1)).
 * tools/golden/mla_golden.py (kpool_special_scores) restates it; change both together. */
static float kpool_special_score(uint32_t w, float realistic) {
    static const float level[3] = {0.5f, -0.75f, 1.0f};
    uint32_t k = w & 15u, bits;
    float f;
    switch (k) {
    case 0:
        bits = (w & 0x80000000u) | 0x7F800000u | ((w >> 8) & 0x7FFFFFu) | 1u;
        memcpy(&f, &bits, sizeof f);
        return f;
    case 1: return -INFINITY;
    case 2: return INFINITY;
    case 3: return 0.0f;
    case 4: return -0.0f;
    default: return k <= 9 ? level[(w >> 8) % 3u] : realistic;
    }
}

/* The score plane the select stage ranks: the score output, or (select_scores) its own input
 * sel_score (the overlay above on the realistic fill). */
static const char *select_score_name(const mla_geom *g) {
    return g->select_scores ? "sel_score" : "score";
}

static const float *select_scores_input(mla_ctx *ctx) {
    if (!G->select_scores) return mla_ctx_need_f32(ctx, "score");
    if (G->select_scores != 1) {
        mla_ctx_fail(ctx, "select_scores %d (0 or 1)", G->select_scores);
        return NULL;
    }
    float *s = (float *)mla_ctx_input_f32(ctx, "sel_score", 2, SHAPE(G->t_q, G->n_pools),
                                          MLA_FILL_REALISTIC, 1.0f);
    if (!s) return NULL;
    uint32_t h = mla_fill_name_hash("sel_score");
    for (size_t e = 0; e < (size_t)G->t_q * G->n_pools; e++)
        s[e] = kpool_special_score(mla_fill_word(ctx->c->seed, h, e), s[e]);
    return s;
}

/* idx [t_q][width] int32, class exact. */
static int select_oracle(mla_ctx *ctx) {
    const float *score = select_scores_input(ctx);
    if (!score) return -1;
    int32_t *idx = mla_ctx_output(ctx, "idx", ST_I32, 2, SHAPE(G->t_q, G->width));
    if (!idx) return -1;
    oracle_kpool_select_f32(score, idx, G->t_q, G->n_pools, G->pool, G->select_k, G->width,
                            G->first_pos, G->always_tail);
    return 0;
}

/* The explicit gathered list of geometry gather_idx (docs/kpool.md, "Gathered attention"):
 * slot s of query i, with Philox word w = mla_fill_word(seed, "gather_idx", i * width + s),
 * by the query's kind i % 4:
 *   0: -1 (no valid entry: o_lat is +0);
 *   1: (w & 7) == 0 ? (w >> 8) % t_kv : -1 (sparse rows, any order, -1 between them);
 *   2: (w & 3) == 0 ? -1 : t_kv - 3 + (w >> 8) % 3 (three rows, each repeated many times);
 *   3: (w & 3) == 0 ? -1 : t_kv / 2 (one row repeated, -1 between the repeats).
 * The values are recorded in the manifest (an explicit input), so readers need not restate
 * this. */
static int32_t kpool_gather_pattern(uint32_t w, int32_t i, int32_t t_kv) {
    switch (i % 4) {
    case 0: return -1;
    case 1: return (w & 7u) == 0 ? (int32_t)((w >> 8) % (uint32_t)t_kv) : -1;
    case 2: return (w & 3u) == 0 ? -1 : t_kv - 3 + (int32_t)((w >> 8) % 3u);
    default: return (w & 3u) == 0 ? -1 : t_kv / 2;
    }
}

/* The list attn_gathered walks: the select output, or (gather_idx) its own explicit input. */
static const char *gather_list_name(const mla_geom *g) {
    return g->gather_idx ? "gather_idx" : "idx";
}

/* attn_gathered at the dense geometry over the selected rows: q_lat [t_q][n_head][kv_rank],
 * q_pe [t_q][n_head][d_rope] (glm5 only), cache [t_kv][kv_rank + d_rope] generated; idx = the
 * select output (or gather_idx, above), n_slots = width. o_lat_gathered [t_q][n_head][kv_rank],
 * class attn. */
static int attn_gathered_oracle(mla_ctx *ctx) {
    int32_t w = G->kv_rank + G->d_rope;
    const float *q_lat = mla_ctx_input_f32(ctx, "q_lat", 3, SHAPE(G->t_q, G->n_head, G->kv_rank),
                                           MLA_FILL_REALISTIC, 1.0f);
    const float *q_pe = NULL;
    if (G->d_rope > 0) {
        q_pe = mla_ctx_input_f32(ctx, "q_pe", 3, SHAPE(G->t_q, G->n_head, G->d_rope),
                                 MLA_FILL_REALISTIC, 1.0f);
        if (!q_pe) return -1;
    }
    const float *cache =
        mla_ctx_input_f32(ctx, "cache", 2, SHAPE(G->t_kv, w), MLA_FILL_REALISTIC, 1.0f);
    if (!q_lat || !cache) return -1;
    mla_tensor *it = NULL;
    if (G->gather_idx) {
        if (G->gather_idx != 1 || G->t_kv < 3)
            return mla_ctx_fail(ctx, "gather_idx %d (0 or 1, with t_kv >= 3)", G->gather_idx);
        int32_t *gi = mla_ctx_input_i32(ctx, "gather_idx", 2, SHAPE(G->t_q, G->width));
        if (!gi) return -1;
        uint32_t h = mla_fill_name_hash("gather_idx");
        for (int32_t i = 0; i < G->t_q; i++)
            for (int32_t s = 0; s < G->width; s++) {
                size_t e = (size_t)i * G->width + s;
                gi[e] = kpool_gather_pattern(mla_fill_word(ctx->c->seed, h, e), i, G->t_kv);
            }
        it = mla_ctx_get(ctx, "gather_idx");
    } else {
        it = mla_ctx_get(ctx, "idx");
        if (!it || it->dtype != ST_I32) return mla_ctx_fail(ctx, "needs the select output 'idx'");
    }
    float *o =
        mla_ctx_output(ctx, "o_lat_gathered", ST_F32, 3, SHAPE(G->t_q, G->n_head, G->kv_rank));
    if (!o) return -1;
    oracle_attn_gathered_f32(q_lat, q_pe, cache, it->data, o, G->n_head, G->kv_rank, G->d_rope,
                             G->t_q, G->width, G->scale);
    return 0;
}

/* ------------------------------------------------------------------ GPU halves ------------- */
/* Each stage's inputs are the oracle's tensors of the case (earlier stages' outputs included),
 * so a stage is judged on its own. Fast kernels are checked against the oracle AND against
 * their reference kernels (bytes). */

static gpu_buf upload(const mla_tensor *t) { return gpu_buf_from_host(t->data, t->nbytes); }

/* The case's append calls (the GPU twin of index_append_ring_oracle). */
static int do_appends(const mla_geom *g, float *plane, const float *k, const float *gate) {
    int32_t d = g->idx_dim;
    if (g->state_rows == 0) {
        int32_t pre = g->t_kv - g->t_q;
        int rc =
            pre > 0 ? memra_mla_index_append_ring_f32(plane, k, gate, 0, pre, d, d, 0, NULL) : 0;
        if (rc) return rc;
        return memra_mla_index_append_ring_f32(plane, k + (size_t)pre * d, gate + (size_t)pre * d,
                                               pre, g->t_q, d, d, 0, NULL);
    }
    int32_t done = 0;
    for (int32_t ck = 0; done < g->t_kv; ck++) {
        int32_t n = mla_kpool_ring_chunk(ck, done, g->t_kv, g->state_rows, g->pool);
        int rc =
            memra_mla_index_append_ring_f32(plane, k + (size_t)done * d, gate + (size_t)done * d,
                                            done, n, d, d, g->state_rows, NULL);
        if (rc) return rc;
        done += n;
    }
    return 0;
}

static void index_append_ring_gpu(tb *t, mla_ctx *ctx, int variant) {
    (void)variant;
    const mla_tensor *k = tb_tensor(t, ctx, "idx_k"), *gate = tb_tensor(t, ctx, "idx_gate"),
                     *st = tb_tensor(t, ctx, "idx_state");
    gpu_buf bk = upload(k), bg = upload(gate), bp = gpu_buf_alloc(st->nbytes);
    void *run[2];
    for (int r = 0; r < 2; r++) {
        gpu_buf_poison(&bp);
        tb_launched(t, do_appends(&ctx->c->geom, bp.ptr, bk.ptr, bg.ptr),
                    "memra_mla_index_append_ring_f32 (the case's append calls)");
        run[r] = tb_output(t, &bp, "idx_state", r ? "run 2" : "run 1", 1);
    }
    tb_input_untouched(t, &bk, k->data, "idx_k");
    tb_input_untouched(t, &bg, gate->data, "idx_gate");
    tb_same_runs(t, st, run[0], run[1]);
    tb_against_oracle(t, ctx, st, run[0], "kernel", NULL);
    free(run[0]), free(run[1]);
    gpu_buf_free(&bk), gpu_buf_free(&bg), gpu_buf_free(&bp);
}

/* Flat state: one full build. Ring state: the append schedule replayed on the GPU with an
 * incremental build after every chunk, and those keys equal to a GPU flat full build, bytes. */
static void pool_keys_gpu(tb *t, mla_ctx *ctx, int variant) {
    (void)variant;
    const mla_geom *g = &ctx->c->geom;
    int32_t d = g->idx_dim, np = g->n_pools, pool = g->pool;
    const mla_tensor *ape = tb_tensor(t, ctx, "idx_ape"), *st = tb_tensor(t, ctx, "idx_state"),
                     *keys = tb_tensor(t, ctx, "pool_keys");
    const mla_tensor *k = tb_tensor(t, ctx, "idx_k"), *gate = tb_tensor(t, ctx, "idx_gate");
    /* the flat state (bounds are per pool over its own rows; the ring's early rows are gone) */
    size_t wrow = (size_t)2 * d;
    float *flat = tb_xmalloc(t, (size_t)g->t_kv * wrow * sizeof *flat);
    oracle_index_append_ring_f32(flat, k->data, gate->data, 0, g->t_kv, d, d, 0);
    double *atol = tb_xmalloc(t, (size_t)np * d * sizeof *atol);
    mla_tol_pool_key_bounds(flat, ape->data, 0, np, pool, d, 0, atol);

    gpu_buf ba = upload(ape), bkeys = gpu_buf_alloc(keys->nbytes);
    gpu_buf bflat = gpu_buf_from_host(flat, (size_t)g->t_kv * wrow * sizeof *flat);
    void *run[2];
    if (g->state_rows == 0) {
        gpu_buf bs = upload(st);
        for (int r = 0; r < 2; r++) {
            gpu_buf_poison(&bkeys);
            tb_launched(
                t,
                memra_mla_kpool_pool_keys_f32(bs.ptr, ba.ptr, bkeys.ptr, 0, np, pool, d, 0, NULL),
                "memra_mla_kpool_pool_keys_f32 (full build, flat state)");
            run[r] = tb_output(t, &bkeys, "pool_keys", r ? "run 2" : "run 1", 1);
        }
        tb_input_untouched(t, &bs, st->data, "idx_state");
        gpu_buf_free(&bs);
    } else {
        gpu_buf bk = upload(k), bg = upload(gate), ring = gpu_buf_alloc(st->nbytes);
        for (int r = 0; r < 2; r++) {
            gpu_buf_poison(&bkeys);
            gpu_buf_poison(&ring);
            int32_t done = 0, built = 0;
            for (int32_t ck = 0; done < g->t_kv; ck++) {
                int32_t n = mla_kpool_ring_chunk(ck, done, g->t_kv, g->state_rows, pool);
                int rc = memra_mla_index_append_ring_f32(
                    ring.ptr, (const float *)bk.ptr + (size_t)done * d,
                    (const float *)bg.ptr + (size_t)done * d, done, n, d, d, g->state_rows, NULL);
                tb_launched(t, rc, "memra_mla_index_append_ring_f32 (ring schedule)");
                done += n;
                int32_t now = done / pool < np ? done / pool : np;
                rc = memra_mla_kpool_pool_keys_f32(ring.ptr, ba.ptr, bkeys.ptr, built, now, pool, d,
                                                   g->state_rows, NULL);
                if (rc)
                    tb_failf(t, 1,
                             "incremental pool_keys(pool_begin %d, n_pools %d, state_rows %d) "
                             "after chunk %d (rows appended %d) returned %d (%s)",
                             built, now, g->state_rows, ck, done, rc, mla_status_message(rc));
                tb_launched(t, 0, "memra_mla_kpool_pool_keys_f32 (incremental, ring)");
                built = now;
            }
            run[r] = tb_output(t, &bkeys, "pool_keys",
                               r ? "run 2 (ring, incremental)" : "run 1 (ring, incremental)", 1);
        }
        /* ring + incremental == flat + full, bytes */
        gpu_buf_poison(&bkeys);
        tb_launched(
            t, memra_mla_kpool_pool_keys_f32(bflat.ptr, ba.ptr, bkeys.ptr, 0, np, pool, d, 0, NULL),
            "memra_mla_kpool_pool_keys_f32 (full build, flat state)");
        float *full = tb_output(t, &bkeys, "pool_keys", "flat full build", 1);
        tb_compare(t, "pool_keys", ST_F32, 2, keys->shape, run[0], "ring_incremental", full,
                   "flat_full", MLA_TOL_EXACT, NULL, 1);
        free(full);
        gpu_buf_free(&bk), gpu_buf_free(&bg), gpu_buf_free(&ring);
    }
    tb_input_untouched(t, &ba, ape->data, "idx_ape");
    tb_same_runs(t, keys, run[0], run[1]);
    tb_against_oracle(t, ctx, keys, run[0], "kernel", atol);
    free(run[0]), free(run[1]), free(atol), free(flat);
    gpu_buf_free(&ba), gpu_buf_free(&bkeys), gpu_buf_free(&bflat);
}

/* A fast kernel's two runs and its reference kernel's run (then freed): run 2 == run 1 and
 * fast == reference, bytes; both against the oracle's o in its class. */
static void fast_and_reference(tb *t, mla_ctx *ctx, const mla_tensor *o, void **fast, void *ref,
                               const char *fast_name) {
    char r1[64], r2[64];
    snprintf(r1, sizeof r1, "%s_run1", fast_name);
    snprintf(r2, sizeof r2, "%s_run2", fast_name);
    tb_compare(t, o->name, o->dtype, o->ndim, o->shape, fast[1], r2, fast[0], r1, MLA_TOL_EXACT,
               NULL, 1);
    tb_compare(t, o->name, o->dtype, o->ndim, o->shape, fast[0], fast_name, ref, "reference",
               MLA_TOL_EXACT, NULL, 1);
    tb_against_oracle(t, ctx, o, fast[0], fast_name, NULL);
    tb_against_oracle(t, ctx, o, ref, "reference", NULL);
    free(fast[0]), free(fast[1]), free(ref);
}

/* Fast kernel twice (run-to-run), then the reference kernel: fast == reference bytes, and
 * both against the oracle (class exact, any NaN equal to any NaN). */
static void score_gpu(tb *t, mla_ctx *ctx, int variant) {
    (void)variant;
    const mla_geom *g = &ctx->c->geom;
    const mla_tensor *q = tb_tensor(t, ctx, "idx_q"), *hw = tb_tensor(t, ctx, "idx_hw"),
                     *keys = tb_tensor(t, ctx, "pool_keys"), *sc = tb_tensor(t, ctx, "score");
    gpu_buf bq = upload(q), bh = upload(hw), bk = upload(keys), bs = gpu_buf_alloc(sc->nbytes);
    void *fast[2], *ref = NULL;
    for (int r = 0; r < 3; r++) {
        gpu_buf_poison(&bs);
        int rc = (r < 2 ? memra_mla_kpool_score_f32 : memra_mla_kpool_score_ref_f32)(
            bq.ptr, bk.ptr, bh.ptr, bs.ptr, g->t_q, g->idx_heads, g->idx_dim, g->n_pools, g->pool,
            g->first_pos, g->qk_scale, g->head_scale, NULL);
        tb_launched(t, rc, r < 2 ? "memra_mla_kpool_score_f32" : "memra_mla_kpool_score_ref_f32");
        void *o = tb_output(t, &bs, "score",
                            r == 0   ? "fast run 1"
                            : r == 1 ? "fast run 2"
                                     : "reference",
                            1);
        if (r < 2)
            fast[r] = o;
        else
            ref = o;
    }
    tb_input_untouched(t, &bq, q->data, "idx_q");
    tb_input_untouched(t, &bh, hw->data, "idx_hw");
    tb_input_untouched(t, &bk, keys->data, "pool_keys");
    fast_and_reference(t, ctx, sc, fast, ref, "fast");
    gpu_buf_free(&bq), gpu_buf_free(&bh), gpu_buf_free(&bk), gpu_buf_free(&bs);
}

/* Radix kernel twice, then the reference kernel: radix == reference, both == oracle (int32). */
static void select_gpu(tb *t, mla_ctx *ctx, int variant) {
    (void)variant;
    const mla_geom *g = &ctx->c->geom;
    const mla_tensor *sc = tb_tensor(t, ctx, select_score_name(g)), *idx = tb_tensor(t, ctx, "idx");
    gpu_buf bs = upload(sc), bi = gpu_buf_alloc(idx->nbytes);
    int32_t *radix[2], *ref = NULL;
    for (int r = 0; r < 3; r++) {
        gpu_buf_poison(&bi);
        int rc = (r < 2 ? memra_mla_kpool_select_f32 : memra_mla_kpool_select_ref_f32)(
            bs.ptr, bi.ptr, g->t_q, g->n_pools, g->pool, g->select_k, g->width, g->first_pos,
            g->always_tail, NULL);
        const char *what = r == 0 ? "radix run 1" : r == 1 ? "radix run 2" : "reference";
        tb_launched(t, rc, r < 2 ? "memra_mla_kpool_select_f32" : "memra_mla_kpool_select_ref_f32");
        int32_t *o = tb_output(t, &bi, "idx", what, 1);
        size_t left = tb_count_poison(o, idx->nbytes / 4);
        tb_expectf(t, left == 0, "%s left %zu idx entries equal to GPU_POISON_WORD", what, left);
        if (r < 2)
            radix[r] = o;
        else
            ref = o;
    }
    tb_input_untouched(t, &bs, sc->data, sc->name);
    fast_and_reference(t, ctx, idx, (void **)radix, ref, "radix");
    gpu_buf_free(&bs), gpu_buf_free(&bi);
}

static void attn_gathered_gpu(tb *t, mla_ctx *ctx, int variant) {
    const int tc = tc_attn_of_variant(variant); /* the arm (tests/lib/tc_attn.h) */
    const mla_geom *g = &ctx->c->geom;
    const mla_tensor *ql = tb_tensor(t, ctx, "q_lat"), *cache = tb_tensor(t, ctx, "cache"),
                     *idx = tb_tensor(t, ctx, gather_list_name(g)),
                     *o = tb_tensor(t, ctx, "o_lat_gathered");
    const mla_tensor *qp = g->d_rope > 0 ? tb_tensor(t, ctx, "q_pe") : NULL;
    gpu_buf bql = upload(ql), bc = upload(cache), bi = upload(idx), bo = gpu_buf_alloc(o->nbytes);
    gpu_buf bqp = qp ? upload(qp) : gpu_buf_alloc(0);
    void *run[2];
    for (int r = 0; r < 2; r++) {
        gpu_buf_poison(&bo);
        if (variant == 0) {
            tb_launched(t,
                        memra_mla_attn_gathered_f32(bql.ptr, qp ? bqp.ptr : NULL, bc.ptr, bi.ptr,
                                                    bo.ptr, g->n_head, g->kv_rank, g->d_rope,
                                                    g->t_q, g->width, g->scale, NULL),
                        "memra_mla_attn_gathered_f32");
        } else {
            setenv("MEMRA_MLA_TC_ATTN", tc_attn_flag(tc), 1);
            const uint64_t before = mla_tc_attn_dispatches();
            int rc = mla_door_attn_gathered_f32(bql.ptr, qp ? bqp.ptr : NULL, bc.ptr, bi.ptr,
                                                bo.ptr, g->n_head, g->kv_rank, g->d_rope, g->t_q,
                                                g->width, g->scale, NULL);
            unsetenv("MEMRA_MLA_TC_ATTN");
            tb_launched(t, rc, "mla_door_attn_gathered_f32");
            tc_attn_expect_receipt(t, tc, before, g, bc.ptr);
        }
        run[r] = tb_output(t, &bo, "o_lat_gathered", r ? "run 2" : "run 1", 1);
    }
    tb_input_untouched(t, &bql, ql->data, "q_lat");
    if (qp) tb_input_untouched(t, &bqp, qp->data, "q_pe");
    tb_input_untouched(t, &bc, cache->data, "cache");
    tb_input_untouched(t, &bi, idx->data, idx->name);
    /* The bound of the walk the arm states (kernels/mla.h mla_attn_walk, or the tf32 arm's
     * mla_attn_tc_walk in kernels/mla_door.h; docs/tolerances.md) and its arithmetic. */
    double *atol = tb_xmalloc(t, o->nbytes / 4 * sizeof *atol);
    mla_attn_arith ar;
    mla_tol_attn_gathered_bounds_arith(
        ql->data, qp ? qp->data : NULL, cache->data, idx->data, g->n_head, g->kv_rank, g->d_rope,
        g->t_q, g->width, g->scale, tc_attn_walk(tc),
        tc_attn_arith(tc, g->n_head, g->kv_rank, g->d_rope, g->t_q, g->width, &ar), atol);
    tb_same_runs(t, o, run[0], run[1]);
    tb_against_oracle(t, ctx, o, run[0], variant ? "tc_arm" : "kernel", atol);
    /* A query whose list has no valid entry gets o_lat = +0.0f (kernels/mla.h), checked in
     * bytes: class attn's zero bound there would also accept -0. */
    const int32_t *iv = idx->data;
    size_t per_q = (size_t)g->n_head * g->kv_rank;
    for (int32_t i = 0; i < g->t_q; i++) {
        int any = 0;
        for (int32_t s = 0; s < g->width && !any; s++) any = iv[(size_t)i * g->width + s] >= 0;
        if (any) continue;
        const uint32_t *ob = (const uint32_t *)run[0] + (size_t)i * per_q;
        size_t bad = 0, first = 0;
        for (size_t e = 0; e < per_q; e++)
            if (ob[e] != 0u && !bad++) first = e;
        tb_expectf(t, bad == 0,
                   "query %d lists no valid row: %zu of %zu o_lat_gathered elements are not "
                   "+0.0f (first [%d][%zu][%zu], bits 0x%08x)",
                   i, bad, per_q, i, first / g->kv_rank, first % g->kv_rank,
                   bad ? (unsigned)ob[first] : 0u);
    }
    free(run[0]), free(run[1]), free(atol);
    gpu_buf_free(&bql), gpu_buf_free(&bqp), gpu_buf_free(&bc), gpu_buf_free(&bi), gpu_buf_free(&bo);
}

/* ------------------------------------------------------------------ descriptors ------------ */
const mla_stage mla_stage_index_append_ring = {"index_append_ring",
                                               index_append_ring_oracle,
                                               index_append_ring_gpu,
                                               {{"idx_state", MLA_TOL_EXACT, 0}}};
const mla_stage mla_stage_pool_keys = {
    "pool_keys", pool_keys_oracle, pool_keys_gpu, {{"pool_keys", MLA_TOL_POOL_KEY, 0}}};
/* the scoring sequence of docs/kpool.md, -inf on pools not yet complete; NaN canonical */
const mla_stage mla_stage_score = {"score", score_oracle, score_gpu, {{"score", MLA_TOL_EXACT, 1}}};
const mla_stage mla_stage_select = {
    "select", select_oracle, select_gpu, {{"idx", MLA_TOL_EXACT, 0}}};
const mla_stage mla_stage_attn_gathered = {"attn_gathered",
                                           attn_gathered_oracle,
                                           attn_gathered_gpu,
                                           {{"o_lat_gathered", MLA_TOL_ATTN, 0}}};
