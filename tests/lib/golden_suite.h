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

/* The body of one test: the case's check on the GPU (skipped without a usable GPU). */
#define GOLDEN_CHECK(c, stage, check, variant)                                                     \
    GPU_REQUIRE();                                                                                 \
    tb t;                                                                                          \
    TB_CRITERION_INIT(&t, GOLDEN_TARGET, GOLDEN_STR(GOLDEN_SUITE), #c "__" #check);                \
    mla_golden_gpu_check(&t, #c, #stage, variant);

#define GOLDEN_TEST(c, stage, check, variant)                                                      \
    Test(GOLDEN_SUITE, c##__##check, .timeout = 300) { GOLDEN_CHECK(c, stage, check, variant) }
#define GOLDEN_STAGE_TESTS(c, stage) MLA_CHECKS_##stage(GOLDEN_TEST, c)
#define GOLDEN_CASE_TESTS(c, set) MLA_STAGE_SET_##set(GOLDEN_STAGE_TESTS, c)

/* <suite>/custom__<check>: the case $MLA_CUSTOM_CASE describes (tests/lib/case.h; the shrinker,
 * tools/shrink.py). Skipped, with the reason, when it is unset or when the base case has no such
 * stage (a dense base has no bf16 stages); an invalid description fails with its reason. */
#define GOLDEN_CUSTOM_TEST(c, stage, check, variant)                                               \
    Test(GOLDEN_SUITE, c##__##check, .timeout = 300) {                                             \
        if (!mla_custom_case_configured())                                                         \
            cr_skip_test("MLA_CUSTOM_CASE is not set (tools/shrink.py sets it)");                  \
        const mla_case *cc_ = mla_case_find(#c);                                                   \
        if (cc_ && !mla_case_stage(cc_, #stage))                                                   \
            cr_skip_test("the custom case's base has no stage " #stage);                           \
        GOLDEN_CHECK(c, stage, check, variant)                                                     \
    }
#define GOLDEN_CUSTOM_STAGE_TESTS(c, stage) MLA_CHECKS_##stage(GOLDEN_CUSTOM_TEST, c)
#define GOLDEN_CUSTOM_TESTS(set) MLA_STAGE_SET_##set(GOLDEN_CUSTOM_STAGE_TESTS, custom)

#endif /* MLA_TESTS_GOLDEN_SUITE_H */
