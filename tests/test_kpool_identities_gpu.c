/* test_kpool_identities_gpu.c: the bit-exact GPU-vs-GPU identities of the k-pool indexer, at the
 * fixture shapes and at the shipped long-context shape, plus the gathered-attention invariants.
 *
 * Names (each also a filter: bazel test //tests:kpool_identities_gpu_test
 * --test_arg=--filter='kpool_identities/<name>'; GPU bundle: bin/kpool_identities_gpu_test
 * --filter 'kpool_identities/<name>'):
 *  fixture_<case>            score fast == reference and select radix == reference (bytes) on
 *                            the case's inputs (the oracle comparison is kpool_gpu_goldens_test);
 *  longctx_score             1M cached rows (1048576), 512-query chunk at first_pos 1048064,
 *                            pool 4 (262144 pools), 32 x 128: the fast plane run twice (bytes),
 *                            and the reference scorer on queries 0..3 and 508..511 (separate
 *                            t_q = 4 launches at first_pos + 0 / + 508) == those fast rows;
 *  longctx_select            the same shape, select_k 512, width 2051, always_tail: radix (run
 *                            twice) == reference on all 512 queries == oracle, score rows
 *                            alternating realistic and tie-heavy;
 *                            (filter the long-context pair with --filter='kpool_identities/longctx_*';
 *                            they use ~1.2 GB of device memory and free it)
 *  pool_keys_ring_vs_flat    ring (several sizes, append chunks that wrap) + incremental builds
 *                            == flat full build, bytes, for pool 1, 4, 7, 64; both within class
 *                            pool_key of the oracle;
 *  pool_keys_incremental     several pool_begin steps on a flat plane == one full build, bytes;
 *  gathered_all_visible      attn_gathered with every visible row listed (ascending, -1 pad) vs
 *                            attn_absorbed: both within class attn of the oracle absorbed output
 *                            (glm5 and glm5_next geometries);
 *  gathered_nan_unselected   every cache row the query does not select is NaN: the output is
 *                            finite and bytes-equal to the same walk with those rows zeroed;
 *  select_tie_heavy          tie-heavy score planes (all equal, equal high bits, -inf, NaN,
 *                            +0/-0): radix == reference == oracle, int32 bytes.
 * Without a usable GPU every test reports SKIPPED (GPU_REQUIRE), never passed.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mla.h"
#include "oracle/mla_oracle.h"
#include "tests/lib/gpu_util.h"
#include "tests/kpool_gpu_util.h"
#include "tests/lib/case.h"

#define TARGET "kpool_identities_gpu_test"

/* ------------------------------------------------------------------ host data -------------- */
static uint64_t mix64(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* U(-scale, scale) on a 2^24 grid, a pure function of (stream, i). */
static float uni(uint64_t stream, uint64_t i, float scale) {
    uint64_t w = mix64(stream * 0x100000001B3ull ^ mix64(i));
    return (float)((int32_t)(w >> 40) - (1 << 23)) * 0x1p-23f * scale;
}
static float *host_fill(uint64_t stream, size_t n, float scale) {
    float *v = kp_xmalloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = uni(stream, i, scale);
    return v;
}

/* ------------------------------------------------------------------ fixture shapes --------- */
static void fixture_identity(const char *case_name) {
    GPU_REQUIRE();
    kp_ctx k;
    char test[160];
    snprintf(test, sizeof test, "fixture_%s", case_name);
    kp_init(&k, TARGET, "kpool_identities", test);
    const mla_case *c = mla_case_find(case_name);
    cr_assert(c != NULL, "%s: case %s is not in the case table", k.id, case_name);
    const mla_geom *g = &c->geom;
    mla_ctx ctx;
    cr_assert(mla_case_run(c, &ctx) == 0, "%s: mla_case_run: %s", k.id, ctx.err);
    const mla_tensor *q = mla_ctx_get(&ctx, "idx_q"), *hw = mla_ctx_get(&ctx, "idx_hw"),
                     *keys = mla_ctx_get(&ctx, "pool_keys"), *sc = mla_ctx_get(&ctx, "score");
    cr_assert(q && hw && keys && sc, "%s: case %s lacks the k-pool tensors", k.id, case_name);
    gpu_buf bq = gpu_buf_from_host(q->data, q->nbytes), bh = gpu_buf_from_host(hw->data, hw->nbytes),
            bk = gpu_buf_from_host(keys->data, keys->nbytes), bs = gpu_buf_alloc(sc->nbytes),
            bi = gpu_buf_alloc((size_t)g->t_q * g->width * 4);
    float *s[2];
    for (int r = 0; r < 2; r++) {
        gpu_buf_poison(&bs);
        kp_launched(&k, (r ? memra_mla_kpool_score_ref_f32 : memra_mla_kpool_score_f32)(
                            bq.ptr, bk.ptr, bh.ptr, bs.ptr, g->t_q, g->idx_heads, g->idx_dim,
                            g->n_pools, g->pool, g->first_pos, g->qk_scale, g->head_scale, NULL),
                    r ? "memra_mla_kpool_score_ref_f32" : "memra_mla_kpool_score_f32");
        s[r] = kp_output(&k, &bs, "score", r ? "reference" : "fast", 1);
    }
    kp_cmp_f32(&k, case_name, "score", 2, sc->shape, s[0], "fast", s[1], "reference",
               MLA_TOL_EXACT, NULL, 1);
    int32_t *ix[2];
    for (int r = 0; r < 2; r++) {
        gpu_buf_poison(&bi);
        kp_launched(&k, (r ? memra_mla_kpool_select_ref_f32 : memra_mla_kpool_select_f32)(
                            bs.ptr, bi.ptr, g->t_q, g->n_pools, g->pool, g->select_k, g->width,
                            g->first_pos, g->always_tail, NULL),
                    r ? "memra_mla_kpool_select_ref_f32" : "memra_mla_kpool_select_f32");
        ix[r] = kp_output(&k, &bi, "idx", r ? "reference" : "radix", 1);
    }
    kp_cmp_i32(&k, case_name, "idx", g->t_q, g->width, ix[0], "radix", ix[1], "reference");
    free(s[0]), free(s[1]), free(ix[0]), free(ix[1]);
    gpu_buf_free(&bq), gpu_buf_free(&bh), gpu_buf_free(&bk), gpu_buf_free(&bs), gpu_buf_free(&bi);
    mla_ctx_free(&ctx);
}

#define FIXTURE_CASES(X)                                                                      \
    X(glm5_kpool_decode) X(glm5_kpool_verify) X(glm5_next_kpool_decode)                       \
        X(glm5_next_kpool_verify) X(glm5_next_kpool_ring)
#define DEFINE_FIXTURE_TEST(c)                                                                \
    Test(kpool_identities, fixture_##c, .timeout = 300) { fixture_identity(#c); }
FIXTURE_CASES(DEFINE_FIXTURE_TEST)

/* ------------------------------------------------------------------ long context ----------- */
#define LC_ROWS 1048576
#define LC_TQ 512
#define LC_POOL 4
#define LC_NP (LC_ROWS / LC_POOL)
#define LC_H 32
#define LC_D 128
#define LC_FIRST (LC_ROWS - LC_TQ)
#define LC_SEL 512
#define LC_WIDTH 2051
static const float LC_QK = 0.08838834764831845f, LC_HS = 0.17677669529663688f;

Test(kpool_identities, longctx_score, .timeout = 900) {
    GPU_REQUIRE();
    kp_ctx k;
    kp_init(&k, TARGET, "kpool_identities", "longctx_score");
    size_t nq = (size_t)LC_TQ * LC_H * LC_D, nk = (size_t)LC_NP * LC_D, nh = (size_t)LC_TQ * LC_H,
           ns = (size_t)LC_TQ * LC_NP;
    float *q = host_fill(11, nq, 1.0f), *keys = host_fill(12, nk, 0.5f), *hw = host_fill(13, nh, 1.0f);
    gpu_buf bq = gpu_buf_from_host(q, nq * 4), bk = gpu_buf_from_host(keys, nk * 4),
            bh = gpu_buf_from_host(hw, nh * 4), bs = gpu_buf_alloc(ns * 4);
    free(keys);
    float *run[2];
    for (int r = 0; r < 2; r++) {
        gpu_buf_poison(&bs);
        kp_launched(&k, memra_mla_kpool_score_f32(bq.ptr, bk.ptr, bh.ptr, bs.ptr, LC_TQ, LC_H, LC_D,
                                                  LC_NP, LC_POOL, LC_FIRST, LC_QK, LC_HS, NULL),
                    "memra_mla_kpool_score_f32 (t_q 512, n_pools 262144)");
        run[r] = kp_output(&k, &bs, "score", r ? "fast run 2" : "fast run 1", 1);
    }
    const int64_t shape[2] = {LC_TQ, LC_NP};
    kp_cmp_f32(&k, "longctx", "score", 2, shape, run[1], "fast_run2", run[0], "fast_run1",
               MLA_TOL_EXACT, NULL, 1);
    free(run[1]);
    /* reference on queries 0..3 and 508..511, as t_q = 4 launches with their own first_pos */
    const int32_t starts[2] = {0, LC_TQ - 4};
    gpu_buf br = gpu_buf_alloc((size_t)4 * LC_NP * 4);
    for (int s = 0; s < 2; s++) {
        int32_t i0 = starts[s];
        gpu_buf_poison(&br);
        kp_launched(&k, memra_mla_kpool_score_ref_f32(
                            (const float *)bq.ptr + (size_t)i0 * LC_H * LC_D, bk.ptr,
                            (const float *)bh.ptr + (size_t)i0 * LC_H, br.ptr, 4, LC_H, LC_D, LC_NP,
                            LC_POOL, LC_FIRST + i0, LC_QK, LC_HS, NULL),
                    "memra_mla_kpool_score_ref_f32 (t_q 4 subset)");
        float *ref = kp_output(&k, &br, "score", "reference subset", 1);
        char tname[96];
        snprintf(tname, sizeof tname, "score rows %d..%d (subset row r = query %d + r)", i0, i0 + 3,
                 i0);
        const int64_t sub[2] = {4, LC_NP};
        kp_cmp_f32(&k, "longctx", tname, 2, sub, run[0] + (size_t)i0 * LC_NP, "fast", ref,
                   "reference", MLA_TOL_EXACT, NULL, 1);
        free(ref);
    }
    kp_input_untouched(&k, &bq, q, "q");
    kp_input_untouched(&k, &bh, hw, "hw");
    free(run[0]), free(q), free(hw);
    gpu_buf_free(&bq), gpu_buf_free(&bk), gpu_buf_free(&bh), gpu_buf_free(&bs), gpu_buf_free(&br);
}

/* Tie-heavy and realistic score rows: row i % 4 == 0 realistic, 1: 16 levels (heavy ties),
 * 2: one value with random low mantissa bits (equal high bits), 3: mostly equal with -inf, +0 /
 * -0 and a few NaN. */
static float tie_value(int kind, uint64_t stream, uint64_t i) {
    uint64_t w = mix64(stream ^ mix64(i));
    switch (kind) {
    case 0: return uni(stream, i, 1.0f);
    case 1: return (float)(int)(w % 16u) * 0.125f;
    case 2: {
        uint32_t b = 0x3F400000u | (uint32_t)(w & 0x3Fu); /* 0.75 + a few low-bit ulps */
        float f;
        memcpy(&f, &b, 4);
        return f;
    }
    default: {
        uint32_t r = (uint32_t)(w % 1000u);
        if (r < 3) return NAN;
        if (r < 50) return -INFINITY;
        if (r < 300) return (w >> 32) & 1 ? 0.0f : -0.0f;
        return 0.5f;
    }
    }
}

Test(kpool_identities, longctx_select, .timeout = 900) {
    GPU_REQUIRE();
    kp_ctx k;
    kp_init(&k, TARGET, "kpool_identities", "longctx_select");
    size_t ns = (size_t)LC_TQ * LC_NP, ni = (size_t)LC_TQ * LC_WIDTH;
    float *s = kp_xmalloc(ns * 4);
    for (size_t i = 0; i < LC_TQ; i++)
        for (size_t p = 0; p < LC_NP; p++) s[i * LC_NP + p] = tie_value((int)(i % 4), 21 + i, p);
    gpu_buf bs = gpu_buf_from_host(s, ns * 4), bi = gpu_buf_alloc(ni * 4);
    int32_t *ix[3];
    for (int r = 0; r < 3; r++) {
        gpu_buf_poison(&bi);
        kp_launched(&k, (r < 2 ? memra_mla_kpool_select_f32 : memra_mla_kpool_select_ref_f32)(
                            bs.ptr, bi.ptr, LC_TQ, LC_NP, LC_POOL, LC_SEL, LC_WIDTH, LC_FIRST, 1,
                            NULL),
                    r < 2 ? "memra_mla_kpool_select_f32" : "memra_mla_kpool_select_ref_f32");
        ix[r] = kp_output(&k, &bi, "idx", r == 0 ? "radix run 1" : r == 1 ? "radix run 2" : "reference", 1);
        cr_expect(kp_count_poison_i32(ix[r], ni) == 0, "%s: poison word left in idx (run %d)\n  re-run: %s",
                  k.id, r, k.rerun);
    }
    kp_input_untouched(&k, &bs, s, "score");
    kp_cmp_i32(&k, "longctx", "idx", LC_TQ, LC_WIDTH, ix[1], "radix_run2", ix[0], "radix_run1");
    kp_cmp_i32(&k, "longctx", "idx", LC_TQ, LC_WIDTH, ix[0], "radix", ix[2], "reference");
    int32_t *orc = kp_xmalloc(ni * 4);
    oracle_kpool_select_f32(s, orc, LC_TQ, LC_NP, LC_POOL, LC_SEL, LC_WIDTH, LC_FIRST, 1);
    kp_cmp_i32(&k, "longctx", "idx", LC_TQ, LC_WIDTH, ix[0], "radix", orc, "oracle");
    free(orc), free(s), free(ix[0]), free(ix[1]), free(ix[2]);
    gpu_buf_free(&bs), gpu_buf_free(&bi);
}

/* ------------------------------------------------------------------ pool keys -------------- */
/* GPU ring (state_rows) + incremental builds after every chunk of mla_kpool_ring_chunk; returns
 * the downloaded keys [np][d]. */
static float *gpu_ring_keys(const kp_ctx *k, const gpu_buf *bk, const gpu_buf *bg,
                            const gpu_buf *ba, int32_t rows, int32_t np, int32_t pool, int32_t d,
                            int32_t state_rows) {
    gpu_buf ring = gpu_buf_alloc((size_t)state_rows * 2 * d * 4), keys = gpu_buf_alloc((size_t)np * d * 4);
    int32_t done = 0, built = 0;
    for (int32_t ck = 0; done < rows; ck++) {
        int32_t n = mla_kpool_ring_chunk(ck, done, rows, state_rows, pool);
        int rc = memra_mla_index_append_ring_f32(ring.ptr, (const float *)bk->ptr + (size_t)done * d,
                                                 (const float *)bg->ptr + (size_t)done * d, done,
                                                 n, d, d, state_rows, NULL);
        cr_assert(rc == 0, "%s: ring append (slot %d, t %d, rows %d) returned %d (%s)\n  re-run: %s",
                  k->id, done, n, state_rows, rc, mla_status_message(rc), k->rerun);
        done += n;
        int32_t now = done / pool < np ? done / pool : np;
        rc = memra_mla_kpool_pool_keys_f32(ring.ptr, ba->ptr, keys.ptr, built, now, pool, d,
                                           state_rows, NULL);
        cr_assert(rc == 0, "%s: pool_keys(pool_begin %d, n_pools %d, pool %d, state_rows %d) "
                  "returned %d (%s)\n  re-run: %s", k->id, built, now, pool, state_rows, rc,
                  mla_status_message(rc), k->rerun);
        built = now;
    }
    kp_launched(k, 0, "ring schedule");
    float *out = kp_output(k, &keys, "pool_keys", "ring + incremental builds", 1);
    gpu_buf_free(&ring), gpu_buf_free(&keys);
    return out;
}

static float *gpu_flat_keys(const kp_ctx *k, const gpu_buf *bflat, const gpu_buf *ba, int32_t np,
                            int32_t pool, int32_t d, const int32_t *steps, int n_steps) {
    gpu_buf keys = gpu_buf_alloc((size_t)np * d * 4);
    int32_t built = 0;
    for (int s = 0; s <= n_steps; s++) {
        int32_t now = s < n_steps ? (steps[s] < np ? steps[s] : np) : np;
        if (now < built) continue;
        int rc = memra_mla_kpool_pool_keys_f32(bflat->ptr, ba->ptr, keys.ptr, built, now, pool,
                                               d, 0, NULL);
        cr_assert(rc == 0, "%s: flat pool_keys(pool_begin %d, n_pools %d, pool %d) returned %d "
                  "(%s)\n  re-run: %s", k->id, built, now, pool, rc, mla_status_message(rc),
                  k->rerun);
        built = now;
    }
    kp_launched(k, 0, n_steps ? "flat incremental builds" : "flat full build");
    float *out = kp_output(k, &keys, "pool_keys", n_steps ? "flat incremental" : "flat full", 1);
    gpu_buf_free(&keys);
    return out;
}

static void pool_keys_identity(int incremental_only) {
    GPU_REQUIRE();
    kp_ctx k;
    kp_init(&k, TARGET, "kpool_identities",
            incremental_only ? "pool_keys_incremental" : "pool_keys_ring_vs_flat");
    static const int32_t pools[] = {1, 4, 7, 64};
    const int32_t d = 128, rows = 9001;
    for (size_t pi = 0; pi < sizeof pools / sizeof *pools; pi++) {
        int32_t pool = pools[pi], np = rows / pool;
        float *kk = host_fill(31 + pi, (size_t)rows * d, 1.0f), *gg = host_fill(41 + pi, (size_t)rows * d, 4.0f),
              *ape = host_fill(51 + pi, (size_t)pool * d, 1.0f);
        float *flat = kp_xmalloc((size_t)rows * 2 * d * 4);
        oracle_index_append_ring_f32(flat, kk, gg, 0, rows, d, d, 0);
        gpu_buf bk = gpu_buf_from_host(kk, (size_t)rows * d * 4), bg = gpu_buf_from_host(gg, (size_t)rows * d * 4),
                ba = gpu_buf_from_host(ape, (size_t)pool * d * 4),
                bf = gpu_buf_from_host(flat, (size_t)rows * 2 * d * 4);
        float *full = gpu_flat_keys(&k, &bf, &ba, np, pool, d, NULL, 0);
        char tname[128];
        int64_t shape[2] = {np, d};
        if (incremental_only) {
            const int32_t steps[] = {0, 1, 2, 17, np / 3, np / 3, np / 2 + 1, np - 1};
            float *inc = gpu_flat_keys(&k, &bf, &ba, np, pool, d, steps, 8);
            snprintf(tname, sizeof tname, "pool_keys (pool %d, flat, pool_begin steps 0,1,2,17,"
                     "%d,%d,%d,%d,%d)", pool, np / 3, np / 3, np / 2 + 1, np - 1, np);
            kp_cmp_f32(&k, "synthetic", tname, 2, shape, inc, "incremental", full, "full",
                       MLA_TOL_EXACT, NULL, 1);
            free(inc);
        } else {
            const int32_t mult[] = {1, 3, 64, 1024};
            for (size_t m = 0; m < sizeof mult / sizeof *mult; m++) {
                int32_t sr = pool * mult[m];
                if (sr > 4096 + 64) continue;
                float *ring = gpu_ring_keys(&k, &bk, &bg, &ba, rows, np, pool, d, sr);
                snprintf(tname, sizeof tname, "pool_keys (pool %d, ring of %d rows)", pool, sr);
                kp_cmp_f32(&k, "synthetic", tname, 2, shape, ring, "ring_incremental", full,
                           "flat_full", MLA_TOL_EXACT, NULL, 1);
                free(ring);
            }
        }
        /* both within class pool_key of the oracle */
        float *orc = kp_xmalloc((size_t)np * d * 4);
        double *atol = kp_xmalloc((size_t)np * d * sizeof *atol);
        oracle_kpool_pool_keys_f32(flat, ape, orc, 0, np, pool, d, 0);
        mla_tol_pool_key_bounds(flat, ape, 0, np, pool, d, 0, atol);
        snprintf(tname, sizeof tname, "pool_keys (pool %d, flat full)", pool);
        kp_cmp_f32(&k, "synthetic", tname, 2, shape, full, "kernel", orc, "oracle",
                   MLA_TOL_POOL_KEY, atol, 0);
        free(orc), free(atol), free(full), free(flat), free(kk), free(gg), free(ape);
        gpu_buf_free(&bk), gpu_buf_free(&bg), gpu_buf_free(&ba), gpu_buf_free(&bf);
    }
}

Test(kpool_identities, pool_keys_ring_vs_flat, .timeout = 300) { pool_keys_identity(0); }
Test(kpool_identities, pool_keys_incremental, .timeout = 300) { pool_keys_identity(1); }

/* ------------------------------------------------------------------ gathered --------------- */
static void gathered_all_visible(int32_t d_rope) {
    kp_ctx k;
    kp_init(&k, TARGET, "kpool_identities", "gathered_all_visible");
    const int32_t H = 64, R = 512, tq = 4, tkv = 1500, W = R + d_rope;
    const float scale = 0.0625f;
    char cname[64];
    snprintf(cname, sizeof cname, "all_visible(d_rope %d, t_q %d, t_kv %d)", d_rope, tq, tkv);
    size_t nq = (size_t)tq * H * R, np = (size_t)tq * H * d_rope, nc = (size_t)tkv * W;
    float *ql = host_fill(61, nq, 1.0f), *qp = d_rope ? host_fill(62, np, 1.0f) : NULL,
          *cache = host_fill(63, nc, 1.0f);
    int32_t *idx = kp_xmalloc((size_t)tq * tkv * 4);
    for (int32_t i = 0; i < tq; i++)
        for (int32_t s = 0; s < tkv; s++) idx[(size_t)i * tkv + s] = s <= tkv - tq + i ? s : -1;
    gpu_buf bql = gpu_buf_from_host(ql, nq * 4), bqp = gpu_buf_from_host(qp, np * 4),
            bc = gpu_buf_from_host(cache, nc * 4), bi = gpu_buf_from_host(idx, (size_t)tq * tkv * 4),
            bo = gpu_buf_alloc(nq * 4);
    kp_launched(&k, memra_mla_attn_gathered_f32(bql.ptr, d_rope ? bqp.ptr : NULL, bc.ptr, bi.ptr,
                                                bo.ptr, H, R, d_rope, tq, tkv, scale, NULL),
                "memra_mla_attn_gathered_f32 (every visible row)");
    float *og = kp_output(&k, &bo, "o_lat", "gathered", 1);
    gpu_buf_poison(&bo);
    kp_launched(&k, memra_mla_attn_absorbed_f32(bql.ptr, d_rope ? bqp.ptr : NULL, bc.ptr, bo.ptr,
                                                H, R, d_rope, tq, tkv, scale, NULL),
                "memra_mla_attn_absorbed_f32");
    float *oa = kp_output(&k, &bo, "o_lat", "absorbed", 1);
    float *orc = kp_xmalloc(nq * 4), *org = kp_xmalloc(nq * 4);
    oracle_attn_absorbed_f32(ql, qp, cache, orc, H, R, d_rope, tq, tkv, scale);
    oracle_attn_gathered_f32(ql, qp, cache, idx, org, H, R, d_rope, tq, tkv, scale);
    double *atol = kp_xmalloc(nq * sizeof *atol);
    mla_tol_attn_gathered_bounds(ql, qp, cache, idx, H, R, d_rope, tq, tkv, scale, 0, 0, atol);
    const int64_t shape[3] = {tq, H, R};
    kp_cmp_f32(&k, cname, "o_lat", 3, shape, org, "oracle_gathered", orc, "oracle_absorbed",
               MLA_TOL_EXACT, NULL, 1);
    kp_cmp_f32(&k, cname, "o_lat", 3, shape, og, "gathered_kernel", orc, "oracle_absorbed",
               MLA_TOL_ATTN, atol, 0);
    kp_cmp_f32(&k, cname, "o_lat", 3, shape, oa, "absorbed_kernel", orc, "oracle_absorbed",
               MLA_TOL_ATTN, atol, 0);
    free(ql), free(qp), free(cache), free(idx), free(og), free(oa), free(orc), free(org), free(atol);
    gpu_buf_free(&bql), gpu_buf_free(&bqp), gpu_buf_free(&bc), gpu_buf_free(&bi), gpu_buf_free(&bo);
}

Test(kpool_identities, gathered_all_visible, .timeout = 300) {
    GPU_REQUIRE();
    gathered_all_visible(64); /* glm5 */
    gathered_all_visible(0);  /* glm5_next */
}

/* Decode cases (t_q = 1, so "unselected" is exact): rows not in idx are NaN vs zero. */
static void gathered_nan_case(const char *case_name) {
    kp_ctx k;
    kp_init(&k, TARGET, "kpool_identities", "gathered_nan_unselected");
    const mla_case *c = mla_case_find(case_name);
    cr_assert(c != NULL, "%s: case %s is not in the case table", k.id, case_name);
    const mla_geom *g = &c->geom;
    mla_ctx ctx;
    cr_assert(mla_case_run(c, &ctx) == 0, "%s: mla_case_run: %s", k.id, ctx.err);
    const mla_tensor *ql = mla_ctx_get(&ctx, "q_lat"), *qp = mla_ctx_get(&ctx, "q_pe"),
                     *cache = mla_ctx_get(&ctx, "cache"), *idx = mla_ctx_get(&ctx, "idx");
    cr_assert(ql && cache && idx && (g->d_rope == 0 || qp), "%s: case %s lacks tensors", k.id,
              case_name);
    int32_t W = g->kv_rank + g->d_rope;
    char *sel = calloc((size_t)g->t_kv, 1);
    const int32_t *iv = idx->data;
    for (size_t s = 0; s < (size_t)g->t_q * g->width; s++)
        if (iv[s] >= 0) sel[iv[s]] = 1;
    float *cn = kp_xmalloc(cache->nbytes), *cz = kp_xmalloc(cache->nbytes);
    memcpy(cn, cache->data, cache->nbytes);
    memcpy(cz, cache->data, cache->nbytes);
    size_t n_unsel = 0;
    for (int32_t r = 0; r < g->t_kv; r++)
        if (!sel[r]) {
            n_unsel++;
            for (int32_t c2 = 0; c2 < W; c2++) {
                cn[(size_t)r * W + c2] = NAN;
                cz[(size_t)r * W + c2] = 0.0f;
            }
        }
    size_t no = (size_t)g->t_q * g->n_head * g->kv_rank;
    gpu_buf bql = gpu_buf_from_host(ql->data, ql->nbytes),
            bqp = qp ? gpu_buf_from_host(qp->data, qp->nbytes) : gpu_buf_alloc(0),
            bcn = gpu_buf_from_host(cn, cache->nbytes), bcz = gpu_buf_from_host(cz, cache->nbytes),
            bi = gpu_buf_from_host(idx->data, idx->nbytes), bo = gpu_buf_alloc(no * 4);
    float *out[2];
    for (int v = 0; v < 2; v++) {
        gpu_buf_poison(&bo);
        kp_launched(&k, memra_mla_attn_gathered_f32(bql.ptr, qp ? bqp.ptr : NULL,
                                                    v ? bcz.ptr : bcn.ptr, bi.ptr, bo.ptr,
                                                    g->n_head, g->kv_rank, g->d_rope, g->t_q,
                                                    g->width, g->scale, NULL),
                    v ? "memra_mla_attn_gathered_f32 (unselected rows zero)"
                      : "memra_mla_attn_gathered_f32 (unselected rows NaN)");
        out[v] = kp_output(&k, &bo, "o_lat", v ? "zero rows" : "NaN rows", 1);
    }
    size_t nonfinite = 0, first = 0;
    for (size_t i = 0; i < no; i++)
        if (!isfinite(out[0][i]) && !nonfinite++) first = i;
    cr_expect(nonfinite == 0,
              "%s: case %s: %zu of %zu outputs non-finite with the %zu unselected cache rows NaN "
              "(first o_lat[%zu][%zu][%zu] = %g): the kernel reads rows it did not select\n"
              "  re-run: %s", k.id, case_name, nonfinite, no, n_unsel,
              first / ((size_t)g->n_head * g->kv_rank), first / g->kv_rank % g->n_head,
              first % g->kv_rank, nonfinite ? (double)out[0][first] : 0.0, k.rerun);
    const int64_t shape[3] = {g->t_q, g->n_head, g->kv_rank};
    kp_cmp_f32(&k, case_name, "o_lat", 3, shape, out[0], "nan_rows", out[1], "zero_rows",
               MLA_TOL_EXACT, NULL, 1);
    free(sel), free(cn), free(cz), free(out[0]), free(out[1]);
    gpu_buf_free(&bql), gpu_buf_free(&bqp), gpu_buf_free(&bcn), gpu_buf_free(&bcz),
        gpu_buf_free(&bi), gpu_buf_free(&bo);
    mla_ctx_free(&ctx);
}

Test(kpool_identities, gathered_nan_unselected, .timeout = 300) {
    GPU_REQUIRE();
    gathered_nan_case("glm5_kpool_decode");
    gathered_nan_case("glm5_next_kpool_decode");
    gathered_nan_case("glm5_next_kpool_verify"); /* rows no query selects */
}

/* ------------------------------------------------------------------ tie-heavy select ------- */
Test(kpool_identities, select_tie_heavy, .timeout = 300) {
    GPU_REQUIRE();
    kp_ctx k;
    kp_init(&k, TARGET, "kpool_identities", "select_tie_heavy");
    static const struct { int32_t tq, np, pool, sel, tail; } shp[] = {
        {8, 5000, 4, 512, 1}, {8, 8192, 1, 2048, 0}, {6, 3000, 64, 16, 1}, {4, 700, 4, 512, 1}};
    for (size_t si = 0; si < sizeof shp / sizeof *shp; si++)
        for (int kind = 0; kind < 4; kind++) {
            int32_t tq = shp[si].tq, np = shp[si].np, pool = shp[si].pool, sel = shp[si].sel,
                    width = sel * pool + pool - 1 + 3, fp = np * pool - tq; /* -> last rows */
            if (!shp[si].tail && fp < pool - 1) fp = pool - 1;
            size_t ns = (size_t)tq * np, ni = (size_t)tq * width;
            float *s = kp_xmalloc(ns * 4);
            for (size_t i = 0; i < ns; i++) s[i] = tie_value(kind, 100 + si * 8 + kind, i);
            gpu_buf bs = gpu_buf_from_host(s, ns * 4), bi = gpu_buf_alloc(ni * 4);
            int32_t *ix[2];
            for (int r = 0; r < 2; r++) {
                gpu_buf_poison(&bi);
                kp_launched(&k, (r ? memra_mla_kpool_select_ref_f32 : memra_mla_kpool_select_f32)(
                                    bs.ptr, bi.ptr, tq, np, pool, sel, width, fp, shp[si].tail, NULL),
                            r ? "memra_mla_kpool_select_ref_f32" : "memra_mla_kpool_select_f32");
                ix[r] = kp_output(&k, &bi, "idx", r ? "reference" : "radix", 1);
            }
            int32_t *orc = kp_xmalloc(ni * 4);
            oracle_kpool_select_f32(s, orc, tq, np, pool, sel, width, fp, shp[si].tail);
            char cname[160];
            snprintf(cname, sizeof cname,
                     "tie_kind%d(t_q %d, n_pools %d, pool %d, select_k %d, width %d, first_pos %d, "
                     "always_tail %d)", kind, tq, np, pool, sel, width, fp, shp[si].tail);
            kp_cmp_i32(&k, cname, "idx", tq, width, ix[0], "radix", ix[1], "reference");
            kp_cmp_i32(&k, cname, "idx", tq, width, ix[0], "radix", orc, "oracle");
            free(s), free(orc), free(ix[0]), free(ix[1]);
            gpu_buf_free(&bs), gpu_buf_free(&bi);
        }
}
