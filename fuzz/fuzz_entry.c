/* fuzz_entry.c: LLVMFuzzerTestOneInput for every target (records the input so a failing
 * FUZZ_ASSERT can write a reproducer), and the reproducer writer itself. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz/fuzz_helpers.h"

static const uint8_t *current_data;
static size_t current_size;

void fuzz_set_current_input(const uint8_t *data, size_t size) {
    current_data = data;
    current_size = size;
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
