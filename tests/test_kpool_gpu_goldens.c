/* test_kpool_gpu_goldens.c: every k-pool stage of every k-pool golden case, on the GPU, against
 * the CPU oracle (the golden).
 *
 * One Criterion test per (case, stage), named kpool_gpu/<case>__<stage>, so a failure line is
 * also a filter:
 *   bazel test //tests:kpool_gpu_goldens_test --test_arg=--filter='kpool_gpu/glm5_kpool_verify__score'
 *   (GPU bundle: bin/kpool_gpu_goldens_test --filter 'kpool_gpu/glm5_kpool_verify__score')
 * Each test:
 *  1. recomputes the case (mla_case_run: inputs from the counter-based fill, oracle outputs) and
 *     checks the manifest's full SHA-256 of the stage's output against it (a stale fixture fails
 *     here, pointing at golden_oracle_test);
 *  2. uploads the stage's inputs into guarded device buffers (earlier stages' inputs are the
 *     oracle's outputs, so a stage is judged on its own), outputs poisoned (NaN words);
 *  3. launches (rc must be 0), syncs, checks every guard band, that inputs are unchanged and that
 *     no poison word is left in the output;
 *  4. launches again into a freshly poisoned buffer: bytes must be identical (run-to-run);
 *  5. compares with the oracle: exact for index_append_ring (bytes), score (NaN == NaN; fast AND
 *     reference kernels, and fast == reference bytes) and select (int32 bytes; radix AND
 *     reference, radix == reference); pool_keys and attn_gathered through the per-element bounds
 *     of docs/tolerances.md (mla_tol_pool_key_bounds, mla_tol_attn_gathered_bounds with the
 *     any-walk R = D = N + 1: the gathered kernel states no (R, D)).
 *  The ring case (state_rows > 0) replays the append schedule (mla_kpool_ring_chunk) on the GPU
 *  with an incremental pool-key build after every chunk, and also checks those keys equal a GPU
 *  flat full build bit for bit.
 * Without a usable GPU every test reports SKIPPED (GPU_REQUIRE), never passed.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mla.h"
#include "oracle/mla_oracle.h"
#include "tests/gpu_util.h"
#include "tests/kpool_gpu_util.h"
#include "tests/lib/case.h"
#include "tests/lib/manifest.h"

#define TARGET "kpool_gpu_goldens_test"

typedef struct {
    kp_ctx k;
    const mla_case *c;
    const mla_geom *g;
    mla_ctx ctx;
} fx;

static void fx_open(fx *f, const char *case_name, const char *stage) {
    memset(f, 0, sizeof *f);
    char test[160];
    snprintf(test, sizeof test, "%s__%s", case_name, stage);
    kp_init(&f->k, TARGET, "kpool_gpu", test);
    f->c = mla_case_find(case_name);
    cr_assert(f->c != NULL, "%s: case %s is not in the case table", f->k.id, case_name);
    f->g = &f->c->geom;
    int rc = mla_case_run(f->c, &f->ctx);
    cr_assert(rc == 0, "%s: mla_case_run failed: %s", f->k.id, f->ctx.err);
}

static const mla_tensor *tensor(fx *f, const char *name) {
    const mla_tensor *t = mla_ctx_get(&f->ctx, name);
    cr_assert(t != NULL, "%s: the case has no tensor '%s'", f->k.id, name);
    return t;
}

/* The manifest's full-output SHA-256 equals the oracle's recomputation. */
static void manifest_matches_oracle(fx *f, const mla_tensor *t) {
    char path[4096], err[1024], h1[65], h2[65];
    snprintf(path, sizeof path, "%s/manifest.json", mla_golden_dir());
    mla_manifest m;
    cr_assert(mla_manifest_load(path, &m, err, sizeof err) == 0,
              "%s: cannot load the golden manifest: %s (set MLA_GOLDEN_DIR)", f->k.id, err);
    const mla_mf_case *mc = mla_manifest_find(&m, f->c->name);
    const mla_mf_output *o = mc ? mla_mf_find_output(mc, t->name) : NULL;
    int ok = o && memcmp(o->sha256, t->sha256, 32) == 0;
    if (o) mla_sha256_hex(o->sha256, h1);
    mla_sha256_hex(t->sha256, h2);
    mla_manifest_free(&m);
    cr_expect(ok,
              "%s: %s: manifest sha256 %s, oracle recomputed %s (missing or stale fixture: run "
              "bazel test //tests:golden_oracle_test, then golden regen %s)\n  re-run: %s",
              f->k.id, t->name, o ? h1 : "(absent)", h2, f->c->name, f->k.rerun);
}

