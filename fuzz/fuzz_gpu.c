/* fuzz_gpu.c: see fuzz_gpu.h. */
#include "fuzz/fuzz_gpu.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mla_status.h"

/* ASan's manual poisoning (arena blocks are addressable, the rest is not), when built with it. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(FUZZ_ASAN)
#define FUZZ_ASAN 1
#endif
#ifdef FUZZ_ASAN
void __asan_poison_memory_region(void const volatile *addr, size_t size);
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
#define ASAN_POISON(p, n) __asan_poison_memory_region((p), (n))
#define ASAN_UNPOISON(p, n) __asan_unpoison_memory_region((p), (n))
#else
#define ASAN_POISON(p, n) ((void)(p), (void)(n))
#define ASAN_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

static void reset_execution(void);

static tb g_tb;
static char g_case[2048]; /* the drawn tuple in full (tb.case_name holds 512 bytes) */

static void sink(void *user, int fatal, const char *msg) {
    (void)user;
    (void)fatal; /* every failure is fatal for a fuzz target */
    fprintf(stderr, "FUZZ testbed failure:\n%s\n", msg);
    if (strlen(g_case) >= sizeof g_tb.case_name) fprintf(stderr, "  case (in full): %s\n", g_case);
    fuzz_write_reproducer(fuzz_target_name);
    abort();
}

/* A CUDA failure inside tests/lib/gpu_util.c (already printed): leave the reproducer too. */
static void on_gpu_abort(void) { fuzz_write_reproducer(fuzz_target_name); }

tb *fuzz_tb_begin(const uint8_t *data, size_t size) {
    char path[4096], rerun[sizeof g_tb.rerun];
    (void)data, (void)size; /* the entry recorded this input: fuzz_set_current_input */
    reset_execution();
    fuzz_reproducer_path(fuzz_target_name, path, sizeof path);
    snprintf(rerun, sizeof rerun, "bazel run //fuzz:%s_regression -- %s", fuzz_target_name, path);
    tb_init_fuzz(&g_tb, fuzz_target_name, rerun, sink, NULL);
    snprintf(g_case, sizeof g_case, "%s", fuzz_target_name);
    gpu_set_abort_hook(on_gpu_abort);
    return &g_tb;
}

void fuzz_tb_casef(tb *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_case, sizeof g_case, fmt, ap);
    va_end(ap);
    tb_set_case(t, g_case);
    if (fuzz_draw_log) fuzz_log_case("%s", g_case); /* tools/shrink.py --repro reads it */
}

