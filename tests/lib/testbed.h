/* testbed.h: the one GPU testbed every GPU suite and GPU fuzz target uses (after CUTLASS's
 * gemm_testbed and FlashMLA's kernelkit: one place initialises, runs, compares and dumps).
 *
 * A testbed `tb` names one check: its id ("<suite>/<test>", also its Criterion --filter), the
 * command that re-runs exactly it, and a failure sink. Every helper below reports through the
 * sink with the id, the tensor, the worst element (unravelled with the tensor's shape), both
 * values and the re-run command, so a Criterion test and a fuzz target print the same report:
 *  - Criterion suites use tests/lib/testbed_criterion.h (a failure is a cr_expect; a fatal one a
 *    cr_assert);
 *  - fuzz targets use fuzz/fuzz_gpu.h (any failure writes the input reproducer and aborts).
 * A fatal failure never returns to the caller (the sink jumps out or aborts).
 *
 * The checks (DESIGN.md §7):
 *  - buffers (gpu_util.h): guard bands on both sides, outputs poisoned with GPU_POISON_WORD
 *    (0x7FC0DEAD: a quiet NaN as f32, an impossible index as int32);
 *  - tb_launched: the launcher returned 0 and a device sync is clean;
 *  - tb_input_untouched / tb_output: guards intact, inputs unchanged, no poison word left;
 *  - tb_compare: one comparator (tests/lib/compare.h) for f32, bf16 and int32 with a readable
 *    report; a failing comparison writes a reproducer (kernel and reference tensors) to
 *    $TEST_UNDECLARED_OUTPUTS_DIR (else $FUZZ_REPRO_DIR, else /tmp);
 *  - tb_same_runs: run-to-run bytes;
 *  - tb_against_oracle: a kernel output against the oracle's tensor in the tensor's own
 *    tolerance class (chosen once, by the stage descriptor that registered it);
 *  - tb_fixture_matches_oracle: the stored golden rows and the manifest's full SHA-256 equal the
 *    oracle's recomputation (a stale fixture fails here, before any kernel runs).
 */
#ifndef MLA_TESTS_TESTBED_H
#define MLA_TESTS_TESTBED_H

#include <stddef.h>
#include <stdint.h>

#include "tests/lib/compare.h"
#include "tests/lib/gpu_util.h"
#include "tests/lib/safetensors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A failure: msg is the whole report. fatal != 0: the sink must not return. */
typedef void (*tb_fail_fn)(void *user, int fatal, const char *msg);

typedef struct tb {
    char id[200];        /* "<suite>/<test>": the Criterion name, also its filter */
    char rerun[4608];    /* the command that re-runs exactly this check */
    char case_name[512]; /* what reports call the case (the golden case, or a drawn shape) */
    tb_fail_fn fail;
    void *user;
    int failures; /* non-fatal failures so far */
    int no_repro; /* an expected failure (a negative control's probe): write no reproducer, so
                   * a passing run leaves nothing in the repro dir for a ledger to count */
} tb;

/* id = "<suite>/<test>"; rerun = the Bazel and the GPU-bundle command for binary `target`. */
void tb_init(tb *t, const char *target, const char *suite, const char *test, tb_fail_fn fail,
             void *user);
/* A testbed for a fuzz target: id "<target>", rerun = replay command given by the caller. */
void tb_init_fuzz(tb *t, const char *target, const char *rerun, tb_fail_fn fail, void *user);
void tb_set_case(tb *t, const char *case_name);

/* Reports "<id>: <message>\n  re-run: <rerun>" through the sink. */
void tb_failf(tb *t, int fatal, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* cond false: tb_failf(t, 0, ...). Returns cond. */
int tb_expectf(tb *t, int cond, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

void *tb_xmalloc(tb *t, size_t n);

/* rc must be 0, then cudaDeviceSynchronize must be clean (fatal otherwise). */
void tb_launched(tb *t, int rc, const char *what);

/* An input buffer: guards intact and payload equal to host (first changed word reported). */
void tb_input_untouched(tb *t, const gpu_buf *b, const void *host, const char *name);

/* An output buffer after a launch: guards intact and, when expect_full, no poison word left.
 * Returns the downloaded payload (caller frees). what: e.g. "run 1". */
void *tb_output(tb *t, const gpu_buf *b, const char *name, const char *what, int expect_full);

/* Writes got / ref as a reproducer safetensors file named after the id and tensor. */
void tb_write_repro(tb *t, const char *tensor, st_dtype dt, int ndim, const int64_t *shape,
                    const void *got, const char *got_name, const void *ref, const char *ref_name);

/* got vs ref (f32, bf16 or int32; ndim dims of shape). f32 / bf16: cls MLA_TOL_EXACT is bitwise
 * with any NaN equal to any NaN and -0 equal to +0; bytes_exact additionally demands identical
 * bytes: TB_BYTES (1) every byte (GPU vs GPU: NaN payloads too), TB_BYTES_NAN_ANY (2) every
 * byte except that two NaNs are equal (a kernel against the oracle in class exact: -0 vs +0
 * counts, NaN payloads do not, docs/tolerances.md); other classes use the per-element bounds
 * atol (docs/tolerances.md), a NaN never passing against a number. int32: bytes, the first
 * difference with its neighbourhood. On failure: the report, a reproducer, returns 0. */
enum { TB_BYTES = 1, TB_BYTES_NAN_ANY = 2 };
int tb_compare(tb *t, const char *tensor, st_dtype dt, int ndim, const int64_t *shape,
               const void *got, const char *got_name, const void *ref, const char *ref_name,
               mla_tol_class cls, const double *atol, int bytes_exact);

/* Counts int32 words equal to GPU_POISON_WORD in host memory. */
size_t tb_count_poison(const void *host, size_t n_words);

#ifdef __cplusplus
}
#endif
#endif /* MLA_TESTS_TESTBED_H */