static gpu_buf upload(const mla_tensor *t) { return gpu_buf_from_host(t->data, t->nbytes); }

/* ------------------------------------------------------------------ index_append_ring ------ */
/* The case's append calls (see stage_index_append_ring in tools/golden/cases.c). */
static int do_appends(const mla_geom *g, float *plane, const float *k, const float *gate) {
    int32_t d = g->idx_dim;
    if (g->state_rows == 0) {
        int32_t pre = g->t_kv - g->t_q;
        int rc = pre > 0 ? memra_mla_index_append_ring_f32(plane, k, gate, 0, pre, d, d, 0, NULL)
                         : 0;
        if (rc) return rc;
        return memra_mla_index_append_ring_f32(plane, k + (size_t)pre * d, gate + (size_t)pre * d,
                                               pre, g->t_q, d, d, 0, NULL);
    }
    int32_t done = 0;
    for (int32_t ck = 0; done < g->t_kv; ck++) {
        int32_t n = mla_kpool_ring_chunk(ck, done, g->t_kv, g->state_rows, g->pool);
        int rc = memra_mla_index_append_ring_f32(plane, k + (size_t)done * d,
                                                 gate + (size_t)done * d, done, n, d, d,
                                                 g->state_rows, NULL);
        if (rc) return rc;
        done += n;
    }
    return 0;
}

static void run_index_append_ring(fx *f) {
    const mla_tensor *k = tensor(f, "idx_k"), *gate = tensor(f, "idx_gate"),
                     *st = tensor(f, "idx_state");
    manifest_matches_oracle(f, st);
    gpu_buf bk = upload(k), bg = upload(gate), bp = gpu_buf_alloc(st->nbytes);
    void *run[2];
    for (int r = 0; r < 2; r++) {
        gpu_buf_poison(&bp);
        kp_launched(&f->k, do_appends(f->g, bp.ptr, bk.ptr, bg.ptr),
                    "memra_mla_index_append_ring_f32 (the case's append calls)");
        run[r] = kp_output(&f->k, &bp, "idx_state", r ? "run 2" : "run 1", 1);
    }
    kp_input_untouched(&f->k, &bk, k->data, "idx_k");
    kp_input_untouched(&f->k, &bg, gate->data, "idx_gate");
    kp_cmp_f32(&f->k, f->c->name, "idx_state", 2, st->shape, run[1], "run2", run[0], "run1",
               MLA_TOL_EXACT, NULL, 1);
    kp_cmp_f32(&f->k, f->c->name, "idx_state", 2, st->shape, run[0], "kernel", st->data,
               "oracle", MLA_TOL_EXACT, NULL, 1);
    free(run[0]), free(run[1]);
    gpu_buf_free(&bk), gpu_buf_free(&bg), gpu_buf_free(&bp);
}

