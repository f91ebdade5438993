/* select_shake_gpu_test: the radix select's barriers, checked against a build that makes a
 * missing one lose its race (docs/mutation.md, "the shake build"). Four cases: the sampled
 * pass's histogram and slot-counter barriers (below), the full passes' level and collect
 * barriers (level_pass_barriers), the bitonic sort's fill barrier (bitonic_sort_barrier) and the
 * whole sort's padding barrier (whole_sort_padding_barrier); the bitmap sort's barriers are
 * crossed by every case that settles a row of at most 491,520 pools.
 *
 * This binary links //kernels:mla_kernels_shake: mla_kpool.cu compiled with -DMLA_SHAKE_SELECT,
 * whose odd warps sleep 50 us before the sample histogram's clear and again before their sample
 * atomics. With both barriers in place the delay is only time, and every result and receipt is
 * the product build's. Without the barrier after the clear, the even warps count into bins the
 * odd warps clear afterwards; without the barrier after the atomics, an even warp reads its bins
 * before the odd warps have counted. Either way the histogram loses counts, and racecheck sees
 * neither (a plain store -> another warp's atomicAdd is not reported: the eighth session's probe).
 *
 * The plane makes a lost count change the route, not only the time. One query over 70,000
 * pools (pool 4, select_k 512). The sample (32 pools of every 512, 4,384 keys) holds 100 keys
 * in bin B0 = [0.0625, 0.0703125), the best scores of the row; every other key lies in the next
 * bin B1 = [0.05859375, 0.0625), with many distinct values. The whole row holds 700 keys in B0.
 *  - exact counts: B0 reaches the sample's quota (ks = 65 for select_k 512), so the threshold
 *    bin is B0 and the collecting pass finds 700 keys in [512, SEL_CAP]: the row settles on the
 *    sampled route (receipt: one hit);
 *  - half of B0's sample counts lost (50 < 65): the threshold bin is B1, whose estimate is far
 *    past SEL_CAP, so the counting pass runs, 700 keys rank ahead of B1 (>= 512) and the row goes
 *    to the full passes (receipt: one fallback). The bytes are exact either way.
 * Half are lost in both mutants: the 100 sample keys of B0 are loaded 50 by even warps and 50 by
 * odd ones (sample element e is loaded by thread e % 512, e = 64 j + 5 and 64 j + 37). B0 is bin
 * 1063 of the 4,096: cleared by thread 1063 % 512 = 39 (warp 1, odd: late) and read by thread
 * 1063 / 8 = 132 (warp 4, even: early). Those numbers follow from SEL_NT 512 and SEL_BINS 4096
 * (kernels/mla_kpool_select.h, asserted below at compile time): a change there needs the bin
 * re-derived. The test asserts the plane's own
 * counts (the sample's keys in B0 against the quota), so a plane that could not tell the two
 * routes apart fails instead of passing.
 * Without a usable GPU the test reports SKIPPED (GPU_REQUIRE), never passed. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mla.h"
#include "kernels/mla_door.h"
#include "kernels/mla_kpool_select.h"
#include "tests/lib/gpu_util.h"
#include "tests/lib/select_route.h"
#include "tests/lib/testbed_criterion.h"

#define TARGET "select_shake_gpu_test"
#define SUITE "select_shake"

enum { NP = 70000, POOL = 4, K = 512, W = K * POOL + POOL - 1, N_B0 = 700 };

/* The planes below are derived for this geometry (kernels/mla_kpool_select.h): a change there
 * must re-derive them (the threads and bins of sampled_histogram_barriers, the 12 / 12 / 8-bit
 * digits of level_pass_barriers, the bitmap's 491,520-pool limit of bitonic_sort_barrier). */
_Static_assert(SEL_NT == 512 && SEL_BINS == 4096 && SEL_CAP == 8192 && SEL_SAMPLE_RUN == 32 &&
                   SEL_SAMPLE_EVERY == 512 && SEL_SAMPLE_MIN <= 70000,
               "select_shake_gpu_test's planes are derived for this select geometry: re-derive "
               "them");

/* One query's plane s of np pools (pool 4, select_k K, the tail kept) through the shake build's
 * launcher against the reference (bytes), with the sampled route's receipts (`hits`,
 * `fallbacks`, `why`); frees s. */
