/* select_order: aborts when k-pool selection differs between the radix kernel, the reference
 * kernel and the oracle (int32 bytes), or when the oracle differs from a brute-force restatement
 * of docs/kpool.md (score desc, +0 == -0, NaN after -inf, ties by pool index; kept rows
 * ascending; tail; -1 pad), for random shapes and tie-heavy score planes.
 *
 * Parameters (from the input's end): t_q 1..4, n_pools 0..16 (1/4 of draws), 0..5000, or
 * 8180..9000 (3/64: across both selects' 8192-key caps, where select_ref leaves its shared-memory
 * sort for argmin rounds and the radix select's tie fallback starts), or 65536..70000 (1/64:
 * rows long enough for the radix select's sampled route, the launcher's arm at the shipped
 * shape; since 2026-12-01, tenth session), pool 1..64, select_k, width >= select_k*pool + pool -
 * 1, always_tail, first_pos (any valid one), generator kind and seed. Generators: all equal;
 * a few levels; equal high bits with random low bits; -inf / NaN (any sign and payload) / +0 / -0
 * mixed with equal values; uniform; raw bits from the input's front; values from the Philox streams
 * of tests/lib/mla_fill.h keyed by the drawn seed. With a device every launch goes through the fuzz
 * testbed (fuzz/fuzz_gpu.h): it also aborts when a launch fails, a kernel writes outside idx (guard
 * bands), leaves an idx word unwritten (poison) or modifies the scores. Without a device the
 * launchers must return the CUDA band for the (valid) tuple. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_gpu.h"
#include "fuzz/fuzz_helpers.h"
#include "kernels/mla.h"
#include "oracle/mla_oracle.h"
#include "tests/lib/mla_fill.h"
#include "tests/lib/testbed.h"

FUZZ_TARGET_NAME("select_order");

/* The score plane s[0..n): stream "score" of the seed (word i of w[] for element i, where the
 * generator needs one), the whole-tensor Philox fill for the uniform generator, or raw bits from
 * the input's front. */
FUZZ_HOT static void gen_scores(float *s, size_t n, int kind, uint32_t seed, const uint32_t *words,
                                const uint8_t *front, size_t nfront, float level) {
    if (kind == 4) { /* uniform on the 2^24-point grid of [-1, 1) */
        fuzz_fill_f32(s, n, MLA_FILL_REALISTIC, seed, "score", 1.0f);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (kind == 0) { /* all equal */
            s[i] = level;
            continue;
        }
        if (kind == 5) { /* raw bits from the input's front */
            uint32_t b = fuzz_bits_of_f32(level);
            if (nfront >= 4) memcpy(&b, front + (i * 4 % (nfront - 3)), 4);
            s[i] = fuzz_f32_of_bits(b);
            continue;
        }
        uint32_t w = words[i];
        if (kind == 1) { /* a few levels */
            s[i] = (float)(int)(w % 5u) * 0.25f - 0.5f;
        } else if (kind == 2) { /* equal high bits, random low bits */
            s[i] = fuzz_f32_of_bits((fuzz_bits_of_f32(level) & ~0xFFu) | (w & 0x7u));
        } else { /* -inf / NaN (any sign and payload) / +0 / -0 among equal values */
            uint32_t r = w % 64u; /* bits 0..5; bit 6: the zero's sign; bits 10..31: payload */
            if (r == 0)
                s[i] = fuzz_f32_of_bits(0x7FC00000u | (w >> 10)); /* NaN, payloads */
            else if (r == 1)
                s[i] = fuzz_f32_of_bits(0xFFC00001u); /* -NaN */
            else if (r == 2)
                s[i] = fuzz_f32_of_bits(0x7F800001u); /* signalling NaN */
            else if (r < 12)
                s[i] = -INFINITY;
            else if (r < 20)
                s[i] = INFINITY;
            else if (r < 32)
                s[i] = (w >> 6) & 1u ? 0.0f : -0.0f;
            else if (r < 40)
                s[i] = -level;
            else
                s[i] = level;
        }
    }
}

