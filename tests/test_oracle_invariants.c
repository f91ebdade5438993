/* Oracle invariants: properties the CPU oracle must hold whatever its inputs, each checked by an
 * independent computation (integer arithmetic, brute force, algebraic identities). Inputs come
 * from the Philox fill, so every case replays. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oracle/mla_oracle.h"
#include "tests/lib/mla_fill.h"

static float *filled(size_t n, mla_fill_kind kind, uint32_t seed, const char *name, float scale) {
    float *p = malloc(n * sizeof *p);
    mla_fill_host_f32(p, n, kind, seed, name, scale);
    return p;
}

/* ------------------------------------------------------------------ rope ------------------- */
Test(oracle_invariants, rope_position_zero_is_identity) {
    const int np = 3, nv = 5, d = 64;
    float *x = filled((size_t)np * nv * d, MLA_FILL_REALISTIC, 1, "x", 1.0f);
    float *y = malloc((size_t)np * nv * d * 4);
    memcpy(y, x, (size_t)np * nv * d * 4);
    int32_t pos[3] = {0, 0, 0};
    oracle_rope_interleaved_f32(y, np, nv, d, pos, 1e6f);
    cr_assert(memcmp(x, y, (size_t)np * nv * d * 4) == 0, "rope at position 0 moved an element");
    free(x);
    free(y);
}

Test(oracle_invariants, rope_preserves_pair_norms) {
    const int np = 4, nv = 8, d = 64;
    float *x = filled((size_t)np * nv * d, MLA_FILL_REALISTIC, 2, "x", 1.0f);
    float *y = malloc((size_t)np * nv * d * 4);
    memcpy(y, x, (size_t)np * nv * d * 4);
    int32_t pos[4] = {1, 4095, 202751, 1048575};
    oracle_rope_interleaved_f32(y, np, nv, d, pos, 1e6f);
    for (int i = 0; i < np * nv * d; i += 2) {
        double a = hypot(x[i], x[i + 1]), b = hypot(y[i], y[i + 1]);
        /* two f32 roundings of the rotated pair: relative norm change <= 2^-23 (+ tiny) */
        cr_expect(fabs(a - b) <= 0x1p-23 * a + 0x1p-140, "pair %d: |x| %.9g, |rope x| %.9g", i / 2,
                  a, b);
    }
    free(x);
    free(y);
}

Test(oracle_invariants, rope_nope_is_noop) {
    float x[4] = {1, 2, 3, 4};
    int32_t pos[1] = {7};
    oracle_rope_interleaved_f32(x, 1, 4, 0, pos, 1e6f);
    cr_assert(x[0] == 1 && x[1] == 2 && x[2] == 3 && x[3] == 4);
}

/* The angle follows the f32 definition of DESIGN.md section 2, step by step. */
Test(oracle_invariants, rope_angle_is_the_f32_definition) {
    const float bases[] = {1e4f, 1e6f, 8e6f};
    const int32_t positions[] = {0, 1, 4095, 202751, 1048575};
    for (int b = 0; b < 3; b++)
        for (int j = 0; j < 32; j++) {
            float e = (float)(2 * j) / 64.0f;
            float p = (float)pow((double)bases[b], (double)e);
            float inv = 1.0f / p;
            cr_expect(oracle_rope_inv_freq(j, 64, bases[b]) == inv, "inv_freq j=%d base=%g", j,
                      (double)bases[b]);
            for (int k = 0; k < 5; k++) {
                volatile float th = (float)positions[k] * inv;
                cr_expect(oracle_rope_angle(positions[k], j, 64, bases[b]) == th);
            }
        }
}

/* ------------------------------------------------------ absorb / decompress ---------------- */
/* Small-integer inputs: every partial sum is an exact integer, so the fmaf chain must equal the
 * int64 sum (an independent check of the indexing). */
