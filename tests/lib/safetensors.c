/* safetensors.c: see safetensors.h. */
#include "tests/lib/safetensors.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    size_t size;
} k_dtypes[ST_DTYPE_COUNT] = {
    [ST_F32] = {"F32", 4}, [ST_BF16] = {"BF16", 2}, [ST_F16] = {"F16", 2}, [ST_F64] = {"F64", 8},
    [ST_I32] = {"I32", 4}, [ST_I64] = {"I64", 8},   [ST_I16] = {"I16", 2}, [ST_I8] = {"I8", 1},
    [ST_U8] = {"U8", 1},   [ST_BOOL] = {"BOOL", 1},
};

const char *st_dtype_name(st_dtype d) {
    return (unsigned)d < ST_DTYPE_COUNT ? k_dtypes[d].name : "?";
}
size_t st_dtype_size(st_dtype d) { return (unsigned)d < ST_DTYPE_COUNT ? k_dtypes[d].size : 0; }
int st_dtype_parse(const char *name, st_dtype *out) {
    for (int i = 0; i < ST_DTYPE_COUNT; i++)
        if (strcmp(name, k_dtypes[i].name) == 0) {
            *out = (st_dtype)i;
            return 0;
        }
    return -1;
}

static void seterr(char *err, size_t errlen, const char *label, const char *fmt, ...) {
    if (!err || errlen == 0) return;
    int n = snprintf(err, errlen, "%s: ", label ? label : "(buffer)");
    if (n < 0 || (size_t)n >= errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
}

void st_free(st_file *f) {
    if (!f) return;
    for (size_t i = 0; i < f->n_tensors; i++) free(f->tensors[i].name);
    free(f->tensors);
    for (size_t i = 0; i < f->n_meta; i++) {
        free(f->meta_keys[i]);
        free(f->meta_vals[i]);
    }
    free(f->meta_keys);
    free(f->meta_vals);
    free(f->buf);
    memset(f, 0, sizeof *f);
}

static char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* A JSON number that is an integer in [0, 2^53]. */
static int json_uint(const cJSON *j, uint64_t *out) {
    if (!cJSON_IsNumber(j)) return -1;
    double v = j->valuedouble;
    if (!(v >= 0.0) || v > 9007199254740992.0 || floor(v) != v) return -1;
    *out = (uint64_t)v;
    return 0;
}

static int cmp_begin(const void *a, const void *b) {
    const st_tensor *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return 0;
}

int st_read_mem(const uint8_t *buf, size_t n, const char *label, st_file *out, char *err,
                size_t errlen) {
    st_file f;
    memset(&f, 0, sizeof f);
    memset(out, 0, sizeof *out);
    cJSON *root = NULL;
    if (n < 8) {
        seterr(err, errlen, label, "truncated: %zu bytes, fewer than the 8-byte header length", n);
        return -1;
    }
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | buf[i];
    if (hlen > ST_MAX_HEADER) {
        seterr(err, errlen, label, "absurd header length %llu (cap %llu bytes)",
               (unsigned long long)hlen, (unsigned long long)ST_MAX_HEADER);
        return -1;
    }
    if (hlen > n - 8) {
        seterr(err, errlen, label,
               "header length %llu is larger than the file (%zu bytes after the length field): "
               "truncated or lying header",
               (unsigned long long)hlen, n - 8);
        return -1;
    }
    if (hlen < 2) {
        seterr(err, errlen, label, "header of %llu bytes cannot hold a JSON object",
               (unsigned long long)hlen);
        return -1;
    }
    f.buf = malloc(n);
    if (!f.buf) {
        seterr(err, errlen, label, "out of memory (%zu bytes)", n);
        return -1;
    }
    memcpy(f.buf, buf, n);
    f.size = n;
    f.data = f.buf + 8 + hlen;
    f.data_size = (uint64_t)(n - 8 - hlen);

    const char *parse_end = NULL;
    root = cJSON_ParseWithLengthOpts((const char *)f.buf + 8, (size_t)hlen, &parse_end, 0);
    if (!root) {
        size_t at = parse_end ? (size_t)(parse_end - (const char *)(f.buf + 8)) : 0;
        seterr(err, errlen, label, "header is not valid JSON (error near header byte %zu)", at);
        goto fail;
    }
    /* Only trailing whitespace may follow the JSON value. */
    for (const char *p = parse_end; p && p < (const char *)f.buf + 8 + hlen; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r' && *p != '\0') {
            seterr(err, errlen, label, "header has trailing garbage after the JSON object");
            goto fail;
        }
    if (!cJSON_IsObject(root)) {
        seterr(err, errlen, label, "header JSON is not an object");
        goto fail;
    }
    size_t cnt = 0;
    for (cJSON *e = root->child; e; e = e->next) cnt++;
    f.tensors = calloc(cnt ? cnt : 1, sizeof *f.tensors);
    f.meta_keys = calloc(1, sizeof(char *));
    f.meta_vals = calloc(1, sizeof(char *));
    if (!f.tensors || !f.meta_keys || !f.meta_vals) {
        seterr(err, errlen, label, "out of memory");
        goto fail;
    }
    int seen_meta = 0;
    for (cJSON *e = root->child; e; e = e->next) {
        const char *name = e->string ? e->string : "";
        if (strcmp(name, "__metadata__") == 0) {
            if (seen_meta++) {
                seterr(err, errlen, label, "duplicate __metadata__");
                goto fail;
            }
            if (!cJSON_IsObject(e)) {
                seterr(err, errlen, label, "__metadata__ is not an object");
                goto fail;
            }
            size_t mc = 0;
            for (cJSON *m = e->child; m; m = m->next) mc++;
            char **k = calloc(mc ? mc : 1, sizeof *k), **v = calloc(mc ? mc : 1, sizeof *v);
            if (!k || !v) {
                free(k);
                free(v);
                seterr(err, errlen, label, "out of memory");
                goto fail;
            }
            free(f.meta_keys);
            free(f.meta_vals);
            f.meta_keys = k;
            f.meta_vals = v;
            for (cJSON *m = e->child; m; m = m->next) {
                if (!cJSON_IsString(m)) {
                    seterr(err, errlen, label, "__metadata__ value of '%s' is not a string",
                           m->string ? m->string : "");
                    goto fail;
                }
                k[f.n_meta] = xstrdup(m->string ? m->string : "");
                v[f.n_meta] = xstrdup(m->valuestring);
                f.n_meta++;
                if (!k[f.n_meta - 1] || !v[f.n_meta - 1]) {
                    seterr(err, errlen, label, "out of memory");
                    goto fail;
                }
            }
            continue;
        }
        for (size_t i = 0; i < f.n_tensors; i++)
            if (strcmp(f.tensors[i].name, name) == 0) {
                seterr(err, errlen, label, "duplicate tensor name '%s'", name);
                goto fail;
            }
        st_tensor *t = &f.tensors[f.n_tensors];
        t->name = xstrdup(name);
        if (!t->name) {
            seterr(err, errlen, label, "out of memory");
            goto fail;
        }
        f.n_tensors++;
        if (!cJSON_IsObject(e)) {
            seterr(err, errlen, label, "tensor '%s': entry is not an object", name);
            goto fail;
        }
        const cJSON *jd = cJSON_GetObjectItemCaseSensitive(e, "dtype");
        const cJSON *js = cJSON_GetObjectItemCaseSensitive(e, "shape");
        const cJSON *jo = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
        if (!cJSON_IsString(jd)) {
            seterr(err, errlen, label, "tensor '%s': missing or non-string dtype", name);
            goto fail;
        }
        if (st_dtype_parse(jd->valuestring, &t->dtype) != 0) {
            seterr(err, errlen, label, "tensor '%s': unknown dtype '%.32s'", name, jd->valuestring);
            goto fail;
        }
        if (!cJSON_IsArray(js)) {
            seterr(err, errlen, label, "tensor '%s': missing or non-array shape", name);
            goto fail;
        }
        int nd = cJSON_GetArraySize(js);
        if (nd > ST_MAX_DIMS) {
            seterr(err, errlen, label, "tensor '%s': %d dims (more than %d)", name, nd,
                   ST_MAX_DIMS);
            goto fail;
        }
        t->ndim = nd;
        uint64_t numel = 1;
        int di = 0;
        for (const cJSON *d = js->child; d; d = d->next, di++) {
            uint64_t v;
            if (json_uint(d, &v) != 0) {
                seterr(err, errlen, label,
                       "tensor '%s': shape entry %d is not a non-negative integer", name, di);
                goto fail;
            }
            t->shape[di] = (int64_t)v;
            if (v != 0 && numel > UINT64_MAX / 8 / v) {
                seterr(err, errlen, label, "tensor '%s': element count overflows", name);
                goto fail;
            }
            numel *= v;
        }
        t->numel = numel;
        if (!cJSON_IsArray(jo) || cJSON_GetArraySize(jo) != 2 ||
            json_uint(cJSON_GetArrayItem(jo, 0), &t->begin) != 0 ||
            json_uint(cJSON_GetArrayItem(jo, 1), &t->end) != 0) {
            seterr(err, errlen, label,
                   "tensor '%s': data_offsets is not a pair of non-negative integers", name);
            goto fail;
        }
        if (t->begin > t->end) {
            seterr(err, errlen, label, "tensor '%s': data_offsets begin %llu > end %llu", name,
                   (unsigned long long)t->begin, (unsigned long long)t->end);
            goto fail;
        }
        if (t->end > f.data_size) {
            seterr(err, errlen, label,
                   "tensor '%s': data_offsets [%llu, %llu) outside the data section (%llu "
                   "bytes)",
                   name, (unsigned long long)t->begin, (unsigned long long)t->end,
                   (unsigned long long)f.data_size);
            goto fail;
        }
        uint64_t want = numel * st_dtype_size(t->dtype);
        if (want != t->end - t->begin) {
            seterr(err, errlen, label,
                   "tensor '%s': shape product * %s size = %llu bytes but data range is %llu "
                   "bytes",
                   name, st_dtype_name(t->dtype), (unsigned long long)want,
                   (unsigned long long)(t->end - t->begin));
            goto fail;
        }
        t->data = f.data + t->begin;
    }
    qsort(f.tensors, f.n_tensors, sizeof *f.tensors, cmp_begin);
    uint64_t pos = 0;
    for (size_t i = 0; i < f.n_tensors; i++) {
        const st_tensor *t = &f.tensors[i];
        if (t->begin < pos) {
            seterr(err, errlen, label,
                   "overlapping data ranges: '%s' [%llu, %llu) and '%s' [%llu, %llu)",
                   f.tensors[i - 1].name, (unsigned long long)f.tensors[i - 1].begin,
                   (unsigned long long)f.tensors[i - 1].end, t->name, (unsigned long long)t->begin,
                   (unsigned long long)t->end);
            goto fail;
        }
        if (t->begin > pos) {
            seterr(err, errlen, label,
                   "gap in the data section before tensor '%s' (bytes "
                   "[%llu, %llu) unowned)",
                   t->name, (unsigned long long)pos, (unsigned long long)t->begin);
            goto fail;
        }
        pos = t->end;
    }
    if (pos != f.data_size) {
        seterr(err, errlen, label,
               "data section is %llu bytes but the tensors cover %llu (trailing bytes or "
               "truncated header)",
               (unsigned long long)f.data_size, (unsigned long long)pos);
        goto fail;
    }
    cJSON_Delete(root);
    *out = f;
    return 0;
fail:
    cJSON_Delete(root);
    st_free(&f);
    return -1;
}

int st_read_file(const char *path, st_file *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        seterr(err, errlen, path, "cannot open: %s", strerror(errno));
        return -1;
    }
    if (fseek(fp, 0, SEEK_END) != 0) {
        seterr(err, errlen, path, "cannot seek");
        fclose(fp);
        return -1;
    }
    long sz = ftell(fp);
    if (sz < 0 || fseek(fp, 0, SEEK_SET) != 0) {
        seterr(err, errlen, path, "cannot size the file");
        fclose(fp);
        return -1;
    }
    uint8_t *buf = malloc(sz ? (size_t)sz : 1);
    if (!buf) {
        seterr(err, errlen, path, "out of memory (%ld bytes)", sz);
        fclose(fp);
        return -1;
    }
    size_t got = fread(buf, 1, (size_t)sz, fp);
    fclose(fp);
    if (got != (size_t)sz) {
        seterr(err, errlen, path, "short read (%zu of %ld bytes)", got, sz);
        free(buf);
        return -1;
    }
    int rc = st_read_mem(buf, got, path, out, err, errlen);
    free(buf);
    return rc;
}

