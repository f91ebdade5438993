/* manifest.c: see manifest.h. */
#include "tests/lib/manifest.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void seterr(char *err, size_t errlen, const char *label, const char *fmt, ...) {
    if (!err || errlen == 0) return;
    int n = snprintf(err, errlen, "%s: ", label ? label : "(manifest)");
    if (n < 0 || (size_t)n >= errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
}

static char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

void mla_sha256(const void *data, size_t n, uint8_t out[32]) {
    unsigned int len = 32;
    if (!EVP_Digest(data, n, out, &len, EVP_sha256(), NULL)) memset(out, 0, 32);
}

void mla_sha256_hex(const uint8_t sha[32], char hex[65]) {
    static const char d[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        hex[2 * i] = d[sha[i] >> 4];
        hex[2 * i + 1] = d[sha[i] & 15];
    }
    hex[64] = 0;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int mla_sha256_parse(const char *hex, uint8_t out[32]) {
    if (!hex || strlen(hex) != 64) return -1;
    for (int i = 0; i < 32; i++) {
        int a = hexval(hex[2 * i]), b = hexval(hex[2 * i + 1]);
        if (a < 0 || b < 0) return -1;
        out[i] = (uint8_t)(a << 4 | b);
    }
    return 0;
}

void mla_mf_case_free(mla_mf_case *c) {
    if (!c) return;
    free(c->name);
    free(c->model);
    free(c->command);
    free(c->file);
    free(c->purpose);
    for (size_t i = 0; i < c->n_geometry; i++) free(c->geometry[i].key);
    free(c->geometry);
    for (size_t i = 0; i < c->n_inputs; i++) {
        free(c->inputs[i].name);
        free(c->inputs[i].fill_kind);
        free(c->inputs[i].values);
    }
    free(c->inputs);
    for (size_t i = 0; i < c->n_outputs; i++) {
        free(c->outputs[i].name);
        free(c->outputs[i].stage);
        free(c->outputs[i].tolerance);
        free(c->outputs[i].stored_rows);
    }
    free(c->outputs);
    memset(c, 0, sizeof *c);
}

void mla_manifest_free(mla_manifest *m) {
    if (!m) return;
    for (size_t i = 0; i < m->n_cases; i++) mla_mf_case_free(&m->cases[i]);
    free(m->cases);
    memset(m, 0, sizeof *m);
}

const mla_mf_case *mla_manifest_find(const mla_manifest *m, const char *name) {
    for (size_t i = 0; i < m->n_cases; i++)
        if (strcmp(m->cases[i].name, name) == 0) return &m->cases[i];
    return NULL;
}
const mla_mf_input *mla_mf_find_input(const mla_mf_case *c, const char *name) {
    for (size_t i = 0; i < c->n_inputs; i++)
        if (strcmp(c->inputs[i].name, name) == 0) return &c->inputs[i];
    return NULL;
}
const mla_mf_output *mla_mf_find_output(const mla_mf_case *c, const char *name) {
    for (size_t i = 0; i < c->n_outputs; i++)
        if (strcmp(c->outputs[i].name, name) == 0) return &c->outputs[i];
    return NULL;
}

/* ------------------------------------------------------------------ parse ----------------- */
typedef struct {
    const char *label;
    char *err;
    size_t errlen;
    char where[160]; /* "case 'x' output 'y'" */
} pctx;

#define FAIL(P, ...)                                                                               \
    do {                                                                                           \
        char msg_[256];                                                                            \
        snprintf(msg_, sizeof msg_, __VA_ARGS__);                                                  \
        seterr((P)->err, (P)->errlen, (P)->label, "%s%s%s", (P)->where, (P)->where[0] ? ": " : "", \
               msg_);                                                                              \
        return -1;                                                                                 \
    } while (0)

static const cJSON *req(pctx *p, const cJSON *o, const char *key) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!j) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s%smissing field '%s'", p->where, p->where[0] ? ": " : "", key);
        seterr(p->err, p->errlen, p->label, "%s", msg);
    }
    return j;
}

