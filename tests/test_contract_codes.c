/* Every documented contract code is provoked through the real launchers (kernels/mla.h) and
 * returns exactly that code; a valid call returns the CUDA band (no device here) or 0, never a
 * 4xxxx code. Buffers are fake, distinct, never-dereferenced addresses: validation compares
 * pointers and must reject before any device work.
 *
 * The tuples are built from the model presets (tests/lib/geometry.h, named below); the other
 * extents (token counts, cache lengths, offsets) are the test's own. Deliberately bad values
 * (negative or zero extents, odd d_rope, overflowing counts, bad flags and scales) are literal
 * or written from the ceilings of kernels/mla_status.h (MLA_MAX_*). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>

#include "kernels/mla.h"
#include "tests/lib/geometry.h"
#include "tests/lib/gpu_util.h"

/* ---- the presets the tuples use ----------------------------------------------------------- */
/* glm5: the dense MLA core (rope on), and its DSA indexer (pool 1, top 2048 tokens, no tail). */
static const int32_t H = MLA_GLM5_N_HEAD, R = MLA_GLM5_KV_RANK, DR = MLA_GLM5_D_ROPE,
                     DN = MLA_GLM5_D_NOPE, DV = MLA_GLM5_D_V;
static const float BASE = MLA_GLM5_ROPE_BASE, SCALE = MLA_GLM5_SCALE;
static const int32_t G5_POOL = MLA_GLM5_POOL, G5_SEL = MLA_GLM5_SELECT_K, G5_WIDTH = MLA_GLM5_WIDTH,
                     G5_TAIL = MLA_GLM5_ALWAYS_TAIL;
/* glm5_next: the NoPE core (d_rope 0), and its k-pool indexer (pool 4, top 512 pools,
 * always_tail, width 2051). */
static const int32_t NX_H = MLA_GLM5_NEXT_N_HEAD, NX_R = MLA_GLM5_NEXT_KV_RANK,
                     NX_DR = MLA_GLM5_NEXT_D_ROPE;
static const float NX_BASE = MLA_GLM5_NEXT_ROPE_BASE, NX_SCALE = MLA_GLM5_NEXT_SCALE;
static const int32_t POOL = MLA_GLM5_NEXT_POOL, SEL = MLA_GLM5_NEXT_SELECT_K,
                     WIDTH = MLA_GLM5_NEXT_WIDTH, TAIL = MLA_GLM5_NEXT_ALWAYS_TAIL;
/* The DSA indexer (both models): 32 heads x 128, its two scales. */
static const int32_t IH = MLA_INDEXER_HEADS, ID = MLA_INDEXER_DIM;
static const float QS = MLA_INDEXER_QK_SCALE, HS = MLA_INDEXER_HEAD_SCALE;
_Static_assert(MLA_GLM5_NEXT_D_ROPE == 0, "the NoPE tuples below use glm5_next's d_rope of 0");

/* The test's own extents. */
enum {
    T_KV = 4096,                      /* cached rows of the attention tuples */
    K_ROWS = 8192,                    /* cached rows of the k-pool tuples, */
    NP = K_ROWS / MLA_GLM5_NEXT_POOL, /* in glm5_next pools */
    RING_ROWS = 64,                   /* the indexer ring of the append tuples */
};

/* Fake device addresses, 2^36 bytes apart so no shape in these tests makes them overlap. */
#define FAKE(i) ((void *)(uintptr_t)(((uintptr_t)(i) + 1u) << 36))
#define F(i) ((float *)FAKE(i))
#define I(i) ((int32_t *)FAKE(i))

#define EXPECT_RC(call, want)                                                                      \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        cr_expect_eq(rc_, (want), "%s\n  returned %d (%s), expected %d (%s)", #call, rc_,          \
                     mla_status_message(rc_), (want), mla_status_message(want));                   \
    } while (0)

