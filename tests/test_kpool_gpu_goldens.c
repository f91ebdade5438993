/* test_kpool_gpu_goldens.c: every k-pool stage of every k-pool golden case, on the GPU, against
 * the CPU oracle (the golden).
 *
 * One Criterion test per (case, GPU check), named kpool_gpu/<case>__<check> and generated from
 * the case lists (tests/lib/case_list.h), so a failure line is also a filter:
 *   bazel test //tests:kpool_gpu_goldens_test
 * --test_arg=--filter='kpool_gpu/glm5_kpool_verify__score' (GPU bundle: bin/kpool_gpu_goldens_test
 * --filter 'kpool_gpu/glm5_kpool_verify__score') Each test (mla_golden_gpu_check,
 * tests/lib/stage_check.c):
 *  1. recomputes the case and checks the stored golden rows and the manifest's full SHA-256 of
 *     the stage's outputs against it (a stale fixture fails here);
 *  2. runs the stage's GPU half (tests/lib/stages_kpool.c): the stage's inputs (earlier stages'
 *     inputs are the oracle's outputs, so a stage is judged on its own) in guarded device
 *     buffers, outputs poisoned; launch, sync, guards, inputs unchanged, no poison left; a
 *     second launch with identical bytes; then against the oracle: exact for index_append_ring
 *     (bytes), score (NaN == NaN; fast AND reference kernels, and fast == reference bytes) and
 *     select (int32 bytes; radix AND reference, radix == reference); pool_keys and
 *     attn_gathered through the per-element bounds of docs/tolerances.md (attn_gathered with the
 *     any-walk R = D = N + 1).
 *  The ring case (state_rows > 0) replays the append schedule (mla_kpool_ring_chunk) on the GPU
 *  with an incremental pool-key build after every chunk, and also checks those keys equal a GPU
 *  flat full build bit for bit.
 * Without a usable GPU every test reports SKIPPED (GPU_REQUIRE), never passed.
 */
#include <criterion/criterion.h>

#include "tests/lib/case.h"

#define GOLDEN_SUITE kpool_gpu
#define GOLDEN_TARGET "kpool_gpu_goldens_test"
#include "tests/lib/golden_suite.h"

MLA_KPOOL_CASES(GOLDEN_CASE_TESTS)
/* The sanitizer cases (case_list.h: small, in memory, no fixture): <suite>/san_*. */
MLA_SANITIZE_KPOOL_CASES(GOLDEN_CASE_TESTS)
/* <suite>/custom__*: the case $MLA_CUSTOM_CASE describes (tools/shrink.py); skipped when unset. */
GOLDEN_CUSTOM_TESTS(kpool)
