/* Every documented contract code is provoked through the real launchers (kernels/mla.h) and
 * returns exactly that code; a valid call returns the CUDA band (no device here) or 0, never a
 * 4xxxx code. Buffers are fake, distinct, never-dereferenced addresses: validation compares
 * pointers and must reject before any device work. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>

#include "kernels/mla.h"
#include "tests/gpu_util.h"

/* Fake device addresses, 2^36 bytes apart so no shape in these tests makes them overlap. */
#define FAKE(i) ((void *)(uintptr_t)(((uintptr_t)(i) + 1u) << 36))
#define F(i) ((float *)FAKE(i))
#define I(i) ((int32_t *)FAKE(i))

#define EXPECT_RC(call, want)                                                                  \
    do {                                                                                       \
        int rc_ = (call);                                                                      \
        cr_expect_eq(rc_, (want), "%s\n  returned %d (%s), expected %d (%s)", #call, rc_,      \
                     mla_status_message(rc_), (want), mla_status_message(want));               \
    } while (0)

/* A valid call on a machine without a device must report the CUDA band, and only then. */
#define EXPECT_VALID_NO_DEVICE(call)                                                           \
    do {                                                                                       \
        char why_[256];                                                                        \
        if (gpu_device_present(why_, sizeof why_))                                             \
            cr_skip_test("a device is present: valid calls run with real buffers in the GPU "  \
                         "tier");                                                              \
        int rc_ = (call);                                                                      \
        cr_expect(rc_ == 10035 || rc_ == 10100 || (rc_ > 10000 && rc_ < 20000),                \
                  "%s\n  returned %d (%s): a valid call without a device must return the "     \
                  "CUDA band",                                                                 \
                  #call, rc_, mla_status_message(rc_));                                        \
    } while (0)

static const float NaN_ = NAN;

/* ------------------------------------------------------------------ rope ------------------- */
#define ROPE(x, np, nv, d, pos, base) memra_mla_rope_interleaved_f32(x, np, nv, d, pos, base, NULL)
Test(contract, rope_interleaved) {
    EXPECT_RC(ROPE(F(0), 0, 64, 64, I(1), 1e6f), 40021);
    EXPECT_RC(ROPE(F(0), 4, -1, 64, I(1), 1e6f), 40021);
    EXPECT_RC(ROPE(F(0), 4, 64, -2, I(1), 1e6f), 40022);
    EXPECT_RC(ROPE(F(0), 4, 64, 63, I(1), 1e6f), 40001);
    EXPECT_RC(ROPE(F(0), 4, 64, MLA_MAX_ROPE + 2, I(1), 1e6f), 40003);
    EXPECT_RC(ROPE(F(0), 4, 64, 64, I(1), 0.0f), 40034);
    EXPECT_RC(ROPE(F(0), 4, 64, 64, I(1), NaN_), 40034);
    EXPECT_RC(ROPE(F(0), 1 << 20, 64, 64, I(1), 1e6f), 40024);
    EXPECT_RC(ROPE(NULL, 4, 64, 64, I(1), 1e6f), 40020);
    EXPECT_RC(ROPE(F(0), 4, 64, 64, NULL, 1e6f), 40020);
    EXPECT_RC(ROPE(F(0), 4, 64, 64, (const int32_t *)(F(0) + 8), 1e6f), 40028);
    /* d_rope == 0: the NoPE no-op, even with NULL buffers. */
    EXPECT_RC(ROPE(NULL, 4, 64, 0, NULL, 1e6f), 0);
}
Test(contract, rope_interleaved_valid) { EXPECT_VALID_NO_DEVICE(ROPE(F(0), 4, 64, 64, I(1), 1e6f)); }

/* ------------------------------------------------------------- split / append -------------- */
#define SPLIT(kv, c, pe, t, r, d) memra_mla_split_latent_f32(kv, c, pe, t, r, d, NULL)
Test(contract, split_latent) {
    EXPECT_RC(SPLIT(F(0), F(1), F(2), 0, 512, 64), 40021);
    EXPECT_RC(SPLIT(F(0), F(1), F(2), 4, 0, 64), 40021);
    EXPECT_RC(SPLIT(F(0), F(1), F(2), 4, 512, -1), 40022);
    EXPECT_RC(SPLIT(F(0), F(1), F(2), 1 << 22, 512, 64), 40024);
    EXPECT_RC(SPLIT(NULL, F(1), F(2), 4, 512, 64), 40020);
    EXPECT_RC(SPLIT(F(0), NULL, F(2), 4, 512, 64), 40020);
    EXPECT_RC(SPLIT(F(0), F(1), NULL, 4, 512, 64), 40020);
    EXPECT_RC(SPLIT(F(0), F(0) + 100, F(2), 4, 512, 64), 40028);
    EXPECT_RC(SPLIT(F(0), F(1), F(1) + 4 * 512 - 1, 4, 512, 64), 40028);
}
Test(contract, split_latent_valid) {
    EXPECT_VALID_NO_DEVICE(SPLIT(F(0), F(1), F(2), 4, 512, 64));
    EXPECT_VALID_NO_DEVICE(SPLIT(F(0), F(1), NULL, 4, 512, 0)); /* NoPE: k_pe unused */
}

#define APPEND(c, ckv, pe, s, t, r, d) memra_mla_append_latent_f32(c, ckv, pe, s, t, r, d, NULL)
Test(contract, append_latent) {
    EXPECT_RC(APPEND(F(0), F(1), F(2), -1, 4, 512, 64), 40022);
    EXPECT_RC(APPEND(F(0), F(1), F(2), 0, 0, 512, 64), 40021);
    EXPECT_RC(APPEND(F(0), F(1), F(2), 0, 4, -5, 64), 40021);
    EXPECT_RC(APPEND(F(0), F(1), F(2), 0, 4, 512, -64), 40022);
    EXPECT_RC(APPEND(F(0), F(1), F(2), 4000000, 4, 512, 64), 40024);
    EXPECT_RC(APPEND(NULL, F(1), F(2), 0, 4, 512, 64), 40020);
    EXPECT_RC(APPEND(F(0), NULL, F(2), 0, 4, 512, 64), 40020);
    EXPECT_RC(APPEND(F(0), F(1), NULL, 0, 4, 512, 64), 40020);
    EXPECT_RC(APPEND(F(0), F(0) + 10 * 576, F(2), 10, 4, 512, 64), 40028);
}
Test(contract, append_latent_valid) { EXPECT_VALID_NO_DEVICE(APPEND(F(0), F(1), F(2), 4092, 4, 512, 64)); }

/* ------------------------------------------------------ absorb / decompress (+ split) ------ */
#define ABSORB(a, w, o, t, h, dn, r) memra_mla_absorb_q_f32(a, w, o, t, h, dn, r, NULL)
#define ABSORB_S(a, w, o, t, h, dn, r, s) memra_mla_absorb_q_split_f32(a, w, o, t, h, dn, r, s, NULL)
#define DECOMP(a, w, o, t, h, dv, r) memra_mla_decompress_v_f32(a, w, o, t, h, dv, r, NULL)
#define DECOMP_S(a, w, o, t, h, dv, r, s) memra_mla_decompress_v_split_f32(a, w, o, t, h, dv, r, s, NULL)
Test(contract, absorb_q) {
    EXPECT_RC(ABSORB(F(0), F(1), F(2), 0, 64, 192, 512), 40021);
    EXPECT_RC(ABSORB(F(0), F(1), F(2), 1, 0, 192, 512), 40021);
    EXPECT_RC(ABSORB(F(0), F(1), F(2), 1, 64, -192, 512), 40021);
    EXPECT_RC(ABSORB(F(0), F(1), F(2), 1, 64, 192, 0), 40021);
    EXPECT_RC(ABSORB(F(0), F(1), F(2), 1, 64, 192, MLA_MAX_RANK + 1), 40002);
    EXPECT_RC(ABSORB(F(0), F(1), F(2), 1, 64, MLA_MAX_HEAD_DIM + 1, 512), 40037);
    EXPECT_RC(ABSORB(F(0), F(1), F(2), 70000, 64, 192, 512), 40024);
    EXPECT_RC(ABSORB(NULL, F(1), F(2), 1, 64, 192, 512), 40020);
    EXPECT_RC(ABSORB(F(0), NULL, F(2), 1, 64, 192, 512), 40020);
    EXPECT_RC(ABSORB(F(0), F(1), NULL, 1, 64, 192, 512), 40020);
    EXPECT_RC(ABSORB(F(0), F(1), F(0) + 64, 1, 64, 192, 512), 40028);
    EXPECT_RC(ABSORB(F(0), F(1), F(1), 1, 64, 192, 512), 40028);
}
Test(contract, absorb_q_split) {
    EXPECT_RC(ABSORB_S(F(0), F(1), F(2), 1, 64, 192, 512, 0), 40023);
    EXPECT_RC(ABSORB_S(F(0), F(1), F(2), 1, 64, 192, 512, 513), 40023);
    EXPECT_RC(ABSORB_S(F(0), F(1), F(2), 1, 64, 192, MLA_MAX_RANK + 1, 2), 40002);
    EXPECT_RC(ABSORB_S(F(0), F(1), F(2), 0, 64, 192, 512, 2), 40021);
    EXPECT_RC(ABSORB_S(F(0), F(1), NULL, 1, 64, 192, 512, 2), 40020);
    EXPECT_RC(ABSORB_S(F(0), F(1), F(0), 1, 64, 192, 512, 2), 40028);
}
Test(contract, decompress_v) {
    EXPECT_RC(DECOMP(F(0), F(1), F(2), 0, 64, 256, 512), 40021);
    EXPECT_RC(DECOMP(F(0), F(1), F(2), 1, 64, 0, 512), 40021);
    EXPECT_RC(DECOMP(F(0), F(1), F(2), 1, 64, 256, MLA_MAX_RANK + 1), 40002);
    EXPECT_RC(DECOMP(F(0), F(1), F(2), 1, 64, MLA_MAX_HEAD_DIM + 1, 512), 40037);
    EXPECT_RC(DECOMP(F(0), F(1), F(2), 1 << 16, 64, 256, 1024), 40024);
    EXPECT_RC(DECOMP(F(0), F(1), NULL, 1, 64, 256, 512), 40020);
    EXPECT_RC(DECOMP(F(0), F(1), F(1) + 5, 1, 64, 256, 512), 40028);
}
Test(contract, decompress_v_split) {
    EXPECT_RC(DECOMP_S(F(0), F(1), F(2), 1, 64, 256, 512, 257), 40023);
    EXPECT_RC(DECOMP_S(F(0), F(1), F(2), 1, 64, 256, 512, -1), 40023);
    EXPECT_RC(DECOMP_S(F(0), F(1), F(2), 1, 64, MLA_MAX_HEAD_DIM + 1, 512, 2), 40037);
    EXPECT_RC(DECOMP_S(NULL, F(1), F(2), 1, 64, 256, 512, 2), 40020);
}
Test(contract, dense_matvec_valid) {
    EXPECT_VALID_NO_DEVICE(ABSORB(F(0), F(1), F(2), 1, 64, 192, 512));
    EXPECT_VALID_NO_DEVICE(ABSORB_S(F(0), F(1), F(2), 1, 64, 192, 512, 16));
    EXPECT_VALID_NO_DEVICE(DECOMP(F(0), F(1), F(2), 4, 64, 256, 512));
    EXPECT_VALID_NO_DEVICE(DECOMP_S(F(0), F(1), F(2), 4, 64, 256, 512, 256));
    EXPECT_VALID_NO_DEVICE(DECOMP(F(0), F(0) + 1, F(2), 1, 64, 256, 512)); /* inputs may overlap */
}

/* ---------------------------------------------------------------- attn_absorbed ------------ */
#define ATTN(ql, qp, c, o, h, r, d, tq, tkv, sc) \
    memra_mla_attn_absorbed_f32(ql, qp, c, o, h, r, d, tq, tkv, sc, NULL)
Test(contract, attn_absorbed) {
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), 0, 512, 64, 1, 4096, 0.0625f), 40021);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), 64, 0, 64, 1, 4096, 0.0625f), 40021);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), 64, 512, -2, 1, 4096, 0.0625f), 40022);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), 64, 512, 64, 0, 4096, 0.0625f), 40021);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), 64, 512, 64, 1, 0, 0.0625f), 40021);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), 64, 512, 63, 1, 4096, 0.0625f), 40001);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), 64, MLA_MAX_RANK + 1, 64, 1, 4096, 0.0625f), 40002);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), 64, 512, MLA_MAX_ROPE + 2, 1, 4096, 0.0625f), 40003);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), 64, 512, 64, 5, 4, 0.0625f), 40004);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), 64, 512, 64, 1, 4096, INFINITY), 40035);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), 64, 512, 64, 1, 4096, NaN_), 40035);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), 64, 512, 64, 1, 4000000, 0.0625f), 40024);
    EXPECT_RC(ATTN(NULL, F(1), F(2), F(3), 64, 512, 64, 1, 4096, 0.0625f), 40020);
    EXPECT_RC(ATTN(F(0), NULL, F(2), F(3), 64, 512, 64, 1, 4096, 0.0625f), 40020);
    EXPECT_RC(ATTN(F(0), F(1), NULL, F(3), 64, 512, 64, 1, 4096, 0.0625f), 40020);
    EXPECT_RC(ATTN(F(0), F(1), F(2), NULL, 64, 512, 64, 1, 4096, 0.0625f), 40020);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(0) + 1, 64, 512, 64, 1, 4096, 0.0625f), 40028);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(2) + 4095 * 576, 64, 512, 64, 1, 4096, 0.0625f), 40028);
}
Test(contract, attn_absorbed_valid) {
    EXPECT_VALID_NO_DEVICE(ATTN(F(0), F(1), F(2), F(3), 64, 512, 64, 1, 4096, 0.0625f));
    /* NoPE: q_pe unread, may be NULL. */
    EXPECT_VALID_NO_DEVICE(ATTN(F(0), NULL, F(2), F(3), 64, 512, 0, 4, 4096, 0.0625f));
}

