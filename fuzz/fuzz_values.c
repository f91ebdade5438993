/* fuzz_values.c: the Philox fills of the fuzz targets (fuzz_values.h: fuzz_fill_f32,
 * fuzz_fill_words), tests/lib/mla_fill.h's generator unchanged. Built without ASan and without
 * coverage under --config=fuzz (fuzz/BUILD): the loops touch only the buffer they are given, their
 * branches follow Philox words rather than the input, and instrumented they took a fifth to a
 * third of an execution (docs/fuzzing.md). UBSan stays. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz/fuzz_values.h"

void fuzz_fill_f32(float *buf, size_t n, mla_fill_kind kind, uint32_t seed, const char *name,
                   float scale) {
    mla_fill_host_f32(buf, n, kind, seed, name, scale);
}

void fuzz_fill_words(uint32_t *w, size_t n, uint32_t seed, const char *name) {
    philox4x32_key_t k = {{seed, mla_fill_name_hash(name)}};
    for (size_t b = 0; b < n; b += 4) { /* element e: word e % 4 of counter e / 4 (mla_fill_word) */
        uint64_t blk = (uint64_t)b >> 2;
        philox4x32_ctr_t c = {{(uint32_t)blk, (uint32_t)(blk >> 32), 0u, 0u}};
        philox4x32_ctr_t r = philox4x32(c, k);
        for (size_t l = 0; l < 4 && b + l < n; l++) w[b + l] = r.v[l];
    }
}

static float uniform_of_word(uint32_t w, float lo, float hi) {
    float u = (float)(w >> 8) * 0x1p-24f; /* exact */
    float v = fmaf(hi - lo, u, lo);
    return v < hi ? v : nextafterf(hi, lo);
}

/* The restatement above against mla_fill_stream_uniform itself, on a few draws and ranges. */
static void check_uniform_once(void) {
    static int done;
    if (done) return;
    static const float LO[] = {-1.0f, 0.0f, -3.5f}, HI[] = {1.0f, 1.0f, 0x1p-20f};
    for (int r = 0; r < 3; r++) {
        mla_fill_stream s = mla_fill_stream_init(0x1234567u + (uint32_t)r, "uniform_check");
        for (int k = 0; k < 64; k++) {
            uint32_t w = mla_fill_word(s.seed, s.name_hash, s.next);
            float want = mla_fill_stream_uniform(&s, LO[r], HI[r]);
            if (uniform_of_word(w, LO[r], HI[r]) != want) {
                fprintf(stderr, "fuzz_uniform_of_word: differs from mla_fill_stream_uniform "
                                "(tests/lib/mla_fill.h changed?)\n");
                abort();
            }
        }
    }
    done = 1;
}

float fuzz_uniform_of_word(uint32_t w, float lo, float hi) {
    check_uniform_once();
    return uniform_of_word(w, lo, hi);
}
