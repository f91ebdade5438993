/* docs/contract.md is exactly what the contract table prints: the documented table cannot drift
 * from the codes the launchers return. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/contract_doc.h"

static char *slurp(FILE *f, size_t *n) {
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) buf = realloc(buf, cap *= 2);
    }
    *n = len;
    return buf;
}

Test(contract_doc, docs_match_the_table) {
    FILE *doc = fopen("docs/contract.md", "rb");
    cr_assert(doc != NULL, "docs/contract.md not found (run from the repository root)");
    size_t n_doc, n_gen;
    char *want = slurp(doc, &n_doc);
    fclose(doc);
    FILE *mem = tmpfile();
    cr_assert(mem != NULL);
    cr_assert_eq(contract_doc_write(mem), 0);
    rewind(mem);
    char *got = slurp(mem, &n_gen);
    fclose(mem);
    cr_assert(n_doc == n_gen && memcmp(want, got, n_doc) == 0,
              "docs/contract.md is stale: regenerate it with "
              "`bazel run //tools:contract_table > docs/contract.md`");
    free(want);
    free(got);
}