/* ------------------------------------------------------------------ pool_keys -------------- */
static void run_pool_keys(fx *f) {
    const mla_geom *g = f->g;
    int32_t d = g->idx_dim, np = g->n_pools, pool = g->pool;
    const mla_tensor *ape = tensor(f, "idx_ape"), *st = tensor(f, "idx_state"),
                     *keys = tensor(f, "pool_keys");
    manifest_matches_oracle(f, keys);
    const mla_tensor *k = tensor(f, "idx_k"), *gate = tensor(f, "idx_gate");
    /* the flat state (bounds are per pool over its own rows; the ring's early rows are gone) */
    size_t wrow = (size_t)2 * d;
    float *flat = kp_xmalloc((size_t)g->t_kv * wrow * sizeof *flat);
    oracle_index_append_ring_f32(flat, k->data, gate->data, 0, g->t_kv, d, d, 0);
    double *atol = kp_xmalloc((size_t)np * d * sizeof *atol);
    mla_tol_pool_key_bounds(flat, ape->data, 0, np, pool, d, 0, atol);

    gpu_buf ba = upload(ape), bkeys = gpu_buf_alloc(keys->nbytes);
    gpu_buf bflat = gpu_buf_from_host(flat, (size_t)g->t_kv * wrow * sizeof *flat);
    void *run[2];
    if (g->state_rows == 0) {
        gpu_buf bs = upload(st);
        for (int r = 0; r < 2; r++) {
            gpu_buf_poison(&bkeys);
            kp_launched(&f->k,
                        memra_mla_kpool_pool_keys_f32(bs.ptr, ba.ptr, bkeys.ptr, 0, np, pool, d,
                                                      0, NULL),
                        "memra_mla_kpool_pool_keys_f32 (full build, flat state)");
            run[r] = kp_output(&f->k, &bkeys, "pool_keys", r ? "run 2" : "run 1", 1);
        }
        kp_input_untouched(&f->k, &bs, st->data, "idx_state");
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
                kp_launched(&f->k, rc, "memra_mla_index_append_ring_f32 (ring schedule)");
                done += n;
                int32_t now = done / pool < np ? done / pool : np;
                rc = memra_mla_kpool_pool_keys_f32(ring.ptr, ba.ptr, bkeys.ptr, built, now, pool,
                                                   d, g->state_rows, NULL);
                if (rc) {
                    cr_assert_fail("%s: incremental pool_keys(pool_begin %d, n_pools %d, "
                                   "state_rows %d) after chunk %d (rows appended %d) returned "
                                   "%d (%s)\n  re-run: %s",
                                   f->k.id, built, now, g->state_rows, ck, done, rc,
                                   mla_status_message(rc), f->k.rerun);
                }
                kp_launched(&f->k, 0, "memra_mla_kpool_pool_keys_f32 (incremental, ring)");
                built = now;
            }
            run[r] = kp_output(&f->k, &bkeys, "pool_keys", r ? "run 2 (ring, incremental)"
                                                             : "run 1 (ring, incremental)", 1);
        }
        /* ring + incremental == flat + full, bytes */
        gpu_buf_poison(&bkeys);
        kp_launched(&f->k,
                    memra_mla_kpool_pool_keys_f32(bflat.ptr, ba.ptr, bkeys.ptr, 0, np, pool, d,
                                                  0, NULL),
                    "memra_mla_kpool_pool_keys_f32 (full build, flat state)");
        float *full = kp_output(&f->k, &bkeys, "pool_keys", "flat full build", 1);
        kp_cmp_f32(&f->k, f->c->name, "pool_keys", 2, keys->shape, run[0], "ring_incremental",
                   full, "flat_full", MLA_TOL_EXACT, NULL, 1);
        free(full);
        kp_input_untouched(&f->k, &ba, ape->data, "idx_ape");
        gpu_buf_free(&bk), gpu_buf_free(&bg), gpu_buf_free(&ring);
    }
    kp_input_untouched(&f->k, &ba, ape->data, "idx_ape");
    kp_cmp_f32(&f->k, f->c->name, "pool_keys", 2, keys->shape, run[1], "run2", run[0], "run1",
               MLA_TOL_EXACT, NULL, 1);
    kp_cmp_f32(&f->k, f->c->name, "pool_keys", 2, keys->shape, run[0], "kernel", keys->data,
               "oracle", MLA_TOL_POOL_KEY, atol, 0);
    free(run[0]), free(run[1]), free(atol), free(flat);
    gpu_buf_free(&ba), gpu_buf_free(&bkeys), gpu_buf_free(&bflat);
}

