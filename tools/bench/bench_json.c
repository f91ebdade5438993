/* bench_json.c: the benchmarks' JSON results for tools/ledger.py (see bench_json.h). */
#include "tools/bench/bench_json.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bench_json_record bench_json_record_init(const char *kernel, const char *shape, const char *arm) {
    bench_json_record r;
    memset(&r, 0, sizeof r);
    r.kernel = kernel;
    r.shape = shape;
    r.arm = arm;
    r.median_us = NAN;
    r.p10_us = NAN;
    r.p90_us = NAN;
    r.samples = 0;
    r.floor_us = NAN;
    r.read_floor_us = NAN;
    r.bytes = NAN;
    r.flops = NAN;
    r.bytes_identical = -1;
    r.finite = -1;
    r.note = NULL;
    r.out_sha256 = NULL;
    return r;
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

double bench_json_quantile(const float *samples, size_t n, double q) {
    if (n == 0 || !samples) return NAN;
    float *s = (float *)malloc(n * sizeof *s);
    if (!s) return NAN;
    memcpy(s, samples, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_float);
    if (!(q >= 0.0)) q = 0.0;
    if (q > 1.0) q = 1.0;
    size_t i = (size_t)(q * (double)n);
    if (i > n - 1) i = n - 1;
    double v = s[i];
    free(s);
    return v;
}

void bench_json_set_samples(bench_json_record *r, const float *samples_ms, size_t n) {
    r->median_us = bench_json_quantile(samples_ms, n, 0.5) * 1e3;
    r->p10_us = bench_json_quantile(samples_ms, n, 0.1) * 1e3;
    r->p90_us = bench_json_quantile(samples_ms, n, 0.9) * 1e3;
    r->samples = (int)n;
}

