/* The benchmarks' JSON writer (tools/bench/bench_json.h) on the CPU: what it writes reads back
 * with cJSON and with tools/ledger.py's own reader (read_bench, python3), its quantiles match
 * the tables' medians, and every failure is an error with a message, no file and no crash. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/bench/bench_json.h"

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    cr_assert(b);
    cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = 0;
    fclose(f);
    return b;
}

static int exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static void tmpdir(char *dir, size_t n) {
    const char *base = getenv("TEST_TMPDIR");
    snprintf(dir, n, "%s/benchjsonXXXXXX", base && *base ? base : "/tmp");
    cr_assert(mkdtemp(dir), "mkdtemp %s", dir);
}

/* SHA-256("abc"), FIPS 180-2 appendix B.1 */
static const char ABC_SHA256[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

/* Three records as the benchmarks make them: a base arm with its output's hash, a door arm with
 * its A/B verdict, a row with no spread (p10 / p90 null), no arm and no hash. */
static void three(bench_json_record r[3]) {
    static const float s1[] = {0.0412f, 0.0409f, 0.0420f, 0.0411f, 0.0415f,
                               0.0413f, 0.0410f, 0.0418f, 0.0416f, 0.0414f};
    r[0] = bench_json_record_init("absorb_q", "decode", "split off");
    bench_json_set_samples(&r[0], s1, sizeof s1 / sizeof s1[0]);
    r[0].floor_us = 30.25;
    r[0].read_floor_us = 33.5;
    r[0].bytes = 1.5e8;
    r[0].flops = 0;
    r[0].finite = 1;
    r[0].note = "base";
    r[0].out_sha256 = ABC_SHA256;
    r[1] = bench_json_record_init("absorb_q", "decode", "door: split 4");
    r[1].median_us = 38.5;
    r[1].p10_us = 38.0;
    r[1].p90_us = 40.125;
    r[1].bytes_identical = 0;
    r[1].note = "differs: max abs 1.2e-07 (max |base| 3.1) \"quoted\"";
    r[2] = bench_json_record_init("attn_gathered", "glm5_kpool t_q 1", NULL);
    r[2].median_us = 1234.5678901234567;
}

static const cJSON *field(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    cr_assert(v, "field %s missing", k);
    return v;
}

Test(bench_json, quantiles_match_the_tables) {
    float s[20];
    for (int i = 0; i < 20; i++) s[i] = (float)((i * 7) % 20 + 1); /* 1..20, shuffled */
    cr_assert_float_eq(bench_json_quantile(s, 20, 0.5), 11.0, 0);  /* t[n / 2] as the tables */
    cr_assert_float_eq(bench_json_quantile(s, 20, 0.1), 3.0, 0);
    cr_assert_float_eq(bench_json_quantile(s, 20, 0.9), 19.0, 0);
    cr_assert_float_eq(bench_json_quantile(s, 20, 1.0), 20.0, 0);
    cr_assert_float_eq(bench_json_quantile(s, 20, 0.0), 1.0, 0);
    cr_assert_float_eq(bench_json_quantile(s, 3, 0.5), 8.0, 0); /* {1, 8, 15}: t[1] */
    cr_assert_float_eq(bench_json_quantile(s, 1, 0.9), 1.0, 0);
    cr_assert(isnan(bench_json_quantile(s, 0, 0.5)));
    cr_assert_eq(s[1], 8.0f, "the caller's samples are not reordered");
    bench_json_record r = bench_json_record_init("k", "", "");
    bench_json_set_samples(&r, s, 20);
    cr_assert_float_eq(r.median_us, 11e3, 1e-9);
    cr_assert_float_eq(r.p10_us, 3e3, 1e-9);
    cr_assert_float_eq(r.p90_us, 19e3, 1e-9);
    cr_assert_eq(r.samples, 20);
}

Test(bench_json, sha256_hex_is_the_standard_digest) {
    char hex[65];
    memset(hex, 'x', sizeof hex);
    bench_json_sha256_hex("abc", 3, hex);
    cr_assert_str_eq(hex, ABC_SHA256);
    bench_json_sha256_hex(NULL, 0, hex); /* the empty message, FIPS 180-2 */
    cr_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    /* a float tensor's bytes, as the benchmarks hash their outputs: one changed bit, a new hash */
    float t[64];
    for (int i = 0; i < 64; i++) t[i] = (float)i * 0.25f;
    char a[65], b[65];
    bench_json_sha256_hex(t, sizeof t, a);
    cr_assert_eq(strlen(a), 64);
    t[17] = -t[17];
    bench_json_sha256_hex(t, sizeof t, b);
    cr_assert_str_neq(a, b);
    /* the hash goes into a record as is */
    char dir[512], path[600];
    tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/bench-sha.json", dir);
    bench_json_record r = bench_json_record_init("k", "s", "a");
    cr_assert_null(r.out_sha256, "unset by default");
    r.median_us = 1.0;
    r.out_sha256 = a;
    char err[256] = "";
    cr_assert_eq(bench_json_write(path, NULL, NULL, 0, 0, &r, 1, err, sizeof err), 0, "%s", err);
    char *text = slurp(path);
    cr_assert(text);
    cJSON *doc = cJSON_Parse(text);
    cr_assert(cJSON_IsArray(doc) && cJSON_GetArraySize(doc) == 1, "%s", text);
    cr_assert_str_eq(field(cJSON_GetArrayItem(doc, 0), "out_sha256")->valuestring, a);
    cJSON_Delete(doc);
    free(text);
}

Test(bench_json, round_trips_through_cjson) {
    char dir[512], path[600];
    tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/bench-dense.json", dir);
    bench_json_record r[3];
    three(r);
    char err[256] = "";
    cr_assert_eq(bench_json_write(path, "bench_dense", "NVIDIA H200", 4100.5, 61000.25, r, 3, err,
                                  sizeof err),
                 0, "write failed: %s", err);
    char tmp[620];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    cr_assert(!exists(tmp), "the temporary file was left behind");
    char *text = slurp(path);
    cr_assert(text);
    cJSON *doc = cJSON_Parse(text);
    cr_assert(doc, "not JSON: %s", text);
    cr_assert(cJSON_IsArray(doc), "the top level must be a list");
    cr_assert_eq(cJSON_GetArraySize(doc), 3);
    for (int i = 0; i < 3; i++) {
        const cJSON *o = cJSON_GetArrayItem(doc, i);
        cr_assert_str_eq(field(o, "kernel")->valuestring, r[i].kernel);
        cr_assert_str_eq(field(o, "shape")->valuestring, r[i].shape);
        cr_assert_str_eq(field(o, "arm")->valuestring, r[i].arm ? r[i].arm : "");
        cr_assert_eq(field(o, "median_us")->valuedouble, r[i].median_us, "median exact");
        cr_assert_str_eq(field(o, "bench")->valuestring, "bench_dense");
        cr_assert_str_eq(field(o, "gpu")->valuestring, "NVIDIA H200");
        cr_assert_eq(field(o, "copy_gbs")->valuedouble, 4100.5);
        cr_assert_eq(field(o, "fma_gflops")->valuedouble, 61000.25);
    }
    const cJSON *o0 = cJSON_GetArrayItem(doc, 0), *o1 = cJSON_GetArrayItem(doc, 1),
                *o2 = cJSON_GetArrayItem(doc, 2);
    /* sorted samples 40.9 41.0 ... 41.8 42.0: median t[5], p10 t[1], p90 t[9] */
    cr_assert_float_eq(field(o0, "median_us")->valuedouble, 41.4, 1e-3);
    cr_assert_float_eq(field(o0, "p10_us")->valuedouble, 41.0, 1e-3);
    cr_assert_float_eq(field(o0, "p90_us")->valuedouble, 42.0, 1e-3);
    cr_assert_eq(field(o0, "samples")->valuedouble, 10);
    cr_assert_eq(field(o0, "floor_us")->valuedouble, 30.25);
    cr_assert_eq(field(o0, "read_floor_us")->valuedouble, 33.5);
    cr_assert_eq(field(o0, "bytes")->valuedouble, 1.5e8);
    cr_assert_eq(field(o0, "flops")->valuedouble, 0);
    cr_assert(cJSON_IsTrue(field(o0, "finite")));
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(o0, "bytes_identical"), "base: no verdict");
    cr_assert_str_eq(field(o0, "out_sha256")->valuestring, ABC_SHA256);
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(o1, "out_sha256"), "no hash: no key");
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(o2, "out_sha256"), "no hash: no key");
    cr_assert(cJSON_IsFalse(field(o1, "bytes_identical")));
    cr_assert_str_eq(field(o1, "note")->valuestring, r[1].note);
    cr_assert_eq(field(o1, "p90_us")->valuedouble, 40.125);
    cr_assert(cJSON_IsNull(field(o2, "p10_us")), "no spread: null");
    cr_assert(cJSON_IsNull(field(o2, "p90_us")));
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(o2, "samples"));
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(o2, "floor_us"));
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(o2, "read_floor_us"));
    cJSON_Delete(doc);
    free(text);
}