static int get_str(pctx *p, const cJSON *o, const char *key, char **out) {
    const cJSON *j = req(p, o, key);
    if (!j) return -1;
    if (!cJSON_IsString(j)) FAIL(p, "field '%s' is not a string", key);
    *out = xstrdup(j->valuestring);
    if (!*out) FAIL(p, "out of memory");
    return 0;
}

static int get_int(pctx *p, const cJSON *o, const char *key, double lo, double hi, double *out) {
    const cJSON *j = req(p, o, key);
    if (!j) return -1;
    if (!cJSON_IsNumber(j) || floor(j->valuedouble) != j->valuedouble || j->valuedouble < lo ||
        j->valuedouble > hi)
        FAIL(p, "field '%s' is not an integer in [%.0f, %.0f]", key, lo, hi);
    *out = j->valuedouble;
    return 0;
}

static int get_sha(pctx *p, const cJSON *o, uint8_t sha[32]) {
    const cJSON *j = req(p, o, "sha256");
    if (!j) return -1;
    if (!cJSON_IsString(j)) FAIL(p, "field 'sha256' is not a string");
    if (mla_sha256_parse(j->valuestring, sha) != 0)
        FAIL(p, "field 'sha256' is not 64 hex digits ('%.70s')", j->valuestring);
    return 0;
}

static int get_shape(pctx *p, const cJSON *o, int *ndim, int64_t *shape) {
    const cJSON *j = req(p, o, "shape");
    if (!j) return -1;
    if (!cJSON_IsArray(j)) FAIL(p, "field 'shape' is not an array");
    int n = cJSON_GetArraySize(j);
    if (n > ST_MAX_DIMS) FAIL(p, "shape has %d dims (max %d)", n, ST_MAX_DIMS);
    int i = 0;
    for (const cJSON *d = j->child; d; d = d->next, i++) {
        if (!cJSON_IsNumber(d) || floor(d->valuedouble) != d->valuedouble || d->valuedouble < 0 ||
            d->valuedouble > 2147483647.0)
            FAIL(p, "shape entry %d is not a non-negative integer", i);
        shape[i] = (int64_t)d->valuedouble;
    }
    *ndim = n;
    return 0;
}

static int get_dtype(pctx *p, const cJSON *o, st_dtype *dt) {
    const cJSON *j = req(p, o, "dtype");
    if (!j) return -1;
    if (!cJSON_IsString(j)) FAIL(p, "field 'dtype' is not a string");
    if (st_dtype_parse(j->valuestring, dt) != 0) FAIL(p, "unknown dtype '%.32s'", j->valuestring);
    return 0;
}

static int count_children(const cJSON *j) {
    int n = 0;
    for (const cJSON *c = j->child; c; c = c->next) n++;
    return n;
}

/* The optional "values" of an input: int32 integers, one per element of its (I32) shape. */
static int get_values(pctx *p, const cJSON *o, mla_mf_input *in) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "values");
    if (!v) return 0;
    if (!cJSON_IsArray(v)) FAIL(p, "field 'values' is not an array");
    if (in->dtype != ST_I32)
        FAIL(p, "field 'values' on a %s input (I32 only)", st_dtype_name(in->dtype));
    double numel = 1.0; /* no overflow; exact wherever it can equal an array length */
    for (int d = 0; d < in->ndim; d++) numel *= (double)in->shape[d];
    size_t n = (size_t)cJSON_GetArraySize(v);
    if ((double)n != numel)
        FAIL(p, "field 'values' has %zu entries, the shape has %.0f elements", n, numel);
    in->values = malloc((n ? n : 1) * sizeof *in->values);
    if (!in->values) FAIL(p, "out of memory");
    in->has_values = 1;
    size_t i = 0;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        if (!cJSON_IsNumber(e) || floor(e->valuedouble) != e->valuedouble ||
            e->valuedouble < -2147483648.0 || e->valuedouble > 2147483647.0)
            FAIL(p, "values entry %zu is not an int32 integer", i);
        in->values[i] = (int32_t)e->valuedouble;
        in->n_values++;
    }
    return 0;
}