/* ------------------------------------------------------------ index_append_ring ------------ */
#define RING(p, a, b, s, t, wa, wb, rows) memra_mla_index_append_ring_f32(p, a, b, s, t, wa, wb, rows, NULL)
Test(contract, index_append_ring) {
    EXPECT_RC(RING(F(0), F(1), F(2), -1, 4, 128, 128, 64), 40022);
    EXPECT_RC(RING(F(0), F(1), F(2), 0, 0, 128, 128, 64), 40021);
    EXPECT_RC(RING(F(0), F(1), F(2), 0, 4, 0, 128, 64), 40021);
    EXPECT_RC(RING(F(0), F(1), F(2), 0, 4, 128, -1, 64), 40022);
    EXPECT_RC(RING(F(0), F(1), F(2), 0, 4, 128, 128, -64), 40022);
    EXPECT_RC(RING(F(0), F(1), F(2), 0, 65, 128, 128, 64), 40029);
    EXPECT_RC(RING(F(0), F(1), F(2), 2147483647, 4, 128, 128, 64), 40024);
    EXPECT_RC(RING(F(0), F(1), F(2), 10000000, 4, 128, 128, 0), 40024);
    EXPECT_RC(RING(NULL, F(1), F(2), 0, 4, 128, 128, 64), 40020);
    EXPECT_RC(RING(F(0), NULL, F(2), 0, 4, 128, 128, 64), 40020);
    EXPECT_RC(RING(F(0), F(1), NULL, 0, 4, 128, 128, 64), 40020);
    EXPECT_RC(RING(F(0), F(0) + 63 * 256, F(2), 0, 4, 128, 128, 64), 40028);
}
Test(contract, index_append_ring_valid) {
    EXPECT_VALID_NO_DEVICE(RING(F(0), F(1), F(2), 1000, 4, 128, 128, 64)); /* wraps */
    EXPECT_VALID_NO_DEVICE(RING(F(0), F(1), NULL, 1000, 4, 128, 0, 0));    /* flat, b unused */
}