/* A valid call on a machine without a device must report the CUDA band, and only then. */
#define EXPECT_VALID_NO_DEVICE(call)                                                               \
    do {                                                                                           \
        char why_[256];                                                                            \
        if (gpu_device_present(why_, sizeof why_))                                                 \
            cr_skip_test("a device is present: valid calls run with real buffers in the GPU "      \
                         "tier");                                                                  \
        int rc_ = (call);                                                                          \
        cr_expect(rc_ == 10035 || rc_ == 10100 || (rc_ > 10000 && rc_ < 20000),                    \
                  "%s\n  returned %d (%s): a valid call without a device must return the "         \
                  "CUDA band",                                                                     \
                  #call, rc_, mla_status_message(rc_));                                            \
    } while (0)

static const float NaN_ = NAN;

/* ------------------------------------------------------------------ rope ------------------- */
/* x is q_pe / k_pe: [n_pos][n_head][d_rope]. */
#define ROPE(x, np, nv, d, pos, base) memra_mla_rope_interleaved_f32(x, np, nv, d, pos, base, NULL)
Test(contract, rope_interleaved) {
    EXPECT_RC(ROPE(F(0), 0, H, DR, I(1), BASE), 40021);
    EXPECT_RC(ROPE(F(0), 4, -1, DR, I(1), BASE), 40021);
    EXPECT_RC(ROPE(F(0), 4, H, -2, I(1), BASE), 40022);
    EXPECT_RC(ROPE(F(0), 4, H, 63, I(1), BASE), 40001);
    EXPECT_RC(ROPE(F(0), 4, H, MLA_MAX_ROPE + 2, I(1), BASE), 40003);
    EXPECT_RC(ROPE(F(0), 4, H, DR, I(1), 0.0f), 40034);
    EXPECT_RC(ROPE(F(0), 4, H, DR, I(1), NaN_), 40034);
    EXPECT_RC(ROPE(F(0), 1 << 20, H, DR, I(1), BASE), 40024);
    EXPECT_RC(ROPE(NULL, 4, H, DR, I(1), BASE), 40020);
    EXPECT_RC(ROPE(F(0), 4, H, DR, NULL, BASE), 40020);
    EXPECT_RC(ROPE(F(0), 4, H, DR, (const int32_t *)(F(0) + 8), BASE), 40028);
    /* d_rope == 0 (glm5_next): the NoPE no-op, even with NULL buffers. */
    EXPECT_RC(ROPE(NULL, 4, NX_H, NX_DR, NULL, NX_BASE), 0);
}
Test(contract, rope_interleaved_valid) { EXPECT_VALID_NO_DEVICE(ROPE(F(0), 4, H, DR, I(1), BASE)); }

/* ------------------------------------------------------------- split / append -------------- */
/* A cache row is [kv_rank | d_rope]: R + DR floats for glm5. */
#define SPLIT(kv, c, pe, t, r, d) memra_mla_split_latent_f32(kv, c, pe, t, r, d, NULL)
Test(contract, split_latent) {
    EXPECT_RC(SPLIT(F(0), F(1), F(2), 0, R, DR), 40021);
    EXPECT_RC(SPLIT(F(0), F(1), F(2), 4, 0, DR), 40021);
    EXPECT_RC(SPLIT(F(0), F(1), F(2), 4, R, -1), 40022);
    EXPECT_RC(SPLIT(F(0), F(1), F(2), 1 << 22, R, DR), 40024);
    EXPECT_RC(SPLIT(NULL, F(1), F(2), 4, R, DR), 40020);
    EXPECT_RC(SPLIT(F(0), NULL, F(2), 4, R, DR), 40020);
    EXPECT_RC(SPLIT(F(0), F(1), NULL, 4, R, DR), 40020);
    EXPECT_RC(SPLIT(F(0), F(0) + 100, F(2), 4, R, DR), 40028);
    EXPECT_RC(SPLIT(F(0), F(1), F(1) + 4 * R - 1, 4, R, DR), 40028);
}
Test(contract, split_latent_valid) {
    EXPECT_VALID_NO_DEVICE(SPLIT(F(0), F(1), F(2), 4, R, DR));
    EXPECT_VALID_NO_DEVICE(SPLIT(F(0), F(1), NULL, 4, NX_R, NX_DR)); /* NoPE: k_pe unused */
}

#define APPEND(c, ckv, pe, s, t, r, d) memra_mla_append_latent_f32(c, ckv, pe, s, t, r, d, NULL)
Test(contract, append_latent) {
    EXPECT_RC(APPEND(F(0), F(1), F(2), -1, 4, R, DR), 40022);
    EXPECT_RC(APPEND(F(0), F(1), F(2), 0, 0, R, DR), 40021);
    EXPECT_RC(APPEND(F(0), F(1), F(2), 0, 4, -5, DR), 40021);
    EXPECT_RC(APPEND(F(0), F(1), F(2), 0, 4, R, -64), 40022);
    EXPECT_RC(APPEND(F(0), F(1), F(2), 4000000, 4, R, DR), 40024);
    EXPECT_RC(APPEND(NULL, F(1), F(2), 0, 4, R, DR), 40020);
    EXPECT_RC(APPEND(F(0), NULL, F(2), 0, 4, R, DR), 40020);
    EXPECT_RC(APPEND(F(0), F(1), NULL, 0, 4, R, DR), 40020);
    EXPECT_RC(APPEND(F(0), F(0) + 10 * (R + DR), F(2), 10, 4, R, DR), 40028);
}
Test(contract, append_latent_valid) {
    EXPECT_VALID_NO_DEVICE(APPEND(F(0), F(1), F(2), T_KV - 4, 4, R, DR));
}

/* ------------------------------------------------------ absorb / decompress (+ split) ------ */
#define ABSORB(a, w, o, t, h, dn, r) memra_mla_absorb_q_f32(a, w, o, t, h, dn, r, NULL)
#define ABSORB_S(a, w, o, t, h, dn, r, s)                                                          \
    memra_mla_absorb_q_split_f32(a, w, o, t, h, dn, r, s, NULL)
#define DECOMP(a, w, o, t, h, dv, r) memra_mla_decompress_v_f32(a, w, o, t, h, dv, r, NULL)
#define DECOMP_S(a, w, o, t, h, dv, r, s)                                                          \
    memra_mla_decompress_v_split_f32(a, w, o, t, h, dv, r, s, NULL)
Test(contract, absorb_q) {
    EXPECT_RC(ABSORB(F(0), F(1), F(2), 0, H, DN, R), 40021);
    EXPECT_RC(ABSORB(F(0), F(1), F(2), 1, 0, DN, R), 40021);
    EXPECT_RC(ABSORB(F(0), F(1), F(2), 1, H, -192, R), 40021);
    EXPECT_RC(ABSORB(F(0), F(1), F(2), 1, H, DN, 0), 40021);
    EXPECT_RC(ABSORB(F(0), F(1), F(2), 1, H, DN, MLA_MAX_RANK + 1), 40002);
    EXPECT_RC(ABSORB(F(0), F(1), F(2), 1, H, MLA_MAX_HEAD_DIM + 1, R), 40037);
    EXPECT_RC(ABSORB(F(0), F(1), F(2), 70000, H, DN, R), 40024);
    EXPECT_RC(ABSORB(NULL, F(1), F(2), 1, H, DN, R), 40020);
    EXPECT_RC(ABSORB(F(0), NULL, F(2), 1, H, DN, R), 40020);
    EXPECT_RC(ABSORB(F(0), F(1), NULL, 1, H, DN, R), 40020);
    EXPECT_RC(ABSORB(F(0), F(1), F(0) + 64, 1, H, DN, R), 40028);
    EXPECT_RC(ABSORB(F(0), F(1), F(1), 1, H, DN, R), 40028);
}
Test(contract, absorb_q_split) {
    EXPECT_RC(ABSORB_S(F(0), F(1), F(2), 1, H, DN, R, 0), 40023);
    EXPECT_RC(ABSORB_S(F(0), F(1), F(2), 1, H, DN, R, R + 1), 40023);
    EXPECT_RC(ABSORB_S(F(0), F(1), F(2), 1, H, DN, MLA_MAX_RANK + 1, 2), 40002);
    EXPECT_RC(ABSORB_S(F(0), F(1), F(2), 0, H, DN, R, 2), 40021);
    EXPECT_RC(ABSORB_S(F(0), F(1), NULL, 1, H, DN, R, 2), 40020);
    EXPECT_RC(ABSORB_S(F(0), F(1), F(0), 1, H, DN, R, 2), 40028);
}
Test(contract, decompress_v) {
    EXPECT_RC(DECOMP(F(0), F(1), F(2), 0, H, DV, R), 40021);
    EXPECT_RC(DECOMP(F(0), F(1), F(2), 1, H, 0, R), 40021);
    EXPECT_RC(DECOMP(F(0), F(1), F(2), 1, H, DV, MLA_MAX_RANK + 1), 40002);
    EXPECT_RC(DECOMP(F(0), F(1), F(2), 1, H, MLA_MAX_HEAD_DIM + 1, R), 40037);
    EXPECT_RC(DECOMP(F(0), F(1), F(2), 1 << 16, H, DV, MLA_MAX_RANK), 40024);
    EXPECT_RC(DECOMP(F(0), F(1), NULL, 1, H, DV, R), 40020);
    EXPECT_RC(DECOMP(F(0), F(1), F(1) + 5, 1, H, DV, R), 40028);
}
Test(contract, decompress_v_split) {
    EXPECT_RC(DECOMP_S(F(0), F(1), F(2), 1, H, DV, R, DV + 1), 40023);
    EXPECT_RC(DECOMP_S(F(0), F(1), F(2), 1, H, DV, R, -1), 40023);
    EXPECT_RC(DECOMP_S(F(0), F(1), F(2), 1, H, MLA_MAX_HEAD_DIM + 1, R, 2), 40037);
    EXPECT_RC(DECOMP_S(NULL, F(1), F(2), 1, H, DV, R, 2), 40020);
}
Test(contract, dense_matvec_valid) {
    EXPECT_VALID_NO_DEVICE(ABSORB(F(0), F(1), F(2), 1, H, DN, R));
    EXPECT_VALID_NO_DEVICE(ABSORB_S(F(0), F(1), F(2), 1, H, DN, R, 16));
    EXPECT_VALID_NO_DEVICE(DECOMP(F(0), F(1), F(2), 4, H, DV, R));
    EXPECT_VALID_NO_DEVICE(DECOMP_S(F(0), F(1), F(2), 4, H, DV, R, DV));
    EXPECT_VALID_NO_DEVICE(DECOMP(F(0), F(0) + 1, F(2), 1, H, DV, R)); /* inputs may overlap */
}

/* ---------------------------------------------------------------- attn_absorbed ------------ */
#define ATTN(ql, qp, c, o, h, r, d, tq, tkv, sc)                                                   \
    memra_mla_attn_absorbed_f32(ql, qp, c, o, h, r, d, tq, tkv, sc, NULL)
Test(contract, attn_absorbed) {
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), 0, R, DR, 1, T_KV, SCALE), 40021);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), H, 0, DR, 1, T_KV, SCALE), 40021);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), H, R, -2, 1, T_KV, SCALE), 40022);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), H, R, DR, 0, T_KV, SCALE), 40021);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), H, R, DR, 1, 0, SCALE), 40021);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), H, R, 63, 1, T_KV, SCALE), 40001);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), H, MLA_MAX_RANK + 1, DR, 1, T_KV, SCALE), 40002);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), H, R, MLA_MAX_ROPE + 2, 1, T_KV, SCALE), 40003);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), H, R, DR, 5, 4, SCALE), 40004);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), H, R, DR, 1, T_KV, INFINITY), 40035);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), H, R, DR, 1, T_KV, NaN_), 40035);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(3), H, R, DR, 1, 4000000, SCALE), 40024);
    EXPECT_RC(ATTN(NULL, F(1), F(2), F(3), H, R, DR, 1, T_KV, SCALE), 40020);
    EXPECT_RC(ATTN(F(0), NULL, F(2), F(3), H, R, DR, 1, T_KV, SCALE), 40020);
    EXPECT_RC(ATTN(F(0), F(1), NULL, F(3), H, R, DR, 1, T_KV, SCALE), 40020);
    EXPECT_RC(ATTN(F(0), F(1), F(2), NULL, H, R, DR, 1, T_KV, SCALE), 40020);
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(0) + 1, H, R, DR, 1, T_KV, SCALE), 40028);
    /* o_lat inside the cache's last row */
    EXPECT_RC(ATTN(F(0), F(1), F(2), F(2) + (T_KV - 1) * (R + DR), H, R, DR, 1, T_KV, SCALE),
              40028);
}
Test(contract, attn_absorbed_valid) {
    EXPECT_VALID_NO_DEVICE(ATTN(F(0), F(1), F(2), F(3), H, R, DR, 1, T_KV, SCALE));
    /* NoPE (glm5_next): q_pe unread, may be NULL. */
    EXPECT_VALID_NO_DEVICE(ATTN(F(0), NULL, F(2), F(3), NX_H, NX_R, NX_DR, 4, T_KV, NX_SCALE));
}