/* ------------------------------------------------------------------ score ------------------ */
static void run_score(fx *f) {
    const mla_geom *g = f->g;
    const mla_tensor *q = tensor(f, "idx_q"), *hw = tensor(f, "idx_hw"),
                     *keys = tensor(f, "pool_keys"), *sc = tensor(f, "score");
    manifest_matches_oracle(f, sc);
    gpu_buf bq = upload(q), bh = upload(hw), bk = upload(keys), bs = gpu_buf_alloc(sc->nbytes);
    void *fast[2], *ref;
    for (int r = 0; r < 3; r++) {
        gpu_buf_poison(&bs);
        int rc = (r < 2 ? memra_mla_kpool_score_f32 : memra_mla_kpool_score_ref_f32)(
            bq.ptr, bk.ptr, bh.ptr, bs.ptr, g->t_q, g->idx_heads, g->idx_dim, g->n_pools,
            g->pool, g->first_pos, g->qk_scale, g->head_scale, NULL);
        kp_launched(&f->k, rc, r < 2 ? "memra_mla_kpool_score_f32" : "memra_mla_kpool_score_ref_f32");
        void *o = kp_output(&f->k, &bs, "score",
                            r == 0 ? "fast run 1" : r == 1 ? "fast run 2" : "reference", 1);
        if (r < 2) fast[r] = o; else ref = o;
    }
    kp_input_untouched(&f->k, &bq, q->data, "idx_q");
    kp_input_untouched(&f->k, &bh, hw->data, "idx_hw");
    kp_input_untouched(&f->k, &bk, keys->data, "pool_keys");
    kp_cmp_f32(&f->k, f->c->name, "score", 2, sc->shape, fast[1], "fast_run2", fast[0],
               "fast_run1", MLA_TOL_EXACT, NULL, 1);
    kp_cmp_f32(&f->k, f->c->name, "score", 2, sc->shape, fast[0], "fast", ref, "reference",
               MLA_TOL_EXACT, NULL, 1);
    kp_cmp_f32(&f->k, f->c->name, "score", 2, sc->shape, fast[0], "fast", sc->data, "oracle",
               MLA_TOL_EXACT, NULL, 0);
    kp_cmp_f32(&f->k, f->c->name, "score", 2, sc->shape, ref, "reference", sc->data, "oracle",
               MLA_TOL_EXACT, NULL, 0);
    free(fast[0]), free(fast[1]), free(ref);
    gpu_buf_free(&bq), gpu_buf_free(&bh), gpu_buf_free(&bk), gpu_buf_free(&bs);
}

/* ------------------------------------------------------------------ select ----------------- */
static void run_select(fx *f) {
    const mla_geom *g = f->g;
    const mla_tensor *sc = tensor(f, "score"), *idx = tensor(f, "idx");
    manifest_matches_oracle(f, idx);
    gpu_buf bs = upload(sc), bi = gpu_buf_alloc(idx->nbytes);
    int32_t *radix[2], *ref = NULL;
    size_t n = (size_t)g->t_q * g->width;
    for (int r = 0; r < 3; r++) {
        gpu_buf_poison(&bi);
        int rc = (r < 2 ? memra_mla_kpool_select_f32 : memra_mla_kpool_select_ref_f32)(
            bs.ptr, bi.ptr, g->t_q, g->n_pools, g->pool, g->select_k, g->width, g->first_pos,
            g->always_tail, NULL);
        const char *what = r == 0 ? "radix run 1" : r == 1 ? "radix run 2" : "reference";
        kp_launched(&f->k, rc, r < 2 ? "memra_mla_kpool_select_f32" : "memra_mla_kpool_select_ref_f32");
        int32_t *o = kp_output(&f->k, &bi, "idx", what, 1);
        size_t left = kp_count_poison_i32(o, n);
        cr_expect(left == 0, "%s: %s left %zu idx entries equal to GPU_POISON_WORD\n  re-run: %s",
                  f->k.id, what, left, f->k.rerun);
        if (r < 2) radix[r] = o; else ref = o;
    }
    kp_input_untouched(&f->k, &bs, sc->data, "score");
    kp_cmp_i32(&f->k, f->c->name, "idx", g->t_q, g->width, radix[1], "radix_run2", radix[0],
               "radix_run1");
    kp_cmp_i32(&f->k, f->c->name, "idx", g->t_q, g->width, radix[0], "radix", ref, "reference");
    kp_cmp_i32(&f->k, f->c->name, "idx", g->t_q, g->width, radix[0], "radix", idx->data, "oracle");
    kp_cmp_i32(&f->k, f->c->name, "idx", g->t_q, g->width, ref, "reference", idx->data, "oracle");
    free(radix[0]), free(radix[1]), free(ref);
    gpu_buf_free(&bs), gpu_buf_free(&bi);
}