/* --------------------------------------------------------------- kpool_pool_keys ----------- */
#define KEYS(st, ape, k, pb, np, pool, d, sr) memra_mla_kpool_pool_keys_f32(st, ape, k, pb, np, pool, d, sr, NULL)
Test(contract, kpool_pool_keys) {
    EXPECT_RC(KEYS(F(0), F(1), F(2), -1, 16, 4, 128, 0), 40022);
    EXPECT_RC(KEYS(F(0), F(1), F(2), 0, -16, 4, 128, 0), 40022);
    EXPECT_RC(KEYS(F(0), F(1), F(2), 0, 16, 4, 128, -4), 40022);
    EXPECT_RC(KEYS(F(0), F(1), F(2), 0, 16, 0, 128, 0), 40010);
    EXPECT_RC(KEYS(F(0), F(1), F(2), 0, 16, MLA_MAX_POOL + 1, 128, 0), 40010);
    EXPECT_RC(KEYS(F(0), F(1), F(2), 0, 16, 4, 0, 0), 40017);
    EXPECT_RC(KEYS(F(0), F(1), F(2), 0, 16, 4, MLA_MAX_INDEX_DIM + 1, 0), 40033);
    EXPECT_RC(KEYS(F(0), F(1), F(2), 17, 16, 4, 128, 0), 40025);
    EXPECT_RC(KEYS(F(0), F(1), F(2), 0, 16, 4, 128, 30), 40016);
    EXPECT_RC(KEYS(F(0), F(1), F(2), 0, 16, 4, 128, 32), 40018); /* pools 0..7 overwritten */
    EXPECT_RC(KEYS(F(0), F(1), F(2), 0, 1 << 24, 4, 128, 0), 40024);
    EXPECT_RC(KEYS(NULL, F(1), F(2), 0, 16, 4, 128, 0), 40020);
    EXPECT_RC(KEYS(F(0), NULL, F(2), 0, 16, 4, 128, 0), 40020);
    EXPECT_RC(KEYS(F(0), F(1), NULL, 0, 16, 4, 128, 0), 40020);
    EXPECT_RC(KEYS(F(0), F(1), F(0) + 128, 0, 16, 4, 128, 0), 40028);
    EXPECT_RC(KEYS(F(0), F(1), F(1) + 4 * 128 - 1, 0, 16, 4, 128, 0), 40028);
}
Test(contract, kpool_pool_keys_valid) {
    EXPECT_VALID_NO_DEVICE(KEYS(F(0), F(1), F(2), 8, 16, 4, 128, 32)); /* ring, resident pools */
    EXPECT_VALID_NO_DEVICE(KEYS(F(0), F(1), F(2), 0, 16, 4, 128, 0));
}

