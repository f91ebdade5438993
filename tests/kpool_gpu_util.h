/* kpool_gpu_util.h: helpers shared by the k-pool GPU-tier tests (test_kpool_gpu_goldens.c,
 * test_kpool_identities_gpu.c). Header-only (static functions), Criterion assertions.
 *
 * Every failure message names the test id (also its --filter), the tensor, the worst / first
 * differing index (unravelled), both values and the re-run command; comparisons that fail write a
 * reproducer safetensors file (kernel and reference tensors) under $TEST_UNDECLARED_OUTPUTS_DIR
 * (else /tmp).
 */
#ifndef MLA_TESTS_KPOOL_GPU_UTIL_H
#define MLA_TESTS_KPOOL_GPU_UTIL_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mla.h"
#include "kernels/mla_status.h"
#include "tests/lib/gpu_util.h"
#include "tests/lib/compare.h"
#include "tests/lib/safetensors.h"

typedef struct {
    char id[200];     /* "<suite>/<test>": the Criterion name, also the filter */
    char rerun[700];  /* the command that re-runs exactly this test */
} kp_ctx;

static void kp_init(kp_ctx *k, const char *target, const char *suite, const char *test) {
    snprintf(k->id, sizeof k->id, "%s/%s", suite, test);
    snprintf(k->rerun, sizeof k->rerun,
             "bazel test //tests:%s --test_arg=--filter='%s'   (GPU bundle: bin/%s --filter '%s')",
             target, k->id, target, k->id);
}

static void *kp_xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    cr_assert(p != NULL, "out of host memory (%zu bytes)", n);
    return p;
}

/* rc must be 0, then a device sync must be clean. */
static void kp_launched(const kp_ctx *k, int rc, const char *what) {
    cr_assert(rc == 0, "%s: %s returned %d (%s)\n  re-run: %s", k->id, what, rc,
              mla_status_message(rc), k->rerun);
    int s = gpu_sync();
    cr_assert(s == 0, "%s: cudaDeviceSynchronize after %s: %d (%s)\n  re-run: %s", k->id, what,
              s, mla_status_message(s), k->rerun);
}

/* An input buffer: guards intact, payload equal to host. */
static void kp_input_untouched(const kp_ctx *k, const gpu_buf *b, const void *host,
                               const char *name) {
    cr_expect(gpu_buf_guards_intact(b), "%s: a guard band of input %s was overwritten\n  re-run: %s",
              k->id, name, k->rerun);
    void *h = kp_xmalloc(b->bytes);
    gpu_buf_download(b, h, b->bytes);
    size_t i = 0, n = b->bytes / 4;
    while (i < n && memcmp((const char *)h + 4 * i, (const char *)host + 4 * i, 4) == 0) i++;
    cr_expect(i == n, "%s: input %s was modified by the kernel (first changed word %zu of %zu)\n"
              "  re-run: %s", k->id, name, i, n, k->rerun);
    free(h);
}

/* An output buffer after a launch: guards intact and (when expect_full) no poison word left;
 * returns the downloaded bytes (caller frees). */
static void *kp_output(const kp_ctx *k, const gpu_buf *b, const char *name, const char *what,
                       int expect_full) {
    cr_expect(gpu_buf_guards_intact(b),
              "%s: %s wrote outside output %s (guard band changed)\n  re-run: %s", k->id, what,
              name, k->rerun);
    if (expect_full) {
        size_t left = gpu_buf_count_poison(b);
        cr_expect(left == 0,
                  "%s: %s left %zu of %zu words of output %s unwritten (poison 0x%08X)\n"
                  "  re-run: %s", k->id, what, left, b->bytes / 4, name, GPU_POISON_WORD,
                  k->rerun);
    }
    void *h = kp_xmalloc(b->bytes);
    gpu_buf_download(b, h, b->bytes);
    return h;
}