static int parse_input(pctx *p, const cJSON *j, mla_mf_input *in) {
    in->name = xstrdup(j->string ? j->string : "");
    if (!in->name) FAIL(p, "out of memory");
    if (!cJSON_IsObject(j)) FAIL(p, "entry is not an object");
    if (get_shape(p, j, &in->ndim, in->shape) || get_dtype(p, j, &in->dtype)) return -1;
    const cJSON *f = req(p, j, "fill");
    if (!f) return -1;
    if (!cJSON_IsObject(f)) FAIL(p, "field 'fill' is not an object");
    if (get_str(p, f, "kind", &in->fill_kind)) return -1;
    const cJSON *s = req(p, f, "scale");
    if (!s) return -1;
    if (!cJSON_IsNumber(s) || !isfinite(s->valuedouble)) FAIL(p, "fill scale is not a number");
    in->fill_scale = s->valuedouble;
    if (get_values(p, j, in)) return -1;
    return get_sha(p, j, in->sha256);
}

static int parse_output(pctx *p, const cJSON *j, mla_mf_output *out) {
    out->name = xstrdup(j->string ? j->string : "");
    if (!out->name) FAIL(p, "out of memory");
    if (!cJSON_IsObject(j)) FAIL(p, "entry is not an object");
    if (get_shape(p, j, &out->ndim, out->shape) || get_dtype(p, j, &out->dtype)) return -1;
    if (get_str(p, j, "tolerance", &out->tolerance) || get_sha(p, j, out->sha256)) return -1;
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "stage");
    if (st) {
        if (!cJSON_IsString(st)) FAIL(p, "field 'stage' is not a string");
        out->stage = xstrdup(st->valuestring);
        if (!out->stage) FAIL(p, "out of memory");
    }
    const cJSON *r = req(p, j, "stored_rows");
    if (!r) return -1;
    if (cJSON_IsNull(r)) return 0;
    if (!cJSON_IsArray(r)) FAIL(p, "field 'stored_rows' is neither null nor an array");
    if (out->ndim < 1) FAIL(p, "stored_rows on a tensor without an axis 0");
    int n = cJSON_GetArraySize(r);
    out->has_stored_rows = 1;
    out->stored_rows = malloc((size_t)(n ? n : 1) * sizeof *out->stored_rows);
    if (!out->stored_rows) FAIL(p, "out of memory");
    int i = 0;
    for (const cJSON *e = r->child; e; e = e->next, i++) {
        if (!cJSON_IsNumber(e) || floor(e->valuedouble) != e->valuedouble || e->valuedouble < 0 ||
            e->valuedouble >= (double)out->shape[0])
            FAIL(p, "stored_rows entry %d is not a row index in [0, %lld)", i,
                 (long long)out->shape[0]);
        out->stored_rows[i] = (int64_t)e->valuedouble;
        out->n_stored_rows++;
        if (i > 0 && out->stored_rows[i] <= out->stored_rows[i - 1])
            FAIL(p, "stored_rows are not strictly ascending at entry %d", i);
    }
    return 0;
}