/* ------------------------------------------------------------ kpool_score (+ref) ----------- */
typedef int (*score_fn)(const float *, const float *, const float *, float *, int32_t, int32_t,
                        int32_t, int32_t, int32_t, int32_t, float, float, void *);
static void score_codes(score_fn fn) {
#define SC(q, k, hw, s, tq, h, d, np, pool, fp, a, b) fn(q, k, hw, s, tq, h, d, np, pool, fp, a, b, NULL)
    const float qs = 0.08838835f, hs = 0.17677669f;
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 0, 32, 128, 2048, 4, 8191, qs, hs), 40021);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, 32, 128, -1, 4, 8191, qs, hs), 40022);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, 32, 128, 2048, 4, -1, qs, hs), 40022);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, 0, 128, 2048, 4, 8191, qs, hs), 40011);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, 1025, 128, 2048, 4, 8191, qs, hs), 40011);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, 32, 0, 2048, 4, 8191, qs, hs), 40017);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, 32, -3, 2048, 4, 8191, qs, hs), 40017);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, 32, MLA_MAX_INDEX_DIM + 1, 2048, 4, 8191, qs, hs), 40033);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, 32, 128, 2048, 0, 8191, qs, hs), 40010);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1 << 16, 32, 128, 1 << 16, 4, 0, qs, hs), 40012);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, 32, 128, 2048, 4, 8196, qs, hs), 40031);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, 32, 128, 2048, 4, 8191, INFINITY, hs), 40035);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, 32, 128, 2048, 4, 8191, qs, NaN_), 40035);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, 32, 128, 1 << 25, 4, 0, qs, hs), 40024);
    EXPECT_RC(SC(NULL, F(1), F(2), F(3), 1, 32, 128, 2048, 4, 8191, qs, hs), 40020);
    EXPECT_RC(SC(F(0), NULL, F(2), F(3), 1, 32, 128, 2048, 4, 8191, qs, hs), 40020);
    EXPECT_RC(SC(F(0), F(1), NULL, F(3), 1, 32, 128, 2048, 4, 8191, qs, hs), 40020);
    EXPECT_RC(SC(F(0), F(1), F(2), NULL, 1, 32, 128, 2048, 4, 8191, qs, hs), 40020);
    EXPECT_RC(SC(F(0), F(1), F(2), F(1) + 7, 1, 32, 128, 2048, 4, 8191, qs, hs), 40028);
    EXPECT_RC(SC(F(0), F(1), F(2), F(2) + 31, 1, 32, 128, 2048, 4, 8191, qs, hs), 40028);
