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
 *                            alternating realistic and tie-heavy (filter the long-context
 *                            pair with --filter='kpool_identities/longctx_*'; they use ~1.2 GB
 *                            of device memory and free it);
 *  pool_keys_ring_vs_flat    ring (several sizes, append chunks that wrap) + incremental builds
 *                            == flat full build, bytes, for pool 1, 4, 7, 64; both within class
 *                            pool_key of the oracle;
 *  san_pool_keys_ring_vs_flat the same on 300 rows (the sanitizer tier's case);
 *  pool_keys_incremental     several pool_begin steps on a flat plane == one full build, bytes;
 *  gathered_all_visible      attn_gathered with every visible row listed (ascending, -1 pad) vs
 *                            attn_absorbed: both within class attn of the oracle absorbed output
 *                            (glm5 and glm5_next geometries);
 *  gathered_nan_unselected   every cache row the query does not select is NaN: the output is
 *                            finite and bytes-equal to the same walk with those rows zeroed;
 *  select_tie_heavy          tie-heavy score planes (all equal, equal high bits, -inf, NaN,
 *                            +0/-0, and one value with each query's last visible pool strictly
 *                            best, which the tie pass must take): radix == reference == oracle,
 *                            int32 bytes;
 *  select_sampled_covers_tail the sampled route's sample reaches the plane's last segments: a
 *                            row whose best pools all lie past pool 131,072 (the sample's second
 *                            step) settles on it;
 *  select_sampled_door       the radix select's sampled route (the launcher's default;
 *                            MEMRA_MLA_SELECT_SAMPLED=0 rolls the door back, kernels/mla_door.h)
 *                            on 20 queries x 70,000 pools (pool 4, select_k 512, tail) with
 *                            realistic, 16-level, equal-high-bit, special and sample-blind rows:
 *                            the launcher's bytes == the full passes' == the reference's; the
 *                            receipts count every row, the rows the route can settle settle and
 *                            the others are handed back; the rollback moves no receipt. Also on
 *                            21 x 67,584 pools (the last row exactly 11 whole chunks of the
 *                            pass, no tail) and 20 x 70,001 (rows mostly not 16-byte aligned:
 *                            the pass's scalar form);
 *  san_select_sampled        the same on 5 queries x 66,000 pools (one row per kind), small
 *                            enough for compute-sanitizer (the sanitizer set's san_* filter);
 *  select_sampled_masks_invisible the sampled route never takes an invisible pool: rows whose
 *                            pool 0 is their best visible key and whose invisible pools score
 *                            1,000, aligned and not, settle on the route (receipts) with the
 *                            reference's and the oracle's bytes;
 *  select_sort_bitmap_limit  the settle's sort of the winners at its bitmap's size limit: rows
 *                            of 491,519 and 491,520 visible pools (the bitmap) and 491,521 and
 *                            491,522 (the bitonic sort), radix == reference == oracle;
 *  san_score_misaligned      the scorers with q and keys only 4-byte aligned: the fast plan's
 *                            scalar arm, the reference's bytes;
 *  san_score_exact_alloc     the fast and reference scorers on buffers of exactly their size
 *                            (plain cudaMalloc, no guard bands) at d 132 (streamed float4), 68
 *                            (resident float4) and 7 (scalar), t_q 1 and 64: fast == reference
 *                            bytes; under memcheck (the sanitizer tier) a read past the last
 *                            pool's channels is out of bounds, which a guard band would hide
 *                            (the H200 mutate survivor at mla_kpool.cu:297).
 * Everything runs on the GPU testbed (tests/lib/testbed.h): guarded, poisoned buffers, one
 * comparator whose report names the case, the tensor, the worst / first differing element
 * (unravelled) with both values and the re-run command, and writes a reproducer
 * repro-kpool_identities-<name>-<tensor>.safetensors under $TEST_UNDECLARED_OUTPUTS_DIR (else
 * /tmp). The fixture tests run the golden cases of MLA_KPOOL_CASES (tests/lib/case_list.h); the
 * long-context shape is mla_geom_longctx_kpool() (tests/lib/geometry.h); every other input
 * comes from the Philox fill (tests/lib/mla_fill.h) under this suite's seed.
 * Without a usable GPU every test reports SKIPPED (GPU_REQUIRE), never passed.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mla.h"
#include "kernels/mla_door.h"
#include "kernels/mla_kpool_select.h"
#include "kernels/mla_status.h"
#include "oracle/mla_oracle.h"
#include "tests/lib/case.h"
#include "tests/lib/case_list.h"
#include "tests/lib/geometry.h"
#include "tests/lib/mla_fill.h"
#include "tests/lib/select_route.h"
#include "tests/lib/testbed_criterion.h"

#define TARGET "kpool_identities_gpu_test"
#define SUITE "kpool_identities"
/* The fill seed of this suite's synthetic inputs (each tensor also keyed by its name). */
#define SEED 0x4B494401u

/* ------------------------------------------------------------------ host data -------------- */
/* n elements of `name`, U(-scale, scale) on the 2^24-point grid (MLA_FILL_REALISTIC). */
static float *host_fill(tb *t, const char *name, size_t n, float scale) {
    float *v = tb_xmalloc(t, n * sizeof *v);
    mla_fill_host_f32(v, n, MLA_FILL_REALISTIC, SEED, name, scale);
    return v;
}

/* Tie-heavy and realistic score values, one stream element each: kind 0 realistic, 1: 16
 * levels (heavy ties), 2: one value with random low mantissa bits (equal high bits), 3: mostly
 * equal with -inf, +0 / -0 and a few NaN. */
static float tie_value(int kind, mla_fill_stream *s) {
    if (kind == 0) return mla_fill_stream_uniform(s, -1.0f, 1.0f);
    uint32_t w = mla_fill_stream_u32(s);
    switch (kind) {
    case 1: return (float)(int)(w % 16u) * 0.125f;
    case 2: {
        uint32_t b = 0x3F400000u | (w & 0x3Fu); /* 0.75 + a few low-bit ulps */
        float f;
        memcpy(&f, &b, 4);
        return f;
    }
    default: {
        uint32_t r = w % 1000u;
        if (r < 3) return NAN;
        if (r < 50) return -INFINITY;
        if (r < 300) return w >> 31 ? 0.0f : -0.0f;
        return 0.5f;
    }
    }
}

/* The radix select (the launcher) and then the reference on the score plane bs (sh's shape), each
 * into bi freshly poisoned; their idx downloaded into ix[0] (radix) and ix[1] (reference). */
static void radix_then_reference(tb *t, const gpu_buf *bs, gpu_buf *bi, select_shape sh,
                                 int32_t *ix[2]) {
    for (int r = 0; r < 2; r++) {
        gpu_buf_poison(bi);
        tb_launched(t,
                    (r ? memra_mla_kpool_select_ref_f32 : memra_mla_kpool_select_f32)(
                        bs->ptr, bi->ptr, sh.t_q, sh.n_pools, sh.pool, sh.select_k, sh.width,
                        sh.first_pos, sh.always_tail, NULL),
                    r ? "memra_mla_kpool_select_ref_f32" : "memra_mla_kpool_select_f32");
        ix[r] = tb_output(t, bi, "idx", r ? "reference" : "radix", 1);
    }
}

/* ------------------------------------------------------------------ fixture shapes --------- */
static void fixture_identity(const char *case_name) {
    GPU_REQUIRE();
    tb t;
    char test[160];
    snprintf(test, sizeof test, "fixture_%s", case_name);
    TB_CRITERION_INIT(&t, TARGET, SUITE, test);
    mla_ctx ctx;
    const mla_geom *g = &tb_case_run(&t, case_name, &ctx)->geom;
    const mla_tensor *q = tb_tensor(&t, &ctx, "idx_q"), *hw = tb_tensor(&t, &ctx, "idx_hw"),
                     *keys = tb_tensor(&t, &ctx, "pool_keys"), *sc = tb_tensor(&t, &ctx, "score");
    gpu_buf bq = gpu_buf_from_host(q->data, q->nbytes);
    gpu_buf bh = gpu_buf_from_host(hw->data, hw->nbytes);
    gpu_buf bk = gpu_buf_from_host(keys->data, keys->nbytes), bs = gpu_buf_alloc(sc->nbytes);
    gpu_buf bi = gpu_buf_alloc((size_t)g->t_q * g->width * 4);
    float *s[2];
    for (int r = 0; r < 2; r++) {
        gpu_buf_poison(&bs);
        tb_launched(&t,
                    (r ? memra_mla_kpool_score_ref_f32 : memra_mla_kpool_score_f32)(
                        bq.ptr, bk.ptr, bh.ptr, bs.ptr, g->t_q, g->idx_heads, g->idx_dim,
                        g->n_pools, g->pool, g->first_pos, g->qk_scale, g->head_scale, NULL),
                    r ? "memra_mla_kpool_score_ref_f32" : "memra_mla_kpool_score_f32");
        s[r] = tb_output(&t, &bs, "score", r ? "reference" : "fast", 1);
    }
    tb_compare(&t, "score", ST_F32, 2, sc->shape, s[0], "fast", s[1], "reference", MLA_TOL_EXACT,
               NULL, 1);
    const int64_t ishape[2] = {g->t_q, g->width};
    int32_t *ix[2];
    radix_then_reference(&t, &bs, &bi,
                         (select_shape){g->t_q, g->n_pools, g->pool, g->select_k, g->width,
                                        g->first_pos, g->always_tail},
                         ix);
    tb_compare(&t, "idx", ST_I32, 2, ishape, ix[0], "radix", ix[1], "reference", MLA_TOL_EXACT,
               NULL, 1);
    free(s[0]), free(s[1]), free(ix[0]), free(ix[1]);
    gpu_buf_free(&bq), gpu_buf_free(&bh), gpu_buf_free(&bk), gpu_buf_free(&bs), gpu_buf_free(&bi);
    mla_ctx_free(&ctx);
}

/* One test per k-pool golden case (tests/lib/case_list.h). */
#define DEFINE_FIXTURE_TEST(c, set)                                                                \
    Test(kpool_identities, fixture_##c, .timeout = 300) { fixture_identity(#c); }
MLA_KPOOL_CASES(DEFINE_FIXTURE_TEST)

/* ------------------------------------------------------------------ long context ----------- */
/* The shipped long-context step (tests/lib/geometry.h): MLA_LONGCTX_ROWS cached rows, a
 * MLA_LONGCTX_T_Q-query chunk at first_pos MLA_LONGCTX_FIRST_POS, the glm5_next indexer (pool 4,
 * MLA_LONGCTX_N_POOLS pools, 32 x 128, select_k 512, width 2051, always_tail). */
Test(kpool_identities, longctx_score, .timeout = 900) {
    GPU_REQUIRE();
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, "longctx_score");
    tb_set_case(&t, "longctx");
    const mla_geom g = mla_geom_longctx_kpool();
    const int32_t H = g.idx_heads, D = g.idx_dim, NP = g.n_pools;
    size_t nq = (size_t)g.t_q * H * D, nk = (size_t)NP * D, nh = (size_t)g.t_q * H,
           ns = (size_t)g.t_q * NP;
    float *q = host_fill(&t, "longctx/idx_q", nq, 1.0f);
    float *keys = host_fill(&t, "longctx/pool_keys", nk, 0.5f);
    float *hw = host_fill(&t, "longctx/idx_hw", nh, 1.0f);
    gpu_buf bq = gpu_buf_from_host(q, nq * 4), bk = gpu_buf_from_host(keys, nk * 4),
            bh = gpu_buf_from_host(hw, nh * 4), bs = gpu_buf_alloc(ns * 4);
    free(keys);
    float *run[2];
    char what[96];
    snprintf(what, sizeof what, "memra_mla_kpool_score_f32 (t_q %d, n_pools %d)", g.t_q, NP);
    for (int r = 0; r < 2; r++) {
        gpu_buf_poison(&bs);
        tb_launched(&t,
                    memra_mla_kpool_score_f32(bq.ptr, bk.ptr, bh.ptr, bs.ptr, g.t_q, H, D, NP,
                                              g.pool, g.first_pos, g.qk_scale, g.head_scale, NULL),
                    what);
        run[r] = tb_output(&t, &bs, "score", r ? "fast run 2" : "fast run 1", 1);
    }
    const int64_t shape[2] = {g.t_q, NP};
    tb_compare(&t, "score", ST_F32, 2, shape, run[1], "fast_run2", run[0], "fast_run1",
               MLA_TOL_EXACT, NULL, 1);
    free(run[1]);
    /* reference on queries 0..3 and t_q-4..t_q-1, as t_q = 4 launches with their own first_pos */
    const int32_t starts[2] = {0, g.t_q - 4};
    gpu_buf br = gpu_buf_alloc((size_t)4 * NP * 4);
    for (int s = 0; s < 2; s++) {
        int32_t i0 = starts[s];
        gpu_buf_poison(&br);
        tb_launched(&t,
                    memra_mla_kpool_score_ref_f32((const float *)bq.ptr + (size_t)i0 * H * D,
                                                  bk.ptr, (const float *)bh.ptr + (size_t)i0 * H,
                                                  br.ptr, 4, H, D, NP, g.pool, g.first_pos + i0,
                                                  g.qk_scale, g.head_scale, NULL),
                    "memra_mla_kpool_score_ref_f32 (t_q 4 subset)");
        float *ref = tb_output(&t, &br, "score", "reference subset", 1);
        char tname[96];
        snprintf(tname, sizeof tname, "score rows %d..%d (subset row r = query %d + r)", i0, i0 + 3,
                 i0);
        const int64_t sub[2] = {4, NP};
        tb_compare(&t, tname, ST_F32, 2, sub, run[0] + (size_t)i0 * NP, "fast", ref, "reference",
                   MLA_TOL_EXACT, NULL, 1);
        free(ref);
    }
    tb_input_untouched(&t, &bq, q, "q");
    tb_input_untouched(&t, &bh, hw, "hw");
    free(run[0]), free(q), free(hw);
    gpu_buf_free(&bq), gpu_buf_free(&bk), gpu_buf_free(&bh), gpu_buf_free(&bs), gpu_buf_free(&br);
}

/* Score rows alternating by kind (row i: tie_value kind i % 4), then radix (twice) and
 * reference select, and the oracle. */
Test(kpool_identities, longctx_select, .timeout = 900) {
    GPU_REQUIRE();
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, "longctx_select");
    tb_set_case(&t, "longctx");
    const mla_geom g = mla_geom_longctx_kpool();
    const int32_t NP = g.n_pools;
    size_t ns = (size_t)g.t_q * NP, ni = (size_t)g.t_q * g.width;
    float *s = tb_xmalloc(&t, ns * 4);
    mla_fill_stream st = mla_fill_stream_init(SEED, "longctx/score");
    for (size_t i = 0; i < (size_t)g.t_q; i++)
        for (size_t p = 0; p < (size_t)NP; p++) s[i * NP + p] = tie_value((int)(i % 4), &st);
    gpu_buf bs = gpu_buf_from_host(s, ns * 4), bi = gpu_buf_alloc(ni * 4);
    int32_t *ix[3];
    for (int r = 0; r < 3; r++) {
        gpu_buf_poison(&bi);
        tb_launched(&t,
                    (r < 2 ? memra_mla_kpool_select_f32 : memra_mla_kpool_select_ref_f32)(
                        bs.ptr, bi.ptr, g.t_q, NP, g.pool, g.select_k, g.width, g.first_pos,
                        g.always_tail, NULL),
                    r < 2 ? "memra_mla_kpool_select_f32" : "memra_mla_kpool_select_ref_f32");
        ix[r] = tb_output(&t, &bi, "idx",
                          r == 0   ? "radix run 1"
                          : r == 1 ? "radix run 2"
                                   : "reference",
                          1);
        tb_expectf(&t, tb_count_poison(ix[r], ni) == 0, "poison word left in idx (run %d)", r);
    }
    tb_input_untouched(&t, &bs, s, "score");
    const int64_t ishape[2] = {g.t_q, g.width};
    tb_compare(&t, "idx", ST_I32, 2, ishape, ix[1], "radix_run2", ix[0], "radix_run1",
               MLA_TOL_EXACT, NULL, 1);
    tb_compare(&t, "idx", ST_I32, 2, ishape, ix[0], "radix", ix[2], "reference", MLA_TOL_EXACT,
               NULL, 1);
    int32_t *orc = tb_xmalloc(&t, ni * 4);
    oracle_kpool_select_f32(s, orc, g.t_q, NP, g.pool, g.select_k, g.width, g.first_pos,
                            g.always_tail);
    tb_compare(&t, "idx", ST_I32, 2, ishape, ix[0], "radix", orc, "oracle", MLA_TOL_EXACT, NULL, 1);
    free(orc), free(s), free(ix[0]), free(ix[1]), free(ix[2]);
    gpu_buf_free(&bs), gpu_buf_free(&bi);
}

/* ------------------------------------------------------------------ pool keys -------------- */
/* GPU ring (state_rows) + incremental builds after every chunk of mla_kpool_ring_chunk; returns
 * the downloaded keys [np][d]. */
static float *gpu_ring_keys(tb *t, const gpu_buf *bk, const gpu_buf *bg, const gpu_buf *ba,
                            int32_t rows, int32_t np, int32_t pool, int32_t d, int32_t state_rows) {
    gpu_buf ring = gpu_buf_alloc((size_t)state_rows * 2 * d * 4);
    gpu_buf keys = gpu_buf_alloc((size_t)np * d * 4);
    int32_t done = 0, built = 0;
    for (int32_t ck = 0; done < rows; ck++) {
        int32_t n = mla_kpool_ring_chunk(ck, done, rows, state_rows, pool);
        int rc = memra_mla_index_append_ring_f32(
            ring.ptr, (const float *)bk->ptr + (size_t)done * d,
            (const float *)bg->ptr + (size_t)done * d, done, n, d, d, state_rows, NULL);
        if (rc)
            tb_failf(t, 1, "ring append (slot %d, t %d, rows %d) returned %d (%s)", done, n,
                     state_rows, rc, mla_status_message(rc));
        done += n;
        int32_t now = done / pool < np ? done / pool : np;
        rc = memra_mla_kpool_pool_keys_f32(ring.ptr, ba->ptr, keys.ptr, built, now, pool, d,
                                           state_rows, NULL);
        if (rc)
            tb_failf(t, 1,
                     "pool_keys(pool_begin %d, n_pools %d, pool %d, state_rows %d) returned %d "
                     "(%s)",
                     built, now, pool, state_rows, rc, mla_status_message(rc));
        built = now;
    }
    tb_launched(t, 0, "ring schedule");
    float *out = tb_output(t, &keys, "pool_keys", "ring + incremental builds", 1);
    gpu_buf_free(&ring), gpu_buf_free(&keys);
    return out;
}

static float *gpu_flat_keys(tb *t, const gpu_buf *bflat, const gpu_buf *ba, int32_t np,
                            int32_t pool, int32_t d, const int32_t *steps, int n_steps) {
    gpu_buf keys = gpu_buf_alloc((size_t)np * d * 4);
    int32_t built = 0;
    for (int s = 0; s <= n_steps; s++) {
        int32_t now = s < n_steps ? (steps[s] < np ? steps[s] : np) : np;
        if (now < built) continue;
        int rc = memra_mla_kpool_pool_keys_f32(bflat->ptr, ba->ptr, keys.ptr, built, now, pool, d,
                                               0, NULL);
        if (rc)
            tb_failf(t, 1, "flat pool_keys(pool_begin %d, n_pools %d, pool %d) returned %d (%s)",
                     built, now, pool, rc, mla_status_message(rc));
        built = now;
    }
    tb_launched(t, 0, n_steps ? "flat incremental builds" : "flat full build");
    float *out = tb_output(t, &keys, "pool_keys", n_steps ? "flat incremental" : "flat full", 1);
    gpu_buf_free(&keys);
    return out;
}

/* Synthetic planes at the indexer width (MLA_INDEXER_DIM), gate ~ U(-4, 4) as in the cases. */
static void pool_keys_identity(int incremental_only, int32_t rows, const char *name) {
    GPU_REQUIRE();
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, name);
    tb_set_case(&t, "synthetic");
    static const int32_t pools[] = {1, 4, 7, 64};
    const int32_t d = MLA_INDEXER_DIM;
    for (size_t pi = 0; pi < sizeof pools / sizeof *pools; pi++) {
        int32_t pool = pools[pi], np = rows / pool;
        char nk[64], ng[64], na[64];
        snprintf(nk, sizeof nk, "pool%d/idx_k", pool);
        snprintf(ng, sizeof ng, "pool%d/idx_gate", pool);
        snprintf(na, sizeof na, "pool%d/idx_ape", pool);
        float *kk = host_fill(&t, nk, (size_t)rows * d, 1.0f);
        float *gg = host_fill(&t, ng, (size_t)rows * d, MLA_KPOOL_GATE_SCALE);
        float *ape = host_fill(&t, na, (size_t)pool * d, 1.0f);
        float *flat = tb_xmalloc(&t, (size_t)rows * 2 * d * 4);
        oracle_index_append_ring_f32(flat, kk, gg, 0, rows, d, d, 0);
        gpu_buf bk = gpu_buf_from_host(kk, (size_t)rows * d * 4);
        gpu_buf bg = gpu_buf_from_host(gg, (size_t)rows * d * 4);
        gpu_buf ba = gpu_buf_from_host(ape, (size_t)pool * d * 4);
        gpu_buf bf = gpu_buf_from_host(flat, (size_t)rows * 2 * d * 4);
        float *full = gpu_flat_keys(&t, &bf, &ba, np, pool, d, NULL, 0);
        char tname[128];
        int64_t shape[2] = {np, d};
        if (incremental_only) {
            const int32_t steps[] = {0, 1, 2, 17, np / 3, np / 3, np / 2 + 1, np - 1};
            float *inc = gpu_flat_keys(&t, &bf, &ba, np, pool, d, steps, 8);
            snprintf(tname, sizeof tname,
                     "pool_keys (pool %d, flat, pool_begin steps 0,1,2,17,"
                     "%d,%d,%d,%d,%d)",
                     pool, np / 3, np / 3, np / 2 + 1, np - 1, np);
            tb_compare(&t, tname, ST_F32, 2, shape, inc, "incremental", full, "full", MLA_TOL_EXACT,
                       NULL, 1);
            free(inc);
        } else {
            const int32_t mult[] = {1, 3, 64, 1024};
            for (size_t m = 0; m < sizeof mult / sizeof *mult; m++) {
                int32_t sr = pool * mult[m];
                if (sr > 4096 + 64) continue;
                float *ring = gpu_ring_keys(&t, &bk, &bg, &ba, rows, np, pool, d, sr);
                snprintf(tname, sizeof tname, "pool_keys (pool %d, ring of %d rows)", pool, sr);
                tb_compare(&t, tname, ST_F32, 2, shape, ring, "ring_incremental", full, "flat_full",
                           MLA_TOL_EXACT, NULL, 1);
                free(ring);
            }
        }
        /* both within class pool_key of the oracle */
        float *orc = tb_xmalloc(&t, (size_t)np * d * 4);
        double *atol = tb_xmalloc(&t, (size_t)np * d * sizeof *atol);
        oracle_kpool_pool_keys_f32(flat, ape, orc, 0, np, pool, d, 0);
        mla_tol_pool_key_bounds(flat, ape, 0, np, pool, d, 0, atol);
        snprintf(tname, sizeof tname, "pool_keys (pool %d, flat full)", pool);
        tb_compare(&t, tname, ST_F32, 2, shape, full, "kernel", orc, "oracle", MLA_TOL_POOL_KEY,
                   atol, 0);
        free(orc), free(atol), free(full), free(flat), free(kk), free(gg), free(ape);
        gpu_buf_free(&bk), gpu_buf_free(&bg), gpu_buf_free(&ba), gpu_buf_free(&bf);
    }
}

