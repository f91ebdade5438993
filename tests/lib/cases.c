/* cases.c: the golden case table, generated from the lists of case_list.h. See case.h. */
#include <string.h>

#include "tests/lib/case.h"
#include "tests/lib/case_list.h"

/* Every stage of every stage set (a stage in several sets is declared more than once: fine). */
#define DECLARE_STAGE(c, s) extern const mla_stage mla_stage_##s;
MLA_STAGE_SET_dense_bf16(DECLARE_STAGE, _) MLA_STAGE_SET_kpool(DECLARE_STAGE, _)

#define STAGE_PTR(c, s) &mla_stage_##s,
#define CASE_ROW(c, set) {.name = #c, MLA_CASE_##c, .stages = {MLA_STAGE_SET_##set(STAGE_PTR, c)}},

    static const mla_case k_cases[] = {MLA_DENSE_CASES(CASE_ROW) MLA_KPOOL_CASES(CASE_ROW)};

#define SANITIZE_ROW(c, set)                                                                       \
    {.name = #c, MLA_CASE_##c, .in_memory = 1, .stages = {MLA_STAGE_SET_##set(STAGE_PTR, c)}},
static const mla_case k_sanitize_cases[] = {MLA_SANITIZE_DENSE_CASES(SANITIZE_ROW)
                                                MLA_SANITIZE_KPOOL_CASES(SANITIZE_ROW)};

size_t mla_case_count(void) { return sizeof k_cases / sizeof k_cases[0]; }
const mla_case *mla_case_at(size_t i) { return i < mla_case_count() ? &k_cases[i] : NULL; }

const mla_case *mla_case_find(const char *name) {
    for (size_t i = 0; i < mla_case_count(); i++)
        if (strcmp(k_cases[i].name, name) == 0) return &k_cases[i];
    for (size_t i = 0; i < sizeof k_sanitize_cases / sizeof k_sanitize_cases[0]; i++)
        if (strcmp(k_sanitize_cases[i].name, name) == 0) return &k_sanitize_cases[i];
    return NULL;
}
