/* test_decode_split_policy.c: the decode-split policy (kernels/mla_door.h) against an
 * independent restatement of the seed's formula, and the environment flag read per call.
 * CPU only: runs everywhere.
 *
 * The restatement: engage only when the flag is on and 0 < blocks < 1024; want =
 * ceil(1024 / blocks); cap = max(out_dim / 32, 1); split = min(want, cap); engaged only if
 * split > 1 (else 0). The flag is on only when MEMRA_MLA_DECODE_SPLIT is exactly "1".
 * Re-run: bazel test //tests:decode_split_policy_test
 * --test_arg=--filter='decode_split_policy/<name>'
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "kernels/mla_door.h"

static int32_t spec(int enabled, long blocks, int32_t out_dim) {
    if (!enabled) return 0;
    if (!(blocks > 0 && blocks < 1024)) return 0;
    long want = 1024 / blocks + (1024 % blocks != 0);
    long cap = out_dim / 32;
    if (cap < 1) cap = 1;
    long split = want < cap ? want : cap;
    return split > 1 ? (int32_t)split : 0;
}

static const long BLOCKS[] = {-1,  0,   1,   2,   3,    4,    7,    63,   64,   65,
                              100, 256, 257, 512, 1000, 1023, 1024, 1025, 4096, 1L << 20};
static const int32_t OUT_DIMS[] = {1, 16, 31, 32, 33, 63, 64, 65, 96, 192, 256, 257, 512, 1024};
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

Test(decode_split_policy, table_matches_the_formula) {
    for (size_t b = 0; b < N_OF(BLOCKS); b++)
        for (size_t o = 0; o < N_OF(OUT_DIMS); o++)
            for (int en = 0; en <= 1; en++) {
                int32_t got = mla_decode_split_policy(en, BLOCKS[b], OUT_DIMS[o]);
                int32_t want = spec(en, BLOCKS[b], OUT_DIMS[o]);
                cr_expect(got == want,
                          "mla_decode_split_policy(enabled=%d, blocks=%ld, out_dim=%d) = %d, "
                          "the formula says %d",
                          en, BLOCKS[b], OUT_DIMS[o], got, want);
            }
}

/* Every blocks value 1..1100 at the glm5 out_dims: exhaustive over the engagement range. */
Test(decode_split_policy, exhaustive_blocks) {
    const int32_t dims[] = {192, 256, 512};
    for (size_t o = 0; o < N_OF(dims); o++)
        for (long blocks = 1; blocks <= 1100; blocks++) {
            int32_t got = mla_decode_split_policy(1, blocks, dims[o]);
            cr_expect(got == spec(1, blocks, dims[o]), "blocks %ld out_dim %d: %d, want %d", blocks,
                      dims[o], got, spec(1, blocks, dims[o]));
            cr_expect(got == 0 || (got >= 2 && got <= dims[o] / 32),
                      "blocks %ld out_dim %d: split %d outside 2..out_dim/32", blocks, dims[o],
                      got);
        }
}

/* Pinned values at the model geometries (decode: 64 blocks, verify: 256). */
Test(decode_split_policy, glm5_geometries) {
    cr_expect_eq(mla_decode_split_policy(1, 64, 512), 16);  /* absorb, decode */
    cr_expect_eq(mla_decode_split_policy(1, 64, 256), 8);   /* decompress, decode (cap 8) */
    cr_expect_eq(mla_decode_split_policy(1, 256, 512), 4);  /* absorb, verify */
    cr_expect_eq(mla_decode_split_policy(1, 256, 256), 4);  /* decompress, verify */
    cr_expect_eq(mla_decode_split_policy(1, 1024, 512), 0); /* enough blocks */
    cr_expect_eq(mla_decode_split_policy(1, 63, 31), 0);    /* cap 1: never engaged */
    cr_expect_eq(mla_decode_split_policy(1, 512, 64), 2);
    cr_expect_eq(mla_decode_split_policy(1, 1023, 4096), 2);
    cr_expect_eq(mla_decode_split_policy(0, 64, 512), 0);
}

/* The flag is read per call: setenv / unsetenv between calls take effect; only "1" engages. */
Test(decode_split_policy, env_read_per_call) {
    unsetenv("MEMRA_MLA_DECODE_SPLIT");
    cr_expect_eq(mla_decode_split_for(64, 512), 0, "unset: must not engage");
    setenv("MEMRA_MLA_DECODE_SPLIT", "1", 1);
    cr_expect_eq(mla_decode_split_for(64, 512), 16, "\"1\": must engage with split 16");
    cr_expect_eq(mla_decode_split_for(2048, 512), 0, "\"1\" but 2048 blocks: no split");
    const char *off[] = {"0", "", "true", "yes", "on", "2", " 1", "1 ", "01", "TRUE"};
    for (size_t i = 0; i < N_OF(off); i++) {
        setenv("MEMRA_MLA_DECODE_SPLIT", off[i], 1);
        cr_expect_eq(mla_decode_split_for(64, 512), 0, "MEMRA_MLA_DECODE_SPLIT=\"%s\" engaged",
                     off[i]);
    }
    setenv("MEMRA_MLA_DECODE_SPLIT", "1", 1);
    cr_expect_eq(mla_decode_split_for(256, 256), 4, "back to \"1\": must engage again");
    unsetenv("MEMRA_MLA_DECODE_SPLIT");
    cr_expect_eq(mla_decode_split_for(256, 256), 0, "unset again: must not engage");
    for (size_t b = 0; b < N_OF(BLOCKS); b++)
        for (size_t o = 0; o < N_OF(OUT_DIMS); o++) {
            setenv("MEMRA_MLA_DECODE_SPLIT", (b + o) & 1 ? "1" : "0", 1);
            int en = (int)((b + o) & 1);
            cr_expect_eq(mla_decode_split_for(BLOCKS[b], OUT_DIMS[o]),
                         spec(en, BLOCKS[b], OUT_DIMS[o]), "flag %d blocks %ld out_dim %d", en,
                         BLOCKS[b], OUT_DIMS[o]);
        }
    unsetenv("MEMRA_MLA_DECODE_SPLIT");
}

/* Deciding the split never dispatches: the receipt counts launches through the door only. */
Test(decode_split_policy, policy_is_not_a_dispatch) {
    uint64_t before = mla_decode_split_dispatches();
    setenv("MEMRA_MLA_DECODE_SPLIT", "1", 1);
    (void)mla_decode_split_for(64, 512);
    unsetenv("MEMRA_MLA_DECODE_SPLIT");
    cr_expect_eq(mla_decode_split_dispatches(), before);
}
