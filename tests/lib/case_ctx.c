/* case_ctx.c: a case's context (its tensors) and running a case's oracle halves. See case.h. */
#include "tests/lib/case.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ context ---------------- */
int mla_ctx_fail(mla_ctx *ctx, const char *fmt, ...) {
    int n = snprintf(ctx->err, sizeof ctx->err, "case %s, stage %s: ", ctx->c ? ctx->c->name : "?",
                     ctx->stage ? ctx->stage->name : "?");
    if (n < 0 || (size_t)n >= sizeof ctx->err) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->err + n, sizeof ctx->err - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

void mla_ctx_free(mla_ctx *ctx) {
    for (size_t i = 0; i < ctx->n; i++) free(ctx->t[i].data);
    free(ctx->t);
    ctx->t = NULL;
    ctx->n = ctx->cap = 0;
}

mla_tensor *mla_ctx_get(mla_ctx *ctx, const char *name) {
    for (size_t i = 0; i < ctx->n; i++)
        if (strcmp(ctx->t[i].name, name) == 0) return &ctx->t[i];
    return NULL;
}

static size_t numel_of(int ndim, const int64_t *shape) {
    size_t n = 1;
    for (int i = 0; i < ndim; i++) n *= (size_t)shape[i];
    return n;
}

static mla_tensor *new_tensor(mla_ctx *ctx, const char *name, st_dtype dtype, int ndim,
                              const int64_t *shape) {
    if (mla_ctx_get(ctx, name)) {
        mla_ctx_fail(ctx, "tensor '%s' registered twice", name);
        return NULL;
    }
    if (strlen(name) >= sizeof ctx->t[0].name || ndim > ST_MAX_DIMS) {
        mla_ctx_fail(ctx, "bad tensor name or rank '%s'", name);
        return NULL;
    }
    if (ctx->n == ctx->cap) {
        size_t nc = ctx->cap ? 2 * ctx->cap : 16;
        mla_tensor *nt = realloc(ctx->t, nc * sizeof *nt);
        if (!nt) {
            mla_ctx_fail(ctx, "out of memory");
            return NULL;
        }
        ctx->t = nt;
        ctx->cap = nc;
    }
    mla_tensor *t = &ctx->t[ctx->n];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->dtype = dtype;
    t->ndim = ndim;
    memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
    t->nbytes = numel_of(ndim, shape) * st_dtype_size(dtype);
    t->data = calloc(t->nbytes ? t->nbytes : 1, 1);
    if (!t->data) {
        mla_ctx_fail(ctx, "out of memory (%zu bytes for '%s')", t->nbytes, name);
        return NULL;
    }
    t->stage = ctx->stage ? ctx->stage->name : NULL;
    ctx->n++;
    return t;
}

const float *mla_ctx_input_f32(mla_ctx *ctx, const char *name, int ndim, const int64_t *shape,
                               mla_fill_kind kind, float scale) {
    mla_tensor *t = mla_ctx_get(ctx, name);
    if (t) { /* shared by several stages: must be the same tensor */
        if (t->is_output || t->dtype != ST_F32 || t->ndim != ndim || t->fill != kind ||
            t->fill_scale != scale || memcmp(t->shape, shape, (size_t)ndim * sizeof *shape)) {
            mla_ctx_fail(ctx, "input '%s' requested with a different definition", name);
            return NULL;
        }
        return t->data;
    }
    t = new_tensor(ctx, name, ST_F32, ndim, shape);
    if (!t) return NULL;
    t->fill = kind;
    t->fill_scale = scale;
    mla_fill_host_f32(t->data, t->nbytes / 4, kind, ctx->c->seed, name, scale);
    return t->data;
}

int32_t *mla_ctx_input_i32(mla_ctx *ctx, const char *name, int ndim, const int64_t *shape) {
    mla_tensor *t = new_tensor(ctx, name, ST_I32, ndim, shape);
    if (!t) return NULL;
    t->fill = MLA_FILL_EXPLICIT;
    t->fill_scale = 0.0f;
    return t->data;
}

void *mla_ctx_output(mla_ctx *ctx, const char *name, st_dtype dtype, int ndim,
                     const int64_t *shape) {
    const mla_stage_output *o = NULL;
    for (int i = 0; ctx->stage && i < MLA_STAGE_MAX_OUTPUTS && ctx->stage->outputs[i].name; i++)
        if (strcmp(ctx->stage->outputs[i].name, name) == 0) o = &ctx->stage->outputs[i];
    if (!o) {
        mla_ctx_fail(ctx, "output '%s' is not listed in the stage's descriptor", name);
        return NULL;
    }
    mla_tensor *t = new_tensor(ctx, name, dtype, ndim, shape);
    if (!t) return NULL;
    t->is_output = 1;
    t->tol = o->tol;
    return t->data;
}

const float *mla_ctx_need_f32(mla_ctx *ctx, const char *name) {
    mla_tensor *t = mla_ctx_get(ctx, name);
    if (!t || t->dtype != ST_F32) {
        mla_ctx_fail(ctx, "needs f32 tensor '%s' from an earlier stage", name);
        return NULL;
    }
    return t->data;
}

/* ------------------------------------------------------------------ running ---------------- */
const mla_stage *mla_case_stage(const mla_case *c, const char *name) {
    for (int s = 0; s < MLA_MAX_STAGES && c->stages[s]; s++)
        if (strcmp(c->stages[s]->name, name) == 0) return c->stages[s];
    return NULL;
}

/* ------------------------------------------------------------------ the oracle cache ------- */
/* $MLA_ORACLE_CACHE=DIR (case.h): a computed context is written to DIR/<case>-<key>.ctx and a
 * later mla_case_run of the same case (name, geometry bytes, seed and stage names equal, checked
 * field by field on load, not only through the key) reads it back instead of recomputing the
 * oracle. The file is written to a temporary name and renamed, so concurrent Criterion workers
 * never read half a file; a file that does not match or does not parse is ignored (the oracle
 * runs). Every tensor's SHA-256 is recomputed from the loaded bytes, so the fixture checks still
 * compare the oracle's outputs with the manifest. */
#define ORACLE_CACHE_MAGIC "MLAOC002"

typedef struct {
    char magic[8];
    char name[64];
    mla_geom geom;
    uint32_t seed;
    char stages[MLA_MAX_STAGES][32];
    uint64_t n_tensors;
} oracle_cache_head;

typedef struct {
    char name[64];
    char stage[32];
    int32_t dtype, ndim, is_output, fill, tol;
    float fill_scale;
    int64_t shape[ST_MAX_DIMS];
    uint64_t nbytes;
} oracle_cache_tensor;

static void oracle_cache_head_of(const mla_case *c, oracle_cache_head *h) {
    memset(h, 0, sizeof *h);
    memcpy(h->magic, ORACLE_CACHE_MAGIC, sizeof h->magic);
    snprintf(h->name, sizeof h->name, "%s", c->name);
    h->geom = c->geom;
    h->seed = c->seed;
    for (int s = 0; s < MLA_MAX_STAGES && c->stages[s]; s++)
        snprintf(h->stages[s], sizeof h->stages[s], "%s", c->stages[s]->name);
}

/* DIR/<case>-<first 16 hex of SHA-256(head)>.ctx, or 0 when the cache is off or the path long. */
static int oracle_cache_path(const mla_case *c, const oracle_cache_head *h, char *path,
                             size_t cap) {
    const char *dir = getenv("MLA_ORACLE_CACHE");
    if (!dir || !dir[0]) return 0;
    uint8_t sha[32];
    char hex[65];
    mla_sha256(h, sizeof *h, sha);
    mla_sha256_hex(sha, hex);
    hex[16] = 0;
    int n = snprintf(path, cap, "%s/%s-%s.ctx", dir, c->name, hex);
    return n > 0 && (size_t)n < cap;
}

static int oracle_cache_load(const mla_case *c, mla_ctx *ctx) {
    oracle_cache_head want, got;
    char path[4096];
    oracle_cache_head_of(c, &want);
    if (!oracle_cache_path(c, &want, path, sizeof path)) return -1;
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    int ok = fread(&got, sizeof got, 1, f) == 1 &&
             memcmp(&got, &want, offsetof(oracle_cache_head, n_tensors)) == 0;
    for (uint64_t k = 0; ok && k < got.n_tensors; k++) {
        oracle_cache_tensor d;
        if (fread(&d, sizeof d, 1, f) != 1 || d.ndim < 0 || d.ndim > ST_MAX_DIMS ||
            memchr(d.name, 0, sizeof d.name) == NULL ||
            memchr(d.stage, 0, sizeof d.stage) == NULL) {
            ok = 0;
            break;
        }
        const mla_stage *st = d.stage[0] ? mla_case_stage(c, d.stage) : NULL;
        if (d.stage[0] && !st) {
            ok = 0;
            break;
        }
        ctx->stage = st;
        mla_tensor *t = new_tensor(ctx, d.name, (st_dtype)d.dtype, d.ndim, d.shape);
        ctx->stage = NULL;
        if (!t || t->nbytes != d.nbytes || fread(t->data, 1, t->nbytes, f) != t->nbytes) {
            ok = 0;
            break;
        }
        t->is_output = d.is_output;
        t->fill = (mla_fill_kind)d.fill;
        t->fill_scale = d.fill_scale;
        t->tol = (mla_tol_class)d.tol;
    }
    ok = ok && fgetc(f) == EOF;
    fclose(f);
    if (!ok) {
        mla_ctx_free(ctx);
        ctx->err[0] = 0;
        return -1;
    }
    return 0;
}

static void oracle_cache_store(const mla_case *c, const mla_ctx *ctx) {
    oracle_cache_head h;
    char path[4096], tmp[4200];
    oracle_cache_head_of(c, &h);
    if (!oracle_cache_path(c, &h, path, sizeof path)) return;
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) return;
    h.n_tensors = ctx->n;
    int ok = fwrite(&h, sizeof h, 1, f) == 1;
    for (size_t k = 0; ok && k < ctx->n; k++) {
        const mla_tensor *t = &ctx->t[k];
        oracle_cache_tensor d;
        memset(&d, 0, sizeof d);
        snprintf(d.name, sizeof d.name, "%s", t->name);
        snprintf(d.stage, sizeof d.stage, "%s", t->stage ? t->stage : "");
        d.dtype = (int32_t)t->dtype;
        d.ndim = t->ndim;
        d.is_output = t->is_output;
        d.fill = (int32_t)t->fill;
        d.tol = (int32_t)t->tol;
        d.fill_scale = t->fill_scale;
        memcpy(d.shape, t->shape, sizeof d.shape);
        d.nbytes = t->nbytes;
        ok = fwrite(&d, sizeof d, 1, f) == 1 && fwrite(t->data, 1, t->nbytes, f) == t->nbytes;
    }
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) remove(tmp);
}

