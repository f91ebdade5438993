/* test_decode_chain_oracle.c: the oracle chain of every decode-step chain
 * (tests/lib/decode_chain.h) holds the invariants a chain must hold, and the stage-local check
 * the GPU suite uses names the stage that broke (CPU tier).
 *
 *  decode_chain_oracle/appended_rows       step k's cache rows are split_latent of step k's kv
 *                                          (bytes; k_pe part: rope of the raw k_pe at the row's
 *                                          position), every earlier row untouched
 *  decode_chain_oracle/ring_equals_flat    the ring after the chain equals a one-shot flat append
 *                                          of every row; the incrementally built key table
 *                                          equals one full build over the flat plane (bytes)
 *  decode_chain_oracle/gathered_all_visible  attn_gathered over a list of every visible row
 *                                          equals the dense attention within class attn; the
 *                                          chain's own selection is sparse and causal
 *  decode_chain_oracle/next_step_attends   a changed step-0 kv row changes step 1's attention
 *                                          (the next step attends it) and nothing before it
 *  decode_chain_oracle/deterministic       two oracle chains: identical bytes
 *  decode_chain_oracle/check_names_first_stage  the stage-local check passes the oracle chain
 *                                          against itself and names the first broken (step,
 *                                          stage, tensor) when one tensor is perturbed
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle/mla_oracle.h"
#include "tests/lib/decode_chain.h"

/* Every chain of the table (the san_ ones too: the GPU suite's sanitizer cases). */
#define N_CHAINS dc_chain_count()
#define k_chains chain_names()
static const char *const *chain_names(void) {
    static const char *names[16];
    for (size_t i = 0; i < dc_chain_count() && i < 16; i++) names[i] = dc_chain_at(i)->name;
    return names;
}

typedef struct {
    const dc_chain *c;
    dc_inputs in;
    dc_run r;
} chain_run;

static void chain_make(chain_run *cr, const char *name) {
    cr->c = dc_chain_find(name);
    cr_assert(cr->c, "no chain %s", name);
    cr_assert_eq(dc_inputs_make(cr->c, &cr->in), 0, "chain %s: inputs", name);
    cr_assert_eq(dc_oracle_chain(cr->c, &cr->in, &cr->r), 0, "chain %s: oracle chain", name);
}

static void chain_free(chain_run *cr) {
    dc_run_free(&cr->r);
    dc_inputs_free(&cr->in);
}

static size_t tensor_bytes(const dc_chain *c, int id, int32_t s) {
    int nd;
    int64_t shape[3];
    st_dtype dt;
    return dc_shape(c, (dc_tensor_id)id, s, &nd, shape, &dt);
}

Test(decode_chain_oracle, appended_rows, .timeout = 120) {
    for (size_t k = 0; k < N_CHAINS; k++) {
        chain_run cr;
        chain_make(&cr, k_chains[k]);
        const mla_geom *g = &cr.c->g;
        size_t W = (size_t)g->kv_rank + g->d_rope;
        for (int32_t s = 0; s < cr.c->steps; s++) {
            int32_t slot = dc_slot(cr.c, s);
            const float *cache = cr.r.t[s][DC_CACHE];
            const float *prev = s ? cr.r.t[s - 1][DC_CACHE] : cr.in.cache_prefix;
            cr_expect(memcmp(cache, prev, (size_t)slot * W * 4) == 0,
                      "chain %s step %d: rows before slot %d changed", k_chains[k], s, slot);
            for (int32_t i = 0; i < g->t_q; i++) {
                const float *kv = cr.in.kv + ((size_t)s * g->t_q + i) * W;
                const float *row = cache + (size_t)(slot + i) * W;
                cr_expect(memcmp(row, kv, (size_t)g->kv_rank * 4) == 0,
                          "chain %s step %d: cache row %d's c_kv is not kv's", k_chains[k], s,
                          slot + i);
                if (!g->d_rope) {
                    cr_expect(dc_rows_after(cr.c, s) == slot + g->t_q);
                    continue;
                }
                float k_pe[128];
                int32_t pos = slot + i;
                memcpy(k_pe, kv + g->kv_rank, (size_t)g->d_rope * 4);
                oracle_rope_interleaved_f32(k_pe, 1, 1, g->d_rope, &pos, g->rope_base);
                cr_expect(memcmp(row + g->kv_rank, k_pe, (size_t)g->d_rope * 4) == 0,
                          "chain %s step %d: cache row %d's k_pe is not rope(kv's k_pe) at "
                          "position %d",
                          k_chains[k], s, pos, pos);
            }
        }
        chain_free(&cr);
    }
}