/* ------------------------------------------------------------ index_append_ring ------------ */
/* The indexer state: rows [k | gate], ID + ID floats. */
#define RING(p, a, b, s, t, wa, wb, rows)                                                          \
    memra_mla_index_append_ring_f32(p, a, b, s, t, wa, wb, rows, NULL)
Test(contract, index_append_ring) {
    EXPECT_RC(RING(F(0), F(1), F(2), -1, 4, ID, ID, RING_ROWS), 40022);
    EXPECT_RC(RING(F(0), F(1), F(2), 0, 0, ID, ID, RING_ROWS), 40021);
    EXPECT_RC(RING(F(0), F(1), F(2), 0, 4, 0, ID, RING_ROWS), 40021);
    EXPECT_RC(RING(F(0), F(1), F(2), 0, 4, ID, -1, RING_ROWS), 40022);
    EXPECT_RC(RING(F(0), F(1), F(2), 0, 4, ID, ID, -64), 40022);
    EXPECT_RC(RING(F(0), F(1), F(2), 0, RING_ROWS + 1, ID, ID, RING_ROWS), 40029);
    EXPECT_RC(RING(F(0), F(1), F(2), 2147483647, 4, ID, ID, RING_ROWS), 40024);
    EXPECT_RC(RING(F(0), F(1), F(2), 10000000, 4, ID, ID, 0), 40024);
    EXPECT_RC(RING(NULL, F(1), F(2), 0, 4, ID, ID, RING_ROWS), 40020);
    EXPECT_RC(RING(F(0), NULL, F(2), 0, 4, ID, ID, RING_ROWS), 40020);
    EXPECT_RC(RING(F(0), F(1), NULL, 0, 4, ID, ID, RING_ROWS), 40020);
    /* a inside the ring's last row */
    EXPECT_RC(RING(F(0), F(0) + (RING_ROWS - 1) * 2 * ID, F(2), 0, 4, ID, ID, RING_ROWS), 40028);
}
Test(contract, index_append_ring_valid) {
    EXPECT_VALID_NO_DEVICE(RING(F(0), F(1), F(2), 1000, 4, ID, ID, RING_ROWS)); /* wraps */
    EXPECT_VALID_NO_DEVICE(RING(F(0), F(1), NULL, 1000, 4, ID, 0, 0));          /* flat, b unused */
}

