/* manifest.h: golden/manifest.json, the index of the golden fixtures.
 *
 * {
 *   "format": "mla-golden-manifest", "format_version": 1,
 *   "cases": [ {
 *     "name": "glm5_decode", "model": "glm5", "purpose": "one line", "seed": 1234,
 *     "generator_version": 1,
 *     "command": "golden regen --dir golden all",        (the exact command that produced it)
 *     "file": "glm5_decode.safetensors",
 *     "geometry": { "n_head": 64, "kv_rank": 512, ... },  (numbers only)
 *     "inputs": { "q_nope": { "shape": [1, 64, 192], "dtype": "F32",
 *                             "fill": { "kind": "realistic", "scale": 0.072 },
 *                             "sha256": "<64 hex>" },
 *                 "positions": { "shape": [1], "dtype": "I32",
 *                                "fill": { "kind": "explicit", "scale": 0 },
 *                                "values": [4095], "sha256": "<64 hex>" }, ... },
 *     "outputs": { "q_lat": { "shape": [1, 64, 512], "dtype": "F32", "stage": "absorb_q",
 *                             "tolerance": "exact", "sha256": "<64 hex, of the FULL tensor>",
 *                             "stored_rows": null | [0, 1, 2, 63, ...] }, ... }
 *   }, ... ] }
 *
 * Inputs are not stored (they regenerate from tests/lib/mla_fill.h); outputs are stored in
 * `file`, whole (stored_rows null) or as the listed rows along axis 0, in that order.
 * "values" (optional; written by regen for every input of fill "explicit", whose values come
 * from the case and not from the generator): the input's elements in row-major order, integers,
 * one per element of `shape` (I32 inputs only), so a reader without the case table (e.g.
 * tools/golden/mla_golden.py) can rebuild it; verify checks them against the recomputed input.
 * The loader refuses (message naming the file and the problem, never a crash or a leak):
 * invalid JSON, missing fields, wrong types, bad hex, bad shapes / dtypes / rows, duplicates,
 * "values" that are not int32 integers or whose count is not the shape's element count.
 */
#ifndef MLA_GOLDEN_MANIFEST_H
#define MLA_GOLDEN_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "tests/lib/safetensors.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MLA_MANIFEST_FORMAT_VERSION 1

typedef struct {
    char *name;
    st_dtype dtype;
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    char *fill_kind; /* "realistic", "small_int", "explicit" */
    double fill_scale;
    uint8_t sha256[32];
    int has_values;  /* 0: no "values" field */
    int32_t *values; /* "values" (has_values): n_values = the shape's element count */
    size_t n_values;
} mla_mf_input;

typedef struct {
    char *name;
    st_dtype dtype;
    int ndim;
    int64_t shape[ST_MAX_DIMS]; /* the full shape */
    char *stage;                /* optional (NULL) */
    char *tolerance;            /* "exact", "rope", "attn", "pool_key", "bf16_gemm", ... */
    uint8_t sha256[32];         /* of the full tensor's raw bytes */
    int has_stored_rows;        /* 0: all rows stored */
    int64_t *stored_rows;
    size_t n_stored_rows;
} mla_mf_output;

typedef struct {
    char *key;
    double value;
} mla_mf_kv;

typedef struct {
    char *name, *model, *command, *file;
    char *purpose; /* one line: what the case is for (optional in older manifests: NULL) */
    uint32_t seed;
    int generator_version;
    mla_mf_kv *geometry;
    size_t n_geometry;
    mla_mf_input *inputs;
    size_t n_inputs;
    mla_mf_output *outputs;
    size_t n_outputs;
} mla_mf_case;

typedef struct {
    int format_version;
    mla_mf_case *cases;
    size_t n_cases;
} mla_manifest;

/* Parse text[0..n) (label names the source in messages). 0, or -1 with err (m left empty). */
int mla_manifest_parse(const char *text, size_t n, const char *label, mla_manifest *m, char *err,
                       size_t errlen);
int mla_manifest_load(const char *path, mla_manifest *m, char *err, size_t errlen);
int mla_manifest_save(const mla_manifest *m, const char *path, char *err, size_t errlen);
void mla_manifest_free(mla_manifest *m);
void mla_mf_case_free(mla_mf_case *c);
const mla_mf_case *mla_manifest_find(const mla_manifest *m, const char *name);
const mla_mf_input *mla_mf_find_input(const mla_mf_case *c, const char *name);
const mla_mf_output *mla_mf_find_output(const mla_mf_case *c, const char *name);
/* Replaces the case of the same name (or appends); takes ownership of *c's contents and zeroes
 * *c. Returns 0 or -1 (OOM; *c untouched). */
int mla_manifest_put_case(mla_manifest *m, mla_mf_case *c);

/* SHA-256 (OpenSSL) and hex helpers. hex needs 65 bytes. parse: 0 or -1 (length / non-hex). */
void mla_sha256(const void *data, size_t n, uint8_t out[32]);
void mla_sha256_hex(const uint8_t sha[32], char hex[65]);
int mla_sha256_parse(const char *hex, uint8_t out[32]);

/* The fixture folder: $MLA_GOLDEN_DIR when set and non-empty, else "golden" (relative to the
 * working directory: the repository root, Bazel's runfiles root, or a GPU bundle). */
const char *mla_golden_dir(void);

#ifdef __cplusplus
}
#endif
#endif /* MLA_GOLDEN_MANIFEST_H */