Test(decode_chain_oracle, ring_equals_flat, .timeout = 120) {
    for (size_t k = 0; k < N_CHAINS; k++) {
        chain_run cr;
        chain_make(&cr, k_chains[k]);
        const mla_geom *g = &cr.c->g;
        int32_t last = cr.c->steps - 1, total = dc_rows_after(cr.c, last), d = g->idx_dim;
        int32_t np = dc_pools_after(cr.c, last);
        size_t wrow = (size_t)2 * d;
        float *flat = calloc((size_t)total * wrow, 4), *full = calloc((size_t)np * d, 4);
        cr_assert(flat && full);
        oracle_index_append_ring_f32(flat, cr.in.idx_k, cr.in.idx_gate, 0, total, d, d, 0);
        const float *ring = cr.r.t[last][DC_IDX_STATE];
        for (int32_t row = total - g->state_rows; row < total; row++)
            cr_expect(memcmp(ring + (size_t)(row % g->state_rows) * wrow, flat + (size_t)row * wrow,
                             wrow * 4) == 0,
                      "chain %s: ring row %d (logical %d) differs from the flat append",
                      k_chains[k], row % g->state_rows, row);
        oracle_kpool_pool_keys_f32(flat, cr.in.idx_ape, full, 0, np, g->pool, d, 0);
        cr_expect(memcmp(full, cr.r.t[last][DC_POOL_KEYS], (size_t)np * d * 4) == 0,
                  "chain %s: incremental ring keys differ from one full flat build", k_chains[k]);
        free(flat), free(full);
        chain_free(&cr);
    }
}

Test(decode_chain_oracle, gathered_all_visible, .timeout = 120) {
    for (size_t k = 0; k < N_CHAINS; k++) {
        chain_run cr;
        chain_make(&cr, k_chains[k]);
        const mla_geom *g = &cr.c->g;
        for (int32_t s = 0; s < cr.c->steps; s++) {
            int32_t L = dc_rows_after(cr.c, s), slot = dc_slot(cr.c, s);
            size_t n = (size_t)g->t_q * g->n_head * g->kv_rank;
            int32_t *all = malloc((size_t)g->t_q * L * sizeof *all);
            float *o = malloc(n * 4);
            double *atol = malloc(n * sizeof *atol);
            cr_assert(all && o && atol);
            for (int32_t i = 0; i < g->t_q; i++)
                for (int32_t j = 0; j < L; j++) all[(size_t)i * L + j] = j <= slot + i ? j : -1;
            const float *q_pe = g->d_rope ? cr.r.t[s][DC_Q_PE] : NULL;
            oracle_attn_gathered_f32(cr.r.t[s][DC_Q_LAT], q_pe, cr.r.t[s][DC_CACHE], all, o,
                                     g->n_head, g->kv_rank, g->d_rope, g->t_q, L, g->scale);
            mla_tol_attn_bounds(cr.r.t[s][DC_Q_LAT], q_pe, cr.r.t[s][DC_CACHE], g->n_head,
                                g->kv_rank, g->d_rope, g->t_q, L, g->scale, NULL, atol);
            mla_tol tol = mla_tol_exact();
            tol.cls = dc_class(DC_O_LAT), tol.atol_elem = atol;
            mla_cmp_result r = mla_compare_f32(o, cr.r.t[s][DC_O_LAT], n, &tol);
            cr_expect(r.pass,
                      "chain %s step %d: gathered over every visible row vs dense: %zu over class "
                      "%s (max abs %.3g)",
                      k_chains[k], s, r.n_fail, mla_tol_class_name(tol.cls), r.max_abs);
            /* the chain's selection: causal, no repeats, and sparse (rows really dropped) */
            const int32_t *idx = cr.r.t[s][DC_IDX];
            for (int32_t i = 0; i < g->t_q; i++) {
                int32_t valid = 0, bad = 0;
                char *seen = calloc((size_t)L, 1);
                cr_assert(seen);
                for (int32_t j = 0; j < g->width; j++) {
                    int32_t row = idx[(size_t)i * g->width + j];
                    if (row < 0) continue;
                    valid++;
                    if (row > slot + i || seen[row]) bad++;
                    if (row <= slot + i) seen[row] = 1;
                }
                free(seen);
                cr_expect(bad == 0, "chain %s step %d query %d: %d rows not visible or repeated",
                          k_chains[k], s, i, bad);
                cr_expect(valid > 0 && valid < slot + i + 1,
                          "chain %s step %d query %d: %d rows selected of %d visible (the chain "
                          "must select a proper subset)",
                          k_chains[k], s, i, valid, slot + i + 1);
            }
            free(all), free(o), free(atol);
        }
        chain_free(&cr);
    }
}