/* --------------------------------------------------------------- kpool_pool_keys ----------- */
#define KEYS(st, ape, k, pb, np, pool, d, sr)                                                      \
    memra_mla_kpool_pool_keys_f32(st, ape, k, pb, np, pool, d, sr, NULL)
Test(contract, kpool_pool_keys) {
    EXPECT_RC(KEYS(F(0), F(1), F(2), -1, 16, POOL, ID, 0), 40022);
    EXPECT_RC(KEYS(F(0), F(1), F(2), 0, -16, POOL, ID, 0), 40022);
    EXPECT_RC(KEYS(F(0), F(1), F(2), 0, 16, POOL, ID, -4), 40022);
    EXPECT_RC(KEYS(F(0), F(1), F(2), 0, 16, 0, ID, 0), 40010);
    EXPECT_RC(KEYS(F(0), F(1), F(2), 0, 16, MLA_MAX_POOL + 1, ID, 0), 40010);
    EXPECT_RC(KEYS(F(0), F(1), F(2), 0, 16, POOL, 0, 0), 40017);
    EXPECT_RC(KEYS(F(0), F(1), F(2), 0, 16, POOL, MLA_MAX_INDEX_DIM + 1, 0), 40033);
    EXPECT_RC(KEYS(F(0), F(1), F(2), 17, 16, POOL, ID, 0), 40025);
    EXPECT_RC(KEYS(F(0), F(1), F(2), 0, 16, POOL, ID, 30), 40016);
    EXPECT_RC(KEYS(F(0), F(1), F(2), 0, 16, POOL, ID, 32), 40018); /* pools 0..7 overwritten */
    EXPECT_RC(KEYS(F(0), F(1), F(2), 0, 1 << 24, POOL, ID, 0), 40024);
    EXPECT_RC(KEYS(NULL, F(1), F(2), 0, 16, POOL, ID, 0), 40020);
    EXPECT_RC(KEYS(F(0), NULL, F(2), 0, 16, POOL, ID, 0), 40020);
    EXPECT_RC(KEYS(F(0), F(1), NULL, 0, 16, POOL, ID, 0), 40020);
    EXPECT_RC(KEYS(F(0), F(1), F(0) + 128, 0, 16, POOL, ID, 0), 40028);
    EXPECT_RC(KEYS(F(0), F(1), F(1) + POOL * ID - 1, 0, 16, POOL, ID, 0), 40028);
}
Test(contract, kpool_pool_keys_valid) {
    EXPECT_VALID_NO_DEVICE(KEYS(F(0), F(1), F(2), 8, 16, POOL, ID, 32)); /* ring, resident pools */
    EXPECT_VALID_NO_DEVICE(KEYS(F(0), F(1), F(2), 0, 16, POOL, ID, 0));
}