/* tools/ledger.py's read_bench on the file, its rows dumped as JSON and compared. */
Test(bench_json, reads_back_with_the_ledger) {
    const char *ledger = "tools/ledger.py"; /* runfiles: the test runs in the workspace root */
    cr_assert(exists(ledger), "%s not in the runfiles", ledger);
    char dir[512], path[600], rows[600], cmd[2048];
    tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/bench-dense.json", dir);
    snprintf(rows, sizeof rows, "%s/rows.json", dir);
    bench_json_record r[3];
    three(r);
    char err[256] = "";
    cr_assert_eq(bench_json_write(path, "bench_dense", "NVIDIA H200", 4100.5, 61000.25, r, 3, err,
                                  sizeof err),
                 0, "write failed: %s", err);
    snprintf(cmd, sizeof cmd,
             "python3 -c 'import json, sys; sys.path.insert(0, \"tools\"); import ledger; "
             "rows, note = ledger.read_bench(sys.argv[1]); print(note); "
             "json.dump(rows, open(sys.argv[2], \"w\"))' '%s' '%s'",
             dir, rows);
    cr_assert_eq(system(cmd), 0, "ledger.read_bench failed: %s", cmd);
    char *text = slurp(rows);
    cr_assert(text, "no rows from the ledger");
    cJSON *doc = cJSON_Parse(text);
    cr_assert(cJSON_IsArray(doc), "ledger rows: %s", text);
    cr_assert_eq(cJSON_GetArraySize(doc), 3);
    for (int i = 0; i < 3; i++) {
        const cJSON *o = cJSON_GetArrayItem(doc, i);
        cr_assert_str_eq(field(o, "kernel")->valuestring, r[i].kernel);
        cr_assert_str_eq(field(o, "shape")->valuestring, r[i].shape);
        cr_assert_str_eq(field(o, "arm")->valuestring, r[i].arm ? r[i].arm : "");
        cr_assert_eq(field(o, "median_us")->valuedouble, r[i].median_us, "median exact");
        if (isnan(r[i].p10_us)) {
            cr_assert(cJSON_IsNull(field(o, "p10_us")));
            cr_assert(cJSON_IsNull(field(o, "p90_us")));
        } else {
            cr_assert_eq(field(o, "p10_us")->valuedouble, r[i].p10_us);
            cr_assert_eq(field(o, "p90_us")->valuedouble, r[i].p90_us);
        }
        cr_assert_str_eq(field(o, "source")->valuestring, "bench-dense.json");
    }
    cJSON_Delete(doc);
    free(text);
}

