/* select_order: aborts when k-pool selection differs between the radix kernel, the reference
 * kernel and the oracle (int32 bytes), or when the oracle differs from a brute-force restatement
 * of docs/kpool.md (score desc, +0 == -0, NaN after -inf, ties by pool index; kept rows
 * ascending; tail; -1 pad), for random shapes and tie-heavy score planes.
 *
 * Parameters (from the input's end): t_q 1..4, n_pools 0..5000, pool 1..64, select_k,
 * width >= select_k*pool + pool - 1, always_tail, first_pos (any valid one), generator kind and
 * seed. Generators: all equal; a few levels; equal high bits with random low bits; -inf / NaN
 * (any sign and payload) / +0 / -0 mixed with equal values; uniform; raw bits from the input's
 * front. Without a device the launchers must return the CUDA band for the (valid) tuple. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_helpers.h"
#include "fuzz/kpool_fuzz_util.h"
#include "kernels/mla.h"
#include "oracle/mla_oracle.h"

FUZZ_TARGET_NAME("select_order");

static float gen_score(int kind, uint64_t seed, uint64_t i, const uint8_t *front, size_t nfront,
                       float level) {
    uint64_t w = kf_word(seed, i);
    switch (kind) {
    case 0: return level; /* all equal */
    case 1: return (float)(int)(w % 5u) * 0.25f - 0.5f;
    case 2: return kf_from_bits((kf_bits(level) & ~0xFFu) | (uint32_t)(w & 0x7u));
    case 3: {
        uint32_t r = (uint32_t)(w % 64u);
        if (r == 0) return kf_from_bits(0x7FC00000u | (uint32_t)(w >> 40)); /* NaN, payloads */
        if (r == 1) return kf_from_bits(0xFFC00001u);                     /* -NaN */
        if (r == 2) return kf_from_bits(0x7F800001u);                     /* signalling NaN */
        if (r < 12) return -INFINITY;
        if (r < 20) return INFINITY;
        if (r < 32) return (w >> 32) & 1 ? 0.0f : -0.0f;
        if (r < 40) return -level;
        return level;
    }
    case 4: return kf_uni(seed, i);
    default: {
        if (nfront < 4) return level;
        size_t o = (size_t)(i * 4 % (nfront - 3));
        uint32_t b;
        memcpy(&b, front + o, 4);
        return kf_from_bits(b);
    }
    }
}

/* ---- the brute-force restatement ---- */
static const float *g_row;
static int cmp_rank(const void *pa, const void *pb) {
    int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
    float x = g_row[a], y = g_row[b];
    int nx = x != x, ny = y != y;
    if (nx != ny) return nx ? 1 : -1;              /* NaN after everything */
    if (!nx && x != y) return x > y ? -1 : 1;      /* descending; +0 == -0 compare equal */
    return a < b ? -1 : a > b;                     /* ties (and NaN vs NaN) by pool index */
}
static void brute_row(const float *row, int64_t q, int32_t np, int32_t pool, int32_t sel,
                      int32_t width, int32_t tail, int32_t *out, int32_t *perm, char *kept) {
    int64_t vis = (q + 1) / pool;
    int32_t nc = (int32_t)(vis < np ? vis : np), n = 0;
    for (int32_t p = 0; p < nc; p++) perm[p] = p;
    g_row = row;
    qsort(perm, (size_t)nc, sizeof *perm, cmp_rank);
    memset(kept, 0, (size_t)np + 1);
    for (int32_t r = 0; r < nc && r < sel; r++) kept[perm[r]] = 1;
    for (int32_t p = 0; p < nc; p++)
        if (kept[p])
            for (int32_t s = 0; s < pool; s++) out[n++] = p * pool + s;
    if (tail)
        for (int64_t r = (q + 1) / pool * pool; r <= q; r++) out[n++] = (int32_t)r;
    while (n < width) out[n++] = -1;
}