/* ------------------------------------------------------------ kpool_score (+ref) ----------- */
/* The queries are the last t_q of K_ROWS cached rows (first_pos K_ROWS - t_q), NP pools. */
typedef int (*score_fn)(const float *, const float *, const float *, float *, int32_t, int32_t,
                        int32_t, int32_t, int32_t, int32_t, float, float, void *);
static void score_codes(score_fn fn) {
#define SC(q, k, hw, s, tq, h, d, np, pool, fp, a, b)                                              \
    fn(q, k, hw, s, tq, h, d, np, pool, fp, a, b, NULL)
    const int32_t fp = K_ROWS - 1;
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 0, IH, ID, NP, POOL, fp, QS, HS), 40021);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, IH, ID, -1, POOL, fp, QS, HS), 40022);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, IH, ID, NP, POOL, -1, QS, HS), 40022);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, 0, ID, NP, POOL, fp, QS, HS), 40011);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, MLA_MAX_INDEX_HEADS + 1, ID, NP, POOL, fp, QS, HS),
              40011);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, IH, 0, NP, POOL, fp, QS, HS), 40017);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, IH, -3, NP, POOL, fp, QS, HS), 40017);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, IH, MLA_MAX_INDEX_DIM + 1, NP, POOL, fp, QS, HS),
              40033);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, IH, ID, NP, 0, fp, QS, HS), 40010);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1 << 16, IH, ID, 1 << 16, POOL, 0, QS, HS), 40012);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, IH, ID, NP, POOL, 8196, QS, HS), 40031);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, IH, ID, NP, POOL, fp, INFINITY, HS), 40035);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, IH, ID, NP, POOL, fp, QS, NaN_), 40035);
    EXPECT_RC(SC(F(0), F(1), F(2), F(3), 1, IH, ID, 1 << 25, POOL, 0, QS, HS), 40024);
    EXPECT_RC(SC(NULL, F(1), F(2), F(3), 1, IH, ID, NP, POOL, fp, QS, HS), 40020);
    EXPECT_RC(SC(F(0), NULL, F(2), F(3), 1, IH, ID, NP, POOL, fp, QS, HS), 40020);
    EXPECT_RC(SC(F(0), F(1), NULL, F(3), 1, IH, ID, NP, POOL, fp, QS, HS), 40020);
    EXPECT_RC(SC(F(0), F(1), F(2), NULL, 1, IH, ID, NP, POOL, fp, QS, HS), 40020);
    EXPECT_RC(SC(F(0), F(1), F(2), F(1) + 7, 1, IH, ID, NP, POOL, fp, QS, HS), 40028);
    /* score on head_w's last element */
    EXPECT_RC(SC(F(0), F(1), F(2), F(2) + IH - 1, 1, IH, ID, NP, POOL, fp, QS, HS), 40028);
