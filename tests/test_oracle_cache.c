/* test_oracle_cache.c: $MLA_ORACLE_CACHE (tests/lib/case.h, mla_case_run) gives back exactly the
 * context the oracle computes, and never a wrong one.
 *
 *  - a cached run equals an uncached run tensor for tensor (name, dtype, shape, bytes, SHA-256,
 *    output flag, tolerance class, fill, stage), and it came from the file (the test plants a
 *    marker in the cached bytes and sees it come back, then removes it);
 *  - a truncated or foreign file is ignored: the oracle runs and the result is the true one;
 *  - another geometry of the same case name (the shrinker's custom case) gets its own entry.
 * The GPU runners use the cache so that each golden check stops recomputing its whole case
 * (tools/mutate.py, run-gpu-tier.sh; docs/mutation.md). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/case.h"

static char dir[256];

static void setup(void) {
    snprintf(dir, sizeof dir, "/tmp/mla_oracle_cache_test.XXXXXX");
    cr_assert(mkdtemp(dir) != NULL);
    setenv("MLA_ORACLE_CACHE", dir, 1);
}

static void teardown(void) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char p[512];
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.') continue;
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            remove(p);
        }
        closedir(d);
    }
    rmdir(dir);
    unsetenv("MLA_ORACLE_CACHE");
}

/* The one cache file in dir (its path into p), or the count of files found. */
static int cache_files(char *p, size_t cap) {
    DIR *d = opendir(dir);
    cr_assert(d != NULL);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if (n++ == 0 && p) snprintf(p, cap, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    return n;
}

static void expect_same(const mla_ctx *a, const mla_ctx *b) {
    cr_assert_eq(a->n, b->n, "tensor count %zu vs %zu", a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        const mla_tensor *x = &a->t[i], *y = &b->t[i];
        cr_expect_str_eq(x->name, y->name);
        cr_expect_eq(x->dtype, y->dtype, "%s dtype", x->name);
        cr_expect_eq(x->ndim, y->ndim, "%s ndim", x->name);
        cr_expect(memcmp(x->shape, y->shape, sizeof x->shape) == 0, "%s shape", x->name);
        cr_expect_eq(x->nbytes, y->nbytes, "%s nbytes", x->name);
        cr_expect(memcmp(x->data, y->data, x->nbytes) == 0, "%s bytes", x->name);
        cr_expect(memcmp(x->sha256, y->sha256, 32) == 0, "%s sha256", x->name);
        cr_expect_eq(x->is_output, y->is_output, "%s is_output", x->name);
        cr_expect_eq(x->tol, y->tol, "%s tol", x->name);
        cr_expect_eq(x->fill, y->fill, "%s fill", x->name);
        cr_expect(x->fill_scale == y->fill_scale, "%s fill_scale", x->name);
        cr_expect((x->stage == NULL) == (y->stage == NULL) &&
                      (!x->stage || strcmp(x->stage, y->stage) == 0),
                  "%s stage", x->name);
    }
}

static void run(const char *name, mla_ctx *ctx) {
    const mla_case *c = mla_case_find(name);
    cr_assert(c != NULL, "case %s", name);
    cr_assert_eq(mla_case_run(c, ctx), 0, "%s: %s", name, ctx->err);
}

Test(oracle_cache, cached_run_equals_the_oracle, .init = setup, .fini = teardown) {
    mla_ctx plain, first, second;
    unsetenv("MLA_ORACLE_CACHE");
    run("glm5_kpool_select_special", &plain);
    setenv("MLA_ORACLE_CACHE", dir, 1);
    run("glm5_kpool_select_special", &first);
    char path[512];
    cr_assert_eq(cache_files(path, sizeof path), 1, "one cache file after the first run");
    run("glm5_kpool_select_special", &second);
    expect_same(&plain, &first);
    expect_same(&plain, &second);

    /* The second run read the file: flip one byte of the last output's data (the file ends with
     * it) and the loaded bytes show it, with its SHA-256 recomputed from them. */
    FILE *f = fopen(path, "r+b");
    cr_assert(f != NULL);
    cr_assert(fseek(f, -1, SEEK_END) == 0);
    int b = fgetc(f);
    cr_assert(fseek(f, -1, SEEK_END) == 0);
    fputc(b ^ 0x01, f);
    fclose(f);
    mla_ctx third;
    run("glm5_kpool_select_special", &third);
    const mla_tensor *last = &third.t[third.n - 1];
    const uint8_t *lb = (const uint8_t *)last->data + last->nbytes - 1;
    const uint8_t *pb = (const uint8_t *)plain.t[plain.n - 1].data + last->nbytes - 1;
    cr_expect_eq(*lb, (uint8_t)(*pb ^ 0x01), "the cached bytes are what the run returns");
    uint8_t sha[32];
    mla_sha256(last->data, last->nbytes, sha);
    cr_expect(memcmp(sha, last->sha256, 32) == 0, "SHA-256 recomputed from the loaded bytes");
    cr_expect(memcmp(sha, plain.t[plain.n - 1].sha256, 32) != 0,
              "so a stale entry is caught against the manifest");
    mla_ctx_free(&plain), mla_ctx_free(&first), mla_ctx_free(&second), mla_ctx_free(&third);
}

Test(oracle_cache, damaged_file_is_ignored, .init = setup, .fini = teardown) {
    mla_ctx plain, again;
    run("glm5_next_kpool_mask", &plain);
    char path[512];
    cr_assert_eq(cache_files(path, sizeof path), 1);
    cr_assert(truncate(path, 200) == 0);
    run("glm5_next_kpool_mask", &again);
    expect_same(&plain, &again);
    /* the oracle ran and rewrote a whole entry */
    FILE *f = fopen(path, "rb");
    cr_assert(f != NULL);
    fseek(f, 0, SEEK_END);
    cr_expect(ftell(f) > 200, "the truncated entry was replaced");
    fclose(f);
    /* a file of another case under this entry's name is not taken for it */
    mla_ctx other;
    run("glm5_kpool_pool7_notail", &other);
    char other_path[512];
    DIR *d = opendir(dir);
    struct dirent *e;
    other_path[0] = 0;
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, "pool7_notail"))
            snprintf(other_path, sizeof other_path, "%s/%s", dir, e->d_name);
    closedir(d);
    cr_assert(other_path[0] != 0);
    cr_assert(rename(other_path, path) == 0);
    mla_ctx third;
    run("glm5_next_kpool_mask", &third);
    expect_same(&plain, &third);
    mla_ctx_free(&plain), mla_ctx_free(&again), mla_ctx_free(&other), mla_ctx_free(&third);
}

Test(oracle_cache, custom_geometry_has_its_own_entry, .init = setup, .fini = teardown) {
    mla_ctx base, custom, custom2;
    run("glm5_next_kpool_mask", &base);
    setenv("MLA_CUSTOM_CASE", "{\"base\": \"glm5_next_kpool_mask\", \"geom\": {\"t_q\": 3}}", 1);
    const mla_case *c = mla_case_find("custom");
    cr_assert(c != NULL, "%s", mla_custom_case_error());
    cr_assert_eq(mla_case_run(c, &custom), 0, "%s", custom.err);
    cr_expect_eq(cache_files(NULL, 0), 2, "the custom geometry got a second entry");
    cr_assert_eq(mla_case_run(c, &custom2), 0, "%s", custom2.err);
    expect_same(&custom, &custom2);
    const mla_tensor *ci = mla_ctx_get(&custom, "idx"), *bi = mla_ctx_get(&base, "idx");
    cr_assert(ci && bi);
    cr_expect(ci->shape[0] == 3 && bi->shape[0] != 3, "the custom case is not the base's entry");
    unsetenv("MLA_CUSTOM_CASE");
    mla_ctx_free(&base), mla_ctx_free(&custom), mla_ctx_free(&custom2);
}
