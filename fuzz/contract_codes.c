/* contract_codes: aborts when a launcher's status differs from an independent statement of the
 * contract table (docs/contract.md, mla.h's validation order) for a random argument tuple, or
 * when a valid tuple does not reach the device band.
 *
 * The expected code is computed here from the documentation, not from kernels/mla_validate.c:
 * each launcher is a list of rules (predicate, code) tried in order. Pointers are fake,
 * never-dereferenced addresses (NULL, distinct, or overlapping another operand). A tuple the
 * table accepts is passed to the launcher only where no device is present (it must then return
 * the CUDA band); with a device, the validator alone is asked (fake pointers must never reach a
 * kernel). */
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "fuzz/fuzz_helpers.h"
#include "kernels/mla.h"
#include "kernels/mla_validate.h"

#include "fuzz/fuzz_gpu.h"

FUZZ_TARGET_NAME("contract_codes");

typedef long long ll;
/* Extents are products of up to three int32 values: exact in 128 bits, no overflow anywhere. */
typedef __int128 big;
#define I32MAX 2147483647LL

/* ---- argument producers -------------------------------------------------------------- */
static const int32_t INTERESTING[] = {
    INT32_MIN, -1000000, -65, -2, -1, 0, 1, 2, 3, 4, 5, 7, 8, 31, 32, 33, 63, 64, 65, 127,
    128, 129, 192, 256, 257, 511, 512, 513, 1023, 1024, 1025, 2047, 2048, 2051, 4095, 4096,
    8191, 8192, 65535, 65536, 202751, 262144, 1048575, 1048576, 1 << 24, 1 << 30, INT32_MAX};

static int32_t draw_i32(fuzz_producer *p) {
    switch (fuzz_range(p, 0, 3)) {
    case 0: return (int32_t)fuzz_range(p, -8, 600);
    case 1: return (int32_t)fuzz_u32(p);
    default: return FUZZ_PICK(p, INTERESTING);
    }
}

static int64_t draw_i64(fuzz_producer *p) {
    static const int64_t I64[] = {-1, 0, 1, 63, 64, 191, 192, 255, 256, 511, 512, 12288, 16384,
                                  32768, 1LL << 31, 1LL << 40, 1LL << 60, INT64_MAX};
    return fuzz_range(p, 0, 1) ? FUZZ_PICK(p, I64) : (int64_t)fuzz_range(p, -4, 70000);
}

static float draw_f32(fuzz_producer *p) {
    static const float F[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.0625f, 1e6f, 8e6f, 1e-30f, 1e30f,
                              INFINITY, -INFINITY, NAN};
    return FUZZ_PICK(p, F);
}

/* Pointer slots: 0 = NULL; 1..6 = distinct fake bases 2^40 apart; 7 = inside the first
 * operand's base plus a drawn element offset (to provoke aliasing). */
static const void *draw_ptr(fuzz_producer *p, const void *first) {
    int64_t k = fuzz_range(p, 0, 9);
    if (k == 0) return NULL;
    if (k >= 7 && first) return (const char *)first + 4 * fuzz_range(p, -4, 4096);
    return (const void *)(uintptr_t)((uint64_t)(k + 1) << 40);
}

/* ---- the independent statement ------------------------------------------------------- */
/* Byte ranges [a, a+an) and [b, b+bn) overlap; NULL or empty never do. */
static int ovl(const void *a, big an, const void *b, big bn) {
    if (!a || !b || an <= 0 || bn <= 0) return 0;
    big x = (big)(uintptr_t)a, y = (big)(uintptr_t)b;
    return x < y + bn && y < x + an;
}

#define RULE(cond, code)                                                                       \
    if (cond) return code

static int spec_rope(const float *x, int32_t np, int32_t nv, int32_t d, const int32_t *pos,
                     float base) {
    RULE(np < 1 || nv < 1, 40021);
    RULE(d < 0, 40022);
    RULE(d & 1, 40001);
    RULE(d > 128, 40003);
    RULE(d == 0, 0);
    RULE(!(base > 0.0f) || isinf(base), 40034);
    big n = (big)np * nv * d;
    RULE(n > I32MAX, 40024);
    RULE(!x || !pos, 40020);
    RULE(ovl(x, 4 * n, pos, 4LL * np), 40028);
    return 0;
}