Test(kpool_identities, pool_keys_ring_vs_flat, .timeout = 300) {
    pool_keys_identity(0, 9001, "pool_keys_ring_vs_flat");
}
Test(kpool_identities, pool_keys_incremental, .timeout = 300) {
    pool_keys_identity(1, 9001, "pool_keys_incremental");
}
/* The sanitizer tier's case (tools/sanitize_set.tsv): the same identity on 300 rows (pool 64:
 * 4 pools, rings of 1 and 3 pools that wrap; pool 1: 300 one-row chunks), so compute-sanitizer
 * sees every ring arm in seconds instead of 9001 one-row chunks. */
Test(kpool_identities, san_pool_keys_ring_vs_flat, .timeout = 300) {
    pool_keys_identity(0, 300, "san_pool_keys_ring_vs_flat");
}

/* ------------------------------------------------------------------ gathered --------------- */
/* At the dense geometry g (t_q 4, t_kv 1500): every visible row listed. */
static void gathered_all_visible(tb *t, const mla_geom g) {
    const int32_t H = g.n_head, R = g.kv_rank, d_rope = g.d_rope, tq = g.t_q, tkv = g.t_kv;
    const int32_t W = R + d_rope;
    const float scale = g.scale;
    char cname[64];
    snprintf(cname, sizeof cname, "all_visible(d_rope %d, t_q %d, t_kv %d)", d_rope, tq, tkv);
    tb_set_case(t, cname);
    size_t nq = (size_t)tq * H * R, np = (size_t)tq * H * d_rope, nc = (size_t)tkv * W;
    float *ql = host_fill(t, "all_visible/q_lat", nq, 1.0f);
    float *qp = d_rope ? host_fill(t, "all_visible/q_pe", np, 1.0f) : NULL;
    float *cache = host_fill(t, "all_visible/cache", nc, 1.0f);
    int32_t *idx = tb_xmalloc(t, (size_t)tq * tkv * 4);
    for (int32_t i = 0; i < tq; i++)
        for (int32_t s = 0; s < tkv; s++) idx[(size_t)i * tkv + s] = s <= tkv - tq + i ? s : -1;
    gpu_buf bql = gpu_buf_from_host(ql, nq * 4), bqp = gpu_buf_from_host(qp, np * 4),
            bc = gpu_buf_from_host(cache, nc * 4),
            bi = gpu_buf_from_host(idx, (size_t)tq * tkv * 4), bo = gpu_buf_alloc(nq * 4);
    tb_launched(t,
                memra_mla_attn_gathered_f32(bql.ptr, d_rope ? bqp.ptr : NULL, bc.ptr, bi.ptr,
                                            bo.ptr, H, R, d_rope, tq, tkv, scale, NULL),
                "memra_mla_attn_gathered_f32 (every visible row)");
    float *og = tb_output(t, &bo, "o_lat", "gathered", 1);
    gpu_buf_poison(&bo);
    tb_launched(t,
                memra_mla_attn_absorbed_f32(bql.ptr, d_rope ? bqp.ptr : NULL, bc.ptr, bo.ptr, H, R,
                                            d_rope, tq, tkv, scale, NULL),
                "memra_mla_attn_absorbed_f32");
    float *oa = tb_output(t, &bo, "o_lat", "absorbed", 1);
    float *orc = tb_xmalloc(t, nq * 4), *org = tb_xmalloc(t, nq * 4);
    oracle_attn_absorbed_f32(ql, qp, cache, orc, H, R, d_rope, tq, tkv, scale);
    oracle_attn_gathered_f32(ql, qp, cache, idx, org, H, R, d_rope, tq, tkv, scale);
    double *atol = tb_xmalloc(t, nq * sizeof *atol);
    /* The gathered walk over tkv slots (W >= N): it bounds the absorbed walk (W = N) too. */
    mla_tol_attn_gathered_bounds(ql, qp, cache, idx, H, R, d_rope, tq, tkv, scale, mla_attn_walk,
                                 atol);
    const int64_t shape[3] = {tq, H, R};
    tb_compare(t, "o_lat", ST_F32, 3, shape, org, "oracle_gathered", orc, "oracle_absorbed",
               MLA_TOL_EXACT, NULL, 1);
    tb_compare(t, "o_lat", ST_F32, 3, shape, og, "gathered_kernel", orc, "oracle_absorbed",
               MLA_TOL_ATTN, atol, 0);
    tb_compare(t, "o_lat", ST_F32, 3, shape, oa, "absorbed_kernel", orc, "oracle_absorbed",
               MLA_TOL_ATTN, atol, 0);
    free(ql), free(qp), free(cache), free(idx), free(og), free(oa), free(orc), free(org),
        free(atol);
    gpu_buf_free(&bql), gpu_buf_free(&bqp), gpu_buf_free(&bc), gpu_buf_free(&bi), gpu_buf_free(&bo);
}

