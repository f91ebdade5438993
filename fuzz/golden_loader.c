/* Aborts when the safetensors reader or the manifest loader, fed arbitrary bytes, neither accepts
 * them consistently nor refuses them with a message naming the source (crashes and leaks are
 * caught by the sanitizers). */
/* golden_loader.c: one property, over both loaders of tools/golden:
 *  - st_read_mem: refusal = -1 with a non-empty message starting with the label and an empty
 *    st_file; acceptance = every tensor's range lies in the data section, is numel * dtype size
 *    bytes long, the ranges tile the section in order, and every metadata entry is readable.
 *  - mla_manifest_parse: refusal = -1 with a message starting with the label and an empty
 *    manifest; acceptance = every case has its strings, shapes within ST_MAX_DIMS, stored rows
 *    in range and ascending, and mla_manifest_find finds each case by name.
 * The same bytes go to both (a valid safetensors header is JSON; the corpus seeds both forms).
 */
#include <stdint.h>
#include <string.h>

#include "fuzz/fuzz_helpers.h"
#include "tests/lib/manifest.h"
#include "tests/lib/safetensors.h"

FUZZ_TARGET_NAME("golden_loader");

static const char k_label[] = "fuzz-input";

static void check_safetensors(const uint8_t *data, size_t size) {
    st_file f;
    char err[ST_ERR_LEN];
    err[0] = 0;
    int rc = st_read_mem(data, size, k_label, &f, err, sizeof err);
    FUZZ_ASSERT_MSG(rc == 0 || rc == -1, "st_read_mem returned %d", rc);
    if (rc == -1) {
        FUZZ_ASSERT_MSG(strncmp(err, k_label, sizeof k_label - 1) == 0 &&
                            strlen(err) > sizeof k_label + 1,
                        "refusal without a message naming the source: '%s'", err);
        FUZZ_ASSERT_MSG(f.buf == NULL && f.tensors == NULL && f.n_tensors == 0,
                        "refusal left a half-built st_file");
        return;
    }
    FUZZ_ASSERT(f.size == size && f.data >= f.buf && f.data + f.data_size == f.buf + f.size);
    uint64_t pos = 0;
    for (size_t i = 0; i < f.n_tensors; i++) {
        const st_tensor *t = &f.tensors[i];
        FUZZ_ASSERT_MSG(t->name != NULL && t->ndim >= 0 && t->ndim <= ST_MAX_DIMS,
                        "tensor %zu malformed", i);
        uint64_t numel = 1;
        for (int d = 0; d < t->ndim; d++) {
            FUZZ_ASSERT(t->shape[d] >= 0);
            numel *= (uint64_t)t->shape[d];
        }
        FUZZ_ASSERT_MSG(numel == t->numel, "numel %llu vs shape product %llu",
                        (unsigned long long)t->numel, (unsigned long long)numel);
        FUZZ_ASSERT_MSG(t->begin == pos && t->end >= t->begin && t->end <= f.data_size,
                        "tensor %s range [%llu, %llu) does not tile the data section", t->name,
                        (unsigned long long)t->begin, (unsigned long long)t->end);
        FUZZ_ASSERT(t->end - t->begin == numel * st_dtype_size(t->dtype));
        FUZZ_ASSERT(t->data == f.data + t->begin);
        FUZZ_ASSERT(st_find(&f, t->name) != NULL);
        pos = t->end;
    }
    FUZZ_ASSERT(pos == f.data_size);
    for (size_t i = 0; i < f.n_meta; i++) {
        FUZZ_ASSERT(f.meta_keys[i] != NULL && f.meta_vals[i] != NULL);
        FUZZ_ASSERT(st_meta(&f, f.meta_keys[i]) != NULL);
    }
    st_free(&f);
}

static void check_manifest(const uint8_t *data, size_t size) {
    mla_manifest m;
    char err[1024];
    err[0] = 0;
    int rc = mla_manifest_parse((const char *)data, size, k_label, &m, err, sizeof err);
    FUZZ_ASSERT_MSG(rc == 0 || rc == -1, "mla_manifest_parse returned %d", rc);
    if (rc == -1) {
        FUZZ_ASSERT_MSG(strncmp(err, k_label, sizeof k_label - 1) == 0 &&
                            strlen(err) > sizeof k_label + 1,
                        "refusal without a message naming the source: '%s'", err);
        FUZZ_ASSERT(m.cases == NULL && m.n_cases == 0);
        return;
    }
    for (size_t i = 0; i < m.n_cases; i++) {
        const mla_mf_case *c = &m.cases[i];
        FUZZ_ASSERT(c->name && c->model && c->command && c->file);
        FUZZ_ASSERT(mla_manifest_find(&m, c->name) == c);
        for (size_t k = 0; k < c->n_inputs; k++)
            FUZZ_ASSERT(c->inputs[k].name && c->inputs[k].fill_kind &&
                        c->inputs[k].ndim <= ST_MAX_DIMS);
        for (size_t k = 0; k < c->n_outputs; k++) {
            const mla_mf_output *o = &c->outputs[k];
            FUZZ_ASSERT(o->name && o->tolerance && o->ndim <= ST_MAX_DIMS);
            for (size_t r = 0; r < o->n_stored_rows; r++) {
                FUZZ_ASSERT(o->stored_rows[r] >= 0 && o->stored_rows[r] < o->shape[0]);
                FUZZ_ASSERT(r == 0 || o->stored_rows[r] > o->stored_rows[r - 1]);
            }
        }
    }
    mla_manifest_free(&m);
}

int fuzz_one_input(const uint8_t *data, size_t size) {
    check_safetensors(data, size);
    check_manifest(data, size);
    /* the safetensors header alone, as a manifest candidate (exercises the JSON paths deeper) */
    if (size > 8) check_manifest(data + 8, size - 8);
    return 0;
}
