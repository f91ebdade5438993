/* testbed.c: the GPU testbed (testbed.h). */
#include "tests/lib/testbed.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mla_status.h"

void tb_init(tb *t, const char *target, const char *suite, const char *test, tb_fail_fn fail,
             void *user) {
    memset(t, 0, sizeof *t);
    snprintf(t->id, sizeof t->id, "%s/%s", suite, test);
    snprintf(t->rerun, sizeof t->rerun,
             "bazel test //tests:%s --test_arg=--filter='%s'   (GPU bundle: bin/%s --filter '%s')",
             target, t->id, target, t->id);
    snprintf(t->case_name, sizeof t->case_name, "%s", test);
    t->fail = fail;
    t->user = user;
}

void tb_init_fuzz(tb *t, const char *target, const char *rerun, tb_fail_fn fail, void *user) {
    memset(t, 0, sizeof *t);
    snprintf(t->id, sizeof t->id, "%s", target);
    snprintf(t->rerun, sizeof t->rerun, "%s", rerun);
    snprintf(t->case_name, sizeof t->case_name, "%s", target);
    t->fail = fail;
    t->user = user;
}

void tb_set_case(tb *t, const char *case_name) {
    snprintf(t->case_name, sizeof t->case_name, "%s", case_name);
}

static void vfail(tb *t, int fatal, const char *fmt, va_list ap) {
    char *body = NULL, *msg = NULL;
    if (vasprintf(&body, fmt, ap) < 0) body = NULL;
    if (asprintf(&msg, "%s: %s\n  re-run: %s", t->id, body ? body : fmt, t->rerun) < 0) msg = NULL;
    if (!fatal) t->failures++;
    t->fail(t->user, fatal, msg ? msg : fmt);
    free(body);
    free(msg);
    if (fatal) abort(); /* a sink that returned from a fatal failure */
}

void tb_failf(tb *t, int fatal, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfail(t, fatal, fmt, ap);
    va_end(ap);
}

int tb_expectf(tb *t, int cond, const char *fmt, ...) {
    if (cond) return 1;
    va_list ap;
    va_start(ap, fmt);
    vfail(t, 0, fmt, ap);
    va_end(ap);
    return 0;
}

void *tb_xmalloc(tb *t, size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) tb_failf(t, 1, "out of host memory (%zu bytes)", n);
    return p;
}

void tb_launched(tb *t, int rc, const char *what) {
    if (rc != 0) tb_failf(t, 1, "%s returned %d (%s)", what, rc, mla_status_message(rc));
    int s = gpu_sync();
    if (s != 0)
        tb_failf(t, 1, "cudaDeviceSynchronize after %s: %d (%s)", what, s, mla_status_message(s));
}

void tb_input_untouched(tb *t, const gpu_buf *b, const void *host, const char *name) {
    tb_expectf(t, gpu_buf_guards_intact(b), "a guard band of input %s was overwritten", name);
    void *h = tb_xmalloc(t, b->bytes);
    gpu_buf_download(b, h, b->bytes);
    size_t i = 0, n = b->bytes / 4;
    while (i < n && memcmp((const char *)h + 4 * i, (const char *)host + 4 * i, 4) == 0) i++;
    tb_expectf(t, i == n && memcmp(h, host, b->bytes) == 0,
               "input %s was modified by the kernel (first changed word %zu of %zu)", name, i, n);
    free(h);
}

void *tb_output(tb *t, const gpu_buf *b, const char *name, const char *what, int expect_full) {
    tb_expectf(t, gpu_buf_guards_intact(b), "%s wrote outside output %s (guard band changed)", what,
               name);
    if (expect_full) {
        size_t left = gpu_buf_count_poison(b);
        tb_expectf(t, left == 0, "%s left %zu of %zu words of output %s unwritten (poison 0x%08X)",
                   what, left, b->bytes / 4, name, GPU_POISON_WORD);
    }
    void *h = tb_xmalloc(t, b->bytes);
    gpu_buf_download(b, h, b->bytes);
    return h;
}

size_t tb_count_poison(const void *host, size_t n_words) {
    size_t c = 0;
    for (size_t i = 0; i < n_words; i++) {
        uint32_t w;
        memcpy(&w, (const char *)host + 4 * i, 4);
        c += w == GPU_POISON_WORD;
    }
    return c;
}

void tb_write_repro(tb *t, const char *tensor, st_dtype dt, int ndim, const int64_t *shape,
                    const void *got, const char *got_name, const void *ref, const char *ref_name) {
    if (t->no_repro) return; /* a negative control's expected failure */
    const char *dir = getenv("TEST_UNDECLARED_OUTPUTS_DIR");
    if (!dir || !*dir) dir = getenv("FUZZ_REPRO_DIR");
    if (!dir || !*dir) dir = "/tmp";
    char path[4096], err[ST_ERR_LEN], safe[sizeof t->id];
    snprintf(safe, sizeof safe, "%s", t->id);
    for (char *p = safe; *p; p++)
        if (*p == '/') *p = '-';
    snprintf(path, sizeof path, "%s/repro-%s-%s.safetensors", dir, safe, tensor);
    st_writer w;
    st_writer_init(&w);
    st_writer_meta(&w, "test", t->id);
    st_writer_meta(&w, "case", t->case_name);
    st_writer_meta(&w, "tensor", tensor);
    st_writer_meta(&w, "rerun", t->rerun);
    st_writer_add(&w, got_name, dt, ndim, shape, got);
    st_writer_add(&w, ref_name, dt, ndim, shape, ref);
    if (st_writer_write(&w, path, err, sizeof err) == 0)
        fprintf(stderr, "%s: reproducer written: %s\n", t->id, path);
    else
        fprintf(stderr, "%s: could not write the reproducer %s: %s\n", t->id, path, err);
    st_writer_free(&w);
}

