/* mla_fill.h: the counter-based input generator of the golden fixtures, usable on host and
 * device (header only; every function is MLA_FILL_HD static inline).
 *
 * An input element is a pure function of (case seed, tensor name, element index):
 *   key     = { seed, fnv1a32(tensor name) }
 *   counter = { (idx / 4) low 32 bits, (idx / 4) high 32 bits, 0, 0 }
 *   word    = philox4x32-10(counter, key).v[idx % 4]          (Random123's Philox)
 * so any element can be produced independently, in any order, by any thread, and fixtures store
 * only the SHA-256 of their inputs.
 *
 * Fills (both integer-exact, no transcendental, no rounding ambiguity, no fp contraction):
 *   MLA_FILL_REALISTIC  v = f32((word >> 8) - 2^23) * 2^-23 * scale: uniform on the 2^24-point
 *                       grid of [-1, 1), times `scale` (one f32 rounding, the last multiply).
 *   MLA_FILL_SMALL_INT  v = f32((word % 9) - 4) * scale: integers in [-4, 4] times a power-of-two
 *                       `scale`, so sums of up to ~2^20 products are exact in any order.
 *
 * Streams (discrete draws on host or device: random indices, picks, positions, odd ranges): an
 * mla_fill_stream walks the elements 0, 1, 2, ... of one (seed, name), so a stream is a pure
 * function of its seed and name, and draw k is the Philox word of element k (mla_fill_word):
 *   mla_fill_stream s = mla_fill_stream_init(seed, "name");    s.next = 0
 *   mla_fill_stream_u32(&s)               mla_fill_word(seed, name hash, s.next++)
 *   mla_fill_stream_uniform(&s, lo, hi)   u = f32(word >> 8) * 2^-24 (the 2^24-point grid of
 *                                         [0, 1), exact), v = fmaf(hi - lo, u, lo): the
 *                                         multiply-add fused, so host and device agree whatever the
 *                                         compiler's contraction; v >= hi (rounding) is replaced
 *                                         by the largest f32 below hi, so lo < hi (hi - lo
 *                                         finite) gives [lo, hi). One stream element per call.
 * A bounded index is mla_fill_stream_u32(&s) % n (bias < n / 2^32). A stream is a plain struct:
 * copy it to replay, give each independent sequence its own name (or seed).
 *
 * MLA_FILL_VERSION is recorded in every manifest: bump it whenever any value above changes.
 */
#ifndef MLA_FILL_H
#define MLA_FILL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <Random123/philox.h>

#ifdef __CUDACC__
#define MLA_FILL_HD __host__ __device__
#else
#define MLA_FILL_HD
#endif

#define MLA_FILL_VERSION 1

typedef enum {
    MLA_FILL_REALISTIC = 0, /* uniform in [-scale, scale) */
    MLA_FILL_SMALL_INT = 1, /* {-4..4} * scale, scale a power of two */
    MLA_FILL_EXPLICIT = 2,  /* not generated: values set by the case (e.g. rope positions) */
} mla_fill_kind;

/* 32-bit FNV-1a of a NUL-terminated name. */
MLA_FILL_HD static inline uint32_t mla_fill_name_hash(const char *name) {
    uint32_t h = 2166136261u;
    for (; *name; name++) {
        h ^= (uint32_t)(unsigned char)*name;
        h *= 16777619u;
    }
    return h;
}

/* The raw Philox word of element idx. */
MLA_FILL_HD static inline uint32_t mla_fill_word(uint32_t seed, uint32_t name_hash, uint64_t idx) {
    philox4x32_ctr_t c = {{(uint32_t)(idx >> 2), (uint32_t)(idx >> 34), 0u, 0u}};
    philox4x32_key_t k = {{seed, name_hash}};
    philox4x32_ctr_t r = philox4x32(c, k);
    return r.v[idx & 3u];
}

/* The value of one raw word under each fill (the formulas of the comment above). */
MLA_FILL_HD static inline float mla_fill_of_word(mla_fill_kind kind, uint32_t w, float scale) {
    if (kind == MLA_FILL_SMALL_INT) return (float)((int32_t)(w % 9u) - 4) * scale;
    /* exact: |m| <= 2^23; one rounding, the multiply by scale */
    return ((float)((int32_t)(w >> 8) - (int32_t)(1 << 23)) * 0x1p-23f) * scale;
}

MLA_FILL_HD static inline float mla_fill_realistic(uint32_t seed, uint32_t name_hash, uint64_t idx,
                                                   float scale) {
    return mla_fill_of_word(MLA_FILL_REALISTIC, mla_fill_word(seed, name_hash, idx), scale);
}