static int spec_split(const float *kv, const float *c, const float *pe, int32_t t, int32_t r,
                      int32_t d) {
    RULE(t < 1 || r < 1, 40021);
    RULE(d < 0, 40022);
    RULE((big)t * (r + (big)d) > I32MAX, 40024);
    RULE(!kv || !c || (d > 0 && !pe), 40020);
    ll kvb = 4LL * t * (r + (ll)d), cb = 4LL * t * r, pb = 4LL * t * d;
    RULE(ovl(c, cb, kv, kvb) || ovl(pe, pb, kv, kvb) || ovl(c, cb, pe, pb), 40028);
    return 0;
}

static int spec_append(const float *cache, const float *c, const float *pe, int32_t slot,
                       int32_t t, int32_t r, int32_t d) {
    RULE(slot < 0, 40022);
    RULE(t < 1 || r < 1, 40021);
    RULE(d < 0, 40022);
    ll w = r + (ll)d;
    RULE(((big)slot + t) * w > I32MAX, 40024);
    RULE(!cache || !c || (d > 0 && !pe), 40020);
    const char *rows = (const char *)cache + 4LL * slot * w;
    RULE(ovl(rows, 4LL * t * w, c, 4LL * t * r) || ovl(rows, 4LL * t * w, pe, 4LL * t * d),
         40028);
    return 0;
}

static int spec_matvec(const float *in, const float *w, const float *out, int32_t t,
                       int32_t h, int32_t hd, int32_t r, int32_t split, int absorb) {
    RULE(t < 1 || h < 1 || hd < 1 || r < 1, 40021);
    RULE(r > 1024, 40002);
    RULE(hd > 1024, 40037);
    int32_t od = absorb ? r : hd;
    RULE(split < 1 || split > od, 40023);
    big nin = (big)t * h * (absorb ? hd : r), nw = (big)h * hd * r, nout = (big)t * h * od;
    RULE(nin > I32MAX || nw > I32MAX || nout > I32MAX, 40024);
    RULE(!in || !w || !out, 40020);
    RULE(ovl(out, 4 * nout, in, 4 * nin) || ovl(out, 4 * nout, w, 4 * nw), 40028);
    return 0;
}

static int spec_attn(const float *ql, const float *qp, const float *cache, const int32_t *idx,
                     const float *o, int32_t h, int32_t r, int32_t d, int32_t tq, int32_t rows,
                     int32_t n_slots, float scale, int gathered) {
    RULE(h < 1 || r < 1, 40021);
    RULE(d < 0, 40022);
    RULE(tq < 1, 40021);
    if (gathered) {
        RULE(n_slots < 0, 40022);
        RULE(n_slots == 0, 40015);
    } else {
        RULE(rows < 1, 40021);
    }
    RULE(d & 1, 40001);
    RULE(r > 1024, 40002);
    RULE(d > 128, 40003);
    RULE(!gathered && tq > rows, 40004);
    RULE(!isfinite(scale), 40035);
    ll cache_rows = gathered ? 1 : rows;
    big nq = (big)tq * h * r, npe = (big)tq * h * d, nc = (big)cache_rows * (r + (big)d),
        ni = gathered ? (big)tq * n_slots : 0;
    RULE(nq > I32MAX || npe > I32MAX || nc > I32MAX || ni > I32MAX, 40024);
    RULE(!ql || (d > 0 && !qp) || !cache || (gathered && !idx) || !o, 40020);
    RULE(ovl(o, 4 * nq, ql, 4 * nq) || (d > 0 && ovl(o, 4 * nq, qp, 4 * npe)) ||
             ovl(o, 4 * nq, cache, 4 * nc) || ovl(o, 4 * nq, idx, 4 * ni),
         40028);
    return 0;
}

static int spec_ring(const float *plane, const float *a, const float *b, int32_t slot,
                     int32_t t, int32_t wa, int32_t wb, int32_t rows) {
    RULE(slot < 0, 40022);
    RULE(t < 1 || wa < 1, 40021);
    RULE(wb < 0 || rows < 0, 40022);
    RULE(rows > 0 && t > rows, 40029);
    ll w = (ll)wa + wb, prow = rows ? rows : (ll)slot + t;
    RULE((ll)slot + t > I32MAX || (big)prow * w > I32MAX || (big)t * w > I32MAX, 40024);
    RULE(!plane || !a || (wb > 0 && !b), 40020);
    const char *lo = rows ? (const char *)plane : (const char *)plane + 4LL * slot * w;
    ll span = rows ? 4 * prow * w : 4LL * t * w;
    RULE(ovl(lo, span, a, 4LL * t * wa) || ovl(lo, span, b, 4LL * t * wb), 40028);
    return 0;
}

