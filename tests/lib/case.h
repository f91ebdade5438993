/* cases.h: the golden case table and its recomputation.
 *
 * A case is { name, model, geometry, seed, stages[], stored_rows }. Running a case runs its
 * stages in order over one mla_ctx: each stage asks the context for its inputs (generated from
 * tests/lib/mla_fill.h with the case seed and the tensor's name, or taken from an earlier
 * stage's output by name) and registers its outputs (computed by the CPU oracle). Afterwards the
 * context holds every input (with its SHA-256; inputs are never stored in fixtures) and every
 * output (stored in golden/<case>.safetensors, whole or as case->stored_rows along axis 0 when
 * the output is larger than MLA_STORE_ALL_BYTES; the manifest records the SHA-256 of the FULL
 * output either way).
 *
 * Adding a case (e.g. the k-pool indexer cases):
 *  1. add any geometry fields to mla_geom (and one line to the field table k_geom_fields in
 *     cases.c, so the manifest records it and verify checks it);
 *  2. write stage functions `static int stage_xxx(mla_ctx *ctx)` in cases.c: get inputs with
 *     mla_ctx_input_f32 (fill kind + scale; the name is the generator key, so keep names stable)
 *     or mla_ctx_input_i32 (explicit values), earlier outputs with mla_ctx_get, allocate outputs
 *     with mla_ctx_output (dtype, shape, tolerance class), call the oracle; return 0, or -1
 *     after mla_ctx_fail(ctx, ...);
 *  3. add a row to k_cases in cases.c: { "name", "model", {geometry}, seed, {stage list} }.
 *  4. `golden regen NAME` writes the fixture and its manifest entry; commit both.
 * Inputs and outputs must be read-only once registered (a stage never writes another stage's
 * tensors), and all names within a case are unique.
 */
#ifndef MLA_GOLDEN_CASES_H
#define MLA_GOLDEN_CASES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tests/lib/compare.h"
#include "tests/lib/geometry.h"
#include "tests/lib/manifest.h"
#include "tests/lib/mla_fill.h"
#include "tests/lib/safetensors.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MLA_MAX_STAGES 16
#define MLA_MAX_STORED_ROWS 16
#define MLA_STORE_ALL_BYTES ((size_t)1 << 20) /* outputs up to 1 MiB are always stored whole */


/* The ring cases' append schedule (shared by cases.c, the GPU tests and the fuzzers): chunk k
 * appends this many rows starting at logical row `done` (0 when done == total). Each chunk is at
 * most state_rows - (done % pool) rows, so the rows of the first pool an incremental build after
 * the chunk rebuilds (the one that was incomplete before it) are still resident in the ring. */
static inline int32_t mla_kpool_ring_chunk(int32_t k, int32_t done, int32_t total,
                                           int32_t state_rows, int32_t pool) {
    static const int32_t pat[] = {1, 2, 1021, 4093, 3, 777, 4090, 5, 64, 2};
    int32_t n = pat[k % (int32_t)(sizeof pat / sizeof pat[0])];
    int32_t cap = state_rows - done % pool;
    if (n > cap) n = cap;
    if (n > total - done) n = total - done;
    return n < 0 ? 0 : n;
}

typedef struct mla_ctx mla_ctx;

typedef struct {
    const char *name;
    int (*fn)(mla_ctx *ctx);
} mla_stage;

typedef struct mla_case {
    const char *name;
    const char *model;     /* "glm5", "glm5_next" */
    mla_geom geom;
    uint32_t seed;
    mla_stage stages[MLA_MAX_STAGES]; /* terminated by {NULL, NULL} */
    int n_stored_rows;     /* 0: every output stored whole */
    int64_t stored_rows[MLA_MAX_STORED_ROWS];
} mla_case;

typedef struct {
    char name[64];
    st_dtype dtype;
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    void *data;
    size_t nbytes;
    int is_output;
    /* inputs */
    mla_fill_kind fill;
    float fill_scale;
    /* outputs */
    const char *stage;
    mla_tol_class tol;
    uint8_t sha256[32];    /* filled by mla_case_run */
} mla_tensor;

struct mla_ctx {
    const mla_case *c;
    const char *stage;     /* the stage running */
    mla_tensor *t;
    size_t n, cap;
    char err[512];
};

/* The table. */
size_t mla_case_count(void);
const mla_case *mla_case_at(size_t i);
const mla_case *mla_case_find(const char *name);

/* Runs every stage of c into a fresh ctx (free it with mla_ctx_free, also on failure) and
 * computes every tensor's SHA-256. 0, or -1 with ctx->err. */
int mla_case_run(const mla_case *c, mla_ctx *ctx);
void mla_ctx_free(mla_ctx *ctx);

/* For stage functions. */
const float *mla_ctx_input_f32(mla_ctx *ctx, const char *name, int ndim, const int64_t *shape,
                               mla_fill_kind kind, float scale);
int32_t *mla_ctx_input_i32(mla_ctx *ctx, const char *name, int ndim, const int64_t *shape);
void *mla_ctx_output(mla_ctx *ctx, const char *name, st_dtype dtype, int ndim,
                     const int64_t *shape, mla_tol_class tol);
mla_tensor *mla_ctx_get(mla_ctx *ctx, const char *name);
int mla_ctx_fail(mla_ctx *ctx, const char *fmt, ...);

/* Rows of output t that a fixture stores (NULL / 0 when all rows): */
int mla_case_output_rows(const mla_case *c, const mla_tensor *t, const int64_t **rows);

/* Regenerate: run c, write <dir>/<case>.safetensors, put the case's entry into m (the caller
 * saves the manifest). command: the command line recorded in the manifest. 0 or -1 with err. */
int mla_golden_regen(const mla_case *c, const char *dir, const char *command, mla_manifest *m,
                     size_t *bytes_written, char *err, size_t errlen);

/* Verify: recompute c and check the manifest entry (seed, generator version, geometry), every
 * input SHA-256, every full-output SHA-256 and every stored value (bitwise) of <dir>/<file>.
 * Prints a readable report of every problem to `report` (case, tensor, worst element, both
 * values, the rerun command) and returns the number of problems (0: pass). */
int mla_golden_verify(const mla_case *c, const char *dir, const mla_manifest *m, FILE *report,
                      const char *rerun_cmd);

#ifdef __cplusplus
}
#endif
#endif /* MLA_GOLDEN_CASES_H */