MLA_FILL_HD static inline float mla_fill_small_int(uint32_t seed, uint32_t name_hash, uint64_t idx,
                                                   float scale) {
    return mla_fill_of_word(MLA_FILL_SMALL_INT, mla_fill_word(seed, name_hash, idx), scale);
}

MLA_FILL_HD static inline float mla_fill_value(mla_fill_kind kind, uint32_t seed,
                                               uint32_t name_hash, uint64_t idx, float scale) {
    return kind == MLA_FILL_SMALL_INT ? mla_fill_small_int(seed, name_hash, idx, scale)
                                      : mla_fill_realistic(seed, name_hash, idx, scale);
}

/* v rounded to the nearest half and clamped to [-1, 1] (-1, -0.5, 0, 0.5, 1): the attention
 * tests' exact inputs, whose products and sums of a few hundred terms are exact in any order and
 * in bf16 / TF32 (tc_attn_gpu_test's io_halves, the wgmma twin's wg_twin_inputs). */
MLA_FILL_HD static inline float mla_fill_half(float v) {
    return 0.5f * fminf(2.0f, fmaxf(-2.0f, rintf(2.0f * v)));
}

/* Fills host buf[0..n) with elements 0..n-1 of tensor `name`: the same values as
 * mla_fill_value, one Philox call per four elements. */
static inline void mla_fill_host_f32(float *buf, size_t n, mla_fill_kind kind, uint32_t seed,
                                     const char *name, float scale) {
    philox4x32_key_t k = {{seed, mla_fill_name_hash(name)}};
    for (size_t b = 0; b < n; b += 4) {
        uint64_t blk = (uint64_t)b >> 2;
        philox4x32_ctr_t c = {{(uint32_t)blk, (uint32_t)(blk >> 32), 0u, 0u}};
        philox4x32_ctr_t r = philox4x32(c, k);
        for (size_t l = 0; l < 4 && b + l < n; l++)
            buf[b + l] = mla_fill_of_word(kind, r.v[l], scale);
    }
}

/* ---- streams: sequential draws of one (seed, name), element by element (see above) ---- */
typedef struct {
    uint32_t seed, name_hash; /* the key, as for the fills */
    uint64_t next;            /* the element the next draw reads */
} mla_fill_stream;

MLA_FILL_HD static inline mla_fill_stream mla_fill_stream_init(uint32_t seed, const char *name) {
    mla_fill_stream s;
    s.seed = seed;
    s.name_hash = mla_fill_name_hash(name);
    s.next = 0;
    return s;
}

/* The Philox word of element s->next; advances the stream by one element. */
MLA_FILL_HD static inline uint32_t mla_fill_stream_u32(mla_fill_stream *s) {
    uint32_t w = mla_fill_word(s->seed, s->name_hash, s->next);
    s->next++;
    return w;
}

/* Uniform on [lo, hi) for lo < hi, hi - lo finite: fmaf(hi - lo, u, lo), u on the 2^24-point
 * grid of [0, 1) (one stream element). */
MLA_FILL_HD static inline float mla_fill_stream_uniform(mla_fill_stream *s, float lo, float hi) {
    float u = (float)(mla_fill_stream_u32(s) >> 8) * 0x1p-24f; /* exact */
    float v = fmaf(hi - lo, u, lo);
    return v < hi ? v : nextafterf(hi, lo);
}

/* A bf16-representable value: sign, 8 significant bits, exponent in [emin, emax] (two stream
 * elements; the accumulator-model tests' operands). */
static inline float mla_fill_stream_bf16(mla_fill_stream *s, int emin, int emax) {
    uint32_t w = mla_fill_stream_u32(s);
    int e = emin + (int)(mla_fill_stream_u32(s) % (uint32_t)(emax - emin + 1));
    float m = 1.0f + (float)(w & 127u) / 128.0f;
    return ldexpf((w >> 31) ? -m : m, e);
}

/* An f32 with all 24 significant bits drawn: sign, mantissa, exponent in [emin, emax] (two stream
 * elements; the accumulator-model tests' C). */
static inline float mla_fill_stream_f32_bits(mla_fill_stream *s, int emin, int emax) {
    uint32_t w = mla_fill_stream_u32(s);
    int e = emin + (int)(mla_fill_stream_u32(s) % (uint32_t)(emax - emin + 1));
    return ldexpf((w >> 31 ? -1.0f : 1.0f) * (1.0f + (float)(w & 0x7FFFFFu) * 0x1p-23f), e);
}

static inline const char *mla_fill_kind_name(mla_fill_kind k) {
    switch (k) {
    case MLA_FILL_REALISTIC: return "realistic";
    case MLA_FILL_SMALL_INT: return "small_int";
    case MLA_FILL_EXPLICIT: return "explicit";
    }
    return "?";
}

#endif /* MLA_FILL_H */