static int spec_keys(const float *st, const float *ape, const float *keys, int32_t pb,
                     int32_t np, int32_t pool, int32_t d, int32_t sr) {
    RULE(pb < 0 || np < 0 || sr < 0, 40022);
    RULE(pool < 1 || pool > 64, 40010);
    RULE(d < 1, 40017);
    RULE(d > 512, 40033);
    RULE(pb > np, 40025);
    RULE(sr % pool != 0, 40016);
    RULE(sr > 0 && (ll)pb * pool < (ll)np * pool - sr, 40018);
    big rows = (big)np * pool, sn = (sr ? (big)sr : rows) * 2 * d;
    RULE(rows > I32MAX || sn > I32MAX || (big)np * d > I32MAX, 40024);
    RULE(!st || !ape || !keys, 40020);
    RULE(ovl(keys, 4LL * np * d, st, 4 * sn) || ovl(keys, 4LL * np * d, ape, 4LL * pool * d),
         40028);
    return 0;
}

static int beyond(int32_t tq, int32_t np, int32_t pool, int32_t fp) {
    return (ll)fp + tq - 1 >= ((ll)np + 1) * pool - 1;
}

static int spec_score(const float *q, const float *k, const float *hw, const float *s,
                      int32_t tq, int32_t heads, int32_t d, int32_t np, int32_t pool,
                      int32_t fp, float qs, float hs) {
    RULE(tq < 1, 40021);
    RULE(np < 0 || fp < 0, 40022);
    RULE(heads < 1 || heads > 1024, 40011);
    RULE(d < 1, 40017);
    RULE(d > 512, 40033);
    RULE(pool < 1 || pool > 64, 40010);
    RULE((ll)tq * np > I32MAX, 40012);
    RULE(beyond(tq, np, pool, fp), 40031);
    RULE(!isfinite(qs) || !isfinite(hs), 40035);
    big nq = (big)tq * heads * d, nk = (big)np * d, ns = (big)tq * np;
    RULE(nq > I32MAX || nk > I32MAX || ns > I32MAX || (ll)fp + tq > I32MAX, 40024);
    RULE(!q || !k || !hw || !s, 40020);
    RULE(ovl(s, 4 * ns, q, 4 * nq) || ovl(s, 4 * ns, k, 4 * nk) ||
             ovl(s, 4 * ns, hw, 4LL * tq * heads),
         40028);
    return 0;
}

static int spec_select(const float *s, const int32_t *idx, int32_t tq, int32_t np, int32_t pool,
                       int32_t sk, int32_t w, int32_t fp, int32_t tail) {
    RULE(tq < 1, 40021);
    RULE(np < 0, 40022);
    RULE(sk < 1 || w < 1, 40021);
    RULE(fp < 0, 40022);
    RULE(pool < 1 || pool > 64, 40010);
    RULE((ll)tq * np > I32MAX, 40012);
    RULE((ll)w < (ll)sk * pool + pool - 1, 40014);
    RULE(tail != 0 && tail != 1, 40036);
    RULE(!tail && fp < pool - 1, 40013);
    RULE(beyond(tq, np, pool, fp), 40031);
    big ns = (big)tq * np, ni = (big)tq * w;
    RULE(ns > I32MAX || ni > I32MAX || (ll)fp + tq > I32MAX, 40024);
    RULE((!s && ns > 0) || !idx, 40020);
    RULE(ovl(idx, 4 * ni, s, 4 * ns), 40028);
    return 0;
}