#undef SC
}
Test(contract, kpool_score) { score_codes(memra_mla_kpool_score_f32); }
Test(contract, kpool_score_ref) { score_codes(memra_mla_kpool_score_ref_f32); }
Test(contract, kpool_score_valid) {
    EXPECT_VALID_NO_DEVICE(memra_mla_kpool_score_f32(F(0), F(1), F(2), F(3), 4, IH, ID, NP, POOL,
                                                     K_ROWS - 4, QS, HS, NULL));
    EXPECT_VALID_NO_DEVICE(memra_mla_kpool_score_ref_f32(F(0), F(1), F(2), F(3), 4, IH, ID, NP,
                                                         POOL, K_ROWS - 4, QS, HS, NULL));
}

/* ----------------------------------------------------------- kpool_select (+ref) ----------- */
typedef int (*select_fn)(const float *, int32_t *, int32_t, int32_t, int32_t, int32_t, int32_t,
                         int32_t, int32_t, void *);
static void select_codes(select_fn fn) {
#define SE(s, i, tq, np, pool, k, w, fp, tail) fn(s, i, tq, np, pool, k, w, fp, tail, NULL)
    const int32_t fp = K_ROWS - 1;
    EXPECT_RC(SE(F(0), I(1), 0, NP, POOL, SEL, WIDTH, fp, TAIL), 40021);
    EXPECT_RC(SE(F(0), I(1), 1, -1, POOL, SEL, WIDTH, fp, TAIL), 40022);
    EXPECT_RC(SE(F(0), I(1), 1, NP, POOL, 0, WIDTH, fp, TAIL), 40021);
    EXPECT_RC(SE(F(0), I(1), 1, NP, POOL, SEL, 0, fp, TAIL), 40021);
    EXPECT_RC(SE(F(0), I(1), 1, NP, POOL, SEL, WIDTH, -1, TAIL), 40022);
    EXPECT_RC(SE(F(0), I(1), 1, NP, MLA_MAX_POOL + 1, SEL, WIDTH, fp, TAIL), 40010);
    EXPECT_RC(SE(F(0), I(1), 1 << 16, 1 << 16, POOL, SEL, WIDTH, 0, TAIL), 40012);
    EXPECT_RC(SE(F(0), I(1), 1, NP, POOL, SEL, WIDTH - 1, fp, TAIL), 40014);
    EXPECT_RC(SE(F(0), I(1), 1, NP, POOL, SEL, WIDTH, fp, 2), 40036);
    EXPECT_RC(SE(F(0), I(1), 1, NP, POOL, SEL, WIDTH, 2, 0), 40013);
    EXPECT_RC(SE(F(0), I(1), 1, NP, POOL, SEL, WIDTH, 8196, TAIL), 40031);
    EXPECT_RC(SE(F(0), I(1), 1024, NP, POOL, SEL, 1 << 22, 0, TAIL), 40024);
    EXPECT_RC(SE(NULL, I(1), 1, NP, POOL, SEL, WIDTH, fp, TAIL), 40020);
    EXPECT_RC(SE(F(0), NULL, 1, NP, POOL, SEL, WIDTH, fp, TAIL), 40020);
    /* idx on the score plane's last element */
    EXPECT_RC(SE(F(0), (int32_t *)(F(0) + NP - 1), 1, NP, POOL, SEL, WIDTH, fp, TAIL), 40028);
#undef SE
}
Test(contract, kpool_select) { select_codes(memra_mla_kpool_select_f32); }
Test(contract, kpool_select_ref) { select_codes(memra_mla_kpool_select_ref_f32); }
Test(contract, kpool_select_valid) {
    EXPECT_VALID_NO_DEVICE(
        memra_mla_kpool_select_f32(F(0), I(1), 4, NP, POOL, SEL, WIDTH, K_ROWS - 4, TAIL, NULL));
    /* glm5's plain DSA: pools of one row, the last of 2048 rows queries. */
    EXPECT_VALID_NO_DEVICE(memra_mla_kpool_select_ref_f32(F(0), I(1), 1, 2048, G5_POOL, G5_SEL,
                                                          G5_WIDTH, 2047, G5_TAIL, NULL));
}