static int parse_case(pctx *p, const cJSON *j, int idx, mla_mf_case *c) {
    snprintf(p->where, sizeof p->where, "case #%d", idx);
    if (!cJSON_IsObject(j)) FAIL(p, "not an object");
    if (get_str(p, j, "name", &c->name)) return -1;
    snprintf(p->where, sizeof p->where, "case '%.60s'", c->name);
    double v;
    if (get_str(p, j, "model", &c->model) || get_str(p, j, "command", &c->command) ||
        get_str(p, j, "file", &c->file))
        return -1;
    const cJSON *pu = cJSON_GetObjectItemCaseSensitive(j, "purpose"); /* optional */
    if (pu) {
        if (!cJSON_IsString(pu)) FAIL(p, "field 'purpose' is not a string");
        c->purpose = xstrdup(pu->valuestring);
        if (!c->purpose) FAIL(p, "out of memory");
    }
    if (get_int(p, j, "seed", 0, 4294967295.0, &v)) return -1;
    c->seed = (uint32_t)v;
    if (get_int(p, j, "generator_version", 0, 1e9, &v)) return -1;
    c->generator_version = (int)v;
    if (strchr(c->file, '/') || strcmp(c->file, "..") == 0)
        FAIL(p, "field 'file' must be a bare file name ('%.60s')", c->file);

    const cJSON *g = req(p, j, "geometry");
    if (!g) return -1;
    if (!cJSON_IsObject(g)) FAIL(p, "field 'geometry' is not an object");
    int n = count_children(g);
    c->geometry = calloc((size_t)(n ? n : 1), sizeof *c->geometry);
    if (!c->geometry) FAIL(p, "out of memory");
    for (const cJSON *e = g->child; e; e = e->next) {
        mla_mf_kv *kv = &c->geometry[c->n_geometry];
        kv->key = xstrdup(e->string ? e->string : "");
        if (!kv->key) FAIL(p, "out of memory");
        c->n_geometry++;
        if (!cJSON_IsNumber(e)) FAIL(p, "geometry field '%.60s' is not a number", kv->key);
        kv->value = e->valuedouble;
    }

    const cJSON *ins = req(p, j, "inputs");
    if (!ins) return -1;
    if (!cJSON_IsObject(ins)) FAIL(p, "field 'inputs' is not an object");
    n = count_children(ins);
    c->inputs = calloc((size_t)(n ? n : 1), sizeof *c->inputs);
    if (!c->inputs) FAIL(p, "out of memory");
    char base[160];
    snprintf(base, sizeof base, "%.100s", p->where);
    for (const cJSON *e = ins->child; e; e = e->next) {
        snprintf(p->where, sizeof p->where, "%.100s input '%.40s'", base,
                 e->string ? e->string : "");
        for (size_t k = 0; k < c->n_inputs; k++)
            if (e->string && strcmp(c->inputs[k].name, e->string) == 0) FAIL(p, "duplicate");
        if (parse_input(p, e, &c->inputs[c->n_inputs++])) return -1;
    }
    snprintf(p->where, sizeof p->where, "%s", base);
    const cJSON *outs = req(p, j, "outputs");
    if (!outs) return -1;
    if (!cJSON_IsObject(outs)) FAIL(p, "field 'outputs' is not an object");
    n = count_children(outs);
    c->outputs = calloc((size_t)(n ? n : 1), sizeof *c->outputs);
    if (!c->outputs) FAIL(p, "out of memory");
    for (const cJSON *e = outs->child; e; e = e->next) {
        snprintf(p->where, sizeof p->where, "%.100s output '%.40s'", base,
                 e->string ? e->string : "");
        for (size_t k = 0; k < c->n_outputs; k++)
            if (e->string && strcmp(c->outputs[k].name, e->string) == 0) FAIL(p, "duplicate");
        if (parse_output(p, e, &c->outputs[c->n_outputs++])) return -1;
    }
    p->where[0] = 0;
    return 0;
}

