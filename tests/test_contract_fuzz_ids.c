/* The launcher ids of the contract_codes fuzz target are stable (fuzz/contract_codes.c, "the
 * launcher table: stable ids"):
 *  - the table is dense (row i has id i), its names and checks are distinct;
 *  - the first sixteen ids are pinned to their launchers (PINNED, written out once here);
 *  - without the tag the id draw is the draw the target made before it had ids,
 *    fuzz_range(&p, 0, 15) (restated here as "before"), reading the same bytes; with the tag
 *    (the input ends with "LNCH") it names ids 16..255;
 *  - every input of the committed corpus (fuzz/corpus/contract_codes/) selects the launcher the
 *    old draw selected and leaves the same bytes to the argument draws; a tagged committed input
 *    must name an appended launcher (today there is none, so there is no tagged input).
 * The target's source is included so its static table and draw are visible (its fuzz_one_input
 * and FUZZ_TARGET_NAME come along; fuzz/fuzz_entry.c is linked for the reproducer writer). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/contract_codes.c"

#define CORPUS_DIR "fuzz/corpus/contract_codes"

/* The launcher of each of the first sixteen ids, forever (the old switch's cases 0..15). */
static const char *const PINNED[16] = {
    "rope_interleaved",   /* 0 */
    "split_latent",       /* 1 */
    "append_latent",      /* 2 */
    "absorb_q",           /* 3 */
    "absorb_q_split",     /* 4 */
    "decompress_v",       /* 5 */
    "decompress_v_split", /* 6 */
    "attn_absorbed",      /* 7 */
    "attn_gathered",      /* 8 */
    "index_append_ring",  /* 9 */
    "kpool_pool_keys",    /* 10 */
    "kpool_score",        /* 11 */
    "kpool_score_ref",    /* 12 */
    "kpool_select",       /* 13 */
    "kpool_select_ref",   /* 14 */
    "bf16_gemm_sb",       /* 15 (the old switch's default) */
};

/* Reports a failed expectation only (a passing one costs a report each, and the loops below
 * run 200000), and the first 20 of a test's failures. */
static int failures_reported;
#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond) && failures_reported++ < 20) cr_expect(0, __VA_ARGS__);                        \
    } while (0)

/* Before the table: the launcher index and the producer left to the argument draws. */
static unsigned old_draw(fuzz_producer *p) { return (unsigned)fuzz_range(p, 0, 15); }

/* The selector draw of an input, old and new, from two copies of one producer: the ids agree
 * (untagged inputs) and both leave the same bytes. Returns the new id. */
static unsigned draw_both(const uint8_t *data, size_t size, const char *what, int *tagged) {
    fuzz_producer before = fuzz_producer_init(data, size), after = before, peek = before;
    unsigned old_id = old_draw(&before), id = draw_launcher_id(&after);
    *tagged = fuzz_u32(&peek) == LAUNCHER_EXT_TAG;
    EXPECT(after.size == before.size,
           "%s: the id draw left %zu bytes, the old draw %zu: the argument draws moved", what,
           after.size, before.size);
    if (!*tagged)
        EXPECT(id == old_id, "%s: untagged input selects id %u, the old draw selected %u", what, id,
               old_id);
    return id;
}

Test(contract_fuzz_ids, selector_constants_pinned) {
    cr_expect_eq(LAUNCHER_BASE_IDS, 16);
    cr_expect_eq(LAUNCHER_EXT_IDS, 240);
    cr_expect_eq(LAUNCHER_EXT_TAG, 0x48434E4Cu);
    cr_expect_eq(LAUNCHER_BASE_IDS + LAUNCHER_EXT_IDS, 256, "ids are uint8_t: 0..255 in all");
}

Test(contract_fuzz_ids, table_dense_and_distinct) {
    size_t n = N_LAUNCHERS;
    cr_assert(n >= 16 && n <= 256, "%zu launchers: the sixteen pinned ones, at most 256", n);
    for (size_t i = 0; i < n; i++) {
        cr_expect_eq(k_launchers[i].id, i, "row %zu has id %u: ids are dense, row i is id i", i,
                     (unsigned)k_launchers[i].id);
        cr_expect(k_launchers[i].name && k_launchers[i].name[0], "row %zu has no name", i);
        cr_expect(k_launchers[i].check != NULL, "row %zu (%s) has no check", i,
                  k_launchers[i].name);
        for (size_t j = 0; j < i; j++) {
            cr_expect(strcmp(k_launchers[i].name, k_launchers[j].name) != 0,
                      "ids %zu and %zu share the name %s", j, i, k_launchers[i].name);
            cr_expect(k_launchers[i].check != k_launchers[j].check,
                      "ids %zu (%s) and %zu (%s) share one check function", j, k_launchers[j].name,
                      i, k_launchers[i].name);
        }
    }
}