static int spec_gemm(const void *w, const void *x, const void *y, int32_t m, int32_t n, int32_t k,
                     int64_t xrs, int64_t xbs, int64_t yrs, int64_t ybs, int32_t b, int32_t bf,
                     const void *ws, size_t wsb) {
    RULE(m < 1 || n < 1 || k < 1 || b < 1, 40021);
    RULE(bf != 0 && bf != 1, 40036);
    RULE(xrs < k || yrs < n || xbs < 0 || ybs < 0, 40030);
    /* Offsets in long double: exact enough to compare with 2^62 without overflow. */
    long double lim = 4611686018427387904.0L;
    long double xe = (long double)(b - 1) * xbs + (long double)(m - 1) * xrs + k;
    long double ye = (long double)(b - 1) * ybs + (long double)(m - 1) * yrs + n;
    long double we = (long double)b * n * k;
    RULE((long double)xrs * m >= lim || (long double)yrs * m >= lim ||
             (long double)xbs * b >= lim || (long double)ybs * b >= lim || xe >= lim ||
             ye >= lim || we >= lim,
         40024);
    RULE(!w || !x || !y || (!ws && wsb > 0), 40020);
    big yb = (big)ye * (bf ? 2 : 4);
    RULE(ovl(y, yb, w, (big)we * 2) || ovl(y, yb, x, (big)xe * 2) || ovl(y, yb, ws, (big)wsb), 40028);
    return 0;
}

/* ---- the property -------------------------------------------------------------------- */

/* The validator must say what the table says; the launcher too where it may be called. A valid
 * call returns 0 (a documented no-op) or the CUDA band when no device is present. */
#define CHECK_LAUNCHER(name, expected, validate_call, launch_call)                             \
    do {                                                                                       \
        int want_ = (expected), got_ = (validate_call);                                        \
        FUZZ_ASSERT_MSG(got_ == want_, "%s: validator returned %d (%s), the table says %d (%s)", \
                        name, got_, mla_status_message(got_), want_, mla_status_message(want_)); \
        if (want_ != 0 || !fuzz_device_present()) {                                                 \
            int rc_ = (launch_call);                                                           \
            if (want_ != 0)                                                                    \
                FUZZ_ASSERT_MSG(rc_ == want_, "%s: launcher returned %d (%s), the table says "  \
                                "%d (%s)", name, rc_, mla_status_message(rc_), want_,          \
                                mla_status_message(want_));                                    \
            else                                                                               \
                FUZZ_ASSERT_MSG(rc_ == 0 || (rc_ > 10000 && rc_ < 20000),                      \
                                "%s: a valid call without a device returned %d (%s)", name,    \
                                rc_, mla_status_message(rc_));                                 \
        }                                                                                      \
    } while (0)