Test(kpool_identities, gathered_all_visible, .timeout = 300) {
    GPU_REQUIRE();
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, "gathered_all_visible");
    gathered_all_visible(&t, mla_geom_glm5(4, 1500));      /* d_rope 64 */
    gathered_all_visible(&t, mla_geom_glm5_next(4, 1500)); /* NoPE */
}

/* Decode cases (t_q = 1, so "unselected" is exact): rows not in idx are NaN vs zero. */
static void gathered_nan_case(tb *t, const char *case_name) {
    mla_ctx ctx;
    const mla_geom *g = &tb_case_run(t, case_name, &ctx)->geom;
    const mla_tensor *ql = tb_tensor(t, &ctx, "q_lat"), *cache = tb_tensor(t, &ctx, "cache"),
                     *idx = tb_tensor(t, &ctx, "idx");
    const mla_tensor *qp = g->d_rope > 0 ? tb_tensor(t, &ctx, "q_pe") : NULL;
    int32_t W = g->kv_rank + g->d_rope;
    char *sel = tb_xmalloc(t, (size_t)g->t_kv);
    memset(sel, 0, (size_t)g->t_kv);
    const int32_t *iv = idx->data;
    for (size_t s = 0; s < (size_t)g->t_q * g->width; s++)
        if (iv[s] >= 0) sel[iv[s]] = 1;
    float *cn = tb_xmalloc(t, cache->nbytes), *cz = tb_xmalloc(t, cache->nbytes);
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
        tb_launched(t,
                    memra_mla_attn_gathered_f32(bql.ptr, qp ? bqp.ptr : NULL, v ? bcz.ptr : bcn.ptr,
                                                bi.ptr, bo.ptr, g->n_head, g->kv_rank, g->d_rope,
                                                g->t_q, g->width, g->scale, NULL),
                    v ? "memra_mla_attn_gathered_f32 (unselected rows zero)"
                      : "memra_mla_attn_gathered_f32 (unselected rows NaN)");
        out[v] = tb_output(t, &bo, "o_lat", v ? "zero rows" : "NaN rows", 1);
    }
    size_t nonfinite = 0, first = 0;
    for (size_t i = 0; i < no; i++)
        if (!isfinite(out[0][i]) && !nonfinite++) first = i;
    tb_expectf(t, nonfinite == 0,
               "case %s: %zu of %zu outputs non-finite with the %zu unselected cache rows NaN "
               "(first o_lat[%zu][%zu][%zu] = %g): the kernel reads rows it did not select",
               case_name, nonfinite, no, n_unsel, first / ((size_t)g->n_head * g->kv_rank),
               first / g->kv_rank % g->n_head, first % g->kv_rank,
               nonfinite ? (double)out[0][first] : 0.0);
    const int64_t shape[3] = {g->t_q, g->n_head, g->kv_rank};
    tb_compare(t, "o_lat", ST_F32, 3, shape, out[0], "nan_rows", out[1], "zero_rows", MLA_TOL_EXACT,
               NULL, 1);
    free(sel), free(cn), free(cz), free(out[0]), free(out[1]);
    gpu_buf_free(&bql), gpu_buf_free(&bqp), gpu_buf_free(&bcn), gpu_buf_free(&bcz),
        gpu_buf_free(&bi), gpu_buf_free(&bo);
    mla_ctx_free(&ctx);
}