Test(contract_fuzz_ids, first_sixteen_pinned) {
    cr_assert(N_LAUNCHERS >= 16);
    for (unsigned i = 0; i < 16; i++)
        cr_expect_str_eq(k_launchers[i].name, PINNED[i], "id %u names %s, pinned to %s", i,
                         k_launchers[i].name, PINNED[i]);
}

/* Synthetic selectors: every length up to 8 bytes (zero padding), edge bytes, and a stream of
 * pseudo-random words, each untagged and tagged. */
Test(contract_fuzz_ids, draw_is_the_old_draw_without_the_tag) {
    uint8_t buf[12];
    int tagged;
    char what[64];
    for (size_t len = 0; len <= sizeof buf; len++) {
        for (int fill = 0; fill < 3; fill++) {
            memset(buf, fill == 0 ? 0x00 : fill == 1 ? 0xFF : 0x5A, sizeof buf);
            snprintf(what, sizeof what, "%zu bytes of 0x%02X", len, buf[0]);
            draw_both(buf, len, what, &tagged);
            EXPECT(!tagged, "%s is not tagged", what);
        }
    }
    uint64_t s = 0x243F6A8885A308D3ull;
    for (int i = 0; i < 100000; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        for (int b = 0; b < 8; b++) buf[b] = (uint8_t)(s >> (8 * b));
        snprintf(what, sizeof what, "selector 0x%016llx", (unsigned long long)s);
        draw_both(buf, 8, what, &tagged);
        /* The same word with the tag: the input's last four bytes spell "LNCH". */
        memcpy(buf + 4, "LNCH", 4);
        unsigned id = draw_both(buf, 8, what, &tagged);
        uint32_t lo =
            (uint32_t)buf[3] << 24 | (uint32_t)buf[2] << 16 | (uint32_t)buf[1] << 8 | buf[0];
        EXPECT(tagged, "%s ending in LNCH is tagged", what);
        EXPECT(id == 16 + lo % 240, "%s tagged: id %u, expected 16 + lo %% 240 = %u", what, id,
               16 + lo % 240);
    }
}

static int cmp_name(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

Test(contract_fuzz_ids, committed_corpus_keeps_its_launchers) {
    DIR *d = opendir(CORPUS_DIR);
    cr_assert(d != NULL, "cannot open the corpus %s", CORPUS_DIR);
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) names = realloc(names, (cap = cap ? 2 * cap : 512) * sizeof *names);
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_name);

    size_t replayed = 0, per_id[256] = {0};
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", CORPUS_DIR, names[i]);
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        FILE *f = fopen(path, "rb");
        cr_assert(f != NULL, "cannot open %s", path);
        uint8_t *buf = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
        size_t size = fread(buf, 1, (size_t)st.st_size, f);
        fclose(f);
        cr_assert_eq(size, (size_t)st.st_size, "cannot read %s", path);

        int tagged;
        fuzz_producer before = fuzz_producer_init(buf, size);
        unsigned old_id = old_draw(&before);
        unsigned id = draw_both(buf, size, path, &tagged);
        if (tagged) {
            cr_expect(id < N_LAUNCHERS,
                      "%s is tagged (ends with LNCH) but names id %u, which has no launcher: "
                      "it checks nothing",
                      path, id);
        } else {
            cr_expect(id < 16 && strcmp(k_launchers[id].name, PINNED[old_id]) == 0,
                      "%s selects id %u (%s); before the table it selected %s", path, id,
                      id < N_LAUNCHERS ? k_launchers[id].name : "none", PINNED[old_id]);
        }
        per_id[id & 255]++;
        replayed++;
        free(buf);
        free(names[i]);
    }
    free(names);
    cr_assert(replayed > 0, "no input in %s (an empty corpus is a broken test)", CORPUS_DIR);
    cr_log_info("%zu corpus inputs, every one on its launcher", replayed);
    for (unsigned i = 0; i < N_LAUNCHERS; i++)
        cr_log_info("  id %2u %-20s %zu inputs", i, k_launchers[i].name, per_id[i]);
}