static int compare_i32(tb *t, const char *tensor, int ndim, const int64_t *shape,
                       const int32_t *got, const char *got_name, const int32_t *ref,
                       const char *ref_name) {
    size_t n = 1;
    for (int i = 0; i < ndim; i++) n *= (size_t)shape[i];
    size_t cols = ndim > 1 ? (size_t)shape[ndim - 1] : (n ? n : 1), nd = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != ref[i]) {
            if (!nd) first = i;
            nd++;
        }
    if (!nd) return 1;
    tb_write_repro(t, tensor, ST_I32, ndim, shape, got, got_name, ref, ref_name);
    size_t r = first / cols, c = first % cols;
    char ctxs[512];
    int off = 0;
    for (size_t j = c >= 3 ? c - 3 : 0; j < cols && j < c + 4 && off < 400; j++)
        off += snprintf(ctxs + off, sizeof ctxs - (size_t)off, " [%zu] %d/%d", j, got[r * cols + j],
                        ref[r * cols + j]);
    tb_failf(t, 0,
             "case %s, tensor %s [%zu x %zu] int32: %zu element(s) differ (%s vs %s); first at "
             "[%zu][%zu]: %s = %d (0x%08X), %s = %d\n  neighbourhood (got/ref):%s",
             t->case_name, tensor, n / cols, cols, nd, got_name, ref_name, r, c, got_name,
             got[first], (unsigned)got[first], ref_name, ref[first], ctxs);
    return 0;
}

/* The first element whose bytes differ; n when none. nan_any: two NaNs count as equal whatever
 * their payload or sign (a kernel against the oracle, docs/tolerances.md class exact: a kernel
 * writes the canonical NaN where the CPU oracle propagates an input's payload); -0 vs +0
 * always differs. */
static size_t first_byte_diff(const void *got, const void *ref, size_t n, st_dtype dt,
                              int nan_any) {
    size_t es = st_dtype_size(dt);
    const uint8_t *g = got, *r = ref;
    for (size_t i = 0; i < n; i++) {
        if (memcmp(g + i * es, r + i * es, es) == 0) continue;
        if (!nan_any) return i;
        if (dt == ST_F32) {
            uint32_t a, b;
            memcpy(&a, g + i * 4, 4), memcpy(&b, r + i * 4, 4);
            if ((a & 0x7FFFFFFFu) > 0x7F800000u && (b & 0x7FFFFFFFu) > 0x7F800000u) continue;
        } else if (dt == ST_BF16) {
            uint16_t a, b;
            memcpy(&a, g + i * 2, 2), memcpy(&b, r + i * 2, 2);
            if ((a & 0x7FFFu) > 0x7F80u && (b & 0x7FFFu) > 0x7F80u) continue;
        }
        return i;
    }
    return n;
}

int tb_compare(tb *t, const char *tensor, st_dtype dt, int ndim, const int64_t *shape,
               const void *got, const char *got_name, const void *ref, const char *ref_name,
               mla_tol_class cls, const double *atol, int bytes_exact) {
    if (dt == ST_I32) return compare_i32(t, tensor, ndim, shape, got, got_name, ref, ref_name);
    size_t n = 1;
    for (int i = 0; i < ndim; i++) n *= (size_t)shape[i];
    mla_tol tol = mla_tol_exact();
    tol.cls = cls;
    tol.atol_elem = atol;
    mla_cmp_result r =
        dt == ST_BF16 ? mla_compare_bf16(got, ref, n, &tol) : mla_compare_f32(got, ref, n, &tol);
    size_t diff =
        bytes_exact ? first_byte_diff(got, ref, n, dt, bytes_exact == TB_BYTES_NAN_ANY) : n;
    if (diff < n) r.pass = 0;
    if (cls != MLA_TOL_EXACT && r.n_nan_mismatch) r.pass = 0; /* NaN never passes a number */
    if (r.pass) return 1;
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    char tname[256];
    snprintf(tname, sizeof tname, "%s (got = %s, ref = %s)", tensor, got_name, ref_name);
    if (fp) {
        mla_cmp_report(fp, t->case_name, tname, ndim, shape, &r, &tol, NULL);
        fclose(fp);
    }
    tb_write_repro(t, tensor, dt, ndim, shape, got, got_name, ref, ref_name);
    char first[160] = "";
    if (diff < n) { /* the element report cannot show it (e.g. -0 vs +0): name the bytes */
        uint32_t a = 0, b = 0;
        size_t es = st_dtype_size(dt);
        memcpy(&a, (const uint8_t *)got + diff * es, es);
        memcpy(&b, (const uint8_t *)ref + diff * es, es);
        snprintf(first, sizeof first,
                 "  first byte difference at element %zu: %s 0x%0*X, %s 0x%0*X\n", diff, got_name,
                 (int)(2 * es), a, ref_name, (int)(2 * es), b);
    }
    tb_failf(t, 0, "%s: %s vs %s (%s%s)\n%s%s", tensor, got_name, ref_name, mla_tol_class_name(cls),
             bytes_exact ? ", bytes" : "", first, buf ? buf : "");
    free(buf);
    return 0;
}