static void shake_row(tb *t, float *s, int32_t np, const char *what, const char *name,
                      uint64_t hits, uint64_t fallbacks, const char *why) {
    gpu_buf bs = gpu_buf_from_host(s, (size_t)np * 4);
    select_arm_vs_reference(t, &bs,
                            (select_shape){1, np, POOL, K, K * POOL + POOL - 1, np * POOL - 1, 1},
                            memra_mla_kpool_select_f32, what, name, hits, fallbacks, why);
    free(s);
    gpu_buf_free(&bs);
}

Test(select_shake, sampled_histogram_barriers, .timeout = 300) {
    GPU_REQUIRE();
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, "sampled_histogram_barriers");
    tb_set_case(&t, "1 query x 70,000 pools, 700 keys in the top bin (100 in the sample); pool 4, "
                    "select_k 512");
    float *s = tb_xmalloc(&t, (size_t)NP * sizeof *s);
    char *in_b0 = tb_xmalloc(&t, NP);
    memset(in_b0, 0, NP);
    /* B1 everywhere: 1,000 distinct values (the counting pass's one-value test must fail) */
    for (int32_t p = 0; p < NP; p++) s[p] = 0.059f + (float)(p % 1000) * 1e-6f;
    const int64_t n_samp = select_sample_count(NP);
    int n_b0 = 0, n_b0_sampled = 0;
    for (int j = 0; j < 50; j++) /* the sample's 100: loaded 50 by even warps, 50 by odd ones */
        for (int odd = 0; odd < 2; odd++) {
            const int64_t e = 64 * j + 5 + 32 * odd;
            cr_assert(e < n_samp && ((e % SEL_NT) / 32) % 2 == odd);
            in_b0[select_sample_pool(e)] = 1;
            n_b0++, n_b0_sampled++;
        }
    for (int32_t p = 1000; n_b0 < N_B0; p += 97) /* the rest where the sample does not look */
        if (!select_sampled(p) && !in_b0[p]) in_b0[p] = 1, n_b0++;
    int b0_rank = 0;
    for (int32_t p = 0; p < NP; p++)
        if (in_b0[p]) s[p] = 0.0625f + (float)(b0_rank++) * 1e-6f; /* all < 0.0703125 */
    /* the plane's counts, from the plane itself */
    int samp_b0 = 0;
    for (int64_t e = 0; e < n_samp; e++)
        if (select_sample_pool(e) < NP && s[select_sample_pool(e)] >= 0.0625f) samp_b0++;
    const int ks = select_sample_quota(K);
    cr_assert(samp_b0 == n_b0_sampled && samp_b0 >= ks && samp_b0 / 2 < ks && n_b0 == N_B0,
              "plane: %d sample keys in B0 (quota %d), %d in the row", samp_b0, ks, n_b0);

    shake_row(&t, s, NP, "the launcher (sampled route, shake build)", "sampled", 1, 0,
              "the row settled by the sampled route: a histogram that lost counts to a missing "
              "barrier hands it back");
    free(in_b0);
}

/* The full passes' barriers: the level loop's (each level's bin read before the next level clears
 * and rewrites the histogram) and the collecting pass's (the count read after every warp's keys are
 * in). The shake build's odd warps read each level's bin late and collect late. One query over
 * 70,000 pools whose scores are 256 values 2^-24 apart above 0.5 (the float bits 0x3F000000 + v,
 * v = 37 p mod 256, about 273 keys each): every key shares the top 24 bits of its order key, so
 *  - the sampled pass sees one bin of 70,000 (far past SEL_CAP) holding 256 values: it only
 *    counts, resolves the level-0 digit, and hands the row to the full passes (receipt: one
 *    fallback);
 *  - level 1 (the next 12 bits) holds all 70,000 in one bin again (past SEL_CAP): a second level
 *    follows, whose histogram clear races the late reads of level 1's bin when the barrier
 *    between them is missing;
 *  - level 2 (the last 8 bits) puts the 512th key in value 254's bin (c_less 273 + 273 keys <=
 *    SEL_CAP): one collecting pass, whose count an early reader would take short.
 * The plane's counts are asserted from the plane. */
Test(select_shake, level_pass_barriers, .timeout = 300) {
    GPU_REQUIRE();
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, "level_pass_barriers");
    tb_set_case(&t, "1 query x 70,000 pools of 256 values sharing the top 24 key bits; pool 4, "
                    "select_k 512");
    float *s = tb_xmalloc(&t, (size_t)NP * sizeof *s);
    int count[256] = {0};
    for (int32_t p = 0; p < NP; p++) {
        const uint32_t v = (uint32_t)(37 * p) % 256u, bits = 0x3F000000u + v;
        memcpy(&s[p], &bits, 4);
        count[v]++;
    }
    cr_assert(count[255] < K && count[255] + count[254] >= K && count[255] + count[254] <= SEL_CAP,
              "plane: %d + %d keys in the two best values (select_k %d)", count[255], count[254],
              K);
    shake_row(&t, s, NP, "the launcher (full passes, shake build)", "level passes", 0, 1,
              "one bin of 70,000 keys at the sample's cut: the sampled pass only counts and hands "
              "the row to the full passes");
}