int mla_case_run(const mla_case *c, mla_ctx *ctx) {
    memset(ctx, 0, sizeof *ctx);
    ctx->c = c;
    if (oracle_cache_load(c, ctx) == 0) {
        for (size_t i = 0; i < ctx->n; i++)
            mla_sha256(ctx->t[i].data, ctx->t[i].nbytes, ctx->t[i].sha256);
        return 0;
    }
    for (int s = 0; s < MLA_MAX_STAGES && c->stages[s]; s++) {
        ctx->stage = c->stages[s];
        if (c->stages[s]->oracle(ctx) != 0) {
            if (!ctx->err[0]) mla_ctx_fail(ctx, "failed");
            return -1;
        }
    }
    ctx->stage = NULL;
    for (size_t i = 0; i < ctx->n; i++)
        mla_sha256(ctx->t[i].data, ctx->t[i].nbytes, ctx->t[i].sha256);
    oracle_cache_store(c, ctx);
    return 0;
}

int mla_case_output_rows(const mla_case *c, const mla_tensor *t, const int64_t **rows) {
    *rows = NULL;
    if (!t->is_output || c->n_stored_rows == 0 || t->nbytes <= MLA_STORE_ALL_BYTES || t->ndim < 1)
        return 0;
    for (int i = 0; i < c->n_stored_rows; i++)
        if (c->stored_rows[i] >= t->shape[0]) return 0;
    *rows = c->stored_rows;
    return c->n_stored_rows;
}

/* Gathers rows of t into a fresh buffer (caller frees). */
