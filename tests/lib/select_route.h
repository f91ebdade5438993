/* select_route.h: one radix-select arm against the reference kernel, with the sampled route's
 * receipts over the arm's one launch (header only). For the select's GPU tests
 * (test_kpool_identities_gpu.c, test_select_shake_gpu.c), whose plane is already on the device;
 * they link their own kernel build (the product's or the shake build), which defines the
 * launchers named here. */
#ifndef MLA_TESTS_SELECT_ROUTE_H
#define MLA_TESTS_SELECT_ROUTE_H

#include <stdint.h>
#include <stdlib.h>

#include "kernels/mla.h"
#include "kernels/mla_door.h"
#include "kernels/mla_kpool_select.h"
#include "tests/lib/gpu_util.h"
#include "tests/lib/testbed.h"

/* The sampled route's sample (kernels/mla_kpool_select.h), as the tests build planes against it:
 * element e's pool; whether pool p is in the sample; the sample's element count for n_vis visible
 * pools (elements past the row are not counted); its quota of sample keys for n_sel winners. */
static inline int64_t select_sample_pool(int64_t e) {
    return (e / SEL_SAMPLE_RUN) * SEL_SAMPLE_EVERY + e % SEL_SAMPLE_RUN;
}
static inline int select_sampled(int64_t p) { return p % SEL_SAMPLE_EVERY < SEL_SAMPLE_RUN; }
static inline int64_t select_sample_count(int64_t n_vis) {
    const int64_t segs = SEL_SAMPLE_EVERY / SEL_SAMPLE_RUN,
                  n_seg = (n_vis + SEL_SAMPLE_RUN - 1) / SEL_SAMPLE_RUN;
    return (n_seg + segs - 1) / segs * SEL_SAMPLE_RUN;
}
static inline int select_sample_quota(int64_t n_sel) { return (int)SEL_SAMPLE_QUOTA(n_sel); }

typedef int (*select_fn)(const float *score, int32_t *idx, int32_t t_q, int32_t n_pools,
                         int32_t pool, int32_t select_k, int32_t width, int32_t first_pos,
                         int32_t always_tail, void *stream);

typedef struct {
    int32_t t_q, n_pools, pool, select_k, width, first_pos, always_tail;
} select_shape;

/* `arm` and then the reference on the score plane bs (sh's shape), each into a freshly poisoned
 * idx; compares the two (int32 bytes) and expects the sampled route's receipts over the arm's
 * launch to move by `hits` rows settled and `fallbacks` handed back (`why` says why). */
static inline void select_arm_vs_reference(tb *t, const gpu_buf *bs, select_shape sh, select_fn arm,
                                           const char *what, const char *name, uint64_t hits,
                                           uint64_t fallbacks, const char *why) {
    gpu_buf bi = gpu_buf_alloc((size_t)sh.t_q * sh.width * 4);
    uint64_t h0 = 0, f0 = 0, h1 = 0, f1 = 0;
    int32_t *ix[2];
    for (int r = 0; r < 2; r++) {
        gpu_buf_poison(&bi);
        if (r == 0)
            tb_launched(t, mla_select_sampled_counts(&h0, &f0), "mla_select_sampled_counts");
        tb_launched(t,
                    (r ? memra_mla_kpool_select_ref_f32
                       : arm)((const float *)bs->ptr, (int32_t *)bi.ptr, sh.t_q, sh.n_pools,
                              sh.pool, sh.select_k, sh.width, sh.first_pos, sh.always_tail, NULL),
                    r ? "the reference" : what);
        ix[r] = (int32_t *)tb_output(t, &bi, "idx", r ? "reference" : name, 1);
        if (r == 0)
            tb_launched(t, mla_select_sampled_counts(&h1, &f1), "mla_select_sampled_counts");
    }
    const int64_t ishape[2] = {sh.t_q, sh.width};
    tb_compare(t, "idx", ST_I32, 2, ishape, ix[0], name, ix[1], "reference", MLA_TOL_EXACT, NULL,
               1);
    tb_expectf(t, h1 - h0 == hits && f1 - f0 == fallbacks,
               "receipts: %llu settled + %llu handed back, expected %llu + %llu (%s)",
               (unsigned long long)(h1 - h0), (unsigned long long)(f1 - f0),
               (unsigned long long)hits, (unsigned long long)fallbacks, why);
    free(ix[0]), free(ix[1]);
    gpu_buf_free(&bi);
}

#endif /* MLA_TESTS_SELECT_ROUTE_H */