Test(kpool_identities, gathered_nan_unselected, .timeout = 300) {
    GPU_REQUIRE();
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, "gathered_nan_unselected");
    gathered_nan_case(&t, "glm5_kpool_decode");
    gathered_nan_case(&t, "glm5_next_kpool_decode");
    gathered_nan_case(&t, "glm5_next_kpool_verify"); /* rows no query selects */
}

/* ------------------------------------------------------------------ tie-heavy select ------- */
Test(kpool_identities, select_tie_heavy, .timeout = 300) {
    GPU_REQUIRE();
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, "select_tie_heavy");
    /* near the glm5_next and glm5 indexers, a wide pool, a short plane, and a plane whose tie
     * group exceeds SEL_CAP (8,192 keys: mla_kpool.cu), so one-value rows take the ordered pass
     * and not the collecting one */
    static const struct {
        int32_t tq, np, pool, sel, tail;
    } shp[] = {{8, 5000, MLA_GLM5_NEXT_POOL, MLA_GLM5_NEXT_SELECT_K, MLA_GLM5_NEXT_ALWAYS_TAIL},
               {8, 8192, MLA_GLM5_POOL, MLA_GLM5_SELECT_K, MLA_GLM5_ALWAYS_TAIL},
               {6, 3000, 64, 16, 1},
               {4, 700, MLA_GLM5_NEXT_POOL, MLA_GLM5_NEXT_SELECT_K, MLA_GLM5_NEXT_ALWAYS_TAIL},
               {4, 12000, MLA_GLM5_NEXT_POOL, MLA_GLM5_NEXT_SELECT_K, MLA_GLM5_NEXT_ALWAYS_TAIL}};
    for (size_t si = 0; si < sizeof shp / sizeof *shp; si++)
        for (int kind = 0; kind < 5; kind++) {
            int32_t tq = shp[si].tq, np = shp[si].np, pool = shp[si].pool, sel = shp[si].sel,
                    width = sel * pool + pool - 1 + 3, fp = np * pool - tq; /* -> last rows */
            if (!shp[si].tail && fp < pool - 1) fp = pool - 1;
            size_t ns = (size_t)tq * np, ni = (size_t)tq * width;
            float *s = tb_xmalloc(&t, ns * 4);
            char sname[64];
            snprintf(sname, sizeof sname, "tie_heavy/shape%zu/kind%d", si, kind);
            mla_fill_stream st = mla_fill_stream_init(SEED, sname);
            for (size_t i = 0; i < ns; i++) s[i] = kind == 4 ? 0.5f : tie_value(kind, &st);
            /* kind 4: one value, and each query's last visible pool strictly best: the threshold
             * is the tie, so the ordered pass takes that pool before select_k - 1 ties (the H200
             * mutate pass of 2026-12-01, eighth session: its visibility bound one short, the last
             * pool never taken, survived every check). Only shape 4 reaches the ordered pass
             * (ninth session: the mutant survived shapes 0-3, whose tie groups of at most 8,191
             * keys are collected and sorted instead) */
            if (kind == 4)
                for (int32_t q = 0; q < tq; q++) {
                    int64_t nv = ((int64_t)fp + q + 1) / pool;
                    if (nv > np) nv = np;
                    if (nv > 0) s[(size_t)q * np + nv - 1] = 1.0f;
                }
            gpu_buf bs = gpu_buf_from_host(s, ns * 4), bi = gpu_buf_alloc(ni * 4);
            int32_t *ix[2];
            radix_then_reference(&t, &bs, &bi,
                                 (select_shape){tq, np, pool, sel, width, fp, shp[si].tail}, ix);
            int32_t *orc = tb_xmalloc(&t, ni * 4);
            oracle_kpool_select_f32(s, orc, tq, np, pool, sel, width, fp, shp[si].tail);
            char cname[160];
            snprintf(cname, sizeof cname,
                     "tie_kind%d(t_q %d, n_pools %d, pool %d, select_k %d, width %d, "
                     "first_pos %d, always_tail %d)",
                     kind, tq, np, pool, sel, width, fp, shp[si].tail);
            tb_set_case(&t, cname);
            const int64_t ishape[2] = {tq, width};
            tb_compare(&t, "idx", ST_I32, 2, ishape, ix[0], "radix", ix[1], "reference",
                       MLA_TOL_EXACT, NULL, 1);
            tb_compare(&t, "idx", ST_I32, 2, ishape, ix[0], "radix", orc, "oracle", MLA_TOL_EXACT,
                       NULL, 1);
            free(s), free(orc), free(ix[0]), free(ix[1]);
            gpu_buf_free(&bs), gpu_buf_free(&bi);
        }
}

