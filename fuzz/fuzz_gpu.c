/* fuzz_gpu.c: see fuzz_gpu.h. */
#include "fuzz/fuzz_gpu.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mla_status.h"

static tb g_tb;
static char g_case[2048]; /* the drawn tuple in full (tb.case_name holds 512 bytes) */

static void sink(void *user, int fatal, const char *msg) {
    (void)user;
    (void)fatal; /* every failure is fatal for a fuzz target */
    fprintf(stderr, "FUZZ testbed failure:\n%s\n", msg);
    if (strlen(g_case) >= sizeof g_tb.case_name) fprintf(stderr, "  case (in full): %s\n", g_case);
    fuzz_write_reproducer(fuzz_target_name);
    abort();
}

/* A CUDA failure inside tests/lib/gpu_util.c (already printed): leave the reproducer too. */
static void on_gpu_abort(void) { fuzz_write_reproducer(fuzz_target_name); }

tb *fuzz_tb_begin(const uint8_t *data, size_t size) {
    char path[4096], rerun[sizeof g_tb.rerun];
    (void)data, (void)size; /* the entry recorded this input: fuzz_set_current_input */
    fuzz_reproducer_path(fuzz_target_name, path, sizeof path);
    snprintf(rerun, sizeof rerun, "bazel run //fuzz:%s_regression -- %s", fuzz_target_name, path);
    tb_init_fuzz(&g_tb, fuzz_target_name, rerun, sink, NULL);
    snprintf(g_case, sizeof g_case, "%s", fuzz_target_name);
    gpu_set_abort_hook(on_gpu_abort);
    return &g_tb;
}

void fuzz_tb_casef(tb *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_case, sizeof g_case, fmt, ap);
    va_end(ap);
    tb_set_case(t, g_case);
}

void fuzz_tb_assert_failed(tb *t, const char *cond, const char *file, int line, const char *fmt,
                           ...) {
    char body[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    tb_failf(t, 1, "FUZZ_ASSERT failed: %s\n  at %s:%d\n  case %s\n  %s", cond, file, line,
             t == &g_tb ? g_case : t->case_name, body);
}

void fuzz_tb_cuda_band(tb *t, int rc, const char *launcher, const char *file, int line) {
    if (rc > MLA_STATUS_CUDA_BASE && rc < MLA_STATUS_LT_DECLINE_BASE) return;
    fuzz_tb_assert_failed(t, "rc in the CUDA band", file, line,
                          "no device: %s returned %d (%s) for a valid tuple; want the CUDA band "
                          "(10000 + cudaError_t)",
                          launcher, rc, mla_status_message(rc));
}

void *fuzz_dev_out(gpu_buf *b, size_t bytes) {
    gpu_buf_reserve(b, bytes);
    return b->ptr;
}

void *fuzz_dev_in(gpu_buf *b, const void *host, size_t bytes) {
    gpu_buf_reserve(b, bytes);
    gpu_buf_upload(b, host, bytes);
    return b->ptr;
}