int mla_manifest_parse(const char *text, size_t n, const char *label, mla_manifest *m, char *err,
                       size_t errlen) {
    memset(m, 0, sizeof *m);
    pctx p = {label, err, errlen, {0}};
    cJSON *root = cJSON_ParseWithLength(text, n);
    if (!root) {
        const char *e = cJSON_GetErrorPtr();
        long at = (e && e >= text && e <= text + n) ? (long)(e - text) : -1;
        seterr(err, errlen, label, "not valid JSON (error near byte %ld)", at);
        return -1;
    }
    mla_manifest mm;
    memset(&mm, 0, sizeof mm);
    int rc = -1;
    double v;
    const cJSON *fmt, *cases;
    if (!cJSON_IsObject(root)) {
        seterr(err, errlen, label, "top level is not a JSON object");
        goto done;
    }
    fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "mla-golden-manifest") != 0) {
        seterr(err, errlen, label, "field 'format' missing or not \"mla-golden-manifest\"");
        goto done;
    }
    if (get_int(&p, root, "format_version", 0, 1e9, &v)) goto done;
    mm.format_version = (int)v;
    if (mm.format_version != MLA_MANIFEST_FORMAT_VERSION) {
        seterr(err, errlen, label, "format_version %d, this loader reads %d", mm.format_version,
               MLA_MANIFEST_FORMAT_VERSION);
        goto done;
    }
    cases = req(&p, root, "cases");
    if (!cases) goto done;
    if (!cJSON_IsArray(cases)) {
        seterr(err, errlen, label, "field 'cases' is not an array");
        goto done;
    }
    int nc = cJSON_GetArraySize(cases);
    mm.cases = calloc((size_t)(nc ? nc : 1), sizeof *mm.cases);
    if (!mm.cases) {
        seterr(err, errlen, label, "out of memory");
        goto done;
    }
    int i = 0;
    for (const cJSON *c = cases->child; c; c = c->next, i++) {
        mla_mf_case *mc = &mm.cases[mm.n_cases++];
        if (parse_case(&p, c, i, mc)) goto done;
        for (size_t k = 0; k + 1 < mm.n_cases; k++)
            if (strcmp(mm.cases[k].name, mc->name) == 0) {
                seterr(err, errlen, label, "duplicate case '%.60s'", mc->name);
                goto done;
            }
    }
    rc = 0;
done:
    cJSON_Delete(root);
    if (rc == 0)
        *m = mm;
    else
        mla_manifest_free(&mm);
    return rc;
}

int mla_manifest_load(const char *path, mla_manifest *m, char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        seterr(err, errlen, path, "cannot open: %s", strerror(errno));
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, fp);
        n += got;
        if (n < cap) break;
        if (cap >= ((size_t)256 << 20)) {
            free(buf);
            fclose(fp);
            seterr(err, errlen, path, "manifest larger than 256 MiB");
            return -1;
        }
        char *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    int ioerr = ferror(fp);
    fclose(fp);
    if (!buf || ioerr) {
        free(buf);
        seterr(err, errlen, path, buf ? "read error" : "out of memory");
        return -1;
    }
    int rc = mla_manifest_parse(buf, n, path, m, err, errlen);
    free(buf);
    return rc;
}

/* ------------------------------------------------------------------ save ------------------ */
static cJSON *shape_json(int ndim, const int64_t *shape) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < ndim; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)shape[i]));
    return a;
}

