/* testbed_criterion.h: the testbed's failure sink for Criterion suites (header only).
 *
 *   tb t;
 *   TB_CRITERION_INIT(&t, "dense_gpu_goldens_test", "dense_gpu", "glm5_decode__rope");
 *
 * A failure is a cr_expect (the test goes on and fails at its end), a fatal one a cr_assert
 * (Criterion leaves the test). */
#ifndef MLA_TESTS_TESTBED_CRITERION_H
#define MLA_TESTS_TESTBED_CRITERION_H

#include <criterion/criterion.h>

#include "tests/lib/testbed.h"

static inline void tb_criterion_fail(void *user, int fatal, const char *msg) {
    (void)user;
    if (fatal) cr_assert_fail("%s", msg);
    cr_expect_fail("%s", msg);
}

#define TB_CRITERION_INIT(t, target, suite, test)                                                  \
    tb_init((t), (target), (suite), (test), tb_criterion_fail, NULL)

#endif /* MLA_TESTS_TESTBED_CRITERION_H */