/* --------------------------------------------------------------- attn_gathered ------------- */
/* glm5 gathers its DSA selection (an index list G5_WIDTH wide); glm5_next its k-pool one. */
#define GATH(ql, qp, c, idx, o, h, r, d, tq, ns, sc)                                               \
    memra_mla_attn_gathered_f32(ql, qp, c, idx, o, h, r, d, tq, ns, sc, NULL)
Test(contract, attn_gathered) {
    const int32_t ns = G5_WIDTH;
    EXPECT_RC(GATH(F(0), F(1), F(2), I(3), F(4), 0, R, DR, 1, ns, SCALE), 40021);
    EXPECT_RC(GATH(F(0), F(1), F(2), I(3), F(4), H, R, DR, 1, -1, SCALE), 40022);
    EXPECT_RC(GATH(F(0), F(1), F(2), I(3), F(4), H, R, DR, 1, 0, SCALE), 40015);
    EXPECT_RC(GATH(F(0), F(1), F(2), I(3), F(4), H, R, 65, 1, ns, SCALE), 40001);
    EXPECT_RC(GATH(F(0), F(1), F(2), I(3), F(4), H, MLA_MAX_RANK + 1, DR, 1, ns, SCALE), 40002);
    EXPECT_RC(GATH(F(0), F(1), F(2), I(3), F(4), H, R, MLA_MAX_ROPE + 2, 1, ns, SCALE), 40003);
    EXPECT_RC(GATH(F(0), F(1), F(2), I(3), F(4), H, R, DR, 1, ns, -INFINITY), 40035);
    EXPECT_RC(GATH(F(0), F(1), F(2), I(3), F(4), H, R, DR, 1 << 17, ns, SCALE), 40024);
    EXPECT_RC(GATH(F(0), F(1), F(2), NULL, F(4), H, R, DR, 1, ns, SCALE), 40020);
    EXPECT_RC(GATH(F(0), F(1), F(2), I(3), NULL, H, R, DR, 1, ns, SCALE), 40020);
    /* o_lat on the index list's last element */
    EXPECT_RC(GATH(F(0), F(1), F(2), I(3), (float *)I(3) + ns - 1, H, R, DR, 1, ns, SCALE), 40028);
}
Test(contract, attn_gathered_valid) {
    EXPECT_VALID_NO_DEVICE(GATH(F(0), F(1), F(2), I(3), F(4), H, R, DR, 4, G5_WIDTH, SCALE));
    EXPECT_VALID_NO_DEVICE(
        GATH(F(0), NULL, F(2), I(3), F(4), NX_H, NX_R, NX_DR, 4, WIDTH, NX_SCALE));
}