int fuzz_one_input(const uint8_t *data, size_t size) {
    fuzz_producer p = fuzz_producer_init(data, size);
    int which = (int)fuzz_range(&p, 0, 15);
    int32_t a = draw_i32(&p), b = draw_i32(&p), c = draw_i32(&p), d = draw_i32(&p),
            e = draw_i32(&p), f = draw_i32(&p), g = draw_i32(&p), h = draw_i32(&p);
    float s0 = draw_f32(&p), s1 = draw_f32(&p);
    const void *p0 = draw_ptr(&p, NULL);
    const void *p1 = draw_ptr(&p, p0), *p2 = draw_ptr(&p, p0), *p3 = draw_ptr(&p, p0),
               *p4 = draw_ptr(&p, p0);
    float *o0 = (float *)(uintptr_t)p0; /* outputs are the same fake addresses, non-const */
    switch (which) {
    case 0:
        CHECK_LAUNCHER("rope_interleaved", spec_rope(p0, a, b, c, p1, s0),
                       mla_validate_rope_interleaved(p0, a, b, c, p1, s0),
                       memra_mla_rope_interleaved_f32(o0, a, b, c, p1, s0, NULL));
        break;
    case 1:
        CHECK_LAUNCHER("split_latent", spec_split(p0, p1, p2, a, b, c),
                       mla_validate_split_latent(p0, p1, p2, a, b, c),
                       memra_mla_split_latent_f32(p0, (float *)p1, (float *)p2, a, b, c, NULL));
        break;
    case 2:
        CHECK_LAUNCHER("append_latent", spec_append(p0, p1, p2, a, b, c, d),
                       mla_validate_append_latent(p0, p1, p2, a, b, c, d),
                       memra_mla_append_latent_f32(o0, p1, p2, a, b, c, d, NULL));
        break;
    case 3:
        CHECK_LAUNCHER("absorb_q", spec_matvec(p1, p2, p0, a, b, c, d, 1, 1),
                       mla_validate_absorb_q(p1, p2, p0, a, b, c, d, 1),
                       memra_mla_absorb_q_f32(p1, p2, o0, a, b, c, d, NULL));
        break;
    case 4:
        CHECK_LAUNCHER("absorb_q_split", spec_matvec(p1, p2, p0, a, b, c, d, e, 1),
                       mla_validate_absorb_q(p1, p2, p0, a, b, c, d, e),
                       memra_mla_absorb_q_split_f32(p1, p2, o0, a, b, c, d, e, NULL));
        break;
    case 5:
        CHECK_LAUNCHER("decompress_v", spec_matvec(p1, p2, p0, a, b, c, d, 1, 0),
                       mla_validate_decompress_v(p1, p2, p0, a, b, c, d, 1),
                       memra_mla_decompress_v_f32(p1, p2, o0, a, b, c, d, NULL));
        break;
    case 6:
        CHECK_LAUNCHER("decompress_v_split", spec_matvec(p1, p2, p0, a, b, c, d, e, 0),
                       mla_validate_decompress_v(p1, p2, p0, a, b, c, d, e),
                       memra_mla_decompress_v_split_f32(p1, p2, o0, a, b, c, d, e, NULL));
        break;
    case 7:
        CHECK_LAUNCHER("attn_absorbed", spec_attn(p1, p2, p3, NULL, p0, a, b, c, d, e, 0, s0, 0),
                       mla_validate_attn_absorbed(p1, p2, p3, p0, a, b, c, d, e, s0),
                       memra_mla_attn_absorbed_f32(p1, p2, p3, o0, a, b, c, d, e, s0, NULL));
        break;
    case 8:
        CHECK_LAUNCHER("attn_gathered", spec_attn(p1, p2, p3, p4, p0, a, b, c, d, 0, e, s0, 1),
                       mla_validate_attn_gathered(p1, p2, p3, p4, p0, a, b, c, d, e, s0),
                       memra_mla_attn_gathered_f32(p1, p2, p3, p4, o0, a, b, c, d, e, s0, NULL));
        break;
    case 9:
        CHECK_LAUNCHER("index_append_ring", spec_ring(p0, p1, p2, a, b, c, d, e),
                       mla_validate_index_append_ring(p0, p1, p2, a, b, c, d, e),
                       memra_mla_index_append_ring_f32(o0, p1, p2, a, b, c, d, e, NULL));
        break;
    case 10:
        CHECK_LAUNCHER("kpool_pool_keys", spec_keys(p1, p2, p0, a, b, c, d, e),
                       mla_validate_kpool_pool_keys(p1, p2, p0, a, b, c, d, e),
                       memra_mla_kpool_pool_keys_f32(p1, p2, o0, a, b, c, d, e, NULL));
        break;
    case 11:
    case 12:
        CHECK_LAUNCHER(which == 11 ? "kpool_score" : "kpool_score_ref",
                       spec_score(p1, p2, p3, p0, a, b, c, d, e, f, s0, s1),
                       mla_validate_kpool_score(p1, p2, p3, p0, a, b, c, d, e, f, s0, s1),
                       (which == 11 ? memra_mla_kpool_score_f32 : memra_mla_kpool_score_ref_f32)(
                           p1, p2, p3, o0, a, b, c, d, e, f, s0, s1, NULL));
        break;
    case 13:
    case 14:
        CHECK_LAUNCHER(which == 13 ? "kpool_select" : "kpool_select_ref",
                       spec_select(p1, p0, a, b, c, d, e, f, g),
                       mla_validate_kpool_select(p1, p0, a, b, c, d, e, f, g),
                       (which == 13 ? memra_mla_kpool_select_f32 : memra_mla_kpool_select_ref_f32)(
                           p1, (int32_t *)o0, a, b, c, d, e, f, g, NULL));
        break;
    default: {
        int64_t xrs = draw_i64(&p), xbs = draw_i64(&p), yrs = draw_i64(&p), ybs = draw_i64(&p);
        size_t wsb = (size_t)fuzz_range(&p, 0, 1 << 22);
        CHECK_LAUNCHER("bf16_gemm_sb",
                       spec_gemm(p1, p2, p0, a, b, c, xrs, xbs, yrs, ybs, d, g & 3, p3, wsb),
                       mla_validate_bf16_gemm_sb(p1, p2, p0, a, b, c, xrs, xbs, yrs, ybs, d,
                                                 g & 3, p3, wsb),
                       memra_bf16_gemm_sb(p1, p2, o0, a, b, c, xrs, xbs, yrs, ybs, d, g & 3,
                                          (void *)(uintptr_t)p3, wsb, NULL));
        break;
    }
    }
    (void)h;
    return 0;
}
