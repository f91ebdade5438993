/* contract_codes: aborts when a launcher's status differs from an independent statement of the
 * contract table (docs/contract.md, mla.h's validation order) for a random argument tuple, or
 * when a valid tuple does not reach the device band.
 *
 * The expected code is computed here from the documentation, not from kernels/mla_validate.c:
 * each launcher is a list of rules (predicate, code) tried in order. Pointers are fake,
 * never-dereferenced addresses (NULL, distinct, or overlapping another operand). A tuple the
 * table accepts is passed to the launcher only where no device is present (it must then return
 * the CUDA band); with a device, the validator alone is asked (fake pointers must never reach a
 * kernel).
 *
 * The launcher an input exercises is named by a stable id (the launcher table below): ids are
 * append-only, so the committed corpus keeps its meaning when a launcher is added. */
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "fuzz/fuzz_helpers.h"
#include "kernels/mla.h"
#include "kernels/mla_validate.h"
#include "tests/lib/geometry.h"

#include "fuzz/fuzz_gpu.h"

FUZZ_TARGET_NAME("contract_codes");

typedef long long ll;
/* Extents are products of up to three int32 values: exact in 128 bits, no overflow anywhere. */
typedef __int128 big;
#define I32MAX 2147483647LL

/* ---- argument producers -------------------------------------------------------------- */
/* The value lists below are indexed by the input (FUZZ_PICK): their order and length are part of
 * every committed input's meaning. Never reorder, insert or remove an entry. Model values are
 * written from the presets (tests/lib/geometry.h), edges from the ceilings (kernels/mla_status.h);
 * the numbers are those the corpus was written with. */
/* clang-format off */
static const int32_t INTERESTING[] = {
    INT32_MIN, -1000000, -65, -2, -1, 0, 1, 2, 3, 4, 5, 7, 8,
    MLA_INDEXER_HEADS - 1, MLA_INDEXER_HEADS, MLA_INDEXER_HEADS + 1,
    MLA_MAX_POOL - 1, MLA_MAX_POOL, MLA_MAX_POOL + 1,        /* = glm5's n_head and d_rope */
    MLA_MAX_ROPE - 1, MLA_MAX_ROPE, MLA_MAX_ROPE + 1,        /* = the indexer head dim */
    MLA_GLM5_D_NOPE, MLA_GLM5_D_V, MLA_GLM5_D_V + 1,
    MLA_GLM5_KV_RANK - 1, MLA_GLM5_KV_RANK, MLA_GLM5_KV_RANK + 1, /* = MLA_MAX_INDEX_DIM */
    MLA_MAX_RANK - 1, MLA_MAX_RANK, MLA_MAX_RANK + 1,
    MLA_GLM5_SELECT_K - 1, MLA_GLM5_SELECT_K, MLA_GLM5_NEXT_WIDTH,
    4095, 4096, 8191, 8192, 65535, 65536,
    MLA_GLM5_MAX_POS - 1, MLA_LONGCTX_N_POOLS, MLA_LONGCTX_ROWS - 1, MLA_LONGCTX_ROWS,
    1 << 24, 1 << 30, INT32_MAX};
/* clang-format on */

static int32_t draw_i32(fuzz_producer *p) {
    switch (fuzz_range(p, 0, 3)) {
    case 0: return (int32_t)fuzz_range(p, -8, 600);
    case 1: return (int32_t)fuzz_u32(p);
    default: return FUZZ_PICK(p, INTERESTING);
    }
}

