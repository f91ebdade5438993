/* golden_suite.h: the golden GPU suite of one family, generated from tests/lib/case_list.h.
 *
 *   #define GOLDEN_SUITE dense_gpu                  (the Criterion suite)
 *   #define GOLDEN_TARGET "dense_gpu_goldens_test"  (the Bazel target, for the re-run command)
 *   #include "tests/lib/golden_suite.h"
 *   MLA_DENSE_CASES(GOLDEN_CASE_TESTS)
 *
 * defines one test per (case, GPU check), <suite>/<case>__<check>, each running
 * mla_golden_gpu_check (tests/lib/stage_check.c): the fixture against the oracle, then the
 * stage's GPU half on the testbed. Without a usable GPU each test reports SKIPPED, never passed.
 */
#ifndef MLA_TESTS_GOLDEN_SUITE_H
#define MLA_TESTS_GOLDEN_SUITE_H

#include <criterion/criterion.h>

#include "tests/lib/case.h"
#include "tests/lib/case_list.h"
#include "tests/lib/testbed_criterion.h"

#define GOLDEN_STR_(x) #x
#define GOLDEN_STR(x) GOLDEN_STR_(x)

#define GOLDEN_TEST(c, stage, check, variant)                                                      \
    Test(GOLDEN_SUITE, c##__##check, .timeout = 300) {                                             \
        GPU_REQUIRE();                                                                             \
        tb t;                                                                                      \
        TB_CRITERION_INIT(&t, GOLDEN_TARGET, GOLDEN_STR(GOLDEN_SUITE), #c "__" #check);            \
        mla_golden_gpu_check(&t, #c, #stage, variant);                                             \
    }
#define GOLDEN_STAGE_TESTS(c, stage) MLA_CHECKS_##stage(GOLDEN_TEST, c)
#define GOLDEN_CASE_TESTS(c, set) MLA_STAGE_SET_##set(GOLDEN_STAGE_TESTS, c)

#endif /* MLA_TESTS_GOLDEN_SUITE_H */