/* ---- san_score_exact_alloc (buffers of exactly their size: gpu_exact_*, gpu_util.h) ---- */
static float *exact_download(tb *t, const void *d, size_t bytes) {
    float *h = tb_xmalloc(t, bytes);
    gpu_exact_download(d, h, bytes);
    return h;
}

/* off: q and keys start `off` floats into their allocations (off 1: 4-byte aligned only, so
 * the scorer must take its scalar-load arm; a plan that took float4 loads there faults). */
static void score_exact_alloc(tb *t, int32_t tq, int32_t D, int off) {
    const int32_t H = 2, NP = 300, pool = 1, first_pos = NP - tq;
    char name[80];
    snprintf(name, sizeof name, "t_q %d, d %d, %d pools%s", tq, D, NP,
             off ? ", q and keys 4-byte aligned" : "");
    tb_set_case(t, name);
    size_t nq = (size_t)tq * H * D, nk = (size_t)NP * D, nh = (size_t)tq * H, ns = (size_t)tq * NP;
    float *q = host_fill(t, "exact/idx_q", nq + off, 1.0f),
          *keys = host_fill(t, "exact/keys", nk + off, 0.5f),
          *hw = host_fill(t, "exact/idx_hw", nh, 1.0f);
    void *dq0 = gpu_exact_from_host(q, (nq + off) * 4),
         *dk0 = gpu_exact_from_host(keys, (nk + off) * 4), *dh = gpu_exact_from_host(hw, nh * 4),
         *ds = gpu_exact_from_host(NULL, ns * 4);
    const float *dq = (const float *)dq0 + off, *dk = (const float *)dk0 + off;
    float *out[2];
    for (int r = 0; r < 2; r++) {
        int rc = (r == 0 ? memra_mla_kpool_score_f32 : memra_mla_kpool_score_ref_f32)(
            dq, dk, dh, ds, tq, H, D, NP, pool, first_pos, MLA_INDEXER_QK_SCALE,
            MLA_INDEXER_HEAD_SCALE, NULL);
        tb_launched(t, rc, r == 0 ? "memra_mla_kpool_score_f32" : "memra_mla_kpool_score_ref_f32");
        out[r] = exact_download(t, ds, ns * 4);
    }
    const int64_t shape[2] = {tq, NP};
    tb_compare(t, "score", ST_F32, 2, shape, out[0], "fast", out[1], "reference", MLA_TOL_EXACT,
               NULL, TB_BYTES);
    gpu_exact_free(dq0), gpu_exact_free(dk0), gpu_exact_free(dh), gpu_exact_free(ds);
    free(out[0]), free(out[1]), free(q), free(keys), free(hw);
}