void fuzz_tb_assert_failed(tb *t, const char *cond, const char *file, int line, const char *fmt,
                           ...) {
    char body[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    tb_failf(t, 1, "FUZZ_ASSERT failed: %s\n  at %s:%d\n  case %s\n  %s", cond, file, line,
             t == &g_tb ? g_case : t->case_name, body);
}

void fuzz_tb_cuda_band(tb *t, int rc, const char *launcher, const char *file, int line) {
    if (rc > MLA_STATUS_CUDA_BASE && rc < MLA_STATUS_LT_DECLINE_BASE) return;
    fuzz_tb_assert_failed(t, "rc in the CUDA band", file, line,
                          "no device: %s returned %d (%s) for a valid tuple; want the CUDA band "
                          "(10000 + cudaError_t)",
                          launcher, rc, mla_status_message(rc));
}

/* ---- arenas: grow-only chunks reused across executions ------------------------------------ */
#define ARENA_ALIGN 64
#define ARENA_REDZONE 64 /* at least this much poisoned memory after every block */
#define ARENA_MIN_CHUNK ((size_t)1 << 20)
#define ARENA_MAX_CHUNKS 32

typedef struct {
    uint8_t *base;
    size_t cap, used;
    int pinned;     /* asked for: page-locked for asynchronous copies (the upload and download) */
    int registered; /* cudaHostRegister succeeded (else the copies stage through the driver) */
} chunk;
typedef struct {
    chunk c[ARENA_MAX_CHUNKS];
    int n;
} arena;

static size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

/* Pinned chunks are ordinary heap memory that cudaHostRegister page-locks, not cudaMallocHost
 * memory: the driver may place the latter in ASan's shadow gap (the reason for
 * protect_shadow_gap=0), where instrumented code must not read or write. */
static int chunk_new(chunk *c, size_t cap, int pinned) {
    void *p = NULL;
    cap = align_up(cap, 4096);
    if (posix_memalign(&p, 4096, cap) != 0) return 0;
    c->base = p;
    c->cap = cap;
    c->used = 0;
    c->pinned = pinned;
    c->registered = 0;
    if (pinned) {
        if (cudaHostRegister(p, cap, cudaHostRegisterDefault) == cudaSuccess) {
            c->registered = 1;
        } else {
            static int said;
            cudaError_t e = cudaGetLastError();
            if (!said++)
                fprintf(stderr,
                        "fuzz_gpu: cudaHostRegister failed (%s): copies stage through "
                        "pageable memory (slower, same checks)\n",
                        cudaGetErrorString(e));
        }
    }
    ASAN_POISON(c->base, c->cap);
    return 1;
}

static void chunk_free(chunk *c) {
    if (!c->base) return;
    ASAN_UNPOISON(c->base, c->cap); /* back to the allocator as it was handed out */
    if (c->registered) (void)cudaHostUnregister(c->base);
    free(c->base);
    memset(c, 0, sizeof *c);
}

static void *arena_alloc(tb *t, arena *a, size_t bytes, int pinned) {
    size_t need = bytes + ARENA_REDZONE;
    chunk *c = a->n ? &a->c[a->n - 1] : NULL;
    size_t off = c ? align_up(c->used, ARENA_ALIGN) : 0;
    if (!c || c->pinned != pinned || off + need > c->cap) {
        if (a->n == ARENA_MAX_CHUNKS)
            tb_failf(t, 1, "fuzz arena: more than %d chunks (%zu bytes asked)", ARENA_MAX_CHUNKS,
                     bytes);
        size_t cap = c ? 2 * c->cap : ARENA_MIN_CHUNK;
        if (cap < need) cap = align_up(need, ARENA_MIN_CHUNK);
        if (!chunk_new(&a->c[a->n], cap, pinned))
            tb_failf(t, 1, "out of %shost memory (%zu bytes)", pinned ? "pinned " : "", cap);
        c = &a->c[a->n++];
        off = 0;
    }
    uint8_t *p = c->base + off;
    c->used = off + need;
    ASAN_UNPOISON(p, bytes);
    return p;
}

/* The next execution starts empty, everything poisoned; chunks are merged into one that holds
 * what this execution needed, so the arena settles at one chunk. */
static void arena_reset(arena *a) {
    if (a->n > 1) {
        size_t total = 0;
        int pinned = a->c[a->n - 1].pinned;
        for (int i = 0; i < a->n; i++) total += a->c[i].cap;
        for (int i = 0; i < a->n; i++) chunk_free(&a->c[i]);
        a->n = chunk_new(&a->c[0], total, pinned) ? 1 : 0; /* else the next alloc retries */
    }
    for (int i = 0; i < a->n; i++) { /* beyond `used` nothing was unpoisoned */
        ASAN_POISON(a->c[i].base, a->c[i].used);
        a->c[i].used = 0;
    }
}

static arena g_host; /* fuzz_alloc */
static arena g_in;   /* fuzz_in / fuzz_inout host bytes: the upload image (pinned with a GPU) */

void *fuzz_alloc(tb *t, size_t bytes) { return arena_alloc(t, &g_host, bytes, 0); }

/* ---- device buffers of one execution ------------------------------------------------------- */
#define FUZZ_MAX_BUFS 64
#define DEV_ALIGN 256

static fuzz_buf g_bufs[FUZZ_MAX_BUFS];
static int g_nbufs;
static gpu_region g_regions[FUZZ_MAX_BUFS];
static int g_uploaded, g_checked;
static int g_launches;
static char g_first_launch[160], g_last_launch[160];

static uint8_t *g_dev; /* the device arena: staging image | inputs | results | outputs */
static size_t g_dev_cap;
static size_t g_res_off, g_span; /* results and outputs: [g_res_off, g_res_off + g_span) */
static chunk g_down;             /* pinned: the downloaded span */
static size_t g_chunk_off[ARENA_MAX_CHUNKS]; /* each g_in chunk's place in the staging image */

static void reset_execution(void) {
    if (g_uploaded && !g_checked) (void)cudaDeviceSynchronize(); /* nothing left in flight */
    g_nbufs = 0;
    g_uploaded = g_checked = 0;
    g_launches = 0;
    g_first_launch[0] = g_last_launch[0] = 0;
    arena_reset(&g_host);
    arena_reset(&g_in);
    if (g_down.base) ASAN_POISON(g_down.base, g_span);
}

static const char *keep_str(tb *t, const char *s) {
    size_t n = strlen(s) + 1;
    char *p = fuzz_alloc(t, n);
    memcpy(p, s, n);
    return p;
}

static fuzz_buf *new_buf(tb *t, fuzz_buf_kind kind, const char *name, size_t bytes,
                         const char *what, int expect_full) {
    if (g_nbufs == FUZZ_MAX_BUFS)
        tb_failf(t, 1, "more than %d device buffers in one execution (%s)", FUZZ_MAX_BUFS, name);
    if (g_uploaded) tb_failf(t, 1, "device buffer %s declared after fuzz_gpu_upload", name);
    fuzz_buf *b = &g_bufs[g_nbufs++];
    memset(b, 0, sizeof *b);
    b->bytes = bytes;
    b->name = keep_str(t, name);
    b->what = keep_str(t, what ? what : name);
    b->kind = kind;
    b->expect_full = expect_full;
    if (kind != FUZZ_BUF_OUT) b->host = arena_alloc(t, &g_in, bytes, fuzz_gpu_enabled());
    return b;
}

fuzz_buf *fuzz_in(tb *t, const char *name, size_t bytes) {
    return new_buf(t, FUZZ_BUF_IN, name, bytes, NULL, 0);
}
fuzz_buf *fuzz_out(tb *t, const char *name, size_t bytes, const char *what, int expect_full) {
    return new_buf(t, FUZZ_BUF_OUT, name, bytes, what, expect_full);
}
fuzz_buf *fuzz_inout(tb *t, const char *name, size_t bytes, const char *what) {
    return new_buf(t, FUZZ_BUF_INOUT, name, bytes, what, 0);
}

#define CUDA_OR_FAIL(t, stmt)                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (stmt);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
            tb_failf((t), 1, "CUDA failure %d (%s) in `%s` at %s:%d", (int)e_,                     \
                     cudaGetErrorString(e_), #stmt, __FILE__, __LINE__);                           \
    } while (0)

static void selfcheck(void);

/* The host bytes of every in / inout buffer addressable or not, as declared: the upload and
 * download copies may read and write the whole images (a driver memcpy would trip ASan). */
static void images_addressable(int yes) {
    for (int i = 0; i < g_in.n; i++) {
        ASAN_POISON(g_in.c[i].base, g_in.c[i].used);
        if (yes) ASAN_UNPOISON(g_in.c[i].base, g_in.c[i].used);
    }
    if (!yes)
        for (int i = 0; i < g_nbufs; i++)
            if (g_bufs[i].host) ASAN_UNPOISON(g_bufs[i].host, g_bufs[i].bytes);
    if (g_down.base) {
        ASAN_POISON(g_down.base, g_span);
        if (yes) ASAN_UNPOISON(g_down.base, g_span);
    }
}

void fuzz_gpu_upload(tb *t) {
    static int checked_once;
    if (!checked_once) {
        selfcheck();
        checked_once = 1;
    }
    if (g_uploaded) tb_failf(t, 1, "fuzz_gpu_upload called twice in one execution");
    /* layout: the staging image (each g_in chunk's used bytes), then the inputs, the results and
     * the outputs, every payload DEV_ALIGN-aligned with a guard band on each side */
    size_t cur = 0;
    for (int i = 0; i < g_in.n; i++) {
        g_chunk_off[i] = cur;
        cur = align_up(cur + g_in.c[i].used, DEV_ALIGN);
    }
    for (int i = 0; i < g_nbufs; i++) {
        fuzz_buf *b = &g_bufs[i];
        if (!b->host) continue;
        for (int c = 0; c < g_in.n; c++)
            if ((uint8_t *)b->host >= g_in.c[c].base &&
                (uint8_t *)b->host < g_in.c[c].base + g_in.c[c].cap)
                b->stage_off = g_chunk_off[c] + (size_t)((uint8_t *)b->host - g_in.c[c].base);
    }
    for (int i = 0; i < g_nbufs; i++)
        if (g_bufs[i].kind == FUZZ_BUF_IN) {
            g_bufs[i].dev_off = align_up(cur + GPU_GUARD_BYTES, DEV_ALIGN);
            cur = g_bufs[i].dev_off + g_bufs[i].bytes + GPU_GUARD_BYTES;
        }
    g_res_off = align_up(cur, DEV_ALIGN);
    cur = g_res_off + (size_t)g_nbufs * sizeof(gpu_region_result);
    for (int i = 0; i < g_nbufs; i++)
        if (g_bufs[i].kind != FUZZ_BUF_IN) {
            g_bufs[i].dev_off = align_up(cur + GPU_GUARD_BYTES, DEV_ALIGN);
            cur = g_bufs[i].dev_off + g_bufs[i].bytes + GPU_GUARD_BYTES;
        }
    g_span = cur - g_res_off;
    if (cur > g_dev_cap) { /* grow-only; nothing is in flight between executions */
        if (g_dev) CUDA_OR_FAIL(t, cudaFree(g_dev));
        g_dev = NULL;
        g_dev_cap = align_up(cur + cur / 2, (size_t)1 << 20);
        CUDA_OR_FAIL(t, cudaMalloc((void **)&g_dev, g_dev_cap));
    }
    if (g_span > g_down.cap) {
        chunk_free(&g_down);
        if (!chunk_new(&g_down, align_up(g_span + g_span / 2, (size_t)1 << 20), 1))
            tb_failf(t, 1, "out of pinned host memory (%zu bytes)", g_span);
    }
    images_addressable(1);
    for (int i = 0; i < g_in.n; i++)
        if (g_in.c[i].used)
            CUDA_OR_FAIL(t, cudaMemcpyAsync(g_dev + g_chunk_off[i], g_in.c[i].base, g_in.c[i].used,
                                            cudaMemcpyHostToDevice, 0));
    for (int i = 0; i < g_nbufs; i++) {
        fuzz_buf *b = &g_bufs[i];
        b->dev = g_dev + b->dev_off;
        gpu_region r = {b->dev, NULL, b->bytes, GPU_REGION_GUARDS, 0};
        if (b->host) {
            r.src = g_dev + b->stage_off;
            r.flags |= GPU_REGION_COPY;
        } else {
            r.flags |= GPU_REGION_POISON;
        }
        g_regions[i] = r;
    }
    CUDA_OR_FAIL(t, (cudaError_t)gpu_regions_prepare(g_regions, g_nbufs,
                                                     (gpu_region_result *)(g_dev + g_res_off)));
    g_uploaded = 1;
}

/* The launches since the upload, for a report of the one synchronisation. */
static void describe_launches(char *buf, size_t n) {
    if (g_launches <= 1)
        snprintf(buf, n, "%s", g_launches ? g_last_launch : "the upload");
    else
        snprintf(buf, n,
                 "the %d launches of this execution (first %s, last %s; MLA_FUZZ_SYNC_EACH=1 "
                 "synchronises after each)",
                 g_launches, g_first_launch, g_last_launch);
}

void fuzz_launched(tb *t, int rc, const char *what) {
    if (rc != 0) {
        char before[640] = "";
        if (g_launches && rc > MLA_STATUS_CUDA_BASE && rc < MLA_STATUS_LT_DECLINE_BASE) {
            char d[512];
            describe_launches(d, sizeof d);
            snprintf(before, sizeof before,
                     "\n  (not synchronised since the upload: a fault of %s shows here too)", d);
        }
        tb_failf(t, 1, "%s returned %d (%s)%s", what, rc, mla_status_message(rc), before);
    }
    if (!g_launches) snprintf(g_first_launch, sizeof g_first_launch, "%s", what);
    snprintf(g_last_launch, sizeof g_last_launch, "%s", what);
    g_launches++;
    const char *each = getenv("MLA_FUZZ_SYNC_EACH");
    if (each && each[0] == '1') {
        int s = gpu_sync();
        if (s != 0)
            tb_failf(t, 1, "cudaDeviceSynchronize after %s: %d (%s)", what, s,
                     mla_status_message(s));
    }
}

void fuzz_gpu_check(tb *t) {
    if (!g_uploaded || g_checked) tb_failf(t, 1, "fuzz_gpu_check without a fuzz_gpu_upload");
    gpu_region_result *dres = (gpu_region_result *)(g_dev + g_res_off);
    for (int i = 0; i < g_nbufs; i++) {
        const fuzz_buf *b = &g_bufs[i];
        uint32_t f = GPU_REGION_GUARDS;
        if (b->kind == FUZZ_BUF_IN) f |= GPU_REGION_COPY; /* equal to the bytes uploaded */
        if (b->kind == FUZZ_BUF_OUT && b->expect_full) f |= GPU_REGION_POISON;
        g_regions[i].flags = f;
    }
    int rc = gpu_regions_check(g_regions, g_nbufs, dres);
    if (rc == cudaSuccess)
        rc = cudaMemcpyAsync(g_down.base, g_dev + g_res_off, g_span, cudaMemcpyDeviceToHost, 0);
    int s = gpu_sync();
    g_checked = 1;
    if (s != 0 || rc != cudaSuccess) {
        char d[512];
        describe_launches(d, sizeof d);
        if (s == 0) s = 10000 + rc;
        tb_failf(t, 1, "cudaDeviceSynchronize after %s: %d (%s)", d, s, mla_status_message(s));
    }
    images_addressable(0);
    const gpu_region_result *res = (const gpu_region_result *)g_down.base;
    ASAN_UNPOISON(g_down.base, (size_t)g_nbufs * sizeof *res);
    for (int i = 0; i < g_nbufs; i++) { /* outputs first, as each launch's tb_output did */
        fuzz_buf *b = &g_bufs[i];
        if (b->kind == FUZZ_BUF_IN) continue;
        b->got = g_down.base + (b->dev_off - g_res_off);
        ASAN_UNPOISON(b->got, b->bytes);
        tb_expectf(t, res[i].guard_bad == 0, "%s wrote outside output %s (guard band changed)",
                   b->what, b->name);
        if (b->kind == FUZZ_BUF_OUT && b->expect_full)
            tb_expectf(t, res[i].poison_left == 0,
                       "%s left %zu of %zu words of output %s unwritten (poison 0x%08X)", b->what,
                       (size_t)res[i].poison_left, b->bytes / 4, b->name, GPU_POISON_WORD);
    }
    for (int i = 0; i < g_nbufs; i++) {
        const fuzz_buf *b = &g_bufs[i];
        if (b->kind != FUZZ_BUF_IN) continue;
        tb_expectf(t, res[i].guard_bad == 0, "a guard band of input %s was overwritten", b->name);
        size_t first = res[i].n_diff ? (size_t)~res[i].first_diff_inv : b->bytes / 4;
        tb_expectf(t, res[i].n_diff == 0,
                   "input %s was modified by the kernel (first changed word %zu of %zu)", b->name,
                   first, b->bytes / 4);
    }
}

/* ---- self-check: the device-side checks find what they must (once per process) ------------- */
static void selfcheck(void) {
    enum { W = 16, B = W * 4, STRIDE = 2 * GPU_GUARD_BYTES + 256 + B };
    uint8_t *d = NULL;
    gpu_region_result *dres = NULL, h[4];
    uint32_t src[W];
    for (int i = 0; i < W; i++) src[i] = 0x3F800000u + (uint32_t)i;
    int ok = cudaMalloc((void **)&d, 256 + 4 * STRIDE) == cudaSuccess &&
             cudaMalloc((void **)&dres, sizeof h) == cudaSuccess;
    uint8_t *p[4] = {NULL, NULL, NULL, NULL};
    for (int i = 0; ok && i < 4; i++) p[i] = d + 256 + (size_t)i * STRIDE + GPU_GUARD_BYTES;
    /* 0: input, one word and one leading guard byte changed; 1: clean input; 2: output with
     * three words written and two trailing guard bytes changed; 3: output fully written */
    gpu_region r[4] = {{p[0], d, B, GPU_REGION_GUARDS | GPU_REGION_COPY, 0},
                       {p[1], d, B, GPU_REGION_GUARDS | GPU_REGION_COPY, 0},
                       {p[2], NULL, B, GPU_REGION_GUARDS | GPU_REGION_POISON, 0},
                       {p[3], NULL, B, GPU_REGION_GUARDS | GPU_REGION_POISON, 0}};
    ok = ok && cudaMemcpy(d, src, B, cudaMemcpyHostToDevice) == cudaSuccess &&
         gpu_regions_prepare(r, 4, dres) == 0 && cudaMemsetAsync(p[0] + 9, 0x11, 1, 0) == 0 &&
         cudaMemsetAsync(p[0] - 1, 0, 1, 0) == 0 && cudaMemsetAsync(p[2], 0, 12, 0) == 0 &&
         cudaMemsetAsync(p[2] + B, 0, 2, 0) == 0 && cudaMemsetAsync(p[3], 0, B, 0) == 0 &&
         gpu_regions_check(r, 4, dres) == 0 &&
         cudaMemcpy(h, dres, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess;
    ok = ok && h[0].guard_bad == 1 && h[0].n_diff == 1 && ~h[0].first_diff_inv == 2 &&
         h[0].poison_left == 0 && h[1].guard_bad == 0 && h[1].n_diff == 0 && h[2].guard_bad == 2 &&
         h[2].poison_left == W - 3 && h[2].n_diff == 0 && h[3].guard_bad == 0 &&
         h[3].poison_left == 0;
    if (d) (void)cudaFree(d);
    if (dres) (void)cudaFree(dres);
    if (!ok) {
        fprintf(stderr, "fuzz_gpu: the self-check of the device-side guard / poison / input "
                        "checks failed (tests/lib/gpu_util_kernels.cu): no fuzzing without "
                        "them\n");
        abort();
    }
}
