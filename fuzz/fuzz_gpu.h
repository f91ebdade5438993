/* fuzz_gpu.h: the one helper of the fuzz targets that touch the GPU (split_invariance,
 * rope_positions, select_order, score_identity, ring_residency, gathered_indices; contract_codes
 * uses only the device detection). Implementation: fuzz_gpu.c (//fuzz:fuzz_gpu, linked into
 * every fuzz target by fuzz.bzl); docs/fuzzing.md says where an execution's time goes.
 *
 *  - Device: fuzz_device_present() (a CUDA device can run kernels; cached), fuzz_gpu_enabled()
 *    (the same unless MLA_FUZZ_NO_GPU=1), fuzz_no_device(). A target runs its kernel side when
 *    fuzz_gpu_enabled(), its "no device" side (launchers must return the CUDA band) only when
 *    fuzz_no_device(): host pointers reach a launcher only there, never a real device (a device
 *    with MLA_FUZZ_NO_GPU=1 runs neither side).
 *  - Testbed: fuzz_tb_begin() gives the execution's tests/lib/testbed.h `tb`, id = the target,
 *    rerun = the replay command of this input's reproducer; its failure sink prints the report,
 *    writes the input reproducer (fuzz_write_reproducer, as FUZZ_ASSERT does) and aborts, so
 *    every failure (a tb_compare, fuzz_launched, fuzz_gpu_check, FUZZ_TB_ASSERT,
 *    FUZZ_ASSERT_CUDA_BAND) ends the same way. fuzz_tb_casef() names the drawn tuple in reports.
 *    Every tensor comparison goes through tb_compare (shape-aware report, reproducer tensors).
 *  - Host memory: fuzz_alloc(t, n), valid for the execution (arenas reused across executions,
 *    so no allocation per execution; ASan-poisoned between blocks and after the execution).
 *  - Device buffers of one execution, the testbed's checks batched (one upload, one device-side
 *    prepare, one device-side check, one download and ONE synchronisation per execution):
 *      fuzz_in(t, name, bytes)                  an input: fill ->host (pinned), then upload;
 *      fuzz_out(t, name, bytes, what, full)     an output: poisoned with GPU_POISON_WORD;
 *      fuzz_inout(t, name, bytes, what)         in place: ->host uploaded, ->got downloaded;
 *      fuzz_gpu_upload(t)                       lays the buffers out in one grow-only device
 *                                               arena (each payload between two guard bands),
 *                                               uploads the inputs, fills guards and poison on
 *                                               the device; ->dev valid from here;
 *      fuzz_launched(t, rc, what)               rc must be 0 (the device's state is checked by
 *                                               the one synchronisation of fuzz_gpu_check;
 *                                               MLA_FUZZ_SYNC_EACH=1: after every launch);
 *      fuzz_gpu_check(t)                        on the device: every guard band intact, no
 *                                               poison word left in an output that must be
 *                                               full, every input equal to the bytes uploaded;
 *                                               downloads the outputs (->got), synchronises
 *                                               once (clean, or a failure naming the launches),
 *                                               and reports each finding with the testbed's
 *                                               words (tb_output / tb_input_untouched).
 *    A relaunch that needs a fresh poisoned output takes its own fuzz_out. The buffers' memory
 *    belongs to the execution (never free it).
 *  - Values: only the Philox generator of tests/lib/mla_fill.h, keyed by the drawn seed and a
 *    name: fuzz_fill_f32 (= mla_fill_host_f32) for tensors, fuzz_fill_words (stream words) and
 *    mla_fill_stream_* for discrete / per-element draws. The fills live in fuzz_values.c, built
 *    without ASan and coverage under --config=fuzz (docs/fuzzing.md: a tenth of the time).
 *
 *   int fuzz_one_input(const uint8_t *data, size_t size) {
 *       tb *t = fuzz_tb_begin(data, size);
 *       ... draw the tuple from the producer ...
 *       fuzz_tb_casef(t, "t_q %d n_pools %d seed 0x%08X", tq, np, seed);
 *       fuzz_buf *s = fuzz_in(t, "score", ns * 4);            (s->host: fill it)
 *       int32_t *ref = fuzz_alloc(t, ni * 4);
 *       ... oracle side: FUZZ_TB_ASSERT(t, cond, "..."), tb_compare(t, ...) ...
 *       if (fuzz_gpu_enabled()) {
 *           fuzz_buf *i = fuzz_out(t, "idx", ni * 4, "select", 1);
 *           fuzz_gpu_upload(t);
 *           fuzz_launched(t, launcher(s->dev, i->dev, ...), "select");
 *           fuzz_gpu_check(t);
 *           tb_compare(t, "idx", ST_I32, 2, shape, i->got, "kernel", ref, "oracle", ...);
 *       } else if (fuzz_no_device()) {
 *           FUZZ_ASSERT_CUDA_BAND(t, launcher(host pointers ...), "select");
 *       }
 *   }
 */
