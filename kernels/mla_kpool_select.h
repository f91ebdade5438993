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
/* The sample's element count and the pool of element e are written out in the kernel (32-bit)
 * and again in tests/lib/select_route.h (64-bit), on purpose: as macros here they would leave
 * tools/mutate.py's reach, which never mutates a preprocessor line (fourteenth session: a
 * SEL_SAMPLE_COUNT / SEL_SAMPLE_POOL pair kept the cubins byte-identical but took the kernel's
 * formulas out of the mutants, and was withdrawn). The two forms agree for every n below
 * 4,000,000 (checked on the host, fourteenth session). */

#endif /* MLA_KPOOL_SELECT_H */