int fuzz_one_input(const uint8_t *data, size_t size) {
    fuzz_producer p = fuzz_producer_init(data, size);
    int32_t tq = (int32_t)fuzz_range(&p, 1, 4);
    int32_t np = (int32_t)(fuzz_range(&p, 0, 3) == 0 ? fuzz_range(&p, 0, 16) : fuzz_range(&p, 0, 5000));
    static const int32_t POOLS[] = {1, 1, 2, 3, 4, 4, 7, 16, 64};
    int32_t pool = fuzz_range(&p, 0, 1) ? FUZZ_PICK(&p, POOLS) : (int32_t)fuzz_range(&p, 1, 64);
    int32_t max_sel = 16384 / pool;
    int32_t sel = (int32_t)(fuzz_range(&p, 0, 2) == 0 ? fuzz_range(&p, 1, 8)
                                                      : fuzz_range(&p, 1, max_sel < 2048 ? max_sel : 2048));
    int32_t width = sel * pool + pool - 1 + (int32_t)fuzz_range(&p, 0, 5);
    int32_t tail = (int32_t)fuzz_range(&p, 0, 1);
    /* first_pos: 0 <= fp <= (np+1)*pool - 1 - tq (40031); fp >= pool - 1 without the tail */
    int64_t hi = ((int64_t)np + 1) * pool - 1 - tq, lo = tail ? 0 : pool - 1;
    if (hi < lo) return 0; /* no valid first_pos for this shape */
    int64_t fp64 = fuzz_range(&p, 0, 2) == 0 ? hi - fuzz_range(&p, 0, hi - lo < 8 ? hi - lo : 8)
                                             : fuzz_range(&p, lo, hi);
    int32_t fp = (int32_t)fp64;
    int kind = (int)fuzz_range(&p, 0, 5);
    uint64_t seed = ((uint64_t)fuzz_u32(&p) << 32) | fuzz_u32(&p);
    float level = FUZZ_PICK(&p, ((const float[]){0.5f, 0.0f, -0.0f, -INFINITY, INFINITY, 1e-40f,
                                                 -3.0f, NAN}));
    size_t nfront = fuzz_remaining(&p);

    size_t ns = (size_t)tq * np, ni = (size_t)tq * width;
    float *s = kf_malloc(ns * 4);
    for (size_t i = 0; i < ns; i++) s[i] = gen_score(kind, seed, i, data, nfront, level);
    int32_t *orc = kf_malloc(ni * 4), *bf = kf_malloc(ni * 4), *perm = kf_malloc((size_t)np * 4 + 4);
    char *kept = kf_malloc((size_t)np + 1);
    oracle_kpool_select_f32(s, orc, tq, np, pool, sel, width, fp, tail);
    for (int32_t i = 0; i < tq; i++)
        brute_row(s + (size_t)i * np, (int64_t)fp + i, np, pool, sel, width, tail,
                  bf + (size_t)i * width, perm, kept);
#define TUPLE "t_q %d n_pools %d pool %d select_k %d width %d first_pos %d always_tail %d kind %d"
#define TARGS tq, np, pool, sel, width, fp, tail, kind
    for (size_t e = 0; e < ni; e++) {
        int64_t row = (int64_t)fp + (int64_t)(e / (size_t)width);
        FUZZ_ASSERT_MSG(orc[e] >= -1 && orc[e] <= row,
                        "oracle idx[%zu][%zu] = %d outside -1..%lld; " TUPLE, e / (size_t)width,
                        e % (size_t)width, orc[e], (long long)row, TARGS);
        FUZZ_ASSERT_MSG(orc[e] == bf[e],
                        "oracle vs brute force: idx[%zu][%zu] oracle %d, brute %d; " TUPLE,
                        e / (size_t)width, e % (size_t)width, orc[e], bf[e], TARGS);
    }
    if (!kf_have_gpu()) {
        int rc = memra_mla_kpool_select_f32(s, orc, tq, np, pool, sel, width, fp, tail, NULL);
        KF_ASSERT_CUDA_BAND(rc, TUPLE, TARGS);
        rc = memra_mla_kpool_select_ref_f32(s, orc, tq, np, pool, sel, width, fp, tail, NULL);
        KF_ASSERT_CUDA_BAND(rc, TUPLE, TARGS);
    } else {
        float *ds = kf_dev_from(s, ns * 4);
        int32_t *di = kf_dev(ni * 4), *got = kf_malloc(ni * 4);
        for (int r = 0; r < 2; r++) {
            kf_poison(di, ni * 4);
            int rc = (r ? memra_mla_kpool_select_ref_f32 : memra_mla_kpool_select_f32)(
                ds, di, tq, np, pool, sel, width, fp, tail, NULL);
            FUZZ_ASSERT_MSG(rc == 0, "%s returned %d; " TUPLE, r ? "select_ref" : "select", rc, TARGS);
            kf_download(got, di, ni * 4);
            for (size_t e = 0; e < ni; e++)
                FUZZ_ASSERT_MSG(got[e] == orc[e],
                                "%s vs oracle: idx[%zu][%zu] kernel %d (0x%08x), oracle %d; " TUPLE,
                                r ? "reference kernel" : "radix kernel", e / (size_t)width,
                                e % (size_t)width, got[e], (unsigned)got[e], orc[e], TARGS);
        }
        KF_CUDA(cudaFree(ds));
        KF_CUDA(cudaFree(di));
        free(got);
    }
    free(s), free(orc), free(bf), free(perm), free(kept);
    return 0;
}
