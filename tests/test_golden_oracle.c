/* test_golden_oracle.c: the CPU oracle reproduces every stored golden fixture.
 *
 * One Criterion test per case, named golden_oracle/<case>, so a failure line is also a filter:
 *   bazel test //tests:golden_oracle_test --test_arg=--filter='golden_oracle/glm5_decode'
 * Each test recomputes the case (inputs from the counter-based fill, outputs from the oracle) and
 * checks, via mla_golden_verify: the manifest entry (seed, generator version, geometry), every
 * input SHA-256, every FULL output SHA-256, and every stored value bitwise (the golden is the
 * oracle's own output, so even tolerance-class tensors must match bit for bit here). A mismatch
 * prints case, tensor, worst element, both values and the command re-running just that case.
 * Fixtures are read from $MLA_GOLDEN_DIR (default "golden").
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/case.h"
#include "tests/lib/case_list.h"
#include "tests/lib/manifest.h"

static void check_case(const char *name) {
    const mla_case *c = mla_case_find(name);
    cr_assert(c != NULL, "case %s is not in the case table", name);
    char mpath[4096], err[1024];
    snprintf(mpath, sizeof mpath, "%s/manifest.json", mla_golden_dir());
    mla_manifest m;
    int rc = mla_manifest_load(mpath, &m, err, sizeof err);
    cr_assert(rc == 0, "cannot load the golden manifest: %s (set MLA_GOLDEN_DIR)", err);

    char rerun[512];
    snprintf(rerun, sizeof rerun,
             "bazel test //tests:golden_oracle_test --test_arg=--filter='golden_oracle/%s'"
             "   (or: golden verify --dir %s %s)",
             name, mla_golden_dir(), name);
    char *buf = NULL;
    size_t len = 0;
    FILE *rep = open_memstream(&buf, &len);
    cr_assert(rep != NULL);
    int problems = mla_golden_verify(c, mla_golden_dir(), &m, rep, rerun);
    fclose(rep);
    mla_manifest_free(&m);
    cr_expect(problems == 0, "golden_oracle/%s: %d problem(s):\n%s", name, problems, buf);
    free(buf);
}

/* One test per case of the case lists (tests/lib/case_list.h). */
#define ORACLE_TEST(c, set)                                                                        \
    Test(golden_oracle, c, .timeout = 300) { check_case(#c); }
MLA_DENSE_CASES(ORACLE_TEST)
MLA_KPOOL_CASES(ORACLE_TEST)

/* Every sanitizer case (in memory, no fixture) runs through its oracle halves. */
static void sanitize_case_runs(const char *name) {
    const mla_case *c = mla_case_find(name);
    cr_assert(c != NULL && c->in_memory, "sanitizer case %s is not in the sanitizer table", name);
    mla_ctx ctx;
    int rc = mla_case_run(c, &ctx);
    cr_expect(rc == 0, "sanitizer case %s: %s", name, ctx.err);
    mla_ctx_free(&ctx);
}
#define SANITIZE_ORACLE_TEST(c, set)                                                               \
    Test(golden_oracle, c, .timeout = 300) { sanitize_case_runs(#c); }
MLA_SANITIZE_DENSE_CASES(SANITIZE_ORACLE_TEST)
MLA_SANITIZE_KPOOL_CASES(SANITIZE_ORACLE_TEST)