/* The bitonic sort's fill barrier in sel_sort_pools, the sort of rows past the bitmap's 491,520
 * pools. The shake build's odd warps fill the list late. One query over 500,000 pools, scores
 * spread over [0, 1) by a multiplicative hash: the best bin of the sampled pass ([0.9375, 1),
 * about 31,250 keys) is past SEL_CAP, so the row takes the full passes (receipt: one fallback),
 * level 1 resolves it, and the winners are sorted by the bitonic sort. Not in the sanitizer tier
 * (tools/sanitize_set.tsv): 500,000 pools under racecheck cost minutes. */
Test(select_shake, bitonic_sort_barrier, .timeout = 300) {
    GPU_REQUIRE();
    enum { NPB = 500000 };
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, "bitonic_sort_barrier");
    tb_set_case(&t, "1 query x 500,000 pools (past the bitmap sort's 491,520), hashed scores in "
                    "[0, 1); pool 4, select_k 512");
    float *s = tb_xmalloc(&t, (size_t)NPB * sizeof *s);
    int top = 0, top_sampled = 0;
    for (int32_t p = 0; p < NPB; p++) {
        s[p] = (float)(((uint32_t)p * 2654435761u) % 1000003u) / 1000003.0f;
        if (s[p] >= 0.9375f) top++, top_sampled += select_sampled(p);
    }
    cr_assert(top > SEL_CAP && top_sampled * 16 > 2 * SEL_CAP &&
                  top_sampled >= select_sample_quota(K),
              "plane: %d keys in the best bin (%d of them sampled)", top, top_sampled);
    shake_row(&t, s, NPB, "the launcher (bitonic sort, shake build)", "bitonic", 0, 1,
              "a best bin of about 31,250 keys: the sampled pass only counts and hands the row to "
              "the full passes");
}

/* The whole sort's padding barrier: a collected row whose tie group at the threshold is too large
 * for the settle's scratch (n_sel plus the group past SEL_BINS, 4,096) is sorted whole, its list
 * padded to a power of two first. The shake build's odd warps pad late. One query over 70,000
 * pools: every 11th pool scores 0.75 (the tie group, 6,364 keys), 184 others score 0.9 and a
 * little more (distinct), the rest lie in [0.1, 0.15). The sample puts the cut in the ties' bin
 * and the collecting pass takes the 6,548 keys at or above it (receipt: one hit); the settle hands
 * them to the whole sort (512 + 6,364 > 4,096), which sorts 8,192 slots, 1,644 of them padding.
 * The plane's counts are asserted from the plane. */
Test(select_shake, whole_sort_padding_barrier, .timeout = 300) {
    GPU_REQUIRE();
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, "whole_sort_padding_barrier");
    tb_set_case(&t, "1 query x 70,000 pools, a tie group of 6,364 at the cut under 184 better "
                    "keys; pool 4, select_k 512");
    float *s = tb_xmalloc(&t, (size_t)NP * sizeof *s);
    int n_tie = 0, n_above = 0, samp_tie = 0, samp_above = 0;
    for (int32_t p = 0; p < NP; p++) {
        const int smp = select_sampled(p);
        if (p % 11 == 0)
            s[p] = 0.75f, n_tie++, samp_tie += smp;
        else if (p % 347 == 1)
            s[p] = 0.9f + (float)p * 1e-7f, n_above++, samp_above += smp;
        else
            s[p] = 0.1f + (float)(p % 50000) * 1e-6f;
    }
    const int ks = select_sample_quota(K);
    cr_assert(n_above < K && n_above + n_tie >= K && n_above + n_tie <= SEL_CAP &&
                  K + n_tie > SEL_BINS && samp_above < ks && samp_above + samp_tie >= ks &&
                  (samp_above + samp_tie) * 16 <= 2 * SEL_CAP,
              "plane: %d ties under %d better keys (sampled %d, %d; quota %d)", n_tie, n_above,
              samp_tie, samp_above, ks);
    shake_row(&t, s, NP, "the launcher (whole sort, shake build)", "whole sort", 1, 0,
              "the cut in the ties' bin: the collecting pass settles the row");
}