#ifndef FUZZ_GPU_H
#define FUZZ_GPU_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "fuzz/fuzz_helpers.h"
#include "fuzz/fuzz_values.h"
#include "tests/lib/gpu_util.h"
#include "tests/lib/mla_fill.h"
#include "tests/lib/testbed.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- device --------------------------------------------------------------------------------- */
static inline int fuzz_device_present(void) {
    static int cached = -1;
    if (cached < 0) {
        int n = 0;
        cached = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
        if (!cached) (void)cudaGetLastError();
    }
    return cached;
}

static inline int fuzz_gpu_enabled(void) {
    const char *off = getenv("MLA_FUZZ_NO_GPU");
    return fuzz_device_present() && !(off && off[0] == '1');
}

/* 1 only when no CUDA device is present: the one case where a target may hand host pointers to
 * a launcher (nothing is dereferenced) and expects the CUDA band. */
static inline int fuzz_no_device(void) { return !fuzz_device_present(); }

/* ---- testbed -------------------------------------------------------------------------------- */
/* Starts an execution: (re)initialises the target's testbed (id = fuzz_target_name; rerun =
 * "bazel run //fuzz:<target>_regression -- <this input's reproducer file>"; case = the target
 * name until fuzz_tb_casef) and returns it. Call first in fuzz_one_input. */
tb *fuzz_tb_begin(const uint8_t *data, size_t size);

/* tb_set_case with a printf format (the drawn tuple). A description longer than the testbed's
 * case_name field is kept in full here and printed in full by the sink and FUZZ_TB_ASSERT. With
 * the draw log on ($FUZZ_DRAW_LOG) it is also written there as its "case" line. */
void fuzz_tb_casef(tb *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* A property that is not a tensor comparison: on failure the report (condition, place, case,
 * message) goes through the sink (reproducer, abort). */
#define FUZZ_TB_ASSERT(t, cond, ...)                                                               \
    do {                                                                                           \
        if (!(cond)) fuzz_tb_assert_failed((t), #cond, __FILE__, __LINE__, __VA_ARGS__);           \
    } while (0)
void fuzz_tb_assert_failed(tb *t, const char *cond, const char *file, int line, const char *fmt,
                           ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* The "no device" rule: without a CUDA device a launcher given a valid tuple returns the CUDA
 * band, 10000 + cudaError_t (cudaError_t != cudaSuccess). Use under fuzz_no_device() only. */
#define FUZZ_ASSERT_CUDA_BAND(t, rc, launcher)                                                     \
    fuzz_tb_cuda_band((t), (rc), (launcher), __FILE__, __LINE__)
void fuzz_tb_cuda_band(tb *t, int rc, const char *launcher, const char *file, int line);

/* Hot value loops of a target (generators, brute-force restatements): no coverage
 * instrumentation. Their branches follow Philox words, not the input, so their coverage is noise
 * that libFuzzer keeps as "new features", and trace-cmp calls a hook on every iteration
 * (docs/fuzzing.md). ASan and UBSan stay. */
#if defined(__clang__)
#define FUZZ_HOT __attribute__((no_sanitize("coverage"), noinline)) /* inlined, it is covered */
#else
#define FUZZ_HOT
#endif

/* ---- host memory of one execution ----------------------------------------------------------- */
/* `bytes` bytes (64-byte aligned) valid until the next fuzz_tb_begin; a failure goes to the sink.
 */
void *fuzz_alloc(tb *t, size_t bytes);

/* ---- device buffers of one execution (see the top of this file) ---------------------------- */
typedef enum { FUZZ_BUF_IN, FUZZ_BUF_OUT, FUZZ_BUF_INOUT } fuzz_buf_kind;
typedef struct fuzz_buf {
    void *host;   /* in / inout: the bytes fuzz_gpu_upload uploads (pinned); out: NULL */
    void *dev;    /* the payload on the device, from fuzz_gpu_upload on */
    void *got;    /* out / inout: the payload as downloaded by fuzz_gpu_check */
    size_t bytes; /* payload bytes */
    const char *name, *what;
    fuzz_buf_kind kind;
    int expect_full;           /* out: no poison word may be left */
    size_t stage_off, dev_off; /* private to fuzz_gpu.c */
} fuzz_buf;

fuzz_buf *fuzz_in(tb *t, const char *name, size_t bytes);
fuzz_buf *fuzz_out(tb *t, const char *name, size_t bytes, const char *what, int expect_full);
fuzz_buf *fuzz_inout(tb *t, const char *name, size_t bytes, const char *what);
void fuzz_gpu_upload(tb *t);
void fuzz_launched(tb *t, int rc, const char *what);
void fuzz_gpu_check(tb *t);

/* ---- f32 bit patterns ----------------------------------------------------------------------- */
static inline float fuzz_f32_of_bits(uint32_t b) {
    float f;
    memcpy(&f, &b, 4);
    return f;
}
static inline uint32_t fuzz_bits_of_f32(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

#ifdef __cplusplus
}
#endif
#endif /* FUZZ_GPU_H */
