/* case.h: the golden cases and their stages, described once.
 *
 * A STAGE is one kernel stage, described by one descriptor (mla_stage) holding both halves:
 *  - oracle: builds the stage's inputs in the case's context (from the counter-based fill of
 *    tests/lib/mla_fill.h keyed by the case seed and the tensor's name, or an earlier stage's
 *    output by name) and registers its outputs, computed by the CPU oracle;
 *  - gpu: runs the stage's kernel(s) on the testbed (tests/lib/testbed.h) over those same inputs
 *    and checks the outputs against the oracle's (variant: which of the stage's GPU checks);
 *  - outputs: the tensors it registers, each with its tolerance class (docs/tolerances.md),
 *    stated here once: the manifest records it and the GPU comparison uses it.
 * The descriptors live in stages_dense.c and stages_kpool.c, one family per file.
 *
 * A CASE is { name, model, geometry, seed, stages, stored rows }: one row in case_list.h.
 * Running a case runs its stages' oracle halves in order over one mla_ctx. Afterwards the
 * context holds every input (with its SHA-256; inputs are never stored in fixtures) and every
 * output (stored in golden/<case>.safetensors, whole or as the case's stored_rows along axis 0
 * when larger than MLA_STORE_ALL_BYTES; the manifest records the SHA-256 of the FULL output).
 * The Criterion suites (one test per (case, GPU check), e.g. dense_gpu/glm5_decode__rope) and the
 * case table are generated from the same lists (case_list.h); docs/adding-a-kernel.md walks
 * through adding a stage end to end.
 *
 * Inputs and outputs are read-only once registered (a stage never writes another stage's
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
#include "tests/lib/testbed.h"

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

#define MLA_STAGE_MAX_OUTPUTS 4

typedef struct {
    const char *name;
    mla_tol_class tol;
    /* exact class only: 1 when the comparison with the oracle is the exact class alone (-0
     * equals +0, any NaN equals any NaN: the k-pool kernels write the canonical NaN), 0 for
     * bytes as well (-0 vs +0 counts; NaN payloads never do: TB_BYTES_NAN_ANY). */
    int nan_any;
} mla_stage_output;

/* One kernel stage: both halves and its outputs (see the top of this file). */
typedef struct mla_stage {
    const char *name;                              /* also the manifest's "stage" of its outputs */
    int (*oracle)(mla_ctx *ctx);                   /* 0, or -1 after mla_ctx_fail */
    void (*gpu)(tb *t, mla_ctx *ctx, int variant); /* the GPU check `variant` (case_list.h) */
    mla_stage_output outputs[MLA_STAGE_MAX_OUTPUTS];
} mla_stage;

typedef struct mla_case {
    const char *name;
    const char *model;   /* "glm5", "glm5_next" */
    const char *purpose; /* one line: the kernel mistake or shape the case is for (manifest) */
    mla_geom geom;
    uint32_t seed;
    const mla_stage *stages[MLA_MAX_STAGES]; /* terminated by NULL */
    /* 1: a sanitizer case (case_list.h's MLA_SANITIZE_*_CASES): small, computed in memory, no
     * stored fixture (golden list / regen / verify never see it). */
    int in_memory;
    int n_stored_rows; /* 0: every output stored whole */
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
    uint8_t sha256[32]; /* filled by mla_case_run */
} mla_tensor;

struct mla_ctx {
    const mla_case *c;
    const mla_stage *stage; /* the stage running */
    mla_tensor *t;
    size_t n, cap;
    char err[512];
};

/* The golden table (the fixtures). */
size_t mla_case_count(void);
const mla_case *mla_case_at(size_t i);
/* A golden or a sanitizer case by name, or NULL. "custom" is the case $MLA_CUSTOM_CASE
 * describes (tools/shrink.py): a JSON object {"base": "<case>", "geom": {"<field>": value, ...},
 * "seed": N}: the base case's stages and geometry with those fields replaced (geometry.h names,
 * as in the manifest), computed in memory (no fixture). NULL when unset or invalid (the reason:
 * mla_custom_case_error). */
const mla_case *mla_case_find(const char *name);
/* Whether $MLA_CUSTOM_CASE is set; the parse error of the last mla_case_find("custom") or "". */
int mla_custom_case_configured(void);
const char *mla_custom_case_error(void);
/* Sets geometry field `name` (a key of the manifest's geometry) to v: 0, or -1 for an unknown
 * name or a non-integer value of an integer field. */
