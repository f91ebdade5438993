/* fuzz_values.h: the Philox fills of the fuzz targets (fuzz_values.c, built without ASan and
 * coverage under --config=fuzz), tests/lib/mla_fill.h's generator and values unchanged. */
#ifndef FUZZ_VALUES_H
#define FUZZ_VALUES_H

#include <stddef.h>
#include <stdint.h>

#include "tests/lib/mla_fill.h"

#ifdef __cplusplus
extern "C" {
#endif

/* = mla_fill_host_f32(buf, n, kind, seed, name, scale). */
void fuzz_fill_f32(float *buf, size_t n, mla_fill_kind kind, uint32_t seed, const char *name,
                   float scale);
/* w[k] = draw k of the stream (seed, name), k = 0..n-1: the words n calls of
 * mla_fill_stream_u32 on mla_fill_stream_init(seed, name) return. */
void fuzz_fill_words(uint32_t *w, size_t n, uint32_t seed, const char *name);
/* The value mla_fill_stream_uniform(s, lo, hi) returns when its draw (the stream's next word)
 * is w: fmaf(hi - lo, (w >> 8) * 2^-24, lo), below hi. Checked against mla_fill.h once per
 * process (a drift aborts). */
float fuzz_uniform_of_word(uint32_t w, float lo, float hi);

#ifdef __cplusplus
}
#endif
#endif /* FUZZ_VALUES_H */
