/* test_select_door_flags.c: the radix select's doors (kernels/mla_door.h) on the CPU: the flags
 * MEMRA_MLA_SELECT_SAMPLED and MEMRA_MLA_SELECT_RING read per call, exactly as documented, and
 * every arm behind the door validating as the launcher does, with no dispatch counted for a call
 * that launches nothing. Runs everywhere: without a device the valid calls return the CUDA band;
 * with one they launch on device buffers and return 0.
 * Re-run: bazel test //tests:select_door_flags_test --test_arg=--filter='select_door_flags/<name>'
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "kernels/mla.h"
#include "kernels/mla_door.h"
#include "kernels/mla_status.h"
#include "tests/lib/gpu_util.h"

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

Test(select_door_flags, ring_read_per_call) {
    unsetenv("MEMRA_MLA_SELECT_RING");
    cr_expect_eq(mla_select_ring_enabled(), 0, "unset: no ring");
    setenv("MEMRA_MLA_SELECT_RING", "1", 1);
    cr_expect_eq(mla_select_ring_enabled(), 1, "\"1\": ring 1");
    setenv("MEMRA_MLA_SELECT_RING", "2", 1);
    cr_expect_eq(mla_select_ring_enabled(), 2, "\"2\": ring 2");
    const char *off[] = {"0", "", "3", "12", "01", " 1", "1 ", "2 ", "on", "true", "16"};
    for (size_t i = 0; i < N_OF(off); i++) {
        setenv("MEMRA_MLA_SELECT_RING", off[i], 1);
        cr_expect_eq(mla_select_ring_enabled(), 0, "MEMRA_MLA_SELECT_RING=\"%s\" chose a ring",
                     off[i]);
    }
    unsetenv("MEMRA_MLA_SELECT_RING");
}

/* Each arm behind the door (the launcher, the full passes, rings 1 and 2) returns the launcher's
 * code for a bad call, and moves no ring receipt when it launched nothing. */
Test(select_door_flags, every_arm_validates_as_the_launcher) {
    static const struct {
        const char *sampled, *ring, *arm;
    } arms[] = {{NULL, NULL, "the launcher"},
                {"0", NULL, "the full passes"},
                {"0", "1", "the full passes (the rollback wins over the ring)"},
                {NULL, "1", "ring 1"},
                {NULL, "2", "ring 2"}};
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
        unsetenv("MEMRA_MLA_SELECT_RING");
        const int want =
            memra_mla_kpool_select_f32(bad[b].s, bad[b].i, bad[b].tq, bad[b].np, bad[b].pool,
                                       bad[b].k, bad[b].w, bad[b].fp, bad[b].tail, NULL);
        cr_expect(want >= 40000 && want < 50000, "bad call %zu: the launcher returned %d (%s)", b,
                  want, mla_status_message(want));
        for (size_t a = 0; a < N_OF(arms); a++) {
            if (arms[a].sampled) setenv("MEMRA_MLA_SELECT_SAMPLED", arms[a].sampled, 1);
            if (arms[a].ring) setenv("MEMRA_MLA_SELECT_RING", arms[a].ring, 1);
            const uint64_t d0 = mla_select_ring_dispatches(0);
            const int got =
                mla_door_kpool_select_f32(bad[b].s, bad[b].i, bad[b].tq, bad[b].np, bad[b].pool,
                                          bad[b].k, bad[b].w, bad[b].fp, bad[b].tail, NULL);
            unsetenv("MEMRA_MLA_SELECT_SAMPLED");
            unsetenv("MEMRA_MLA_SELECT_RING");
            cr_expect_eq(got, want, "bad call %zu through the door to %s: %d, the launcher %d", b,
                         arms[a].arm, got, want);
            cr_expect_eq(mla_select_ring_dispatches(0), d0,
                         "bad call %zu through the door to %s counted a ring dispatch", b,
                         arms[a].arm);
        }
        /* the direct ring entries: the same codes */
        cr_expect_eq(mla_kpool_select_ring_f32(bad[b].s, bad[b].i, bad[b].tq, bad[b].np,
                                               bad[b].pool, bad[b].k, bad[b].w, bad[b].fp,
                                               bad[b].tail, NULL),
                     want, "ring 1, bad call %zu", b);
        cr_expect_eq(mla_kpool_select_ring16_f32(bad[b].s, bad[b].i, bad[b].tq, bad[b].np,
                                                 bad[b].pool, bad[b].k, bad[b].w, bad[b].fp,
                                                 bad[b].tail, NULL),
                     want, "ring 2, bad call %zu", b);
    }
}

/* A valid call through each ring: 0 and one dispatch of that ring where a device ran it, else the
 * CUDA band and none (without a GPU, cudaFuncSetAttribute fails before any launch). */
Test(select_door_flags, valid_call_dispatch_receipt) {
    static float h_score[4 * 16];
    static int32_t h_idx[4 * 8];
    char why[256];
    const int dev = gpu_device_present(why, sizeof why);
    gpu_buf bs = {0}, bi = {0};
    if (dev) bs = gpu_buf_from_host(h_score, sizeof h_score), bi = gpu_buf_alloc(sizeof h_idx);
    const float *s = dev ? (const float *)bs.ptr : h_score;
    int32_t *ix = dev ? (int32_t *)bi.ptr : h_idx;
    for (int ring = 1; ring <= 2; ring++) {
        const uint64_t d1 = mla_select_ring_dispatches(1), d2 = mla_select_ring_dispatches(2);
        setenv("MEMRA_MLA_SELECT_RING", ring == 1 ? "1" : "2", 1);
        const int rc = mla_door_kpool_select_f32(s, ix, 4, 16, 1, 4, 8, 12, 1, NULL);
        unsetenv("MEMRA_MLA_SELECT_RING");
        const uint64_t m1 = mla_select_ring_dispatches(1) - d1,
                       m2 = mla_select_ring_dispatches(2) - d2;
        if (dev)
            cr_expect(rc == 0 && (ring == 1 ? (m1 == 1 && m2 == 0) : (m1 == 0 && m2 == 1)),
                      "ring %d on the device: rc %d (%s), dispatches ring 1 %llu, ring 2 %llu",
                      ring, rc, mla_status_message(rc), (unsigned long long)m1,
                      (unsigned long long)m2);
        else
            cr_expect(rc >= 10000 && rc < 20000 && m1 == 0 && m2 == 0,
                      "ring %d without a device (%s): rc %d (%s), dispatches %llu / %llu", ring,
                      why, rc, mla_status_message(rc), (unsigned long long)m1,
                      (unsigned long long)m2);
    }
    if (dev) gpu_buf_free(&bs), gpu_buf_free(&bi);
}