#undef SC
}
Test(contract, kpool_score) { score_codes(memra_mla_kpool_score_f32); }
Test(contract, kpool_score_ref) { score_codes(memra_mla_kpool_score_ref_f32); }
Test(contract, kpool_score_valid) {
    EXPECT_VALID_NO_DEVICE(memra_mla_kpool_score_f32(F(0), F(1), F(2), F(3), 4, 32, 128, 2048, 4,
                                                     8188, 0.088f, 0.177f, NULL));
    EXPECT_VALID_NO_DEVICE(memra_mla_kpool_score_ref_f32(F(0), F(1), F(2), F(3), 4, 32, 128,
                                                         2048, 4, 8188, 0.088f, 0.177f, NULL));
}

/* ----------------------------------------------------------- kpool_select (+ref) ----------- */
typedef int (*select_fn)(const float *, int32_t *, int32_t, int32_t, int32_t, int32_t, int32_t,
                         int32_t, int32_t, void *);
static void select_codes(select_fn fn) {
#define SE(s, i, tq, np, pool, k, w, fp, tail) fn(s, i, tq, np, pool, k, w, fp, tail, NULL)
    EXPECT_RC(SE(F(0), I(1), 0, 2048, 4, 512, 2051, 8191, 1), 40021);
    EXPECT_RC(SE(F(0), I(1), 1, -1, 4, 512, 2051, 8191, 1), 40022);
    EXPECT_RC(SE(F(0), I(1), 1, 2048, 4, 0, 2051, 8191, 1), 40021);
    EXPECT_RC(SE(F(0), I(1), 1, 2048, 4, 512, 0, 8191, 1), 40021);
    EXPECT_RC(SE(F(0), I(1), 1, 2048, 4, 512, 2051, -1, 1), 40022);
    EXPECT_RC(SE(F(0), I(1), 1, 2048, 65, 512, 2051, 8191, 1), 40010);
    EXPECT_RC(SE(F(0), I(1), 1 << 16, 1 << 16, 4, 512, 2051, 0, 1), 40012);
    EXPECT_RC(SE(F(0), I(1), 1, 2048, 4, 512, 2050, 8191, 1), 40014);
    EXPECT_RC(SE(F(0), I(1), 1, 2048, 4, 512, 2051, 8191, 2), 40036);
    EXPECT_RC(SE(F(0), I(1), 1, 2048, 4, 512, 2051, 2, 0), 40013);
    EXPECT_RC(SE(F(0), I(1), 1, 2048, 4, 512, 2051, 8196, 1), 40031);
    EXPECT_RC(SE(F(0), I(1), 1024, 2048, 4, 512, 1 << 22, 0, 1), 40024);
    EXPECT_RC(SE(NULL, I(1), 1, 2048, 4, 512, 2051, 8191, 1), 40020);
    EXPECT_RC(SE(F(0), NULL, 1, 2048, 4, 512, 2051, 8191, 1), 40020);
    EXPECT_RC(SE(F(0), (int32_t *)(F(0) + 2047), 1, 2048, 4, 512, 2051, 8191, 1), 40028);
#undef SE
}
Test(contract, kpool_select) { select_codes(memra_mla_kpool_select_f32); }
Test(contract, kpool_select_ref) { select_codes(memra_mla_kpool_select_ref_f32); }
Test(contract, kpool_select_valid) {
    EXPECT_VALID_NO_DEVICE(memra_mla_kpool_select_f32(F(0), I(1), 4, 2048, 4, 512, 2051, 8188, 1, NULL));
    EXPECT_VALID_NO_DEVICE(memra_mla_kpool_select_ref_f32(F(0), I(1), 1, 2048, 1, 2048, 2048, 2047, 0, NULL));
}

