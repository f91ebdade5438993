/* stage_check.c: the checks a stage's GPU half makes against its case (case.h), and the one
 * golden GPU check every golden suite test runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/case.h"

const mla_tensor *tb_tensor(tb *t, mla_ctx *ctx, const char *name) {
    const mla_tensor *x = mla_ctx_get(ctx, name);
    if (!x) tb_failf(t, 1, "the case has no tensor '%s'", name);
    return x;
}

/* One output: the stored rows of the fixture and the manifest's full SHA-256. */
static void fixture_output(tb *t, const mla_case *c, const mla_manifest *m, const char *mpath,
                           const mla_tensor *x) {
    char path[4096], err[1024], h1[65], h2[65];
    const mla_mf_case *mc = mla_manifest_find(m, c->name);
    if (!mc) {
        tb_failf(t, 0, "case %s is not in %s (golden regen %s)", c->name, mpath, c->name);
        return;
    }
    const mla_mf_output *o = mla_mf_find_output(mc, x->name);
    if (!o) {
        tb_failf(t, 0, "output %s is not in the manifest (golden regen %s)", x->name, c->name);
        return;
    }
    if (memcmp(o->sha256, x->sha256, 32) != 0) {
        mla_sha256_hex(o->sha256, h1);
        mla_sha256_hex(x->sha256, h2);
        tb_failf(t, 0,
                 "%s: manifest sha256 %s, oracle recomputed %s (stale fixture or changed "
                 "oracle: run bazel test //tests:golden_oracle_test, then golden regen %s)",
                 x->name, h1, h2, c->name);
    }
    snprintf(path, sizeof path, "%s/%s", mla_golden_dir(), mc->file);
    st_file sf;
    if (st_read_file(path, &sf, err, sizeof err) != 0) {
        tb_failf(t, 0, "cannot load the fixture: %s", err);
        return;
    }
    const st_tensor *st = st_find(&sf, x->name);
    size_t row_bytes = x->nbytes / (size_t)(x->shape[0] > 0 ? x->shape[0] : 1);
    size_t n_rows = o->has_stored_rows ? o->n_stored_rows : (size_t)x->shape[0];
    int ok = st != NULL && st->dtype == x->dtype && st->end - st->begin == n_rows * row_bytes;
    long long bad_row = -1;
    for (size_t r = 0; ok && r < n_rows; r++) {
        size_t src = o->has_stored_rows ? (size_t)o->stored_rows[r] : r;
        if (memcmp(st->data + r * row_bytes, (const char *)x->data + src * row_bytes, row_bytes) !=
            0) {
            bad_row = (long long)src;
            ok = 0;
        }
    }
    tb_expectf(t, ok,
               "the stored golden %s in %s differs from the oracle's output (%s; first differing "
               "row %lld); regenerate or fix the oracle first",
               x->name, path, st ? "bytes differ" : "tensor missing", bad_row);
    st_free(&sf);
}

void tb_fixture_matches_oracle(tb *t, const mla_case *c, mla_ctx *ctx, const mla_stage *st) {
    char mpath[4096], err[1024];
    snprintf(mpath, sizeof mpath, "%s/manifest.json", mla_golden_dir());
    mla_manifest m;
    if (mla_manifest_load(mpath, &m, err, sizeof err) != 0)
        tb_failf(t, 1, "cannot load the golden manifest: %s (set MLA_GOLDEN_DIR)", err);
    for (int i = 0; i < MLA_STAGE_MAX_OUTPUTS && st->outputs[i].name; i++) {
        const mla_tensor *x = mla_ctx_get(ctx, st->outputs[i].name);
        if (x) fixture_output(t, c, &m, mpath, x); /* absent: not produced at this geometry */
    }
    mla_manifest_free(&m);
}

int tb_same_runs(tb *t, const mla_tensor *ref, const void *a, const void *b) {
    return tb_compare(t, ref->name, ref->dtype, ref->ndim, ref->shape, b, "run2", a, "run1",
                      MLA_TOL_EXACT, NULL, 1);
}

static const mla_stage_output *output_spec(const mla_ctx *ctx, const mla_tensor *x) {
    for (int s = 0; s < MLA_MAX_STAGES && ctx->c->stages[s]; s++)
        for (int i = 0; i < MLA_STAGE_MAX_OUTPUTS && ctx->c->stages[s]->outputs[i].name; i++)
            if (strcmp(ctx->c->stages[s]->outputs[i].name, x->name) == 0)
                return &ctx->c->stages[s]->outputs[i];
    return NULL;
}

int tb_against_oracle(tb *t, const mla_ctx *ctx, const mla_tensor *ref, const void *got,
                      const char *got_name, const double *atol) {
    const mla_stage_output *o = output_spec(ctx, ref);
    int bytes = ref->tol == MLA_TOL_EXACT && !(o && o->nan_any);
    if (!tb_compare(t, ref->name, ref->dtype, ref->ndim, ref->shape, got, got_name, ref->data,
                    "oracle", ref->tol, ref->tol == MLA_TOL_EXACT ? NULL : atol,
                    bytes ? TB_BYTES_NAN_ANY : 0))
        return 0;
    if (!bytes) return 1;
    /* the manifest's SHA-256 hashes the oracle's NaN payloads, which are not part of the
     * contract: with a NaN in the oracle output, the element-wise bytes above (NaN == NaN) are
     * the whole check */
    if (ref->dtype == ST_F32)
        for (size_t i = 0; i < ref->nbytes / 4; i++) {
            uint32_t w;
            memcpy(&w, (const uint8_t *)ref->data + 4 * i, 4);
            if ((w & 0x7FFFFFFFu) > 0x7F800000u) return 1;
        }
    uint8_t sha[32];
    char h1[65], h2[65];
    mla_sha256(got, ref->nbytes, sha);
    mla_sha256_hex(sha, h1);
    mla_sha256_hex(ref->sha256, h2);
    return tb_expectf(t, memcmp(sha, ref->sha256, 32) == 0,
                      "%s: %s sha256 %s, oracle / manifest %s", ref->name, got_name, h1, h2);
}

const mla_case *tb_case_run(tb *t, const char *case_name, mla_ctx *ctx) {
    tb_set_case(t, case_name);
    const mla_case *c = mla_case_find(case_name);
    if (!c && strcmp(case_name, "custom") == 0)
        tb_failf(t, 1, "custom case: %s", mla_custom_case_error());
    if (!c) tb_failf(t, 1, "case %s is not in the case table", case_name);
    if (mla_case_run(c, ctx) != 0) {
        char err[sizeof ctx->err];
        memcpy(err, ctx->err, sizeof err);
        mla_ctx_free(ctx);
        tb_failf(t, 1, "mla_case_run(%s) failed: %s", case_name, err);
    }
    return c;
}

void mla_golden_gpu_check(tb *t, const char *case_name, const char *stage, int variant) {
    mla_ctx ctx;
    const mla_case *c = tb_case_run(t, case_name, &ctx);
    const mla_stage *st = mla_case_stage(c, stage);
    if (!st) tb_failf(t, 1, "case %s has no stage %s", case_name, stage);
    if (!c->in_memory) tb_fixture_matches_oracle(t, c, &ctx, st);
    st->gpu(t, &ctx, variant);
    mla_ctx_free(&ctx);
}