Test(bench_json, bad_records_are_errors_without_a_file) {
    char dir[512], path[600];
    tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/bench-bad.json", dir);
    bench_json_record r[3];
    char err[256];
    const double bad_medians[] = {0.0, -1.0, NAN, INFINITY};
    for (size_t k = 0; k < sizeof bad_medians / sizeof bad_medians[0]; k++) {
        three(r);
        r[1].median_us = bad_medians[k];
        err[0] = 0;
        cr_assert_eq(bench_json_write(path, NULL, NULL, 0, 0, r, 3, err, sizeof err), -1);
        cr_assert(strstr(err, "median_us"), "message: %s", err);
        cr_assert(!exists(path), "a rejected run wrote %s", path);
    }
    three(r);
    r[0].kernel = "";
    cr_assert_eq(bench_json_write(path, NULL, NULL, 0, 0, r, 3, err, sizeof err), -1);
    cr_assert(strstr(err, "kernel"), "message: %s", err);
    three(r);
    r[1].arm = "split off"; /* the ledger keys on kernel/shape/arm: one would shadow the other */
    cr_assert_eq(bench_json_write(path, NULL, NULL, 0, 0, r, 3, err, sizeof err), -1);
    cr_assert(strstr(err, "share"), "message: %s", err);
    cr_assert(!exists(path));
    /* out_sha256: exactly 64 lowercase hex digits */
    char upper[65];
    for (int i = 0; i < 65; i++) upper[i] = (char)toupper((unsigned char)ABC_SHA256[i]);
    const char *bad_sha[] = {
        "",
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015a",   /* 63 */
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad0", /* 65 */
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ag",  /* g */
        "ba7816bf8f01cfea414140de5dae2223b00361a3 6177a9cb410ff61f20015ad",  /* space */
        upper,
    };
    for (size_t k = 0; k < sizeof bad_sha / sizeof bad_sha[0]; k++) {
        three(r);
        r[1].out_sha256 = bad_sha[k];
        err[0] = 0;
        cr_assert_eq(bench_json_write(path, NULL, NULL, 0, 0, r, 3, err, sizeof err), -1,
                     "accepted out_sha256 \"%s\"", bad_sha[k]);
        cr_assert(strstr(err, "out_sha256"), "message: %s", err);
        cr_assert(strstr(err, "record 1"), "message names the record: %s", err);
        cr_assert(!exists(path), "a rejected run wrote %s", path);
    }
    /* no records: an empty list, which the ledger reads as no results */
    cr_assert_eq(bench_json_write(path, NULL, NULL, 0, 0, NULL, 0, err, sizeof err), 0, "%s", err);
    char *text = slurp(path);
    cr_assert(text);
    cJSON *doc = cJSON_Parse(text);
    cr_assert(cJSON_IsArray(doc) && cJSON_GetArraySize(doc) == 0, "%s", text);
    cJSON_Delete(doc);
    free(text);
}

