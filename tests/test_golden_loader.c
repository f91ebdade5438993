/* test_golden_loader.c: damaged fixture files are refused with a message naming the file and the
 * problem (never a crash, an abort or a leak): truncated files, a header that lies about its
 * size, garbage JSON, unknown / inconsistent dtypes, overlapping offsets, and a manifest with a
 * wrong or malformed sha256, missing fields or wrong types. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/case.h"
#include "tests/lib/manifest.h"
#include "tests/lib/safetensors.h"

static char g_tmp[4096];

static void make_tmp(void) {
    const char *base = getenv("TEST_TMPDIR");
    snprintf(g_tmp, sizeof g_tmp, "%s/golden_loader_XXXXXX", base && *base ? base : "/tmp");
    cr_assert(mkdtemp(g_tmp) != NULL, "mkdtemp failed");
}
static void rm_tmp(void) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", g_tmp);
}
TestSuite(golden_loader, .init = make_tmp, .fini = rm_tmp);

static void write_bytes(const char *path, const void *p, size_t n) {
    FILE *fp = fopen(path, "wb");
    cr_assert(fp != NULL, "cannot write %s", path);
    cr_assert(fwrite(p, 1, n, fp) == n);
    fclose(fp);
}

/* A safetensors image: 8-byte length (hlen_override if nonzero), header, data_len zero bytes. */
static size_t build(uint8_t *out, size_t cap, const char *header, size_t data_len,
                    uint64_t hlen_override) {
    size_t hl = strlen(header);
    uint64_t h = hlen_override ? hlen_override : hl;
    cr_assert(8 + hl + data_len <= cap);
    for (int i = 0; i < 8; i++) out[i] = (uint8_t)(h >> (8 * i));
    memcpy(out + 8, header, hl);
    memset(out + 8 + hl, 0, data_len);
    return 8 + hl + data_len;
}

/* Writes the image to g_tmp/name, reads it back, expects refusal with `want` in the message. */
static void expect_refused(const char *name, const uint8_t *img, size_t n, const char *want) {
    char path[4400], err[ST_ERR_LEN] = "";
    snprintf(path, sizeof path, "%s/%s", g_tmp, name);
    write_bytes(path, img, n);
    st_file f;
    int rc = st_read_file(path, &f, err, sizeof err);
    cr_expect(rc == -1, "%s was accepted", name);
    cr_expect(strstr(err, path) != NULL, "message does not name the file: %s", err);
    cr_expect(strstr(err, want) != NULL, "message '%s' does not say '%s'", err, want);
    if (rc == 0) st_free(&f);
    /* the same bytes from memory are refused too */
    rc = st_read_mem(img, n, name, &f, err, sizeof err);
    cr_expect(rc == -1 && strstr(err, want) != NULL, "in-memory read of %s: %s", name, err);
    if (rc == 0) st_free(&f);
}

#define OK_HEADER "{\"a\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]}}"

Test(golden_loader, well_formed_file_is_accepted) {
    uint8_t img[256];
    size_t n = build(img, sizeof img, OK_HEADER, 16, 0);
    st_file f;
    char err[ST_ERR_LEN];
    cr_assert(st_read_mem(img, n, "ok", &f, err, sizeof err) == 0, "%s", err);
    cr_expect(f.n_tensors == 1 && f.tensors[0].numel == 4);
    st_free(&f);
}

Test(golden_loader, truncated_file) {
    uint8_t img[256];
    size_t n = build(img, sizeof img, OK_HEADER, 16, 0);
    expect_refused("short.safetensors", img, 5, "truncated");
    /* data cut short: header and offsets no longer fit */
    expect_refused("cut_data.safetensors", img, n - 4, "outside the data section");
}

Test(golden_loader, truncated_real_fixture) {
    char src[4096];
    snprintf(src, sizeof src, "%s/glm5_rope_maxpos.safetensors", mla_golden_dir());
    st_file f;
    char err[ST_ERR_LEN];
    cr_assert(st_read_file(src, &f, err, sizeof err) == 0, "%s", err);
    size_t n = f.size;
    uint8_t *copy = malloc(n);
    memcpy(copy, f.buf, n);
    st_free(&f);
    expect_refused("fixture_half.safetensors", copy, n / 2, "outside the data section");
    expect_refused("fixture_header_cut.safetensors", copy, 100, "larger than the file");
    free(copy);
}