int mla_geom_set(mla_geom *g, const char *name, double v);
/* The case's stage of that name, or NULL. */
const mla_stage *mla_case_stage(const mla_case *c, const char *name);

/* Runs every stage of c into a fresh ctx (free it with mla_ctx_free, also on failure) and
 * computes every tensor's SHA-256. 0, or -1 with ctx->err.
 * With $MLA_ORACLE_CACHE=DIR (an existing directory) the computed context is also written to
 * DIR, and a later run of the same case (same name, geometry, seed and stages) loads it instead
 * of recomputing the oracle (the SHA-256s are recomputed from the loaded bytes). The directory
 * belongs to one build of the test binaries: the runners (run-gpu-tier.sh, tools/mutate.py)
 * make a fresh one per run, since a changed oracle would not be noticed by a stale entry. */
int mla_case_run(const mla_case *c, mla_ctx *ctx);
void mla_ctx_free(mla_ctx *ctx);

/* For stage functions. */
const float *mla_ctx_input_f32(mla_ctx *ctx, const char *name, int ndim, const int64_t *shape,
                               mla_fill_kind kind, float scale);
int32_t *mla_ctx_input_i32(mla_ctx *ctx, const char *name, int ndim, const int64_t *shape);
/* An output of the running stage: its tolerance class comes from the stage's descriptor (an
 * output the descriptor does not list fails the stage). */
void *mla_ctx_output(mla_ctx *ctx, const char *name, st_dtype dtype, int ndim,
                     const int64_t *shape);
mla_tensor *mla_ctx_get(mla_ctx *ctx, const char *name);
/* An f32 output of an earlier stage, or NULL after mla_ctx_fail. */
const float *mla_ctx_need_f32(mla_ctx *ctx, const char *name);
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

/* The bf16 GEMM stages' operands (stages_dense.c): absorb (absorb = 1): x = bf16(q_nope)
 * [t][H][d_nope], w = bf16(wk_b) transposed per head to [H][kv_rank][d_nope], y [t][H][kv_rank];
 * decompress: x = bf16(o_lat) [t][H][kv_rank], w = bf16(wv_b) [H][d_v][kv_rank], y [t][H][d_v].
 * 0, or -1 when out of memory; the caller frees x and w. */
typedef struct {
    int32_t m, n, k, batch;
    int64_t x_rs, x_bs, y_rs, y_bs;
    size_t nx, nw;
    uint16_t *x, *w; /* malloc'd */
} mla_bf16_gemm;
int mla_bf16_gemm_operands(const mla_geom *g, int absorb, const float *x32, const float *w32,
                           mla_bf16_gemm *a);

/* ---- the GPU half's checks (tests/lib/stage_check.c) --------------------------------------- */
/* Every output of the stage `st` of case c: the stored golden rows and the manifest's full
 * SHA-256 equal the oracle's recomputation in ctx (the fixture is not stale). */
void tb_fixture_matches_oracle(tb *t, const mla_case *c, mla_ctx *ctx, const mla_stage *st);
/* A tensor of ctx, or a fatal failure naming it. */
const mla_tensor *tb_tensor(tb *t, mla_ctx *ctx, const char *name);
/* Run 1 == run 2, bytes (a, b: two launches' outputs with the layout of t). */
int tb_same_runs(tb *t, const mla_tensor *ref, const void *a, const void *b);
/* A kernel output (got_name: e.g. "kernel", "reference") against the oracle's tensor in its own
 * class (atol: the per-element bounds, NULL for exact). Exact: bytes (or NaN-payload-free where the
 * stage says so) and, for bytes, the SHA-256 of the kernel output against the oracle's. */
int tb_against_oracle(tb *t, const mla_ctx *ctx, const mla_tensor *ref, const void *got,
                      const char *got_name, const double *atol);

/* Runs case `case_name` into ctx (mla_ctx_free it), or a fatal failure naming the problem. */
const mla_case *tb_case_run(tb *t, const char *case_name, mla_ctx *ctx);

/* One golden GPU check: runs case `case_name`, checks the stage's fixture outputs against the
 * oracle, then the stage's GPU half (variant). Skips nothing: the caller skips without a
 * device. */
void mla_golden_gpu_check(tb *t, const char *case_name, const char *stage, int variant);

#ifdef __cplusplus
}
#endif
#endif /* MLA_GOLDEN_CASES_H */