/* ------------------------------------------------------------------ attn_gathered ---------- */
static void run_attn_gathered(fx *f) {
    const mla_geom *g = f->g;
    const mla_tensor *ql = tensor(f, "q_lat"), *cache = tensor(f, "cache"), *idx = tensor(f, "idx"),
                     *o = tensor(f, "o_lat_gathered");
    const mla_tensor *qp = g->d_rope > 0 ? tensor(f, "q_pe") : NULL;
    manifest_matches_oracle(f, o);
    gpu_buf bql = upload(ql), bc = upload(cache), bi = upload(idx), bo = gpu_buf_alloc(o->nbytes);
    gpu_buf bqp = qp ? upload(qp) : gpu_buf_alloc(0);
    void *run[2];
    for (int r = 0; r < 2; r++) {
        gpu_buf_poison(&bo);
        kp_launched(&f->k,
                    memra_mla_attn_gathered_f32(bql.ptr, qp ? bqp.ptr : NULL, bc.ptr, bi.ptr,
                                                bo.ptr, g->n_head, g->kv_rank, g->d_rope, g->t_q,
                                                g->width, g->scale, NULL),
                    "memra_mla_attn_gathered_f32");
        run[r] = kp_output(&f->k, &bo, "o_lat_gathered", r ? "run 2" : "run 1", 1);
    }
    kp_input_untouched(&f->k, &bql, ql->data, "q_lat");
    if (qp) kp_input_untouched(&f->k, &bqp, qp->data, "q_pe");
    kp_input_untouched(&f->k, &bc, cache->data, "cache");
    kp_input_untouched(&f->k, &bi, idx->data, "idx");
    double *atol = kp_xmalloc(o->nbytes / 4 * sizeof *atol);
    mla_tol_attn_gathered_bounds(ql->data, qp ? qp->data : NULL, cache->data, idx->data,
                                 g->n_head, g->kv_rank, g->d_rope, g->t_q, g->width, g->scale, 0,
                                 0, atol);
    kp_cmp_f32(&f->k, f->c->name, "o_lat_gathered", 3, o->shape, run[1], "run2", run[0], "run1",
               MLA_TOL_EXACT, NULL, 1);
    kp_cmp_f32(&f->k, f->c->name, "o_lat_gathered", 3, o->shape, run[0], "kernel", o->data,
               "oracle", MLA_TOL_ATTN, atol, 0);
    free(run[0]), free(run[1]), free(atol);
    gpu_buf_free(&bql), gpu_buf_free(&bqp), gpu_buf_free(&bc), gpu_buf_free(&bi),
        gpu_buf_free(&bo);
}

/* ------------------------------------------------------------------ the tests -------------- */
static void kpool_gpu(const char *case_name, const char *stage, void (*run)(fx *)) {
    GPU_REQUIRE();
    fx f;
    fx_open(&f, case_name, stage);
    run(&f);
    mla_ctx_free(&f.ctx);
}

#define KPOOL_STAGES_OF(X, c)                                                                 \
    X(c, index_append_ring) X(c, pool_keys) X(c, score) X(c, select) X(c, attn_gathered)
#define KPOOL_CASES(X)                                                                        \
    KPOOL_STAGES_OF(X, glm5_kpool_decode)                                                     \
    KPOOL_STAGES_OF(X, glm5_kpool_verify)                                                     \
    KPOOL_STAGES_OF(X, glm5_next_kpool_decode)                                                \
    KPOOL_STAGES_OF(X, glm5_next_kpool_verify)                                                \
    KPOOL_STAGES_OF(X, glm5_next_kpool_ring)

#define DEFINE_TEST(c, stage)                                                                 \
    Test(kpool_gpu, c##__##stage, .timeout = 300) { kpool_gpu(#c, #stage, run_##stage); }
KPOOL_CASES(DEFINE_TEST)

/* Every k-pool stage of every case has a test above (CPU: runs everywhere). */
Test(kpool_gpu, every_kpool_stage_has_a_test) {
    static const char *kstages[] = {"index_append_ring", "pool_keys", "score", "select",
                                    "attn_gathered"};
    static const char *covered[] = {
#define NAME_OF(c, stage) #c "/" #stage,
        KPOOL_CASES(NAME_OF)
#undef NAME_OF
    };
    size_t nc = sizeof covered / sizeof *covered, nk = sizeof kstages / sizeof *kstages;
    for (size_t i = 0; i < mla_case_count(); i++) {
        const mla_case *c = mla_case_at(i);
        for (int s = 0; s < MLA_MAX_STAGES && c->stages[s].fn; s++) {
            int kp = 0, found = 0;
            for (size_t k = 0; k < nk; k++) kp |= strcmp(c->stages[s].name, kstages[k]) == 0;
            if (!kp) continue;
            char key[160];
            snprintf(key, sizeof key, "%s/%s", c->name, c->stages[s].name);
            for (size_t k = 0; k < nc; k++) found |= strcmp(key, covered[k]) == 0;
            cr_expect(found, "k-pool case %s stage %s has no kpool_gpu test: add the case to "
                      "KPOOL_CASES in tests/test_kpool_gpu_goldens.c", c->name, c->stages[s].name);
        }
    }
}