Test(golden_loader, header_lies_about_size) {
    uint8_t img[256];
    size_t n = build(img, sizeof img, OK_HEADER, 16, 1000);
    expect_refused("lying_big.safetensors", img, n, "larger than the file");
    n = build(img, sizeof img, OK_HEADER, 16, 20); /* too small: cuts the JSON */
    expect_refused("lying_small.safetensors", img, n, "not valid JSON");
    n = build(img, sizeof img, OK_HEADER, 16, (uint64_t)1 << 40);
    expect_refused("absurd.safetensors", img, n, "absurd header length");
}

Test(golden_loader, garbage_json) {
    uint8_t img[256];
    size_t n = build(img, sizeof img, "{\"a\": [1, 2,, }garbage", 0, 0);
    expect_refused("garbage.safetensors", img, n, "not valid JSON");
    n = build(img, sizeof img, "[1,2,3]", 0, 0);
    expect_refused("array.safetensors", img, n, "not an object");
}

Test(golden_loader, wrong_dtype) {
    uint8_t img[256];
    size_t n = build(img, sizeof img,
                     "{\"a\":{\"dtype\":\"F33\",\"shape\":[2,2],\"data_offsets\":[0,16]}}", 16, 0);
    expect_refused("unknown_dtype.safetensors", img, n, "unknown dtype 'F33'");
    n = build(img, sizeof img,
              "{\"a\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[0,16]}}", 16, 0);
    expect_refused("dtype_size.safetensors", img, n, "but data range is 16 bytes");
}

Test(golden_loader, overlapping_offsets) {
    uint8_t img[512];
    size_t n = build(img, sizeof img,
                     "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
                     "\"b\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[8,24]}}",
                     24, 0);
    expect_refused("overlap.safetensors", img, n, "overlapping data ranges");
    n = build(img, sizeof img,
              "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
              "\"b\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}",
              16, 0);
    expect_refused("same_range.safetensors", img, n, "overlapping data ranges");
}

Test(golden_loader, bad_shapes_and_offsets) {
    uint8_t img[512];
    size_t n = build(img, sizeof img,
                     "{\"a\":{\"dtype\":\"F32\",\"shape\":[-1,2],\"data_offsets\":[0,16]}}", 16, 0);
    expect_refused("neg_shape.safetensors", img, n, "not a non-negative integer");
    n = build(img, sizeof img,
              "{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5,2],\"data_offsets\":[0,16]}}", 16, 0);
    expect_refused("frac_shape.safetensors", img, n, "not a non-negative integer");
    n = build(img, sizeof img,
              "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,9999]}}", 16, 0);
    expect_refused("far_offset.safetensors", img, n, "outside the data section");
    n = build(img, sizeof img, "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[16,0]}}",
              16, 0);
    expect_refused("reversed.safetensors", img, n, "begin 16 > end 0");
    n = build(img, sizeof img, "{\"a\":{\"dtype\":\"F32\",\"shape\":[4]}}", 16, 0);
    expect_refused("no_offsets.safetensors", img, n, "data_offsets");
    n = build(img, sizeof img,
              "{\"__metadata__\":{\"k\":1},\"a\":{\"dtype\":\"F32\",\"shape\":[4],"
              "\"data_offsets\":[0,16]}}",
              16, 0);
    expect_refused("meta_number.safetensors", img, n, "not a string");
}

/* --------------------------------------------------------------------- manifest ----------- */
static char *read_text(const char *path, size_t *n) {
    FILE *fp = fopen(path, "rb");
    cr_assert(fp != NULL, "cannot open %s", path);
    fseek(fp, 0, SEEK_END);
    long sz = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *buf = malloc((size_t)sz + 1);
    cr_assert(fread(buf, 1, (size_t)sz, fp) == (size_t)sz);
    buf[sz] = 0;
    fclose(fp);
    *n = (size_t)sz;
    return buf;
}

static void copy_file(const char *src, const char *dst) {
    size_t n;
    char *b = read_text(src, &n);
    write_bytes(dst, b, n);
    free(b);
}

