/* cases.c: the golden case table, generated from the lists of case_list.h. See case.h. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
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

static const mla_case *find_listed(const char *name) {
    for (size_t i = 0; i < mla_case_count(); i++)
        if (strcmp(k_cases[i].name, name) == 0) return &k_cases[i];
    for (size_t i = 0; i < sizeof k_sanitize_cases / sizeof k_sanitize_cases[0]; i++)
        if (strcmp(k_sanitize_cases[i].name, name) == 0) return &k_sanitize_cases[i];
    return NULL;
}

/* The custom case ($MLA_CUSTOM_CASE, tools/shrink.py). */
static mla_case g_custom;
static char g_custom_err[256];
static char g_custom_purpose[96];

int mla_custom_case_configured(void) {
    const char *e = getenv("MLA_CUSTOM_CASE");
    return e && *e;
}
const char *mla_custom_case_error(void) { return g_custom_err; }

static const mla_case *custom_case(void) {
    g_custom_err[0] = 0;
    const char *e = getenv("MLA_CUSTOM_CASE");
    if (!e || !*e) {
        snprintf(g_custom_err, sizeof g_custom_err, "MLA_CUSTOM_CASE is not set");
        return NULL;
    }
    cJSON *j = cJSON_Parse(e);
    const mla_case *res = NULL;
    const cJSON *base = j ? cJSON_GetObjectItemCaseSensitive(j, "base") : NULL;
    const mla_case *b = cJSON_IsString(base) ? find_listed(base->valuestring) : NULL;
    if (!j || !cJSON_IsObject(j)) {
        snprintf(g_custom_err, sizeof g_custom_err, "MLA_CUSTOM_CASE is not a JSON object");
    } else if (!b) {
        snprintf(g_custom_err, sizeof g_custom_err, "MLA_CUSTOM_CASE: \"base\" names no case");
    } else {
        g_custom = *b;
        g_custom.name = "custom";
        snprintf(g_custom_purpose, sizeof g_custom_purpose, "custom case from %s", b->name);
        g_custom.purpose = g_custom_purpose;
        g_custom.in_memory = 1;
        g_custom.n_stored_rows = 0;
        const cJSON *seed = cJSON_GetObjectItemCaseSensitive(j, "seed");
        if (cJSON_IsNumber(seed)) g_custom.seed = (uint32_t)seed->valuedouble;
        const cJSON *geom = cJSON_GetObjectItemCaseSensitive(j, "geom"), *f;
        res = &g_custom;
        cJSON_ArrayForEach(f, geom) {
            if (!cJSON_IsNumber(f) || mla_geom_set(&g_custom.geom, f->string, f->valuedouble)) {
                snprintf(g_custom_err, sizeof g_custom_err,
                         "MLA_CUSTOM_CASE: geometry field '%s' unknown or not a number of its "
                         "type",
                         f->string ? f->string : "?");
                res = NULL;
                break;
            }
        }
    }
    cJSON_Delete(j);
    return res;
}

const mla_case *mla_case_find(const char *name) {
    return strcmp(name, "custom") == 0 ? custom_case() : find_listed(name);
}