/* --------------------------------------------------------------- attn_gathered ------------- */
#define GATH(ql, qp, c, idx, o, h, r, d, tq, ns, sc) \
    memra_mla_attn_gathered_f32(ql, qp, c, idx, o, h, r, d, tq, ns, sc, NULL)
Test(contract, attn_gathered) {
    EXPECT_RC(GATH(F(0), F(1), F(2), I(3), F(4), 0, 512, 64, 1, 2048, 0.0625f), 40021);
    EXPECT_RC(GATH(F(0), F(1), F(2), I(3), F(4), 64, 512, 64, 1, -1, 0.0625f), 40022);
    EXPECT_RC(GATH(F(0), F(1), F(2), I(3), F(4), 64, 512, 64, 1, 0, 0.0625f), 40015);
    EXPECT_RC(GATH(F(0), F(1), F(2), I(3), F(4), 64, 512, 65, 1, 2048, 0.0625f), 40001);
    EXPECT_RC(GATH(F(0), F(1), F(2), I(3), F(4), 64, MLA_MAX_RANK + 1, 64, 1, 2048, 0.0625f), 40002);
    EXPECT_RC(GATH(F(0), F(1), F(2), I(3), F(4), 64, 512, MLA_MAX_ROPE + 2, 1, 2048, 0.0625f), 40003);
    EXPECT_RC(GATH(F(0), F(1), F(2), I(3), F(4), 64, 512, 64, 1, 2048, -INFINITY), 40035);
    EXPECT_RC(GATH(F(0), F(1), F(2), I(3), F(4), 64, 512, 64, 1 << 17, 2048, 0.0625f), 40024);
    EXPECT_RC(GATH(F(0), F(1), F(2), NULL, F(4), 64, 512, 64, 1, 2048, 0.0625f), 40020);
    EXPECT_RC(GATH(F(0), F(1), F(2), I(3), NULL, 64, 512, 64, 1, 2048, 0.0625f), 40020);
    EXPECT_RC(GATH(F(0), F(1), F(2), I(3), (float *)I(3) + 2047, 64, 512, 64, 1, 2048, 0.0625f), 40028);
}
Test(contract, attn_gathered_valid) {
    EXPECT_VALID_NO_DEVICE(GATH(F(0), F(1), F(2), I(3), F(4), 64, 512, 64, 4, 2048, 0.0625f));
    EXPECT_VALID_NO_DEVICE(GATH(F(0), NULL, F(2), I(3), F(4), 64, 512, 0, 4, 2051, 0.0625f));
}