/* A manifest with one edit (first occurrence of `from` replaced by `to`), written to g_tmp. */
static void write_edited_manifest(const char *from, const char *to) {
    char src[4096], dst[4400];
    snprintf(src, sizeof src, "%s/manifest.json", mla_golden_dir());
    size_t n;
    char *text = read_text(src, &n);
    char *at = strstr(text, from);
    cr_assert(at != NULL, "'%s' not found in %s", from, src);
    size_t fl = strlen(from), tl = strlen(to);
    char *out = malloc(n - fl + tl + 1);
    size_t pre = (size_t)(at - text);
    memcpy(out, text, pre);
    memcpy(out + pre, to, tl);
    memcpy(out + pre + tl, at + fl, n - pre - fl + 1);
    snprintf(dst, sizeof dst, "%s/manifest.json", g_tmp);
    write_bytes(dst, out, strlen(out));
    free(out);
    free(text);
}

static const char *tmp_manifest(void) {
    static char p[4400];
    snprintf(p, sizeof p, "%s/manifest.json", g_tmp);
    return p;
}

Test(golden_loader, wrong_sha256_in_manifest) {
    const mla_case *c = mla_case_find("glm5_rope_maxpos");
    cr_assert(c != NULL);
    char src[4096], dst[4400], err[1024];
    snprintf(src, sizeof src, "%s/glm5_rope_maxpos.safetensors", mla_golden_dir());
    snprintf(dst, sizeof dst, "%s/glm5_rope_maxpos.safetensors", g_tmp);
    copy_file(src, dst);

    /* find q_pe's sha in the real manifest and flip its first digit */
    snprintf(src, sizeof src, "%s/manifest.json", mla_golden_dir());
    mla_manifest m;
    cr_assert(mla_manifest_load(src, &m, err, sizeof err) == 0, "%s", err);
    const mla_mf_case *mc = mla_manifest_find(&m, "glm5_rope_maxpos");
    cr_assert(mc != NULL);
    const mla_mf_output *o = mla_mf_find_output(mc, "q_pe");
    cr_assert(o != NULL);
    char hex[65], bad[65];
    mla_sha256_hex(o->sha256, hex);
    mla_manifest_free(&m);
    memcpy(bad, hex, 65);
    bad[0] = hex[0] == '0' ? '1' : '0';
    write_edited_manifest(hex, bad);

    cr_assert(mla_manifest_load(tmp_manifest(), &m, err, sizeof err) == 0, "%s", err);
    char *buf = NULL;
    size_t len = 0;
    FILE *rep = open_memstream(&buf, &len);
    int problems = mla_golden_verify(c, g_tmp, &m, rep, "golden verify glm5_rope_maxpos");
    fclose(rep);
    mla_manifest_free(&m);
    cr_expect(problems == 1, "expected one problem, got %d:\n%s", problems, buf);
    cr_expect(strstr(buf, "glm5_rope_maxpos") && strstr(buf, "q_pe") &&
                  strstr(buf, "sha256 mismatch") && strstr(buf, bad),
              "report does not name case, tensor and problem:\n%s", buf);
    free(buf);
}

static void expect_manifest_refused(const char *from, const char *to, const char *want) {
    write_edited_manifest(from, to);
    mla_manifest m;
    char err[1024] = "";
    int rc = mla_manifest_load(tmp_manifest(), &m, err, sizeof err);
    cr_expect(rc == -1, "manifest with '%s' -> '%s' accepted", from, to);
    if (rc == 0) mla_manifest_free(&m);
    cr_expect(strstr(err, tmp_manifest()) != NULL, "message does not name the file: %s", err);
    cr_expect(strstr(err, want) != NULL, "message '%s' does not say '%s'", err, want);
}

Test(golden_loader, malformed_manifest) {
    expect_manifest_refused("\"sha256\":\t\"", "\"sha256\":\t\"zz", "not 64 hex digits");
    expect_manifest_refused("\"seed\":", "\"seed_\":", "missing field 'seed'");
    expect_manifest_refused("\"model\":\t\"glm5\"", "\"model\":\t5", "'model' is not a string");
    expect_manifest_refused("\"dtype\":\t\"F32\"", "\"dtype\":\t\"F31\"", "unknown dtype");
    expect_manifest_refused("\"cases\":", "\"cases\": 7, \"x\":", "'cases' is not an array");
    expect_manifest_refused("{", "{{", "not valid JSON");
    expect_manifest_refused("\"stored_rows\":\tnull", "\"stored_rows\":\t\"all\"",
                            "neither null nor an array");
    expect_manifest_refused("\"file\":\t\"", "\"file\":\t\"../", "bare file name");
}