Test(kpool_identities, san_score_exact_alloc, .timeout = 300) {
    GPU_REQUIRE();
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, "san_score_exact_alloc");
    static const int32_t dims[] = {132, 68, 7}, tqs[] = {1, 64};
    for (size_t i = 0; i < sizeof dims / sizeof *dims; i++)
        for (size_t j = 0; j < sizeof tqs / sizeof *tqs; j++)
            score_exact_alloc(&t, tqs[j], dims[i], 0);
}

/* The scorer's plan picks float4 loads only for 16-byte aligned q and keys: with both 4-byte
 * aligned it must take the scalar arm and give the reference's bytes (the H200 mutate survivor of
 * 2026-12-01, fourth session: the alignment test inverted passed every aligned check). */
Test(kpool_identities, san_score_misaligned, .timeout = 300) {
    GPU_REQUIRE();
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, "san_score_misaligned");
    static const int32_t dims[] = {128, 132}, tqs[] = {1, 64};
    for (size_t i = 0; i < sizeof dims / sizeof *dims; i++)
        for (size_t j = 0; j < sizeof tqs / sizeof *tqs; j++)
            score_exact_alloc(&t, tqs[j], dims[i], 1);
}

/* ---- select_sampled_door ---- */
/* Row kind 4 of the sampled-route test: the sample (every 16th 32-pool segment) sees only the
 * worst scores (-2.5 + U(-0.5, 0.5)), the rest is U(-1, 1): the sample's threshold bin lies below
 * every unsampled score, so more than select_k keys rank ahead of it, and the row must take the
 * full passes from level 0. */
static float sample_blind_value(int64_t p, mla_fill_stream *s) {
    const float u = mla_fill_stream_uniform(s, -1.0f, 1.0f);
    return select_sampled(p) ? -2.5f + 0.5f * u : u;
}

