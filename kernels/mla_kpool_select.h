/* mla_kpool_select.h: the radix select's launch geometry (kpool_select_radix_f32 in
 * mla_kpool.cu), in plain C, for the kernel and for the tests whose planes are built from it.
 *
 * A test that steers a row down one route (the sampled pass, the level passes, a sort) derives
 * its plane from these numbers, or asserts the values it was derived for, so a change here
 * re-derives the plane or fails to compile instead of leaving a case that no longer reaches its
 * route (twelfth session: select_sampled_covers_tail, built for a sample of 8 loads a thread,
 * fit the first step of the 16 that replaced them, and its mutant survived again). */
#ifndef MLA_KPOOL_SELECT_H
#define MLA_KPOOL_SELECT_H

#define SEL_NT 512
#define SEL_MINB 2 /* blocks per SM */
#define SEL_CAP 8192
#define SEL_BINS 4096
#define SEL_SU 3      /* float4 loads in flight per thread in the sampled pass (64 registers) */
#define SEL_SAMP_U 16 /* sample loads in flight per thread (4-byte) */
#define SEL_OE 8      /* pools per thread per chunk of the ordered pass */
/* the sampled route: rows of at least SEL_SAMPLE_MIN visible pools; the sample is the first
 * SEL_SAMPLE_RUN pools of every SEL_SAMPLE_EVERY (sample element e is pool
 * (e / SEL_SAMPLE_RUN) * SEL_SAMPLE_EVERY + e % SEL_SAMPLE_RUN), read SEL_SAMP_U x SEL_NT
 * elements a step; its quota for n_sel winners, SEL_SAMPLE_QUOTA(n_sel), is 1.5 n_sel / 16 + 16
 * sample keys */
#define SEL_SAMPLE_MIN 65536
#define SEL_SAMPLE_RUN 32
#define SEL_SAMPLE_EVERY 512
#define SEL_SAMPLE_QUOTA(n_sel) ((3 * (n_sel) + 31) / 32 + 16)
/* the sample of a row of n visible pools: its SEL_SAMPLE_RUN-pool segments, SEL_SAMPLE_SEGS(n)
 * (the last one partial), read whole in groups of SEL_SAMPLE_EVERY / SEL_SAMPLE_RUN, so
 * SEL_SAMPLE_COUNT_OF(SEL_SAMPLE_SEGS(n)) elements (those past the row not counted); element e
 * is pool SEL_SAMPLE_POOL(e). Each in its argument's type: the kernel's int64_t row length and
 * 32-bit unsigned segments and elements (n < 2^31, so a pool < 2^31 + 512), the tests' int64_t. */
#define SEL_SAMPLE_SEGS(n) (((n) + SEL_SAMPLE_RUN - 1) / SEL_SAMPLE_RUN)
#define SEL_SAMPLE_COUNT_OF(segs)                                                                  \
    (((segs) + SEL_SAMPLE_EVERY / SEL_SAMPLE_RUN - 1) / (SEL_SAMPLE_EVERY / SEL_SAMPLE_RUN) *      \
     SEL_SAMPLE_RUN)
#define SEL_SAMPLE_POOL(e) (((e) / SEL_SAMPLE_RUN) * SEL_SAMPLE_EVERY + (e) % SEL_SAMPLE_RUN)

#endif /* MLA_KPOOL_SELECT_H */