Test(oracle_invariants, absorb_and_decompress_exact_on_small_integers) {
    const int t = 3, h = 4, dn = 24, r = 40, dv = 16;
    float *q = filled((size_t)t * h * dn, MLA_FILL_SMALL_INT, 3, "q", 1.0f);
    float *wk = filled((size_t)h * dn * r, MLA_FILL_SMALL_INT, 3, "wk", 1.0f);
    float *ql = malloc((size_t)t * h * r * 4);
    oracle_absorb_q_f32(q, wk, ql, t, h, dn, r);
    for (int i = 0; i < t; i++)
        for (int hh = 0; hh < h; hh++)
            for (int rr = 0; rr < r; rr++) {
                int64_t s = 0;
                for (int d = 0; d < dn; d++)
                    s += (int64_t)q[(i * h + hh) * dn + d] * (int64_t)wk[(hh * dn + d) * r + rr];
                cr_expect(ql[(i * h + hh) * r + rr] == (float)s, "q_lat[%d][%d][%d]", i, hh, rr);
            }
    float *wv = filled((size_t)h * dv * r, MLA_FILL_SMALL_INT, 3, "wv", 1.0f);
    float *out = malloc((size_t)t * h * dv * 4);
    oracle_decompress_v_f32(ql, wv, out, t, h, dv, r);
    for (int i = 0; i < t; i++)
        for (int hh = 0; hh < h; hh++)
            for (int v = 0; v < dv; v++) {
                int64_t s = 0;
                for (int rr = 0; rr < r; rr++)
                    s += (int64_t)wv[(hh * dv + v) * r + rr] * (int64_t)ql[(i * h + hh) * r + rr];
                cr_expect(out[(i * h + hh) * dv + v] == (float)s, "out[%d][%d][%d]", i, hh, v);
            }
    free(q), free(wk), free(ql), free(wv), free(out);
}

/* ---------------------------------------------------------------- attention ---------------- */
Test(oracle_invariants, attn_over_one_row_returns_that_row) {
    const int h = 3, r = 16, d = 4;
    float *ql = filled((size_t)h * r, MLA_FILL_REALISTIC, 4, "ql", 1.0f);
    float *qp = filled((size_t)h * d, MLA_FILL_REALISTIC, 4, "qp", 1.0f);
    float *cache = filled((size_t)(r + d), MLA_FILL_REALISTIC, 4, "cache", 1.0f);
    float *o = malloc((size_t)h * r * 4);
    oracle_attn_absorbed_f32(ql, qp, cache, o, h, r, d, 1, 1, 0.0625f);
    for (int hh = 0; hh < h; hh++)
        cr_expect(memcmp(o + hh * r, cache, (size_t)r * 4) == 0, "head %d", hh);
    free(ql), free(qp), free(cache), free(o);
}

/* Rows after a query's own row are invisible: changing them changes nothing. */
Test(oracle_invariants, attn_is_causal) {
    const int h = 2, r = 32, d = 8, tq = 3, tkv = 10, w = r + d;
    float *ql = filled((size_t)tq * h * r, MLA_FILL_REALISTIC, 5, "ql", 1.0f);
    float *qp = filled((size_t)tq * h * d, MLA_FILL_REALISTIC, 5, "qp", 1.0f);
    float *cache = filled((size_t)tkv * w, MLA_FILL_REALISTIC, 5, "cache", 1.0f);
    float *o1 = malloc((size_t)tq * h * r * 4), *o2 = malloc((size_t)tq * h * r * 4);
    oracle_attn_absorbed_f32(ql, qp, cache, o1, h, r, d, tq, tkv, 0.0625f);
    /* query 0 sits at row tkv - tq = 7: rows 8, 9 are invisible to it */
    for (int c = 0; c < w; c++) cache[8 * w + c] = cache[9 * w + c] = 1e30f;
    oracle_attn_absorbed_f32(ql, qp, cache, o2, h, r, d, tq, tkv, 0.0625f);
    cr_assert(memcmp(o1, o2, (size_t)h * r * 4) == 0, "query 0 saw a later row");
    free(ql), free(qp), free(cache), free(o1), free(o2);
}

/* attn_gathered over exactly the visible rows equals attn_absorbed; -1 entries change nothing;
 * a query with no entry gets zeros. */
Test(oracle_invariants, gathered_over_visible_rows_equals_absorbed) {
    const int h = 2, r = 16, d = 4, tq = 2, tkv = 6, w = r + d, ns = 9;
    float *ql = filled((size_t)tq * h * r, MLA_FILL_REALISTIC, 6, "ql", 1.0f);
    float *qp = filled((size_t)tq * h * d, MLA_FILL_REALISTIC, 6, "qp", 1.0f);
    float *cache = filled((size_t)tkv * w, MLA_FILL_REALISTIC, 6, "cache", 1.0f);
    float *oa = malloc((size_t)tq * h * r * 4), *og = malloc((size_t)tq * h * r * 4);
    oracle_attn_absorbed_f32(ql, qp, cache, oa, h, r, d, tq, tkv, 0.0625f);
    int32_t idx[2 * 9];
    for (int i = 0; i < tq; i++)
        for (int s = 0; s < ns; s++) {
            int row = tkv - tq + i; /* rows 0..row, then -1 padding */
            idx[i * ns + s] = s <= row ? s : -1;
        }
    oracle_attn_gathered_f32(ql, qp, cache, idx, og, h, r, d, tq, ns, 0.0625f);
    for (int k = 0; k < tq * h * r; k++)
        cr_expect(fabsf(oa[k] - og[k]) <= 1e-6f * (1.0f + fabsf(oa[k])), "o[%d] %.9g vs %.9g", k,
                  (double)oa[k], (double)og[k]);
    for (int s = 0; s < ns; s++) idx[s] = -1;
    oracle_attn_gathered_f32(ql, qp, cache, idx, og, h, r, d, tq, ns, 0.0625f);
    for (int k = 0; k < h * r; k++) cr_expect(og[k] == 0.0f && !signbit(og[k]));
    free(ql), free(qp), free(cache), free(oa), free(og);
}

