/* test_select_door_flags.c: the radix select's door (kernels/mla_door.h) on the CPU: the flag
 * MEMRA_MLA_SELECT_SAMPLED read per call, exactly as documented, and every arm behind the door
 * (the launcher, the full passes) validating as the launcher does. Runs everywhere.
 * Re-run: bazel test //tests:select_door_flags_test --test_arg=--filter='select_door_flags/<name>'
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "kernels/mla.h"
#include "kernels/mla_door.h"
#include "kernels/mla_status.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

Test(select_door_flags, sampled_read_per_call) {
    unsetenv("MEMRA_MLA_SELECT_SAMPLED");
    cr_expect_eq(mla_select_sampled_enabled(), 1, "unset: the sampled route (the default)");
    setenv("MEMRA_MLA_SELECT_SAMPLED", "0", 1);
    cr_expect_eq(mla_select_sampled_enabled(), 0, "\"0\": the rollback");
    const char *keep[] = {"1", "", "00", " 0", "0 ", "off", "false", "no"};
    for (size_t i = 0; i < N_OF(keep); i++) {
        setenv("MEMRA_MLA_SELECT_SAMPLED", keep[i], 1);
        cr_expect_eq(mla_select_sampled_enabled(), 1,
                     "MEMRA_MLA_SELECT_SAMPLED=\"%s\" rolled back; only \"0\" does", keep[i]);
    }
    unsetenv("MEMRA_MLA_SELECT_SAMPLED");
}

/* Each arm behind the door (the launcher, the full passes) returns the launcher's code for a bad
 * call. */
Test(select_door_flags, every_arm_validates_as_the_launcher) {
    static const struct {
        const char *sampled, *arm;
    } arms[] = {{NULL, "the launcher"}, {"0", "the full passes"}};
    float score[16] = {0};
    int32_t idx[64];
    /* (score, idx, t_q, n_pools, pool, select_k, width, first_pos, always_tail) */
    struct {
        const float *s;
        int32_t *i;
        int32_t tq, np, pool, k, w, fp, tail;
    } bad[] = {{NULL, idx, 1, 16, 1, 4, 4, 15, 0},   {score, NULL, 1, 16, 1, 4, 4, 15, 0},
               {score, idx, 1, 16, 0, 4, 4, 15, 0},  {score, idx, 1, 16, 1, 4, 3, 15, 0},
               {score, idx, 1, 16, 1, 4, 4, -1, 0},  {score, idx, 1, 16, 1, 4, 4, 15, 2},
               {score, idx, -1, 16, 1, 4, 4, 15, 0}, {score, idx, 1, 16, 1, 0, 4, 15, 0}};
    for (size_t b = 0; b < N_OF(bad); b++) {
        unsetenv("MEMRA_MLA_SELECT_SAMPLED");
        const int want =
            memra_mla_kpool_select_f32(bad[b].s, bad[b].i, bad[b].tq, bad[b].np, bad[b].pool,
                                       bad[b].k, bad[b].w, bad[b].fp, bad[b].tail, NULL);
        cr_expect(want >= 40000 && want < 50000, "bad call %zu: the launcher returned %d (%s)", b,
                  want, mla_status_message(want));
        for (size_t a = 0; a < N_OF(arms); a++) {
            if (arms[a].sampled) setenv("MEMRA_MLA_SELECT_SAMPLED", arms[a].sampled, 1);
            const int got =
                mla_door_kpool_select_f32(bad[b].s, bad[b].i, bad[b].tq, bad[b].np, bad[b].pool,
                                          bad[b].k, bad[b].w, bad[b].fp, bad[b].tail, NULL);
            unsetenv("MEMRA_MLA_SELECT_SAMPLED");
            cr_expect_eq(got, want, "bad call %zu through the door to %s: %d, the launcher %d", b,
                         arms[a].arm, got, want);
        }
        cr_expect_eq(mla_kpool_select_full_f32(bad[b].s, bad[b].i, bad[b].tq, bad[b].np,
                                               bad[b].pool, bad[b].k, bad[b].w, bad[b].fp,
                                               bad[b].tail, NULL),
                     want, "the full passes' entry, bad call %zu", b);
    }
}