static void sampled_route(tb *tp, int32_t TQ, int32_t NP) {
    const int32_t POOL = 4, K = 512, W = 2051, FP = NP * POOL - TQ;
    char cname[96];
    snprintf(cname, sizeof cname, "%d queries x %d pools, pool 4, select_k 512, tail", TQ, NP);
    tb_set_case(tp, cname);
    float *s = tb_xmalloc(tp, (size_t)TQ * NP * sizeof *s);
    mla_fill_stream st = mla_fill_stream_init(SEED, "sampled/score");
    for (int32_t i = 0; i < TQ; i++)
        for (int32_t p = 0; p < NP; p++)
            s[(size_t)i * NP + p] = i % 5 == 4 ? sample_blind_value(p, &st) : tie_value(i % 5, &st);
    gpu_buf bs = gpu_buf_from_host(s, (size_t)TQ * NP * 4), bi = gpu_buf_alloc((size_t)TQ * W * 4);
    uint64_t h0 = 0, f0 = 0, h1 = 0, f1 = 0;
    tb_launched(tp, mla_select_sampled_counts(&h0, &f0), "mla_select_sampled_counts");
    int32_t *ix[3];
    for (int r = 0; r < 3;
         r++) { /* launcher (sampled), door rolled back (full passes), reference */
        gpu_buf_poison(&bi);
        if (r == 1) setenv("MEMRA_MLA_SELECT_SAMPLED", "0", 1);
        int rc =
            r == 0 ? memra_mla_kpool_select_f32(bs.ptr, bi.ptr, TQ, NP, POOL, K, W, FP, 1, NULL)
            : r == 1
                ? mla_door_kpool_select_f32(bs.ptr, bi.ptr, TQ, NP, POOL, K, W, FP, 1, NULL)
                : memra_mla_kpool_select_ref_f32(bs.ptr, bi.ptr, TQ, NP, POOL, K, W, FP, 1, NULL);
        unsetenv("MEMRA_MLA_SELECT_SAMPLED");
        tb_launched(tp, rc,
                    r == 0   ? "the launcher (sampled route)"
                    : r == 1 ? "the door with MEMRA_MLA_SELECT_SAMPLED=0 (full passes)"
                             : "the reference");
        ix[r] = tb_output(tp, &bi, "idx", r == 0 ? "sampled" : r == 1 ? "full" : "reference", 1);
        if (r == 0)
            tb_launched(tp, mla_select_sampled_counts(&h1, &f1), "mla_select_sampled_counts");
    }
    uint64_t h2 = 0, f2 = 0;
    tb_launched(tp, mla_select_sampled_counts(&h2, &f2), "mla_select_sampled_counts");
    const int64_t ishape[2] = {TQ, W};
    tb_compare(tp, "idx", ST_I32, 2, ishape, ix[0], "sampled", ix[1], "full", MLA_TOL_EXACT, NULL,
               1);
    tb_compare(tp, "idx", ST_I32, 2, ishape, ix[0], "sampled", ix[2], "reference", MLA_TOL_EXACT,
               NULL, 1);
    tb_expectf(tp, (h1 - h0) + (f1 - f0) == (uint64_t)TQ,
               "receipts: %llu settled + %llu handed back, expected %d rows",
               (unsigned long long)(h1 - h0), (unsigned long long)(f1 - f0), TQ);
    /* settled: the realistic rows (collected) and the two one-value-bin kinds (16 levels, mostly
     * 0.5); handed back: the equal-high-bit rows and the sample-blind rows */
    tb_expectf(tp, h1 - h0 >= (uint64_t)(3 * TQ / 5) && f1 - f0 >= (uint64_t)(TQ / 5),
               "receipts: %llu rows settled by the sampled route, %llu handed back (expected at "
               "least %d and %d)",
               (unsigned long long)(h1 - h0), (unsigned long long)(f1 - f0), 3 * TQ / 5, TQ / 5);
    tb_expectf(tp, h2 == h1 && f2 == f1, "the rolled-back door moved the receipts");
    cr_log_info("sampled route: %llu rows settled, %llu handed to the full passes",
                (unsigned long long)(h1 - h0), (unsigned long long)(f1 - f0));
    free(ix[0]), free(ix[1]), free(ix[2]), free(s);
    gpu_buf_free(&bs), gpu_buf_free(&bi);
}

Test(kpool_identities, select_sampled_door, .timeout = 300) {
    GPU_REQUIRE();
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, "select_sampled_door");
    /* 16-byte aligned rows, each with a tail past the pass's whole chunks */
    sampled_route(&t, 20, 70000);
    /* the last row (kind 0, realistic) exactly 11 whole chunks of SEL_SU x SEL_NT float4, no
     * tail */
    sampled_route(&t, 21, 11 * 4 * SEL_SU * SEL_NT);
    /* rows 4-byte aligned only, except every fourth: the pass's scalar form, beside it */
    sampled_route(&t, 20, 70001);
}

/* The sample must span the whole plane: one query over 140,000 pools whose best scores all lie
 * past pool 131,072 (U(0, 1) there, -1 before), where only the sample's last 576 elements (its
 * second step of SEL_SAMP_U x 512 = 8,192 elements) fall. With them the sample's threshold bin
 * lies among the best, the collecting pass finds about 1,100-1,700 keys and the row settles on
 * the sampled route (receipt: one hit, no fallback); a sample that stopped at its first step sees
 * only -1s and hands the row to the full passes (the H200 mutate pass of 2026-12-01, eighth
 * session: the sample loop's step doubled survived every check, the bytes being exact either way;
 * twelfth session: it survived again, this case's 70,000 pools then fitting the first step of
 * the eleventh session's 16 loads a thread). The plane's sample is asserted to need the second
 * step. */
Test(kpool_identities, select_sampled_covers_tail, .timeout = 300) {
    GPU_REQUIRE();
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, "select_sampled_covers_tail");
    /* the sample's elements a step, and the first pool its second step reads (131,072 at the
     * geometry of kernels/mla_kpool_select.h: 140,000 pools in all) */
    const int32_t STEP = SEL_SAMP_U * SEL_NT, BEST = STEP / SEL_SAMPLE_RUN * SEL_SAMPLE_EVERY;
    const int32_t NP = BEST + 8928, POOL = 4, K = 512, W = K * POOL + POOL - 1, FP = NP * POOL - 1;
    char cname[128];
    snprintf(cname, sizeof cname,
             "1 query x %d pools, the best past pool %d (the sample's second step); pool 4, "
             "select_k 512",
             NP, BEST);
    tb_set_case(&t, cname);
    const int64_t n_samp = select_sample_count(NP);
    cr_assert(n_samp > STEP && NP >= SEL_SAMPLE_MIN,
              "plane: %lld sample elements, one step %d; the second from pool %d",
              (long long)n_samp, STEP, BEST);
    float *s = tb_xmalloc(&t, (size_t)NP * sizeof *s);
    mla_fill_stream st = mla_fill_stream_init(SEED, "sampled/tail");
    for (int32_t p = 0; p < NP; p++)
        s[p] = p < BEST ? -1.0f : mla_fill_stream_uniform(&st, 0.0f, 1.0f);
    gpu_buf bs = gpu_buf_from_host(s, (size_t)NP * 4);
    select_arm_vs_reference(&t, &bs, (select_shape){1, NP, POOL, K, W, FP, 1},
                            memra_mla_kpool_select_f32, "the launcher (sampled route)", "sampled",
                            1, 0,
                            "the row settled by the sampled route: its sample must reach the "
                            "plane's last segments");
    free(s);
    gpu_buf_free(&bs);
}