/* ----------------------------------------------------------------- bf16 GEMM --------------- */
/* glm5's absorb as one strided batched GEMM, a batch per head: y[128][kv_rank] = x[128][d_nope]
 * w^T, x rows [t][n_head][d_nope] (row stride H * DN, batch stride DN), y rows
 * [t][n_head][kv_rank] (row stride H * R, batch stride R). */
#define GEMM(w, x, y, m, n, k, xrs, xbs, yrs, ybs, b, bf, ws, wsb)                                 \
    memra_bf16_gemm_sb(w, x, y, m, n, k, xrs, xbs, yrs, ybs, b, bf, ws, wsb, NULL)
Test(contract, bf16_gemm_sb) {
    void *const w = FAKE(0), *const x = FAKE(1), *const y = FAKE(2), *const ws = FAKE(3);
    const int64_t xrs = (int64_t)H * DN, yrs = (int64_t)H * R;
    const size_t wsb = 1 << 20;
    EXPECT_RC(GEMM(w, x, y, 0, R, DN, xrs, DN, yrs, R, H, 0, ws, wsb), 40021);
    EXPECT_RC(GEMM(w, x, y, 128, R, DN, xrs, DN, yrs, R, 0, 0, ws, wsb), 40021);
    EXPECT_RC(GEMM(w, x, y, 128, R, DN, xrs, DN, yrs, R, H, 3, ws, wsb), 40036);
    EXPECT_RC(GEMM(w, x, y, 128, R, DN, DN - 1, DN, yrs, R, H, 0, ws, wsb), 40030);
    EXPECT_RC(GEMM(w, x, y, 128, R, DN, xrs, DN, R - 1, R, H, 0, ws, wsb), 40030);
    EXPECT_RC(GEMM(w, x, y, 128, R, DN, xrs, -1, yrs, R, H, 0, ws, wsb), 40030);
    EXPECT_RC(GEMM(w, x, y, 128, R, DN, 1LL << 60, DN, yrs, R, H, 0, ws, wsb), 40024);
    EXPECT_RC(GEMM(NULL, x, y, 128, R, DN, xrs, DN, yrs, R, H, 0, ws, wsb), 40020);
    EXPECT_RC(GEMM(w, x, NULL, 128, R, DN, xrs, DN, yrs, R, H, 0, ws, wsb), 40020);
    EXPECT_RC(GEMM(w, x, y, 128, R, DN, xrs, DN, yrs, R, H, 0, NULL, wsb), 40020);
    EXPECT_RC(GEMM(w, x, x, 128, R, DN, xrs, DN, yrs, R, H, 0, ws, wsb), 40028);
}
Test(contract, bf16_gemm_sb_valid) {
    void *const w = FAKE(0), *const x = FAKE(1), *const y = FAKE(2), *const ws = FAKE(3);
    const int64_t xrs = (int64_t)H * DN, yrs = (int64_t)H * R;
    EXPECT_VALID_NO_DEVICE(GEMM(w, x, y, 128, R, DN, xrs, DN, yrs, R, H, 0, ws, 1 << 20));
    EXPECT_VALID_NO_DEVICE(GEMM(w, x, y, 128, R, DN, xrs, DN, yrs, R, H, 1, NULL, 0));
}