void bench_json_sha256_hex(const void *data, size_t n, char hex[65]) {
    static const char digits[] = "0123456789abcdef";
    static const unsigned char none = 0;
    unsigned char sha[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    hex[0] = 0;
    if (!data && n) return;
    if (!EVP_Digest(data ? data : &none, n, sha, &len, EVP_sha256(), NULL) || len != 32) return;
    for (unsigned int i = 0; i < 32; i++) {
        hex[2 * i] = digits[sha[i] >> 4];
        hex[2 * i + 1] = digits[sha[i] & 15];
    }
    hex[64] = 0;
}

/* 1 when s is exactly 64 lowercase hex digits (a bench_json_sha256_hex digest) */
static int is_sha256_hex(const char *s) {
    size_t i = 0;
    for (; s[i] && i < 64; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    return i == 64 && s[i] == 0;
}

static int fail(char *err, size_t errlen, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* cJSON_Add*ToObject return NULL on an allocation failure; count those. */
static void add_number(cJSON *o, const char *key, double v, int *bad) {
    if (!cJSON_AddNumberToObject(o, key, v)) *bad = 1;
}
static void add_string(cJSON *o, const char *key, const char *v, int *bad) {
    if (!cJSON_AddStringToObject(o, key, v)) *bad = 1;
}
static void add_bool(cJSON *o, const char *key, int v, int *bad) {
    if (!cJSON_AddBoolToObject(o, key, v ? 1 : 0)) *bad = 1;
}
static void add_quantile(cJSON *o, const char *key, double v, int *bad) {
    if (isfinite(v)) {
        add_number(o, key, v, bad);
    } else if (!cJSON_AddNullToObject(o, key)) {
        *bad = 1;
    }
}

static int check_record(const bench_json_record *r, size_t i, char *err, size_t errlen) {
    if (!r->kernel || !r->kernel[0]) return fail(err, errlen, "record %zu: no kernel name", i);
    if (!isfinite(r->median_us) || r->median_us <= 0)
        return fail(err, errlen, "record %zu (%s %s %s): median_us %g is not a positive time", i,
                    r->kernel, r->shape ? r->shape : "", r->arm ? r->arm : "", r->median_us);
    if (r->out_sha256 && !is_sha256_hex(r->out_sha256))
        return fail(err, errlen,
                    "record %zu (%s %s %s): out_sha256 \"%.80s\" is not 64 lowercase hex digits", i,
                    r->kernel, r->shape ? r->shape : "", r->arm ? r->arm : "", r->out_sha256);
    return 0;
}

int bench_json_write(const char *path, const char *bench, const char *gpu, double copy_gbs,
                     double fma_gflops, const bench_json_record *recs, size_t n, char *err,
                     size_t errlen) {
    if (!path || !path[0]) return fail(err, errlen, "no output path");
    if (n && !recs) return fail(err, errlen, "no records");
    for (size_t i = 0; i < n; i++)
        if (check_record(&recs[i], i, err, errlen)) return -1;
    /* two records with one kernel/shape/arm would shadow each other in the ledger */
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++) {
            const bench_json_record *a = &recs[i], *b = &recs[j];
            if (!strcmp(a->kernel, b->kernel) &&
                !strcmp(a->shape ? a->shape : "", b->shape ? b->shape : "") &&
                !strcmp(a->arm ? a->arm : "", b->arm ? b->arm : ""))
                return fail(err, errlen, "records %zu and %zu share kernel/shape/arm %s/%s/%s", j,
                            i, a->kernel, a->shape ? a->shape : "", a->arm ? a->arm : "");
        }

    cJSON *list = cJSON_CreateArray();
    if (!list) return fail(err, errlen, "out of memory building the JSON");
    int bad = 0;
    for (size_t i = 0; i < n && !bad; i++) {
        const bench_json_record *r = &recs[i];
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(list, o)) {
            cJSON_Delete(o);
            bad = 1;
            break;
        }
        add_string(o, "kernel", r->kernel, &bad);
        add_string(o, "shape", r->shape ? r->shape : "", &bad);
        add_string(o, "arm", r->arm ? r->arm : "", &bad);
        add_number(o, "median_us", r->median_us, &bad);
        add_quantile(o, "p10_us", r->p10_us, &bad);
        add_quantile(o, "p90_us", r->p90_us, &bad);
        if (r->samples > 0) add_number(o, "samples", r->samples, &bad);
        if (bench) add_string(o, "bench", bench, &bad);
        if (gpu) add_string(o, "gpu", gpu, &bad);
        if (isfinite(r->floor_us) && r->floor_us >= 0) add_number(o, "floor_us", r->floor_us, &bad);
        if (isfinite(r->read_floor_us) && r->read_floor_us >= 0)
            add_number(o, "read_floor_us", r->read_floor_us, &bad);
        if (isfinite(copy_gbs) && copy_gbs > 0) add_number(o, "copy_gbs", copy_gbs, &bad);
        if (isfinite(fma_gflops) && fma_gflops > 0) add_number(o, "fma_gflops", fma_gflops, &bad);
        if (isfinite(r->bytes) && r->bytes >= 0) add_number(o, "bytes", r->bytes, &bad);
        if (isfinite(r->flops) && r->flops >= 0) add_number(o, "flops", r->flops, &bad);
        if (r->bytes_identical >= 0) add_bool(o, "bytes_identical", r->bytes_identical, &bad);
        if (r->finite >= 0) add_bool(o, "finite", r->finite, &bad);
        if (r->note) add_string(o, "note", r->note, &bad);
        if (r->out_sha256) add_string(o, "out_sha256", r->out_sha256, &bad);
    }
    char *text = bad ? NULL : cJSON_Print(list);
    cJSON_Delete(list);
    if (!text) return fail(err, errlen, "out of memory building the JSON");

    size_t plen = strlen(path);
    char *tmp = (char *)malloc(plen + 5);
    if (!tmp) {
        free(text);
        return fail(err, errlen, "out of memory");
    }
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp", 5);
    int rc = 0;
    FILE *f = fopen(tmp, "w");
    if (!f) {
        rc = fail(err, errlen, "cannot open %s: %s", tmp, strerror(errno));
    } else {
        size_t len = strlen(text);
        int ok = fwrite(text, 1, len, f) == len && fputc('\n', f) != EOF;
        int e = errno;
        if (fclose(f) != 0 && ok) {
            ok = 0;
            e = errno;
        }
        if (!ok)
            rc = fail(err, errlen, "cannot write %s: %s", tmp, strerror(e));
        else if (rename(tmp, path) != 0)
            rc = fail(err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        if (rc) remove(tmp);
    }
    free(tmp);
    free(text);
    return rc;
}

int bench_json_write_env(const char *bench, const char *gpu, double copy_gbs, double fma_gflops,
                         const bench_json_record *recs, size_t n) {
    const char *path = getenv(BENCH_JSON_ENV);
    if (!path || !path[0]) return 0;
    char err[512] = "";
    if (bench_json_write(path, bench, gpu, copy_gbs, fma_gflops, recs, n, err, sizeof err)) {
        fprintf(stderr, "%s: cannot write benchmark JSON %s=%s: %s\n", bench ? bench : "bench",
                BENCH_JSON_ENV, path, err);
        return 1;
    }
    fprintf(stderr, "%s: wrote %zu results to %s\n", bench ? bench : "bench", n, path);
    return 0;
}