/* The sampled route's pass never takes a pool the query cannot see. 8 queries seeing 70,001 ..
 * 70,008 pools (pool 1, select_k 512) of planes of 80,000 pools (16-byte aligned rows: 11 whole
 * chunks of the pass, then its tail) and of 80,001 (odd rows 4-byte aligned only: the whole row
 * in the tail). Each row's pool 0 scores 10, its other visible pools U(0, 1) and every pool past
 * them 1,000, so the tail's last step (pools 67,584 .. 73,727, which hold each row's first
 * invisible pool) must mask the pool at n_vis exactly: one taken there is the row's best key.
 * The rows settle on the sampled route (receipts: every row a hit), whose collecting form is the
 * one that takes slots (the H200 mutate pass of 2026-12-01, twelfth session: the tail's mask with
 * `p > n_vis` survived every check). Radix == reference == oracle, int32 bytes. */
Test(kpool_identities, select_sampled_masks_invisible, .timeout = 300) {
    GPU_REQUIRE();
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, "select_sampled_masks_invisible");
    const int32_t TQ = 8, POOL = 1, K = 512, W = K, FP = 70000;
    tb_set_case(&t, "8 queries seeing 70,001 .. 70,008 pools of 80,000 and of 80,001, invisible "
                    "pools scored 1,000 (pool 1, select_k 512)");
    for (int32_t i = 0; i < TQ; i++) /* each row's pool n_vis inside the tail's last step */
        cr_assert((FP + i + 1) % (4 * SEL_SU * SEL_NT) != 0 && FP + i + 1 >= SEL_SAMPLE_MIN,
                  "row %d: %d visible pools", i, FP + i + 1);
    for (int32_t np = 80000; np <= 80001; np++) {
        const size_t ns = (size_t)TQ * np, ni = (size_t)TQ * W;
        float *s = tb_xmalloc(&t, ns * sizeof *s);
        mla_fill_stream st = mla_fill_stream_init(SEED, "sampled/masks_invisible");
        for (int32_t i = 0; i < TQ; i++) {
            const int32_t n_vis = FP + i + 1;
            for (int32_t p = 0; p < np; p++)
                s[(size_t)i * np + p] = p >= n_vis ? 1000.0f
                                        : p == 0   ? 10.0f
                                                   : mla_fill_stream_uniform(&st, 0.0f, 1.0f);
        }
        gpu_buf bs = gpu_buf_from_host(s, ns * 4);
        select_arm_vs_reference(&t, &bs, (select_shape){TQ, np, POOL, K, W, FP, 0},
                                memra_mla_kpool_select_f32, "the launcher (sampled route)",
                                np == 80000 ? "sampled aligned" : "sampled unaligned", TQ, 0,
                                "U(0, 1) rows: the collecting form settles every row");
        gpu_buf bi = gpu_buf_alloc(ni * 4);
        gpu_buf_poison(&bi);
        tb_launched(&t, memra_mla_kpool_select_f32(bs.ptr, bi.ptr, TQ, np, POOL, K, W, FP, 0, NULL),
                    "memra_mla_kpool_select_f32");
        int32_t *got = tb_output(&t, &bi, "idx", "radix", 1);
        int32_t *orc = tb_xmalloc(&t, ni * 4);
        oracle_kpool_select_f32(s, orc, TQ, np, POOL, K, W, FP, 0);
        const int64_t ishape[2] = {TQ, W};
        tb_compare(&t, "idx", ST_I32, 2, ishape, got, "radix", orc, "oracle", MLA_TOL_EXACT, NULL,
                   1);
        free(got), free(orc), free(s);
        gpu_buf_free(&bi), gpu_buf_free(&bs);
    }
}

/* The settle's sort of a row's winners at the bitmap's size limit (kernels/mla_kpool.cu,
 * sel_sort_pools: a bitmap of the row's pools while ceil(n_vis / 32) words, in runs of an even
 * `per` words a thread, fit the list; at 512 threads through n_vis 491,520): rows of 491,519 and
 * 491,520 visible pools take the bitmap, 491,521 and 491,522 the bitonic sort. Every route that
 * collects ends in the settle; with U(-1, 1) scores at this length the top 12-bit bin holds about
 * 15,000 keys, past SEL_CAP, so the rows reach it through the level-1 pass, not the sampled
 * collect (the receipts are not the point here and are not asserted). Radix == reference ==
 * oracle, int32 bytes. */
_Static_assert(SEL_NT == 512 && SEL_CAP == 8192,
               "select_sort_bitmap_limit's 491,520 pools are (per 30 + 1) x SEL_NT 512 words <= "
               "2 SEL_CAP: re-derive them");
Test(kpool_identities, select_sort_bitmap_limit, .timeout = 300) {
    GPU_REQUIRE();
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, "select_sort_bitmap_limit");
    const int32_t TQ = 4, NP = 491522, POOL = 1, K = 512, W = K, FP = 491518;
    tb_set_case(&t, "4 queries seeing 491,519 .. 491,522 pools (pool 1, select_k 512)");
    const size_t ns = (size_t)TQ * NP, ni = (size_t)TQ * W;
    float *s = tb_xmalloc(&t, ns * sizeof *s);
    mla_fill_stream st = mla_fill_stream_init(SEED, "sort/bitmap_limit");
    for (size_t e = 0; e < ns; e++) s[e] = tie_value(0, &st);
    gpu_buf bs = gpu_buf_from_host(s, ns * 4), bi = gpu_buf_alloc(ni * 4);
    int32_t *ix[2];
    radix_then_reference(&t, &bs, &bi, (select_shape){TQ, NP, POOL, K, W, FP, 0}, ix);
    tb_input_untouched(&t, &bs, s, "score");
    int32_t *orc = tb_xmalloc(&t, ni * 4);
    oracle_kpool_select_f32(s, orc, TQ, NP, POOL, K, W, FP, 0);
    const int64_t ishape[2] = {TQ, W};
    tb_compare(&t, "idx", ST_I32, 2, ishape, ix[0], "radix", ix[1], "reference", MLA_TOL_EXACT,
               NULL, 1);
    tb_compare(&t, "idx", ST_I32, 2, ishape, ix[0], "radix", orc, "oracle", MLA_TOL_EXACT, NULL, 1);
    free(ix[0]), free(ix[1]), free(orc), free(s);
    gpu_buf_free(&bi), gpu_buf_free(&bs);
}

/* The sampled route on a case small enough for compute-sanitizer (one row of each kind, 66,000
 * pools: just past SEL_SAMPLE_MIN): racecheck sees its shared-memory histogram, the collect and
 * count pass, the settle and the ordered pass (the H200 mutate survivor of 2026-12-01, fourth
 * session: a barrier after the histogram's clear removed, unseen by the small sets). */
Test(kpool_identities, san_select_sampled, .timeout = 300) {
    GPU_REQUIRE();
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, "san_select_sampled");
    sampled_route(&t, 5, 66000);
}