Test(bench_json, unwritable_path_is_an_error) {
    bench_json_record r[3];
    three(r);
    char err[256] = "";
    cr_assert_eq(bench_json_write("/nonexistent-dir-mla/bench-x.json", NULL, NULL, 0, 0, r, 3, err,
                                  sizeof err),
                 -1);
    cr_assert(strstr(err, "/nonexistent-dir-mla/bench-x.json"), "message names the file: %s", err);
    char dir[512];
    tmpdir(dir, sizeof dir); /* a directory where the file should be: the rename fails */
    cr_assert_eq(bench_json_write(dir, NULL, NULL, 0, 0, r, 3, err, sizeof err), -1);
    cr_assert(err[0]);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", dir);
    cr_assert(!exists(tmp), "the temporary file was left behind");
}

Test(bench_json, env_selects_the_file) {
    bench_json_record r[3];
    three(r);
    unsetenv(BENCH_JSON_ENV);
    cr_assert_eq(bench_json_write_env("bench_x", NULL, 0, 0, r, 3), 0, "unset: nothing to do");
    setenv(BENCH_JSON_ENV, "", 1);
    cr_assert_eq(bench_json_write_env("bench_x", NULL, 0, 0, r, 3), 0, "empty: nothing to do");
    setenv(BENCH_JSON_ENV, "/nonexistent-dir-mla/bench-x.json", 1);
    cr_assert_eq(bench_json_write_env("bench_x", NULL, 0, 0, r, 3), 1, "failure: exit status 1");
    char dir[512], path[600];
    tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/bench-x.json", dir);
    setenv(BENCH_JSON_ENV, path, 1);
    cr_assert_eq(bench_json_write_env("bench_x", "GPU", 1, 1, r, 3), 0);
    cr_assert(exists(path));
    unsetenv(BENCH_JSON_ENV);
}