const st_tensor *st_find(const st_file *f, const char *name) {
    for (size_t i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name, name) == 0) return &f->tensors[i];
    return NULL;
}

const char *st_meta(const st_file *f, const char *key) {
    for (size_t i = 0; i < f->n_meta; i++)
        if (strcmp(f->meta_keys[i], key) == 0) return f->meta_vals[i];
    return NULL;
}

/* ---------------------------------------------------------------- writer ------------------- */
void st_writer_init(st_writer *w) { memset(w, 0, sizeof *w); }

int st_writer_add(st_writer *w, const char *name, st_dtype dtype, int ndim, const int64_t *shape,
                  const void *data) {
    if (!name || ndim < 0 || ndim > ST_MAX_DIMS || (unsigned)dtype >= ST_DTYPE_COUNT) return -1;
    if (w->n == w->cap) {
        size_t nc = w->cap ? 2 * w->cap : 16;
        st_wtensor *nt = realloc(w->t, nc * sizeof *nt);
        if (!nt) return -1;
        w->t = nt;
        w->cap = nc;
    }
    st_wtensor *t = &w->t[w->n];
    memset(t, 0, sizeof *t);
    t->name = xstrdup(name);
    if (!t->name) return -1;
    t->dtype = dtype;
    t->ndim = ndim;
    size_t numel = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) {
            free(t->name);
            return -1;
        }
        t->shape[i] = shape[i];
        numel *= (size_t)shape[i];
    }
    t->data = data;
    t->nbytes = numel * st_dtype_size(dtype);
    w->n++;
    return 0;
}