static cJSON *case_json(const mla_mf_case *c) {
    char hex[65];
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", c->name);
    cJSON_AddStringToObject(j, "model", c->model);
    if (c->purpose) cJSON_AddStringToObject(j, "purpose", c->purpose);
    cJSON_AddNumberToObject(j, "seed", (double)c->seed);
    cJSON_AddNumberToObject(j, "generator_version", c->generator_version);
    cJSON_AddStringToObject(j, "command", c->command);
    cJSON_AddStringToObject(j, "file", c->file);
    cJSON *g = cJSON_AddObjectToObject(j, "geometry");
    for (size_t i = 0; i < c->n_geometry; i++)
        cJSON_AddNumberToObject(g, c->geometry[i].key, c->geometry[i].value);
    cJSON *ins = cJSON_AddObjectToObject(j, "inputs");
    for (size_t i = 0; i < c->n_inputs; i++) {
        const mla_mf_input *in = &c->inputs[i];
        cJSON *e = cJSON_AddObjectToObject(ins, in->name);
        cJSON_AddItemToObject(e, "shape", shape_json(in->ndim, in->shape));
        cJSON_AddStringToObject(e, "dtype", st_dtype_name(in->dtype));
        cJSON *f = cJSON_AddObjectToObject(e, "fill");
        cJSON_AddStringToObject(f, "kind", in->fill_kind);
        cJSON_AddNumberToObject(f, "scale", in->fill_scale);
        if (in->has_values) {
            cJSON *v = cJSON_AddArrayToObject(e, "values");
            for (size_t k = 0; v && k < in->n_values; k++)
                cJSON_AddItemToArray(v, cJSON_CreateNumber((double)in->values[k]));
        }
        mla_sha256_hex(in->sha256, hex);
        cJSON_AddStringToObject(e, "sha256", hex);
    }
    cJSON *outs = cJSON_AddObjectToObject(j, "outputs");
    for (size_t i = 0; i < c->n_outputs; i++) {
        const mla_mf_output *o = &c->outputs[i];
        cJSON *e = cJSON_AddObjectToObject(outs, o->name);
        cJSON_AddItemToObject(e, "shape", shape_json(o->ndim, o->shape));
        cJSON_AddStringToObject(e, "dtype", st_dtype_name(o->dtype));
        if (o->stage) cJSON_AddStringToObject(e, "stage", o->stage);
        cJSON_AddStringToObject(e, "tolerance", o->tolerance);
        mla_sha256_hex(o->sha256, hex);
        cJSON_AddStringToObject(e, "sha256", hex);
        if (o->has_stored_rows) {
            cJSON *r = cJSON_AddArrayToObject(e, "stored_rows");
            for (size_t k = 0; k < o->n_stored_rows; k++)
                cJSON_AddItemToArray(r, cJSON_CreateNumber((double)o->stored_rows[k]));
        } else {
            cJSON_AddNullToObject(e, "stored_rows");
        }
    }
    return j;
}

int mla_manifest_save(const mla_manifest *m, const char *path, char *err, size_t errlen) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", "mla-golden-manifest");
    cJSON_AddNumberToObject(root, "format_version", MLA_MANIFEST_FORMAT_VERSION);
    cJSON *cases = cJSON_AddArrayToObject(root, "cases");
    for (size_t i = 0; i < m->n_cases; i++) cJSON_AddItemToArray(cases, case_json(&m->cases[i]));
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) {
        seterr(err, errlen, path, "out of memory printing the manifest");
        return -1;
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *fp = fopen(tmp, "wb");
    if (!fp) {
        seterr(err, errlen, path, "cannot create %s: %s", tmp, strerror(errno));
        free(text);
        return -1;
    }
    size_t n = strlen(text);
    int ok = fwrite(text, 1, n, fp) == n && fputc('\n', fp) != EOF;
    free(text);
    if (fclose(fp) != 0) ok = 0;
    if (!ok || rename(tmp, path) != 0) {
        seterr(err, errlen, path, "write failed: %s", strerror(errno));
        remove(tmp);
        return -1;
    }
    return 0;
}

int mla_manifest_put_case(mla_manifest *m, mla_mf_case *c) {
    for (size_t i = 0; i < m->n_cases; i++)
        if (strcmp(m->cases[i].name, c->name) == 0) {
            mla_mf_case_free(&m->cases[i]);
            m->cases[i] = *c;
            memset(c, 0, sizeof *c);
            return 0;
        }
    mla_mf_case *nc = realloc(m->cases, (m->n_cases + 1) * sizeof *nc);
    if (!nc) return -1;
    m->cases = nc;
    m->cases[m->n_cases++] = *c;
    memset(c, 0, sizeof *c);
    return 0;
}

const char *mla_golden_dir(void) {
    const char *d = getenv("MLA_GOLDEN_DIR");
    return d && *d ? d : "golden";
}