/* ----------------------------------------------------------------- bf16 GEMM --------------- */
#define GEMM(w, x, y, m, n, k, xrs, xbs, yrs, ybs, b, bf, ws, wsb) \
    memra_bf16_gemm_sb(w, x, y, m, n, k, xrs, xbs, yrs, ybs, b, bf, ws, wsb, NULL)
Test(contract, bf16_gemm_sb) {
    EXPECT_RC(GEMM(FAKE(0), FAKE(1), FAKE(2), 0, 512, 192, 12288, 192, 32768, 512, 64, 0, FAKE(3), 1 << 20), 40021);
    EXPECT_RC(GEMM(FAKE(0), FAKE(1), FAKE(2), 128, 512, 192, 12288, 192, 32768, 512, 0, 0, FAKE(3), 1 << 20), 40021);
    EXPECT_RC(GEMM(FAKE(0), FAKE(1), FAKE(2), 128, 512, 192, 12288, 192, 32768, 512, 64, 3, FAKE(3), 1 << 20), 40036);
    EXPECT_RC(GEMM(FAKE(0), FAKE(1), FAKE(2), 128, 512, 192, 191, 192, 32768, 512, 64, 0, FAKE(3), 1 << 20), 40030);
    EXPECT_RC(GEMM(FAKE(0), FAKE(1), FAKE(2), 128, 512, 192, 12288, 192, 511, 512, 64, 0, FAKE(3), 1 << 20), 40030);
    EXPECT_RC(GEMM(FAKE(0), FAKE(1), FAKE(2), 128, 512, 192, 12288, -1, 32768, 512, 64, 0, FAKE(3), 1 << 20), 40030);
    EXPECT_RC(GEMM(FAKE(0), FAKE(1), FAKE(2), 128, 512, 192, 1LL << 60, 192, 32768, 512, 64, 0, FAKE(3), 1 << 20), 40024);
    EXPECT_RC(GEMM(NULL, FAKE(1), FAKE(2), 128, 512, 192, 12288, 192, 32768, 512, 64, 0, FAKE(3), 1 << 20), 40020);
    EXPECT_RC(GEMM(FAKE(0), FAKE(1), NULL, 128, 512, 192, 12288, 192, 32768, 512, 64, 0, FAKE(3), 1 << 20), 40020);
    EXPECT_RC(GEMM(FAKE(0), FAKE(1), FAKE(2), 128, 512, 192, 12288, 192, 32768, 512, 64, 0, NULL, 1 << 20), 40020);
    EXPECT_RC(GEMM(FAKE(0), FAKE(1), FAKE(1), 128, 512, 192, 12288, 192, 32768, 512, 64, 0, FAKE(3), 1 << 20), 40028);
}
Test(contract, bf16_gemm_sb_valid) {
    EXPECT_VALID_NO_DEVICE(GEMM(FAKE(0), FAKE(1), FAKE(2), 128, 512, 192, 12288, 192, 32768, 512, 64, 0, FAKE(3), 1 << 20));
    EXPECT_VALID_NO_DEVICE(GEMM(FAKE(0), FAKE(1), FAKE(2), 128, 512, 192, 12288, 192, 32768, 512, 64, 1, NULL, 0));
}