static int64_t draw_i64(fuzz_producer *p) {
    /* GEMM strides: the glm5 absorb / decompress layouts ([t][n_head][dim] rows, a head's
     * block as the batch stride) and their edges. */
    /* clang-format off */
    static const int64_t I64[] = {
        -1, 0, 1, MLA_GLM5_N_HEAD - 1, MLA_GLM5_N_HEAD, MLA_GLM5_D_NOPE - 1, MLA_GLM5_D_NOPE,
        MLA_GLM5_D_V - 1, MLA_GLM5_D_V, MLA_GLM5_KV_RANK - 1, MLA_GLM5_KV_RANK,
        (int64_t)MLA_GLM5_N_HEAD * MLA_GLM5_D_NOPE, (int64_t)MLA_GLM5_N_HEAD * MLA_GLM5_D_V,
        (int64_t)MLA_GLM5_N_HEAD * MLA_GLM5_KV_RANK, 1LL << 31, 1LL << 40, 1LL << 60, INT64_MAX};
    /* clang-format on */
    return fuzz_range(p, 0, 1) ? FUZZ_PICK(p, I64) : (int64_t)fuzz_range(p, -4, 70000);
}

static float draw_f32(fuzz_producer *p) {
    static const float F[] = {0.0f, -0.0f,  1.0f,  -1.0f,    MLA_GLM5_SCALE, MLA_GLM5_ROPE_BASE,
                              8e6f, 1e-30f, 1e30f, INFINITY, -INFINITY,      NAN};
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

#define RULE(cond, code)                                                                           \
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

static int spec_append(const float *cache, const float *c, const float *pe, int32_t slot, int32_t t,
                       int32_t r, int32_t d) {
    RULE(slot < 0, 40022);
    RULE(t < 1 || r < 1, 40021);
    RULE(d < 0, 40022);
    ll w = r + (ll)d;
    RULE(((big)slot + t) * w > I32MAX, 40024);
    RULE(!cache || !c || (d > 0 && !pe), 40020);
    const char *rows = (const char *)cache + 4LL * slot * w;
    RULE(ovl(rows, 4LL * t * w, c, 4LL * t * r) || ovl(rows, 4LL * t * w, pe, 4LL * t * d), 40028);
    return 0;
}

static int spec_matvec(const float *in, const float *w, const float *out, int32_t t, int32_t h,
                       int32_t hd, int32_t r, int32_t split, int absorb) {
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

static int spec_ring(const float *plane, const float *a, const float *b, int32_t slot, int32_t t,
                     int32_t wa, int32_t wb, int32_t rows) {
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

static int spec_keys(const float *st, const float *ape, const float *keys, int32_t pb, int32_t np,
                     int32_t pool, int32_t d, int32_t sr) {
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

static int spec_score(const float *q, const float *k, const float *hw, const float *s, int32_t tq,
                      int32_t heads, int32_t d, int32_t np, int32_t pool, int32_t fp, float qs,
                      float hs) {
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
             (long double)xbs * b >= lim || (long double)ybs * b >= lim || xe >= lim || ye >= lim ||
             we >= lim,
         40024);
    RULE(!w || !x || !y || (!ws && wsb > 0), 40020);
    big yb = (big)ye * (bf ? 2 : 4);
    RULE(ovl(y, yb, w, (big)we * 2) || ovl(y, yb, x, (big)xe * 2) || ovl(y, yb, ws, (big)wsb),
         40028);
    return 0;
}

/* ---- the property -------------------------------------------------------------------- */

/* The validator must say what the table says; the launcher too where it may be called. A valid
 * call returns 0 (a documented no-op) or the CUDA band when no device is present. */
#define CHECK_LAUNCHER(name, expected, validate_call, launch_call)                                 \
    do {                                                                                           \
        int want_ = (expected), got_ = (validate_call);                                            \
        FUZZ_ASSERT_MSG(got_ == want_, "%s: validator returned %d (%s), the table says %d (%s)",   \
                        name, got_, mla_status_message(got_), want_, mla_status_message(want_));   \
        if (want_ != 0 || !fuzz_device_present()) {                                                \
            int rc_ = (launch_call);                                                               \
            if (want_ != 0)                                                                        \
                FUZZ_ASSERT_MSG(rc_ == want_,                                                      \
                                "%s: launcher returned %d (%s), the table says %d (%s)", name,     \
                                rc_, mla_status_message(rc_), want_, mla_status_message(want_));   \
            else                                                                                   \
                FUZZ_ASSERT_MSG(rc_ == 0 || (rc_ > 10000 && rc_ < 20000),                          \
                                "%s: a valid call without a device returned %d (%s)", name, rc_,   \
                                mla_status_message(rc_));                                          \
        }                                                                                          \
    } while (0)

/* The arguments every launcher draws from, drawn in this order after the launcher id. */
typedef struct {
    int32_t a, b, c, d, e, f, g, h;
    float s0, s1;
    const void *p0, *p1, *p2, *p3, *p4;
    float *o0; /* outputs are the same fake addresses as p0, non-const */
} draw_args;

static draw_args draw_common(fuzz_producer *p) {
    draw_args x; /* sequenced draws (never one initializer list): the order is the format */
    x.a = draw_i32(p), x.b = draw_i32(p), x.c = draw_i32(p), x.d = draw_i32(p);
    x.e = draw_i32(p), x.f = draw_i32(p), x.g = draw_i32(p), x.h = draw_i32(p);
    x.s0 = draw_f32(p), x.s1 = draw_f32(p);
    x.p0 = draw_ptr(p, NULL);
    x.p1 = draw_ptr(p, x.p0), x.p2 = draw_ptr(p, x.p0), x.p3 = draw_ptr(p, x.p0);
    x.p4 = draw_ptr(p, x.p0);
    x.o0 = (float *)(uintptr_t)x.p0;
    return x;
}

/* One check per launcher: the table's statement against the validator and the launcher. */
typedef void (*launcher_check)(const char *name, fuzz_producer *p, const draw_args *x);

static void check_rope_interleaved(const char *name, fuzz_producer *p, const draw_args *x) {
    (void)p;
    CHECK_LAUNCHER(name, spec_rope(x->p0, x->a, x->b, x->c, x->p1, x->s0),
                   mla_validate_rope_interleaved(x->p0, x->a, x->b, x->c, x->p1, x->s0),
                   memra_mla_rope_interleaved_f32(x->o0, x->a, x->b, x->c, x->p1, x->s0, NULL));
}

static void check_split_latent(const char *name, fuzz_producer *p, const draw_args *x) {
    (void)p;
    CHECK_LAUNCHER(
        name, spec_split(x->p0, x->p1, x->p2, x->a, x->b, x->c),
        mla_validate_split_latent(x->p0, x->p1, x->p2, x->a, x->b, x->c),
        memra_mla_split_latent_f32(x->p0, (float *)x->p1, (float *)x->p2, x->a, x->b, x->c, NULL));
}

static void check_append_latent(const char *name, fuzz_producer *p, const draw_args *x) {
    (void)p;
    CHECK_LAUNCHER(name, spec_append(x->p0, x->p1, x->p2, x->a, x->b, x->c, x->d),
                   mla_validate_append_latent(x->p0, x->p1, x->p2, x->a, x->b, x->c, x->d),
                   memra_mla_append_latent_f32(x->o0, x->p1, x->p2, x->a, x->b, x->c, x->d, NULL));
}

static void check_absorb_q(const char *name, fuzz_producer *p, const draw_args *x) {
    (void)p;
    CHECK_LAUNCHER(name, spec_matvec(x->p1, x->p2, x->p0, x->a, x->b, x->c, x->d, 1, 1),
                   mla_validate_absorb_q(x->p1, x->p2, x->p0, x->a, x->b, x->c, x->d, 1),
                   memra_mla_absorb_q_f32(x->p1, x->p2, x->o0, x->a, x->b, x->c, x->d, NULL));
}

static void check_absorb_q_split(const char *name, fuzz_producer *p, const draw_args *x) {
    (void)p;
    CHECK_LAUNCHER(
        name, spec_matvec(x->p1, x->p2, x->p0, x->a, x->b, x->c, x->d, x->e, 1),
        mla_validate_absorb_q(x->p1, x->p2, x->p0, x->a, x->b, x->c, x->d, x->e),
        memra_mla_absorb_q_split_f32(x->p1, x->p2, x->o0, x->a, x->b, x->c, x->d, x->e, NULL));
}

static void check_decompress_v(const char *name, fuzz_producer *p, const draw_args *x) {
    (void)p;
    CHECK_LAUNCHER(name, spec_matvec(x->p1, x->p2, x->p0, x->a, x->b, x->c, x->d, 1, 0),
                   mla_validate_decompress_v(x->p1, x->p2, x->p0, x->a, x->b, x->c, x->d, 1),
                   memra_mla_decompress_v_f32(x->p1, x->p2, x->o0, x->a, x->b, x->c, x->d, NULL));
}

static void check_decompress_v_split(const char *name, fuzz_producer *p, const draw_args *x) {
    (void)p;
    CHECK_LAUNCHER(
        name, spec_matvec(x->p1, x->p2, x->p0, x->a, x->b, x->c, x->d, x->e, 0),
        mla_validate_decompress_v(x->p1, x->p2, x->p0, x->a, x->b, x->c, x->d, x->e),
        memra_mla_decompress_v_split_f32(x->p1, x->p2, x->o0, x->a, x->b, x->c, x->d, x->e, NULL));
}

static void check_attn_absorbed(const char *name, fuzz_producer *p, const draw_args *x) {
    (void)p;
    CHECK_LAUNCHER(
        name,
        spec_attn(x->p1, x->p2, x->p3, NULL, x->p0, x->a, x->b, x->c, x->d, x->e, 0, x->s0, 0),
        mla_validate_attn_absorbed(x->p1, x->p2, x->p3, x->p0, x->a, x->b, x->c, x->d, x->e, x->s0),
        memra_mla_attn_absorbed_f32(x->p1, x->p2, x->p3, x->o0, x->a, x->b, x->c, x->d, x->e, x->s0,
                                    NULL));
}

static void check_attn_gathered(const char *name, fuzz_producer *p, const draw_args *x) {
    (void)p;
    CHECK_LAUNCHER(
        name,
        spec_attn(x->p1, x->p2, x->p3, x->p4, x->p0, x->a, x->b, x->c, x->d, 0, x->e, x->s0, 1),
        mla_validate_attn_gathered(x->p1, x->p2, x->p3, x->p4, x->p0, x->a, x->b, x->c, x->d, x->e,
                                   x->s0),
        memra_mla_attn_gathered_f32(x->p1, x->p2, x->p3, x->p4, x->o0, x->a, x->b, x->c, x->d, x->e,
                                    x->s0, NULL));
}

static void check_index_append_ring(const char *name, fuzz_producer *p, const draw_args *x) {
    (void)p;
    CHECK_LAUNCHER(
        name, spec_ring(x->p0, x->p1, x->p2, x->a, x->b, x->c, x->d, x->e),
        mla_validate_index_append_ring(x->p0, x->p1, x->p2, x->a, x->b, x->c, x->d, x->e),
        memra_mla_index_append_ring_f32(x->o0, x->p1, x->p2, x->a, x->b, x->c, x->d, x->e, NULL));
}

static void check_kpool_pool_keys(const char *name, fuzz_producer *p, const draw_args *x) {
    (void)p;
    CHECK_LAUNCHER(
        name, spec_keys(x->p1, x->p2, x->p0, x->a, x->b, x->c, x->d, x->e),
        mla_validate_kpool_pool_keys(x->p1, x->p2, x->p0, x->a, x->b, x->c, x->d, x->e),
        memra_mla_kpool_pool_keys_f32(x->p1, x->p2, x->o0, x->a, x->b, x->c, x->d, x->e, NULL));
}

/* kpool_score and its reference twin share one contract (and one validator). */
typedef int (*score_launcher)(const float *, const float *, const float *, float *, int32_t,
                              int32_t, int32_t, int32_t, int32_t, int32_t, float, float, void *);
static void check_score(const char *name, score_launcher fn, const draw_args *x) {
    CHECK_LAUNCHER(
        name,
        spec_score(x->p1, x->p2, x->p3, x->p0, x->a, x->b, x->c, x->d, x->e, x->f, x->s0, x->s1),
        mla_validate_kpool_score(x->p1, x->p2, x->p3, x->p0, x->a, x->b, x->c, x->d, x->e, x->f,
                                 x->s0, x->s1),
        fn(x->p1, x->p2, x->p3, x->o0, x->a, x->b, x->c, x->d, x->e, x->f, x->s0, x->s1, NULL));
}
static void check_kpool_score(const char *name, fuzz_producer *p, const draw_args *x) {
    (void)p;
    check_score(name, memra_mla_kpool_score_f32, x);
}
static void check_kpool_score_ref(const char *name, fuzz_producer *p, const draw_args *x) {
    (void)p;
    check_score(name, memra_mla_kpool_score_ref_f32, x);
}

/* kpool_select and its reference twin share one contract (and one validator). */
typedef int (*select_launcher)(const float *, int32_t *, int32_t, int32_t, int32_t, int32_t,
                               int32_t, int32_t, int32_t, void *);
static void check_select(const char *name, select_launcher fn, const draw_args *x) {
    CHECK_LAUNCHER(
        name, spec_select(x->p1, x->p0, x->a, x->b, x->c, x->d, x->e, x->f, x->g),
        mla_validate_kpool_select(x->p1, x->p0, x->a, x->b, x->c, x->d, x->e, x->f, x->g),
        fn(x->p1, (int32_t *)x->o0, x->a, x->b, x->c, x->d, x->e, x->f, x->g, NULL));
}
static void check_kpool_select(const char *name, fuzz_producer *p, const draw_args *x) {
    (void)p;
    check_select(name, memra_mla_kpool_select_f32, x);
}
static void check_kpool_select_ref(const char *name, fuzz_producer *p, const draw_args *x) {
    (void)p;
    check_select(name, memra_mla_kpool_select_ref_f32, x);
}

/* The GEMM draws its strides and workspace size after the common arguments. */
static void check_bf16_gemm_sb(const char *name, fuzz_producer *p, const draw_args *x) {
    int64_t xrs = draw_i64(p), xbs = draw_i64(p), yrs = draw_i64(p), ybs = draw_i64(p);
    size_t wsb = (size_t)fuzz_range(p, 0, 1 << 22);
    int32_t bf = x->g & 3;
    CHECK_LAUNCHER(
        name,
        spec_gemm(x->p1, x->p2, x->p0, x->a, x->b, x->c, xrs, xbs, yrs, ybs, x->d, bf, x->p3, wsb),
        mla_validate_bf16_gemm_sb(x->p1, x->p2, x->p0, x->a, x->b, x->c, xrs, xbs, yrs, ybs, x->d,
                                  bf, x->p3, wsb),
        memra_bf16_gemm_sb(x->p1, x->p2, x->o0, x->a, x->b, x->c, xrs, xbs, yrs, ybs, x->d, bf,
                           (void *)(uintptr_t)x->p3, wsb, NULL));
}

/* ---- the launcher table: stable ids ------------------------------------------------------ */
/* An input names its launcher by an id drawn from its first 8 parameter bytes (the input's last
 * 8 bytes, in fuzz_producer order): the selector word v = hi << 32 | lo, where hi and lo are the
 * first and the second fuzz_u32 draws (the two draws fuzz_range makes):
 *
 *   hi != LAUNCHER_EXT_TAG   id = v % 16          ids 0..15: the first sixteen launchers
 *   hi == LAUNCHER_EXT_TAG   id = 16 + lo % 240   ids 16..255: launchers appended later
 *
 * The first line is bit for bit the draw this target made before it had ids,
 * fuzz_range(&p, 0, 15): every input written then (the committed corpus,
 * fuzz/corpus/contract_codes/) selects the launcher it selected, and the argument draws that
 * follow read the same bytes, for every launcher. That draw used all sixteen of its values, so
 * the appended ids live in what it ignored: the top 32 bits of the selector word. Only an input
 * whose last four bytes are "LNCH" (hi == the tag) changed meaning, and the committed corpus had
 * none. An id without a table row is reserved: the input checks nothing.
 *
 * Invariant: an input's id depends on its 8 selector bytes alone, through a formula that never
 * changes. The table is append-only: a new launcher takes the next id (16, 17, ...); never
 * renumber, reorder or reuse an id, and never change the tag, 16 or 240. Appending a launcher
 * only gives a meaning to inputs that checked nothing; no input changes launcher, so committed
 * corpus inputs keep their meaning (libFuzzer's comparison tracing finds the tag for new
 * launchers). tests/test_contract_fuzz_ids.c checks that the table is dense and pinned and that
 * the committed corpus selects what the old draw selected. */
#define LAUNCHER_EXT_TAG 0x48434E4Cu /* the bytes 'L' 'N' 'C' 'H' at the input's end */
#define LAUNCHER_BASE_IDS 16         /* ids 0..15: the selector word modulo 16 */
#define LAUNCHER_EXT_IDS 240         /* ids 16..255: appended launchers */

static const struct {
    uint8_t id;
    const char *name;
    launcher_check check;
} k_launchers[] = {
    {0, "rope_interleaved", check_rope_interleaved},
    {1, "split_latent", check_split_latent},
    {2, "append_latent", check_append_latent},
    {3, "absorb_q", check_absorb_q},
    {4, "absorb_q_split", check_absorb_q_split},
    {5, "decompress_v", check_decompress_v},
    {6, "decompress_v_split", check_decompress_v_split},
    {7, "attn_absorbed", check_attn_absorbed},
    {8, "attn_gathered", check_attn_gathered},
    {9, "index_append_ring", check_index_append_ring},
    {10, "kpool_pool_keys", check_kpool_pool_keys},
    {11, "kpool_score", check_kpool_score},
    {12, "kpool_score_ref", check_kpool_score_ref},
    {13, "kpool_select", check_kpool_select},
    {14, "kpool_select_ref", check_kpool_select_ref},
    {15, "bf16_gemm_sb", check_bf16_gemm_sb},
    /* append here: {16, "...", check_...}, */
};
#define N_LAUNCHERS (sizeof k_launchers / sizeof k_launchers[0])

/* The launcher id of an input (consumes its 8 selector bytes). */
static unsigned draw_launcher_id(fuzz_producer *p) {
    uint32_t hi = fuzz_u32(p), lo = fuzz_u32(p);
    if (hi != LAUNCHER_EXT_TAG) return (unsigned)(((uint64_t)hi << 32 | lo) % LAUNCHER_BASE_IDS);
    return LAUNCHER_BASE_IDS + lo % LAUNCHER_EXT_IDS;
}

int fuzz_one_input(const uint8_t *data, size_t size) {
    fuzz_producer p = fuzz_producer_init(data, size);
    unsigned id = draw_launcher_id(&p);
    draw_args x = draw_common(&p);
    if (id >= N_LAUNCHERS) return 0; /* a reserved id: no launcher yet */
    FUZZ_ASSERT_MSG(k_launchers[id].id == id, "launcher table row %u has id %u (not dense)", id,
                    (unsigned)k_launchers[id].id);
    k_launchers[id].check(k_launchers[id].name, &p, &x);
    return 0;
}