/* ----------------------------------------------------------------- bf16 -------------------- */
Test(oracle_invariants, bf16_rounds_to_nearest_even) {
    /* 1 + 2^-8 is halfway between bf16 1.0 (0x3F80) and 1 + 2^-7 (0x3F81): ties to even. */
    cr_expect_eq(oracle_bf16_from_f32(1.0f + 0x1p-8f), 0x3F80);
    cr_expect_eq(oracle_bf16_from_f32(1.0f + 3 * 0x1p-8f), 0x3F82); /* tie, odd below -> up */
    cr_expect_eq(oracle_bf16_from_f32(1.0f + 0x1p-8f + 0x1p-20f), 0x3F81);
    cr_expect_eq(oracle_bf16_from_f32(-2.0f), 0xC000);
    uint16_t nan = oracle_bf16_from_f32(NAN);
    cr_expect((nan & 0x7F80) == 0x7F80 && (nan & 0x7F) != 0, "NaN must stay NaN: 0x%04x", nan);
    cr_expect_eq(oracle_bf16_from_f32(INFINITY), 0x7F80);
    for (uint32_t b = 0; b < 0x7F80; b += 37) /* every finite bf16 widens and rounds back */
        cr_expect_eq(oracle_bf16_from_f32(oracle_f32_from_bf16((uint16_t)b)), b);
}

/* ------------------------------------------------------------- k-pool indexer -------------- */
/* At pool == 1 the softmax over one slot is 1: the pool key is the token key, bit for bit. */
Test(oracle_invariants, pool_keys_at_pool_one_are_the_keys) {
    const int n = 37, d = 16;
    float *state = filled((size_t)n * 2 * d, MLA_FILL_REALISTIC, 7, "state", 3.0f);
    float *ape = filled((size_t)d, MLA_FILL_REALISTIC, 7, "ape", 1.0f);
    float *keys = malloc((size_t)n * d * 4);
    oracle_kpool_pool_keys_f32(state, ape, keys, 0, n, 1, d, 0);
    for (int p = 0; p < n; p++)
        cr_expect(memcmp(keys + p * d, state + p * 2 * d, (size_t)d * 4) == 0, "pool %d", p);
    free(state), free(ape), free(keys);
}

/* The same rows through a tail ring give the same keys as the flat plane; pools below
 * pool_begin are untouched. */
Test(oracle_invariants, pool_keys_ring_equals_flat_and_respects_pool_begin) {
    const int pool = 4, n_pools = 20, d = 8, ring = 32; /* ring of 8 pools */
    const int rows = n_pools * pool;
    float *flat = filled((size_t)rows * 2 * d, MLA_FILL_REALISTIC, 8, "state", 2.0f);
    float *ringp = malloc((size_t)ring * 2 * d * 4);
    for (int r = rows - ring; r < rows; r++)
        memcpy(ringp + (size_t)(r % ring) * 2 * d, flat + (size_t)r * 2 * d, (size_t)2 * d * 4);
    float *ape = filled((size_t)pool * d, MLA_FILL_REALISTIC, 8, "ape", 1.0f);
    float *kf = malloc((size_t)n_pools * d * 4), *kr = malloc((size_t)n_pools * d * 4);
    oracle_kpool_pool_keys_f32(flat, ape, kf, 0, n_pools, pool, d, 0);
    for (int i = 0; i < n_pools * d; i++) kr[i] = -7.0f; /* sentinel below pool_begin */
    int begin = n_pools - ring / pool;
    oracle_kpool_pool_keys_f32(ringp, ape, kr, begin, n_pools, pool, d, ring);
    for (int i = 0; i < begin * d; i++) cr_expect(kr[i] == -7.0f, "pool below pool_begin written");
    cr_assert(memcmp(kf + begin * d, kr + begin * d, (size_t)(n_pools - begin) * d * 4) == 0);
    free(flat), free(ringp), free(ape), free(kf), free(kr);
}

