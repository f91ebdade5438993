/* test_custom_case.c: the custom case of the shrinker ($MLA_CUSTOM_CASE, tests/lib/case.h,
 * tools/shrink.py), on the CPU: a description overrides the base case's geometry and seed and
 * keeps its stages; the oracle runs at the new geometry; every malformed description is refused
 * with its reason (never a silent fallback to the base case). */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/case.h"

static const mla_case *custom(const char *json) {
    setenv("MLA_CUSTOM_CASE", json, 1);
    return mla_case_find("custom");
}

Test(custom_case, overrides_geometry_and_seed_and_keeps_the_stages) {
    const mla_case *b = mla_case_find("glm5_tp8_decode");
    cr_assert_not_null(b);
    const mla_case *c = custom("{\"base\": \"glm5_tp8_decode\", \"seed\": 77,"
                               " \"geom\": {\"t_q\": 2, \"t_kv\": 40, \"n_head\": 3}}");
    cr_assert_not_null(c, "%s", mla_custom_case_error());
    cr_expect_str_eq(c->name, "custom");
    cr_expect(c->in_memory);
    cr_expect_eq(c->seed, 77u);
    cr_expect_eq(c->geom.t_q, 2);
    cr_expect_eq(c->geom.t_kv, 40);
    cr_expect_eq(c->geom.n_head, 3);
    cr_expect_eq(c->geom.kv_rank, b->geom.kv_rank); /* untouched fields: the base's */
    for (int i = 0; i < MLA_MAX_STAGES; i++) cr_expect_eq(c->stages[i], b->stages[i]);
    mla_ctx ctx;
    cr_assert_eq(mla_case_run(c, &ctx), 0, "%s", ctx.err);
    const mla_tensor *o = NULL;
    for (size_t i = 0; i < ctx.n; i++)
        if (strcmp(ctx.t[i].name, "o_lat") == 0) o = &ctx.t[i];
    cr_assert_not_null(o);
    cr_expect_eq(o->shape[0], 2);
    cr_expect_eq(o->shape[1], 3);
    mla_ctx_free(&ctx);
}

Test(custom_case, malformed_descriptions_are_refused_with_a_reason) {
    const struct {
        const char *json, *why;
    } bad[] = {
        {"not json", "not a JSON object"},
        {"{\"geom\": {}}", "names no case"},
        {"{\"base\": \"no_such_case\"}", "names no case"},
        {"{\"base\": \"glm5_decode\", \"geom\": {\"no_field\": 1}}", "'no_field'"},
        {"{\"base\": \"glm5_decode\", \"geom\": {\"t_q\": 1.5}}", "'t_q'"},
        {"{\"base\": \"glm5_decode\", \"geom\": {\"t_q\": \"2\"}}", "'t_q'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_null(custom(bad[i].json), "accepted: %s", bad[i].json);
        cr_expect(strstr(mla_custom_case_error(), bad[i].why) != NULL, "%s: reason '%s'",
                  bad[i].json, mla_custom_case_error());
    }
    unsetenv("MLA_CUSTOM_CASE");
    cr_expect_not(mla_custom_case_configured());
    cr_expect_null(mla_case_find("custom"));
}

/* Every committed regression case (the .json files of tests/regressions, written by
 * tools/shrink.py) is a valid custom case whose oracle runs; the GPU tier replays them
 * (run-gpu-tier.sh). */
Test(custom_case, committed_regressions_parse_and_run, .timeout = 300) {
    const char *dir = getenv("MLA_REGRESSIONS_DIR");
    cr_assert_not_null(dir, "MLA_REGRESSIONS_DIR is not set (tests/BUILD)");
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot open %s", dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".json") != 0) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f, "%s", path);
        static char buf[1 << 16];
        size_t k = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[k] = 0;
        cJSON *j = cJSON_Parse(buf);
        cr_assert_not_null(j, "%s: not JSON", path);
        cJSON *c = cJSON_CreateObject();
        const char *keys[] = {"base", "geom", "seed"};
        for (int i = 0; i < 3; i++) {
            cJSON *v = cJSON_GetObjectItemCaseSensitive(j, keys[i]);
            cr_assert_not_null(v, "%s: no \"%s\"", path, keys[i]);
            cJSON_AddItemToObject(c, keys[i], cJSON_Duplicate(v, 1));
        }
        char *text = cJSON_PrintUnformatted(c);
        const mla_case *cc = custom(text);
        cr_assert_not_null(cc, "%s: %s", path, mla_custom_case_error());
        mla_ctx ctx;
        cr_expect_eq(mla_case_run(cc, &ctx), 0, "%s: %s", path, ctx.err);
        mla_ctx_free(&ctx);
        free(text);
        cJSON_Delete(c);
        cJSON_Delete(j);
        n++;
    }
    closedir(d);
    unsetenv("MLA_CUSTOM_CASE");
    if (n == 0) cr_skip_test("no committed regression case in %s yet", dir);
}