Test(decode_chain_oracle, next_step_attends, .timeout = 120) {
    for (size_t k = 0; k < N_CHAINS; k++) {
        chain_run a, b;
        chain_make(&a, k_chains[k]);
        b.c = a.c;
        cr_assert_eq(dc_inputs_make(b.c, &b.in), 0);
        size_t W = (size_t)b.c->g.kv_rank + b.c->g.d_rope;
        for (size_t j = 0; j < W; j++) b.in.kv[j] = -b.in.kv[j]; /* step 0's first row */
        cr_assert_eq(dc_oracle_chain(b.c, &b.in, &b.r), 0);
        cr_expect(memcmp(a.r.t[0][DC_Q_LAT], b.r.t[0][DC_Q_LAT], tensor_bytes(a.c, DC_Q_LAT, 0)) ==
                      0,
                  "chain %s: kv changed q_lat", k_chains[k]);
        cr_expect(memcmp(a.r.t[1][DC_IDX], b.r.t[1][DC_IDX], tensor_bytes(a.c, DC_IDX, 1)) == 0,
                  "chain %s: kv changed the indexer's selection", k_chains[k]);
        cr_expect(memcmp(a.r.t[1][DC_O_LAT], b.r.t[1][DC_O_LAT], tensor_bytes(a.c, DC_O_LAT, 1)) !=
                      0,
                  "chain %s: step 1's attention does not see step 0's appended row", k_chains[k]);
        cr_expect(memcmp(a.r.t[1][DC_OUT], b.r.t[1][DC_OUT], tensor_bytes(a.c, DC_OUT, 1)) != 0,
                  "chain %s: step 1's out does not depend on step 0's appended row", k_chains[k]);
        chain_free(&a), chain_free(&b);
    }
}

Test(decode_chain_oracle, deterministic, .timeout = 120) {
    for (size_t k = 0; k < N_CHAINS; k++) {
        chain_run a, b;
        chain_make(&a, k_chains[k]);
        chain_make(&b, k_chains[k]);
        for (int32_t s = 0; s < a.c->steps; s++)
            for (int id = 0; id < DC_N_TENSORS; id++) {
                if (!dc_present(a.c, (dc_tensor_id)id)) continue;
                cr_expect(memcmp(a.r.t[s][id], b.r.t[s][id], tensor_bytes(a.c, id, s)) == 0,
                          "chain %s step %d: %s differs between two oracle chains", k_chains[k], s,
                          dc_tensor((dc_tensor_id)id)->tensor);
            }
        chain_free(&a), chain_free(&b);
    }
}

/* ---- the stage-local check, against a perturbed copy of the oracle chain ------------------- */
typedef struct {
    int n;
    char last[4096];
} sink;

static void capture(void *user, int fatal, const char *msg) {
    sink *k = user;
    if (fatal) cr_assert_fail("%s", msg);
    k->n++;
    snprintf(k->last, sizeof k->last, "%s", msg);
}