/* ---- the brute-force restatement ---- */
static const float *g_row;
FUZZ_HOT static int cmp_rank(const void *pa, const void *pb) {
    int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
    float x = g_row[a], y = g_row[b];
    int nx = x != x, ny = y != y;
    if (nx != ny) return nx ? 1 : -1;         /* NaN after everything */
    if (!nx && x != y) return x > y ? -1 : 1; /* descending; +0 == -0 compare equal */
    return a < b ? -1 : a > b;                /* ties (and NaN vs NaN) by pool index */
}
FUZZ_HOT static void brute_row(const float *row, int64_t q, int32_t np, int32_t pool, int32_t sel,
                               int32_t width, int32_t tail, int32_t *out, int32_t *perm,
                               char *kept) {
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

/* The first entry of idx[t_q][width] outside -1..(first_pos + its row), or n when none. */
FUZZ_HOT static size_t first_outside_rows(const int32_t *idx, size_t n, int32_t width, int32_t fp) {
    for (size_t e = 0; e < n; e++) {
        int64_t row = (int64_t)fp + (int64_t)(e / (size_t)width);
        if (idx[e] < -1 || idx[e] > row) return e;
    }
    return n;
}

int fuzz_one_input(const uint8_t *data, size_t size) {
    tb *t = fuzz_tb_begin(data, size);
    fuzz_producer p = fuzz_producer_init(data, size);
    int32_t tq = (int32_t)fuzz_range(&p, 1, 4);
    const int64_t np_kind = fuzz_range(&p, 0, 15);
    int32_t np = (int32_t)(np_kind < 4                 ? fuzz_range(&p, 0, 16)
                           : np_kind < 15              ? fuzz_range(&p, 0, 5000)
                           : fuzz_range(&p, 0, 3) == 0 ? fuzz_range(&p, 65536, 70000)
                                                       : fuzz_range(&p, 8180, 9000));
    static const int32_t POOLS[] = {1, 1, 2, 3, 4, 4, 7, 16, 64};
    int32_t pool = fuzz_range(&p, 0, 1) ? FUZZ_PICK(&p, POOLS) : (int32_t)fuzz_range(&p, 1, 64);
    int32_t max_sel = 16384 / pool;
    int32_t sel =
        (int32_t)(fuzz_range(&p, 0, 2) == 0 ? fuzz_range(&p, 1, 8)
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
    uint32_t seed = fuzz_u32(&p);
    seed ^= fuzz_u32(&p); /* 8 bytes, as the seed always took: other draws keep their bytes */
    float level = FUZZ_PICK(
        &p, ((const float[]){0.5f, 0.0f, -0.0f, -INFINITY, INFINITY, 1e-40f, -3.0f, NAN}));
    size_t nfront = fuzz_remaining(&p);
    fuzz_tb_casef(t,
                  "t_q %d n_pools %d pool %d select_k %d width %d first_pos %d always_tail %d "
                  "kind %d level %a seed 0x%08X",
                  tq, np, pool, sel, width, fp, tail, kind, (double)level, seed);

    size_t ns = (size_t)tq * np, ni = (size_t)tq * width;
    fuzz_buf *ds = fuzz_in(t, "score", ns * 4);
    float *s = ds->host;
    uint32_t *words = kind >= 1 && kind <= 3 ? fuzz_alloc(t, ns * 4) : NULL;
    if (words) fuzz_fill_words(words, ns, seed, "score");
    gen_scores(s, ns, kind, seed, words, data, nfront, level);
    int32_t *orc = fuzz_alloc(t, ni * 4), *bf = fuzz_alloc(t, ni * 4);
    int32_t *perm = fuzz_alloc(t, (size_t)np * 4 + 4);
    char *kept = fuzz_alloc(t, (size_t)np + 1);
    oracle_kpool_select_f32(s, orc, tq, np, pool, sel, width, fp, tail);
    for (int32_t i = 0; i < tq; i++)
        brute_row(s + (size_t)i * np, (int64_t)fp + i, np, pool, sel, width, tail,
                  bf + (size_t)i * width, perm, kept);
    size_t e = first_outside_rows(orc, ni, width, fp);
    if (e < ni) {
        int64_t row = (int64_t)fp + (int64_t)(e / (size_t)width);
        FUZZ_TB_ASSERT(t, orc[e] >= -1 && orc[e] <= row,
                       "oracle idx[%zu][%zu] = %d outside -1..%lld", e / (size_t)width,
                       e % (size_t)width, orc[e], (long long)row);
    }
    const int64_t shape[2] = {tq, width};
    tb_compare(t, "idx", ST_I32, 2, shape, orc, "oracle", bf, "brute force", MLA_TOL_EXACT, NULL,
               1);
    /* the kernels: the radix launcher, the reference */
    static const struct {
        int (*fn)(const float *, int32_t *, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t,
                  int32_t, void *);
        const char *what, *name;
    } K[2] = {
        {memra_mla_kpool_select_f32, "select (radix kernel)", "radix kernel"},
        {memra_mla_kpool_select_ref_f32, "select_ref (reference kernel)", "reference kernel"}};
    if (fuzz_gpu_enabled()) {
        fuzz_buf *di[2]; /* one freshly poisoned idx per kernel */
        for (int r = 0; r < 2; r++) di[r] = fuzz_out(t, "idx", ni * 4, K[r].what, 1);
        fuzz_gpu_upload(t);
        for (int r = 0; r < 2; r++)
            fuzz_launched(t, K[r].fn(ds->dev, di[r]->dev, tq, np, pool, sel, width, fp, tail, NULL),
                          di[r]->what);
        fuzz_gpu_check(t);
        for (int r = 0; r < 2; r++)
            tb_compare(t, "idx", ST_I32, 2, shape, di[r]->got, K[r].name, orc, "oracle",
                       MLA_TOL_EXACT, NULL, 1);
    } else if (fuzz_no_device()) {
        for (int r = 0; r < 2; r++)
            FUZZ_ASSERT_CUDA_BAND(t, K[r].fn(s, orc, tq, np, pool, sel, width, fp, tail, NULL),
                                  K[r].what);
    }
    return 0;
}
