/* shrink_planted_fuzz.c: a planted fuzz target for //tools:shrink_test (tools/shrink.py
 * --repro), built with the real producer and FUZZ_ASSERT (fuzz/fuzz_helpers.h), the entry shim
 * and the regression driver (fuzz/fuzz_entry.c, fuzz/regression_driver.c); no CUDA.
 *
 * Draws, in order: t_q 1..4, n_pools 0..5000, pool from POOLS, a seed (fuzz_u32), then, only
 * when t_q > 2, an extra 0..9 (a conditional draw: shrinking t_q moves the front's end). The
 * front bytes left are bulk data (summed). It prints the decoded case on stdout (the test
 * compares it with and without the draw log) and writes it as the draw log's case line.
 *
 * Two planted bugs, two signatures:
 *   n_pools > 300 && pool odd      the bug shrunk (minimum: t_q 1, n_pools 301, pool 1, seed 0,
 *                                  no front bytes)
 *   n_pools < 40 && pool == 7      another failure, that a reduction must not land on */
#include <stdint.h>
#include <stdio.h>

#include "fuzz/fuzz_helpers.h"

FUZZ_TARGET_NAME("shrink_planted");

static const int32_t POOLS[] = {1, 2, 3, 4, 7, 16, 64};

int fuzz_one_input(const uint8_t *data, size_t size) {
    fuzz_producer p = fuzz_producer_init(data, size);
    int32_t tq = (int32_t)fuzz_range(&p, 1, 4);
    int32_t np = (int32_t)fuzz_range(&p, 0, 5000);
    int32_t pool = FUZZ_PICK(&p, POOLS);
    uint32_t seed = fuzz_u32(&p);
    int32_t extra = tq > 2 ? (int32_t)fuzz_range(&p, 0, 9) : -1;
    size_t nfront = fuzz_remaining(&p);
    uint32_t sum = 0;
    for (size_t i = 0; i < nfront; i++) sum += data[i];
    printf("decoded t_q %d n_pools %d pool %d seed 0x%08X extra %d front %zu sum %u\n", tq, np,
           pool, seed, extra, nfront, sum);
    fflush(stdout);
    fuzz_log_case("t_q %d n_pools %d pool %d seed 0x%08X extra %d front %zu", tq, np, pool, seed,
                  extra, nfront);
    FUZZ_ASSERT_MSG(!(np < 40 && pool == 7), "the other bug: n_pools %d pool %d", np, pool);
    FUZZ_ASSERT_MSG(!(np > 300 && pool % 2 == 1), "the planted bug: n_pools %d pool %d", np, pool);
    return 0;
}