int st_writer_meta(st_writer *w, const char *key, const char *value) {
    if (w->n_meta == w->cap_meta) {
        size_t nc = w->cap_meta ? 2 * w->cap_meta : 8;
        char **k = realloc(w->meta_keys, nc * sizeof *k);
        if (!k) return -1;
        w->meta_keys = k;
        char **v = realloc(w->meta_vals, nc * sizeof *v);
        if (!v) return -1;
        w->meta_vals = v;
        w->cap_meta = nc;
    }
    w->meta_keys[w->n_meta] = xstrdup(key);
    w->meta_vals[w->n_meta] = xstrdup(value);
    w->n_meta++;
    return (w->meta_keys[w->n_meta - 1] && w->meta_vals[w->n_meta - 1]) ? 0 : -1;
}

int st_writer_write(const st_writer *w, const char *path, char *err, size_t errlen) {
    cJSON *root = cJSON_CreateObject();
    if (!root) {
        seterr(err, errlen, path, "out of memory");
        return -1;
    }
    if (w->n_meta) {
        cJSON *m = cJSON_AddObjectToObject(root, "__metadata__");
        for (size_t i = 0; m && i < w->n_meta; i++)
            cJSON_AddStringToObject(m, w->meta_keys[i], w->meta_vals[i]);
    }
    uint64_t off = 0;
    for (size_t i = 0; i < w->n; i++) {
        const st_wtensor *t = &w->t[i];
        cJSON *e = cJSON_AddObjectToObject(root, t->name);
        if (!e) continue;
        cJSON_AddStringToObject(e, "dtype", st_dtype_name(t->dtype));
        cJSON *s = cJSON_AddArrayToObject(e, "shape");
        for (int d = 0; s && d < t->ndim; d++)
            cJSON_AddItemToArray(s, cJSON_CreateNumber((double)t->shape[d]));
        cJSON *o = cJSON_AddArrayToObject(e, "data_offsets");
        if (o) {
            cJSON_AddItemToArray(o, cJSON_CreateNumber((double)off));
            cJSON_AddItemToArray(o, cJSON_CreateNumber((double)(off + t->nbytes)));
        }
        off += t->nbytes;
    }
    char *js = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!js) {
        seterr(err, errlen, path, "out of memory printing the header");
        return -1;
    }
    size_t jl = strlen(js);
    size_t padded = (jl + 7) / 8 * 8;
    FILE *fp = fopen(path, "wb");
    if (!fp) {
        seterr(err, errlen, path, "cannot create: %s", strerror(errno));
        free(js);
        return -1;
    }
    uint8_t lenb[8];
    for (int i = 0; i < 8; i++) lenb[i] = (uint8_t)((uint64_t)padded >> (8 * i));
    int ok = fwrite(lenb, 1, 8, fp) == 8 && fwrite(js, 1, jl, fp) == jl;
    for (size_t i = jl; ok && i < padded; i++) ok = fputc(' ', fp) != EOF;
    free(js);
    for (size_t i = 0; ok && i < w->n; i++)
        if (w->t[i].nbytes) ok = fwrite(w->t[i].data, 1, w->t[i].nbytes, fp) == w->t[i].nbytes;
    if (fclose(fp) != 0) ok = 0;
    if (!ok) {
        seterr(err, errlen, path, "write failed: %s", strerror(errno));
        return -1;
    }
    return 0;
}

void st_writer_free(st_writer *w) {
    for (size_t i = 0; i < w->n; i++) free(w->t[i].name);
    free(w->t);
    for (size_t i = 0; i < w->n_meta; i++) {
        free(w->meta_keys[i]);
        free(w->meta_vals[i]);
    }
    free(w->meta_keys);
    free(w->meta_vals);
    memset(w, 0, sizeof *w);
}