static void kp_write_repro(const kp_ctx *k, const char *tensor, st_dtype dt, int ndim,
                           const int64_t *shape, const void *got, const char *got_name,
                           const void *ref, const char *ref_name) {
    const char *dir = getenv("TEST_UNDECLARED_OUTPUTS_DIR");
    if (!dir || !*dir) dir = "/tmp";
    char path[4096], err[ST_ERR_LEN], safe[200];
    snprintf(safe, sizeof safe, "%s", k->id);
    for (char *p = safe; *p; p++)
        if (*p == '/') *p = '-';
    snprintf(path, sizeof path, "%s/repro-%s-%s.safetensors", dir, safe, tensor);
    st_writer w;
    st_writer_init(&w);
    st_writer_meta(&w, "test", k->id);
    st_writer_meta(&w, "tensor", tensor);
    st_writer_meta(&w, "rerun", k->rerun);
    st_writer_add(&w, got_name, dt, ndim, shape, got);
    st_writer_add(&w, ref_name, dt, ndim, shape, ref);
    if (st_writer_write(&w, path, err, sizeof err) == 0)
        fprintf(stderr, "%s: reproducer written: %s\n", k->id, path);
    else
        fprintf(stderr, "%s: could not write the reproducer %s: %s\n", k->id, path, err);
    st_writer_free(&w);
}

/* f32 comparison. cls == MLA_TOL_EXACT: bitwise except NaN == NaN (the kernels write canonical
 * NaN); bytes_exact additionally demands identical bytes (GPU vs GPU). Otherwise the per-element
 * bounds atol (docs/tolerances.md), NaN never passing against a number. Returns 1 on pass. */
static int kp_cmp_f32(const kp_ctx *k, const char *case_name, const char *tensor, int ndim,
                      const int64_t *shape, const float *got, const char *got_name,
                      const float *ref, const char *ref_name, mla_tol_class cls,
                      const double *atol, int bytes_exact) {
    size_t n = 1;
    for (int i = 0; i < ndim; i++) n *= (size_t)shape[i];
    mla_tol tol = mla_tol_exact();
    tol.cls = cls;
    tol.atol_elem = atol;
    mla_cmp_result r = mla_compare_f32(got, ref, n, &tol);
    if (bytes_exact && memcmp(got, ref, n * 4) != 0) r.pass = 0;
    if (cls != MLA_TOL_EXACT && r.n_nan_mismatch) r.pass = 0;
    if (r.pass) return 1;
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    char tname[256];
    snprintf(tname, sizeof tname, "%s (got = %s, ref = %s)", tensor, got_name, ref_name);
    mla_cmp_report(fp, case_name, tname, ndim, shape, &r, &tol, k->rerun);
    fclose(fp);
    kp_write_repro(k, tensor, ST_F32, ndim, shape, got, got_name, ref, ref_name);
    cr_expect(0, "%s: %s: %s vs %s (%s%s)\n%s", k->id, tensor, got_name, ref_name,
              mla_tol_class_name(cls), bytes_exact ? ", bytes" : "", buf);
    free(buf);
    return 0;
}

/* int32 comparison (bytes). Reports the number of differing elements and the first one as
 * [row][col] of a [rows][cols] tensor with both values. Returns 1 on pass. */
static int kp_cmp_i32(const kp_ctx *k, const char *case_name, const char *tensor, int64_t rows,
                      int64_t cols, const int32_t *got, const char *got_name, const int32_t *ref,
                      const char *ref_name) {
    size_t n = (size_t)rows * (size_t)cols, nd = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != ref[i]) {
            if (!nd) first = i;
            nd++;
        }
    if (!nd) return 1;
    int64_t shape[2] = {rows, cols};
    kp_write_repro(k, tensor, ST_I32, 2, shape, got, got_name, ref, ref_name);
    size_t r = first / (size_t)cols, c = first % (size_t)cols;
    char ctxs[512];
    int off = 0;
    for (size_t j = c >= 3 ? c - 3 : 0; j < (size_t)cols && j < c + 4 && off < 400; j++)
        off += snprintf(ctxs + off, sizeof ctxs - (size_t)off, " [%zu] %d/%d", j,
                        got[r * cols + j], ref[r * cols + j]);
    cr_expect(0,
              "%s: case %s, tensor %s [%lld x %lld] int32: %zu element(s) differ (%s vs %s); "
              "first at [%zu][%zu]: %s = %d (0x%08X), %s = %d\n  neighbourhood (got/ref):%s\n"
              "  re-run: %s",
              k->id, case_name, tensor, (long long)rows, (long long)cols, nd, got_name, ref_name,
              r, c, got_name, got[first], (unsigned)got[first], ref_name, ref[first], ctxs,
              k->rerun);
    return 0;
}

/* Counts int32 words equal to the poison word. */
static size_t kp_count_poison_i32(const int32_t *v, size_t n) {
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += (uint32_t)v[i] == GPU_POISON_WORD;
    return c;
}

#endif /* MLA_TESTS_KPOOL_GPU_UTIL_H */
