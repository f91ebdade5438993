/* fuzz_entry.c: LLVMFuzzerTestOneInput for every target (records the input so a failing
 * FUZZ_ASSERT can write a reproducer), the reproducer writer itself, and the draw log
 * ($FUZZ_DRAW_LOG, fuzz_helpers.h). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz/fuzz_helpers.h"

static const uint8_t *current_data;
static size_t current_size;

FILE *fuzz_draw_log;

/* Opens $FUZZ_DRAW_LOG once, line-buffered (the lines of a failing input are written before it
 * aborts). */
static void draw_log_open(void) {
    static int opened;
    if (opened) return;
    opened = 1;
    const char *path = getenv("FUZZ_DRAW_LOG");
    if (!path || !*path) return;
    fuzz_draw_log = fopen(path, "w");
    if (!fuzz_draw_log) {
        fprintf(stderr, "fuzz: cannot open the draw log %s ($FUZZ_DRAW_LOG)\n", path);
        return;
    }
    setvbuf(fuzz_draw_log, NULL, _IOLBF, 0);
}

void fuzz_draw_note(const char *kind, size_t off, size_t n, int64_t lo, int64_t hi, int64_t value) {
    if (!fuzz_draw_log) return;
    fprintf(fuzz_draw_log, "draw %s %zu %zu %lld %lld %lld\n", kind, off, n, (long long)lo,
            (long long)hi, (long long)value);
}

void fuzz_log_case(const char *fmt, ...) {
    if (!fuzz_draw_log) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("case ", fuzz_draw_log);
    vfprintf(fuzz_draw_log, fmt, ap);
    fputc('\n', fuzz_draw_log);
    va_end(ap);
}

void fuzz_set_current_input(const uint8_t *data, size_t size) {
    current_data = data;
    current_size = size;
    draw_log_open();
    if (fuzz_draw_log) fprintf(fuzz_draw_log, "input %zu %s\n", size, fuzz_target_name);
}

void fuzz_reproducer_path(const char *target, char *buf, size_t n) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a 64 of the input names the file */
    for (size_t i = 0; i < current_size; i++) h = (h ^ current_data[i]) * 1099511628211ull;
    const char *dir = getenv("FUZZ_REPRO_DIR");
    if (!dir || !*dir) dir = getenv("TEST_UNDECLARED_OUTPUTS_DIR"); /* Bazel keeps these */
    if (!dir || !*dir) dir = ".";
    snprintf(buf, n, "%s/repro-%s-%016llx.bin", dir, target, (unsigned long long)h);
}

void fuzz_write_reproducer(const char *target) {
    char path[4096];
    fuzz_reproducer_path(target, path, sizeof path);
    FILE *f = fopen(path, "wb");
    if (f && (current_size == 0 || fwrite(current_data, 1, current_size, f) == current_size)) {
        fclose(f);
        fprintf(stderr,
                "reproducer: %s\nreplay:     bazel run //fuzz:%s_regression -- %s\n"
                "            (or, from a GPU bundle: bin/%s_regression %s)\n",
                path, target, path, target, path);
    } else {
        if (f) fclose(f);
        fprintf(stderr, "could not write the reproducer %s\n", path);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_set_current_input(data, size);
    return fuzz_one_input(data, size);
}
