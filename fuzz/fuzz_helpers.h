/* fuzz_helpers.h: what every fuzz target shares (zstd tests/fuzz style).
 *  - FUZZ_ASSERT / FUZZ_ASSERT_MSG: always on (not compiled out by NDEBUG); on failure they
 *    print the property, file and line, write a reproducer and abort.
 *  - fuzz_producer: draws parameters from the END of the input, so the front stays free for
 *    bulk data (score planes, index lists) and small mutations keep the parameters stable.
 *  - Each target defines fuzz_one_input() (one property per file); fuzz_entry.c wraps it as
 *    LLVMFuzzerTestOneInput (recording the input for reproducers), and regression_driver.c
 *    replays a committed corpus through that same entry point without libFuzzer.
 *  - The draw log ($FUZZ_DRAW_LOG, a path; tools/shrink.py --repro, docs/shrink.md): every
 *    parameter draw and the case description, one line each, so a reproducer can be shrunk by
 *    the values it draws. Off (unset), the draws are what they always were, plus one branch on
 *    a global that stays NULL.
 */
#ifndef FUZZ_HELPERS_H
#define FUZZ_HELPERS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The input being run (set by fuzz_set_current_input, which both the libFuzzer entry shim and
 * the regression driver call), so a failing assert can write it out as a reproducer. */
void fuzz_set_current_input(const uint8_t *data, size_t size);
/* Writes the current input to $FUZZ_REPRO_DIR (default: .) as repro-<target>-<fnv64>.bin and
 * prints the one command that replays it. */
void fuzz_write_reproducer(const char *target);
/* The path fuzz_write_reproducer would write for the current input. */
void fuzz_reproducer_path(const char *target, char *buf, size_t n);
/* The target's name (each target defines it with FUZZ_TARGET_NAME). */
extern const char *fuzz_target_name;

#define FUZZ_ASSERT_MSG(cond, ...)                                                                 \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FUZZ_ASSERT failed: %s\n  at %s:%d\n  ", #cond, __FILE__, __LINE__);  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            fuzz_write_reproducer(fuzz_target_name);                                               \
            abort();                                                                               \
        }                                                                                          \
    } while (0)
#define FUZZ_ASSERT(cond) FUZZ_ASSERT_MSG(cond, "%s", "")

/* The draw log: NULL unless $FUZZ_DRAW_LOG names a file (opened, line-buffered, by the first
 * fuzz_set_current_input; so a log survives the abort of a failing input). Its lines:
 *   input SIZE TARGET                   an input starts (one per execution)
 *   draw range OFF N LO HI VALUE        fuzz_range: OFF = bytes still available from the front
 *                                       before the draw, N = bytes it consumed (8 unless the
 *                                       input ran out), VALUE = what it returned
 *   draw u32 OFF N 0 4294967295 VALUE   a direct fuzz_u32 (a seed): 4 bytes
 *   case DESCRIPTION                    the decoded case (fuzz_tb_casef, or fuzz_log_case)
 * A draw's bytes are data[OFF - N .. OFF - 1], read from the end: fuzz_range's first 32-bit word
 * (data[OFF-1] its top byte .. data[OFF-4]) is the high word of v, the second (data[OFF-5] ..
 * data[OFF-8]) the low word, and it returns LO + v % (HI - LO + 1). */
extern FILE *fuzz_draw_log;
void fuzz_draw_note(const char *kind, size_t off, size_t n, int64_t lo, int64_t hi, int64_t value);
/* Writes "case <description>" to the draw log (nothing when it is off). */
void fuzz_log_case(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Parameter producer over the input's tail. */
typedef struct {
    const uint8_t *data;
    size_t size; /* bytes still available from the front */
} fuzz_producer;

static inline fuzz_producer fuzz_producer_init(const uint8_t *data, size_t size) {
    fuzz_producer p = {data, size};
    return p;
}
/* 32 bits from the end (zero-padded when the input runs out); not logged. */
static inline uint32_t fuzz_take_u32(fuzz_producer *p) {
    uint32_t v = 0;
    for (int i = 0; i < 4 && p->size > 0; i++) {
        v = (v << 8) | p->data[p->size - 1];
        p->size--;
    }
    return v;
}
/* 32 bits from the end (zero-padded when the input runs out). */
static inline uint32_t fuzz_u32(fuzz_producer *p) {
    size_t off = p->size;
    uint32_t v = fuzz_take_u32(p);
    if (fuzz_draw_log) fuzz_draw_note("u32", off, off - p->size, 0, UINT32_MAX, v);
    return v;
}
/* Uniform-ish in [lo, hi] (inclusive), lo <= hi. */
static inline int64_t fuzz_range(fuzz_producer *p, int64_t lo, int64_t hi) {
    size_t off = p->size;
    uint64_t span = (uint64_t)(hi - lo) + 1u;
    uint64_t w_hi = fuzz_take_u32(p); /* the first word is the high one (gcc and clang both */
    uint64_t w_lo = fuzz_take_u32(p); /* evaluated the old one-expression draw this way) */
    uint64_t v = (w_hi << 32) | w_lo;
    int64_t r = span == 0 ? lo + (int64_t)v : lo + (int64_t)(v % span);
    if (fuzz_draw_log) fuzz_draw_note("range", off, off - p->size, lo, hi, r);
    return r;
}
/* Picks one of n values. */
#define FUZZ_PICK(p, arr) ((arr)[fuzz_range((p), 0, (int64_t)(sizeof(arr) / sizeof((arr)[0])) - 1)])
/* The remaining front bytes. */
static inline size_t fuzz_remaining(const fuzz_producer *p) { return p->size; }

/* The property of a target: return 0 (libFuzzer's convention); abort through FUZZ_ASSERT. */
int fuzz_one_input(const uint8_t *data, size_t size);
/* The libFuzzer entry point (fuzz_entry.c): records the input, then calls fuzz_one_input. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Each target file: FUZZ_TARGET_NAME("golden_loader") once at file scope. */
#define FUZZ_TARGET_NAME(name) const char *fuzz_target_name = name

#ifdef __cplusplus
}
#endif
#endif /* FUZZ_HELPERS_H */
