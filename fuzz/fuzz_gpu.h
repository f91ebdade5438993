/* fuzz_gpu.h: the one helper of the fuzz targets that touch the GPU (split_invariance,
 * rope_positions, select_order, score_identity, ring_residency, gathered_indices; contract_codes
 * uses only the device detection). Implementation: fuzz_gpu.c (//fuzz:fuzz_gpu, linked into
 * every fuzz target by fuzz.bzl).
 *
 *  - Device: fuzz_device_present() (a CUDA device can run kernels; cached), fuzz_gpu_enabled()
 *    (the same unless MLA_FUZZ_NO_GPU=1), fuzz_no_device(). A target runs its kernel side when
 *    fuzz_gpu_enabled(), its "no device" side (launchers must return the CUDA band) only when
 *    fuzz_no_device(): host pointers reach a launcher only there, never a real device (a device
 *    with MLA_FUZZ_NO_GPU=1 runs neither side).
 *  - Testbed: fuzz_tb_begin() gives the execution's tests/lib/testbed.h `tb`, id = the target,
 *    rerun = the replay command of this input's reproducer; its failure sink prints the report,
 *    writes the input reproducer (fuzz_write_reproducer, as FUZZ_ASSERT does) and aborts, so
 *    every failure (a tb_compare, tb_launched, tb_output, tb_input_untouched, FUZZ_TB_ASSERT,
 *    FUZZ_ASSERT_CUDA_BAND) ends the same way. fuzz_tb_casef() names the drawn tuple in reports.
 *    Every tensor comparison goes through tb_compare (shape-aware report, reproducer tensors).
 *  - Buffers: the gpu_buf of tests/lib/gpu_util.h, kept in static variables and reused across
 *    executions (grow-only, gpu_buf_reserve): guard bands on both sides, the payload poisoned with
 *    GPU_POISON_WORD by fuzz_dev_out / fuzz_dev_in (gpu_buf_poison before a relaunch); after a
 *    launch tb_launched, tb_output (guards, no poison left) and tb_input_untouched.
 *  - Host memory: tb_xmalloc(t, n) (a failure goes to the sink).
 *  - Values: only the Philox generator of tests/lib/mla_fill.h, keyed by the drawn seed and a
 *    name: mla_fill_host_f32 for tensors, mla_fill_stream_* for discrete / per-element draws.
 *
 *   int fuzz_one_input(const uint8_t *data, size_t size) {
 *       tb *t = fuzz_tb_begin(data, size);
 *       ... draw the tuple from the producer ...
 *       fuzz_tb_casef(t, "t_q %d n_pools %d seed 0x%08X", tq, np, seed);
 *       ... oracle side: FUZZ_TB_ASSERT(t, cond, "..."), tb_compare(t, ...) ...
 *       if (fuzz_gpu_enabled()) {
 *           static gpu_buf d_s, d_i;
 *           const float *ds = fuzz_dev_in(&d_s, s, ns * 4);
 *           int32_t *di = fuzz_dev_out(&d_i, ni * 4);
 *           tb_launched(t, launcher(ds, di, ...), "select");
 *           int32_t *got = tb_output(t, &d_i, "idx", "select", 1);
 *           tb_compare(t, "idx", ST_I32, 2, shape, got, "kernel", ref, "oracle", ...);
 *           tb_input_untouched(t, &d_s, s, "score");
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
 * case_name field is kept in full here and printed in full by the sink and FUZZ_TB_ASSERT. */
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

/* ---- device buffers (grow-only statics, reused across executions) --------------------------- */
/* An output: gpu_buf_reserve(b, bytes) (guards re-filled, payload poisoned); returns b->ptr. */
void *fuzz_dev_out(gpu_buf *b, size_t bytes);
/* An input: gpu_buf_reserve(b, bytes), then `bytes` uploaded from host; returns b->ptr. */
void *fuzz_dev_in(gpu_buf *b, const void *host, size_t bytes);

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