static void copy_run(const dc_chain *c, const dc_run *from, dc_run *to) {
    memset(to, 0, sizeof *to);
    size_t rb = (size_t)c->g.state_rows * 2 * c->g.idx_dim * 4;
    size_t kb = (size_t)(c->g.t_kv / c->g.pool) * c->g.idx_dim * 4;
    to->prefix_ring = malloc(rb), to->prefix_keys = malloc(kb + 4);
    cr_assert(to->prefix_ring && to->prefix_keys);
    memcpy(to->prefix_ring, from->prefix_ring, rb), memcpy(to->prefix_keys, from->prefix_keys, kb);
    for (int32_t s = 0; s < c->steps; s++)
        for (int id = 0; id < DC_N_TENSORS; id++) {
            if (!from->t[s][id]) continue;
            size_t nb = tensor_bytes(c, id, s);
            to->t[s][id] = malloc(nb);
            cr_assert(to->t[s][id]);
            memcpy(to->t[s][id], from->t[s][id], nb);
        }
}

/* Perturbs float `elem` of tensor id at step s (s -1: the prefix keys) by `delta` (0: one ulp)
 * and checks that the verdict names (s, id), with that failure alone. */
static void expect_named(chain_run *cr, int32_t s, dc_tensor_id id, size_t elem, float delta,
                         const char *want) {
    dc_run p;
    copy_run(cr->c, &cr->r, &p);
    float *x = s < 0 ? p.prefix_keys : p.t[s][id];
    if (delta == 0.0f)
        mla_perturb_ulp_f32(x, elem, 1);
    else
        x[elem] += delta;
    /* everything after it is recomputed from the perturbed run, as a chain whose one stage
     * broke would compute it */
    for (int32_t s2 = s < 0 ? 0 : s; s2 < cr->c->steps; s2++)
        for (int id2 = s2 == s ? (int)id + 1 : 0; id2 < DC_N_TENSORS; id2++)
            if (p.t[s2][id2])
                cr_assert_eq(
                    dc_oracle_tensor(cr->c, &cr->in, &p, s2, (dc_tensor_id)id2, p.t[s2][id2]), 0);
    sink k = {0, ""};
    tb t;
    tb_init(&t, "decode_chain_oracle_test", "decode_chain_oracle", "check_names_first_stage",
            capture, &k);
    t.no_repro = 1; /* the perturbed chain's failure is the expected one */
    dc_verdict v = dc_check_chain(&t, cr->c, &cr->in, &p, &cr->r, NULL);
    cr_expect(v.n_failed == 1 && v.first_step == s && v.first_id == id,
              "perturbed %s: verdict %d failed, first step %d %s", want, v.n_failed, v.first_step,
              dc_tensor(v.first_id)->tensor);
    cr_expect(v.diverged && v.div_step == s, "perturbed %s: divergence not seen at step %d", want,
              s);
    cr_expect(strstr(k.last, want) != NULL, "perturbed %s: the last report is:\n%s", want, k.last);
    dc_run_free(&p);
}

Test(decode_chain_oracle, check_names_first_stage, .timeout = 120) {
    chain_run cr;
    chain_make(&cr, "glm5");
    sink k = {0, ""};
    tb t;
    tb_init(&t, "decode_chain_oracle_test", "decode_chain_oracle", "check_names_first_stage",
            capture, &k);
    dc_verdict v = dc_check_chain(&t, cr.c, &cr.in, &cr.r, &cr.r, NULL);
    cr_expect(v.n_failed == 0 && !v.diverged && k.n == 0,
              "the oracle chain against itself: %d failed; %s", v.n_failed, k.last);
    size_t W = (size_t)cr.c->g.kv_rank + cr.c->g.d_rope;
    /* one ulp in step 1's appended row: append_latent (exact) at step 1; attention and every
     * later stage are judged on the GPU's own (perturbed) inputs, so that failure is the only one
     */
    expect_named(&cr, 1, DC_CACHE, (size_t)dc_slot(cr.c, 1) * W + 3, 0.0f,
                 "chain glm5 step 1: first stage over its class: append_latent (cache)");
    /* far off in step 2's o_lat: attn_absorbed at step 2; decompress_v is judged on it */
    expect_named(&cr, 2, DC_O_LAT, 17, 1.0f,
                 "chain glm5 step 2: first stage over its class: attn_absorbed (o_lat)");
    /* a prefix pool key far off: the prefix */
    expect_named(&cr, -1, DC_POOL_KEYS, 5, 1.0f,
                 "chain glm5 prefix: first stage over its class: pool_keys (pool_keys)");
    chain_free(&cr);
}