Test(oracle_invariants, score_mask_is_exactly_the_invisible_pools) {
    const int tq = 5, heads = 3, d = 8, pool = 4, n_pools = 12, first_pos = 40;
    float *q = filled((size_t)tq * heads * d, MLA_FILL_REALISTIC, 9, "q", 1.0f);
    float *k = filled((size_t)n_pools * d, MLA_FILL_REALISTIC, 9, "k", 1.0f);
    float *hw = filled((size_t)tq * heads, MLA_FILL_REALISTIC, 9, "hw", 1.0f);
    float *s = malloc((size_t)tq * n_pools * 4);
    oracle_kpool_score_f32(q, k, hw, s, tq, heads, d, n_pools, pool, first_pos, 0.088f, 0.17f);
    for (int i = 0; i < tq; i++)
        for (int p = 0; p < n_pools; p++) {
            int visible = (p + 1) * pool - 1 <= first_pos + i;
            float v = s[i * n_pools + p];
            cr_expect(visible ? isfinite(v) : (isinf(v) && v < 0), "score[%d][%d] = %g", i, p,
                      (double)v);
        }
    free(q), free(k), free(hw), free(s);
}

static int cmp_int(const void *a, const void *b) {
    return (*(const int32_t *)a > *(const int32_t *)b) -
           (*(const int32_t *)a < *(const int32_t *)b);
}

/* Selection against a brute force: repeatedly take the best remaining visible pool by direct
 * float comparison (NaN after everything, +0 == -0, ties to the lower index), on tie-heavy
 * scores. */
Test(oracle_invariants, select_equals_brute_force_on_tie_heavy_scores) {
    const int n_pools = 64, pool = 2, select_k = 9, width = select_k * pool + pool - 1;
    static const float vals[] = {1.0f, 1.0f, 2.0f, -0.0f, 0.0f, NAN, -INFINITY, 2.0f, -1.0f};
    for (int q = pool - 1; q < (n_pools + 1) * pool - 1; q += 7) {
        float score[64];
        for (int p = 0; p < n_pools; p++) score[p] = vals[(p * 7 + q) % 9];
        int32_t idx[32];
        oracle_kpool_select_f32(score, idx, 1, n_pools, pool, select_k, width, q, 1);
        int n_vis = (q + 1) / pool < n_pools ? (q + 1) / pool : n_pools;
        int taken[64] = {0}, chosen[16], n_ch = 0;
        for (int round = 0; round < select_k && round < n_vis; round++) {
            int best = -1;
            for (int p = 0; p < n_vis; p++) {
                if (taken[p]) continue;
                if (best < 0) {
                    best = p;
                    continue;
                }
                float a = score[p], b = score[best];
                int better = isnan(b) ? !isnan(a) : (!isnan(a) && a > b);
                if (better) best = p;
            }
            taken[best] = 1;
            chosen[n_ch++] = best;
        }
        qsort(chosen, (size_t)n_ch, sizeof(int), cmp_int);
        int32_t want[32], n = 0;
        for (int c = 0; c < n_ch; c++)
            for (int r = 0; r < pool; r++) want[n++] = chosen[c] * pool + r;
        for (int r = (q + 1) / pool * pool; r <= q; r++) want[n++] = r;
        while (n < width) want[n++] = -1;
        cr_expect(memcmp(idx, want, (size_t)width * 4) == 0, "query row %d: selection differs", q);
    }
}

Test(oracle_invariants, ring_append_wraps) {
    const int rows = 8, wa = 3, wb = 2, t = 5, slot = 6;
    float plane[8 * 5];
    for (int i = 0; i < rows * (wa + wb); i++) plane[i] = -1.0f;
    float a[5 * 3], b[5 * 2];
    for (int i = 0; i < t * wa; i++) a[i] = (float)i;
    for (int i = 0; i < t * wb; i++) b[i] = (float)(100 + i);
    oracle_index_append_ring_f32(plane, a, b, slot, t, wa, wb, rows);
    for (int i = 0; i < t; i++) {
        int r = (slot + i) % rows;
        for (int c = 0; c < wa; c++) cr_expect(plane[r * 5 + c] == a[i * wa + c]);
        for (int c = 0; c < wb; c++) cr_expect(plane[r * 5 + wa + c] == b[i * wb + c]);
    }
    for (int r = 3; r < 6; r++) /* rows 6, 7, 0, 1, 2 written; 3..5 untouched */
        for (int c = 0; c < 5; c++) cr_expect(plane[r * 5 + c] == -1.0f);
}
