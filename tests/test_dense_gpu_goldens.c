/* test_dense_gpu_goldens.c: every dense kernel stage of every dense golden case, on the GPU,
 * against the CPU oracle.
 *
 * One Criterion test per (case, stage), named dense_gpu/<case>__<stage>, so a failure line is
 * also a filter:
 *   bazel test //tests:dense_gpu_goldens_test --test_arg=--filter='dense_gpu/glm5_decode__absorb_q'
 *   (GPU bundle: bin/dense_gpu_goldens_test --filter 'dense_gpu/glm5_decode__absorb_q')
 * Each test:
 *  1. recomputes the case (mla_case_run: inputs from the counter-based fill, oracle outputs) and
 *     checks that the stored golden tensor ($MLA_GOLDEN_DIR/<case>.safetensors, the manifest's
 *     stored rows) and the manifest's full SHA-256 equal the oracle's output;
 *  2. uploads the stage's inputs into guarded device buffers, outputs poisoned (NaN words);
 *  3. launches (rc must be 0), syncs, checks every guard band (inputs and outputs), that the
 *     inputs are unchanged and that no poison word is left in the output;
 *  4. launches again into a freshly poisoned buffer: bytes must be identical (run-to-run);
 *  5. compares the full output with the oracle's: bit-exact classes by memcmp (and the SHA-256
 *     of the kernel output against the manifest), tolerance classes through the per-element
 *     bounds of docs/tolerances.md (mla_tol_*_bounds; never widened; NaN never passes).
 * Attention uses the any-walk bound (R = D = N + 1): kernels/mla_dense.cu documents its chunked
 * walk but states no (R, D) pair, so the tighter bound is not claimed here.
 * A failure prints mla_cmp_report (case, tensor, worst index, both values, the re-run command)
 * and writes a reproducer repro-dense_gpu-<case>__<stage>-<tensor>.safetensors (the kernel
 * output and the oracle output; the inputs regenerate from the case name) under
 * $TEST_UNDECLARED_OUTPUTS_DIR (else /tmp).
 * Without a usable GPU every test reports SKIPPED (GPU_REQUIRE), never passed.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mla.h"
#include "kernels/mla_status.h"
#include "oracle/mla_oracle.h"
#include "tests/gpu_util.h"
#include "tests/lib/case.h"
#include "tests/lib/compare.h"
#include "tests/lib/manifest.h"
#include "tests/lib/safetensors.h"

#define GEMM_WS_BYTES ((size_t)32 << 20)

/* ------------------------------------------------------------------ fixture ---------------- */
typedef struct {
    const mla_case *c;
    const mla_geom *g;
    mla_ctx ctx;
    char id[160];     /* "<case>__<stage>" */
    char rerun[600];
} fx;

static void fx_open(fx *f, const char *case_name, const char *stage) {
    memset(f, 0, sizeof *f);
    snprintf(f->id, sizeof f->id, "%s__%s", case_name, stage);
    snprintf(f->rerun, sizeof f->rerun,
             "bazel test //tests:dense_gpu_goldens_test --test_arg=--filter='dense_gpu/%s'"
             "   (GPU bundle: bin/dense_gpu_goldens_test --filter 'dense_gpu/%s')",
             f->id, f->id);
    f->c = mla_case_find(case_name);
    cr_assert(f->c != NULL, "dense_gpu/%s: case %s is not in the case table", f->id, case_name);
    f->g = &f->c->geom;
    int rc = mla_case_run(f->c, &f->ctx);
    cr_assert(rc == 0, "dense_gpu/%s: mla_case_run failed: %s", f->id, f->ctx.err);
}

static void fx_close(fx *f) { mla_ctx_free(&f->ctx); }

static const mla_tensor *tensor(fx *f, const char *name) {
    const mla_tensor *t = mla_ctx_get(&f->ctx, name);
    cr_assert(t != NULL, "dense_gpu/%s: the case has no tensor '%s'", f->id, name);
    return t;
}

/* The stored golden rows and the manifest's full SHA-256 equal the oracle's output. */
static void golden_matches_oracle(fx *f, const mla_tensor *t) {
    char path[4096], err[1024], hex1[65], hex2[65];
    snprintf(path, sizeof path, "%s/manifest.json", mla_golden_dir());
    mla_manifest m;
    cr_assert(mla_manifest_load(path, &m, err, sizeof err) == 0,
              "dense_gpu/%s: cannot load the golden manifest: %s (set MLA_GOLDEN_DIR)", f->id,
              err);
    const mla_mf_case *mc = mla_manifest_find(&m, f->c->name);
    cr_assert(mc != NULL, "dense_gpu/%s: case %s is not in %s", f->id, f->c->name, path);
    const mla_mf_output *o = mla_mf_find_output(mc, t->name);
    cr_assert(o != NULL, "dense_gpu/%s: output %s is not in the manifest", f->id, t->name);
    if (memcmp(o->sha256, t->sha256, 32) != 0) {
        mla_sha256_hex(o->sha256, hex1);
        mla_sha256_hex(t->sha256, hex2);
        cr_expect_fail("dense_gpu/%s: %s: manifest sha256 %s, oracle recomputed %s (stale fixture or "
                "changed oracle: run golden_oracle_test)\n  re-run: %s",
                f->id, t->name, hex1, hex2, f->rerun);
    }
    snprintf(path, sizeof path, "%s/%s", mla_golden_dir(), mc->file);
    st_file sf;
    int rc = st_read_file(path, &sf, err, sizeof err);
    if (rc != 0) {
        mla_manifest_free(&m);
        cr_assert_fail("dense_gpu/%s: cannot load the fixture: %s", f->id, err);
    }
    const st_tensor *st = st_find(&sf, t->name);
    size_t row_bytes = t->nbytes / (size_t)(t->shape[0] > 0 ? t->shape[0] : 1);
    size_t n_rows = o->has_stored_rows ? o->n_stored_rows : (size_t)t->shape[0];
    int ok = st != NULL && st->dtype == t->dtype && st->end - st->begin == n_rows * row_bytes;
    size_t bad_row = (size_t)-1;
    for (size_t r = 0; ok && r < n_rows; r++) {
        size_t src = o->has_stored_rows ? (size_t)o->stored_rows[r] : r;
        if (memcmp(st->data + r * row_bytes, (const char *)t->data + src * row_bytes,
                   row_bytes) != 0) {
            bad_row = src;
            ok = 0;
        }
    }
    st_free(&sf);
    mla_manifest_free(&m);
    cr_assert(ok,
              "dense_gpu/%s: the stored golden %s in %s differs from the oracle's output (%s; "
              "first differing row %lld); regenerate or fix the oracle first\n  re-run: %s",
              f->id, t->name, path, st ? "bytes differ" : "tensor missing", bad_row == (size_t)-1 ? -1LL : (long long)bad_row,
              f->rerun);
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    cr_assert(p != NULL, "out of memory (%zu bytes)", n);
    return p;
}

/* 0 and a sync: anything else fails the test with the status message. */
static void launched(fx *f, int rc, const char *what) {
    cr_assert(rc == 0, "dense_gpu/%s: %s returned %d (%s)\n  re-run: %s", f->id, what, rc,
              mla_status_message(rc), f->rerun);
    int s = gpu_sync();
    cr_assert(s == 0, "dense_gpu/%s: cudaDeviceSynchronize after %s: %d (%s)\n  re-run: %s",
              f->id, what, s, mla_status_message(s), f->rerun);
}

/* An input buffer: guards intact and payload unchanged. */
static void input_untouched(fx *f, const gpu_buf *b, const void *host, const char *name) {
    cr_expect(gpu_buf_guards_intact(b),
              "dense_gpu/%s: a guard band of input %s was overwritten\n  re-run: %s", f->id,
              name, f->rerun);
    void *h = xmalloc(b->bytes);
    gpu_buf_download(b, h, b->bytes);
    cr_expect(memcmp(h, host, b->bytes) == 0,
              "dense_gpu/%s: input %s was modified by the kernel\n  re-run: %s", f->id, name,
              f->rerun);
    free(h);
}

/* An output buffer: guards intact, no poison word left; returns the downloaded bytes. */
static void *output_bytes(fx *f, const gpu_buf *b, const char *name, int run) {
    cr_expect(gpu_buf_guards_intact(b),
              "dense_gpu/%s: run %d wrote outside output %s (guard band changed)\n  re-run: %s",
              f->id, run, name, f->rerun);
    size_t left = gpu_buf_count_poison(b);
    cr_expect(left == 0,
              "dense_gpu/%s: run %d left %zu of %zu words of output %s unwritten (poison "
              "0x%08X)\n  re-run: %s",
              f->id, run, left, b->bytes / 4, name, GPU_POISON_WORD, f->rerun);
    void *h = xmalloc(b->bytes);
    gpu_buf_download(b, h, b->bytes);
    return h;
}

static void write_repro(fx *f, const mla_tensor *t, const void *got) {
    const char *dir = getenv("TEST_UNDECLARED_OUTPUTS_DIR");
    if (!dir || !*dir) dir = "/tmp";
    char path[4096], err[ST_ERR_LEN];
    snprintf(path, sizeof path, "%s/repro-dense_gpu-%s-%s.safetensors", dir, f->id, t->name);
    st_writer w;
    st_writer_init(&w);
    st_writer_meta(&w, "case", f->c->name);
    st_writer_meta(&w, "test", f->id);
    st_writer_meta(&w, "tensor", t->name);
    st_writer_meta(&w, "rerun", f->rerun);
    st_writer_meta(&w, "inputs", "regenerated from the case name (golden list / mla_case_run)");
    st_writer_add(&w, "kernel", t->dtype, t->ndim, t->shape, got);
    st_writer_add(&w, "oracle", t->dtype, t->ndim, t->shape, t->data);
    if (st_writer_write(&w, path, err, sizeof err) == 0)
        fprintf(stderr, "dense_gpu/%s: reproducer written: %s\n", f->id, path);
    else
        fprintf(stderr, "dense_gpu/%s: could not write the reproducer: %s\n", f->id, err);
    st_writer_free(&w);
}

/* Fails (with the report and a reproducer) unless r passes. */
static void report_cmp(fx *f, const mla_tensor *t, const void *got, const mla_cmp_result *r,
                       const mla_tol *tol, const char *what) {
    if (r->pass) return;
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    mla_cmp_report(fp, f->c->name, t->name, t->ndim, t->shape, r, tol, f->rerun);
    fclose(fp);
    write_repro(f, t, got);
    cr_expect(0, "dense_gpu/%s: %s\n%s", f->id, what, buf);
    free(buf);
}

/* Run 1 == run 2 bytes (always exact). */
static void same_runs(fx *f, const mla_tensor *t, const void *a, const void *b) {
    if (memcmp(a, b, t->nbytes) == 0) return;
    mla_tol ex = mla_tol_exact();
    mla_cmp_result r = t->dtype == ST_BF16
                           ? mla_compare_bf16(b, a, t->nbytes / 2, &ex)
                           : mla_compare_f32(b, a, t->nbytes / 4, &ex);
    r.pass = 0;
    report_cmp(f, t, b, &r, &ex,
               "run-to-run: the second launch's bytes differ from the first's (ref = run 1)");
}

/* Kernel output vs the oracle's tensor t: exact (memcmp + manifest SHA-256) or the class's
 * per-element bounds atol (NULL for exact). */
static void against_oracle(fx *f, const mla_tensor *t, const void *got, mla_tol_class cls,
                           const double *atol) {
    mla_tol tol = mla_tol_exact();
    tol.cls = cls;
    tol.atol_elem = atol;
    size_t n = t->nbytes / st_dtype_size(t->dtype);
    mla_cmp_result r = t->dtype == ST_BF16 ? mla_compare_bf16(got, t->data, n, &tol)
                                           : mla_compare_f32(got, t->data, n, &tol);
    if (cls == MLA_TOL_EXACT) {
        /* Bytes, not the NaN-tolerant verdict: -0 vs +0 and NaN payloads count. */
        if (memcmp(got, t->data, t->nbytes) != 0) r.pass = 0;
        report_cmp(f, t, got, &r, &tol, "kernel vs oracle (class exact: bytes must be equal)");
        if (r.pass) {
            uint8_t sha[32];
            char h1[65], h2[65];
            mla_sha256(got, t->nbytes, sha);
            mla_sha256_hex(sha, h1);
            mla_sha256_hex(t->sha256, h2);
            cr_expect(memcmp(sha, t->sha256, 32) == 0,
                      "dense_gpu/%s: %s: kernel sha256 %s, oracle / manifest %s\n  re-run: %s",
                      f->id, t->name, h1, h2, f->rerun);
        }
    } else {
        if (r.n_nan_mismatch) r.pass = 0; /* NaN never passes (the oracle has none here) */
        report_cmp(f, t, got, &r, &tol, "kernel vs oracle (per-element bound, docs/tolerances.md)");
    }
}

/* ------------------------------------------------------------------ stages ----------------- */
static void run_rope(fx *f) {
    const mla_geom *g = f->g;
    if (g->d_rope == 0) {
        /* NoPE: a no-op returning 0; x and positions may be NULL and are never touched. */
        int rc = memra_mla_rope_interleaved_f32(NULL, g->t_q, g->n_head, 0, NULL, g->rope_base,
                                                NULL);
        launched(f, rc, "memra_mla_rope_interleaved_f32(d_rope = 0, NULL, NULL)");
        gpu_buf x = gpu_buf_alloc((size_t)g->t_q * g->n_head * 4);
        rc = memra_mla_rope_interleaved_f32(x.ptr, g->t_q, g->n_head, 0, NULL, g->rope_base,
                                            NULL);
        launched(f, rc, "memra_mla_rope_interleaved_f32(d_rope = 0)");
        cr_expect(gpu_buf_guards_intact(&x) && gpu_buf_count_poison(&x) == x.bytes / 4,
                  "dense_gpu/%s: rope with d_rope = 0 wrote to x\n  re-run: %s", f->id, f->rerun);
        gpu_buf_free(&x);
        return;
    }
    const mla_tensor *pos = tensor(f, "positions"), *raw = tensor(f, "q_pe_raw"),
                     *q_pe = tensor(f, "q_pe");
    golden_matches_oracle(f, q_pe);
    int32_t n_pos = (int32_t)raw->shape[0], n_vec = (int32_t)raw->shape[1];
    gpu_buf bp = gpu_buf_from_host(pos->data, pos->nbytes);
    void *got[2];
    for (int run = 0; run < 2; run++) {
        gpu_buf bx = gpu_buf_from_host(raw->data, raw->nbytes); /* in place: x is the input */
        int rc = memra_mla_rope_interleaved_f32(bx.ptr, n_pos, n_vec, g->d_rope, bp.ptr,
                                                g->rope_base, NULL);
        launched(f, rc, "memra_mla_rope_interleaved_f32");
        cr_expect(gpu_buf_guards_intact(&bx),
                  "dense_gpu/%s: run %d wrote outside x (guard band)\n  re-run: %s", f->id,
                  run + 1, f->rerun);
        got[run] = xmalloc(bx.bytes);
        gpu_buf_download(&bx, got[run], bx.bytes);
        gpu_buf_free(&bx);
    }
    input_untouched(f, &bp, pos->data, "positions");
    same_runs(f, q_pe, got[0], got[1]);
    size_t n = q_pe->nbytes / 4;
    double *atol = xmalloc(n * sizeof *atol);
    mla_tol_rope_bounds(raw->data, n, atol);
    against_oracle(f, q_pe, got[0], MLA_TOL_ROPE, atol);
    free(atol);
    free(got[0]);
    free(got[1]);
    gpu_buf_free(&bp);
}

static void run_split_latent(fx *f) {
    const mla_geom *g = f->g;
    const mla_tensor *kv = tensor(f, "kv"), *c_kv = tensor(f, "c_kv");
    const mla_tensor *k_pe = g->d_rope > 0 ? tensor(f, "k_pe") : NULL;
    golden_matches_oracle(f, c_kv);
    if (k_pe) golden_matches_oracle(f, k_pe);
    gpu_buf bkv = gpu_buf_from_host(kv->data, kv->nbytes);
    void *gc[2], *gp[2] = {NULL, NULL};
    for (int run = 0; run < 2; run++) {
        gpu_buf bc = gpu_buf_alloc(c_kv->nbytes);
        gpu_buf bp = gpu_buf_alloc(k_pe ? k_pe->nbytes : 0);
        int rc = memra_mla_split_latent_f32(bkv.ptr, bc.ptr, k_pe ? bp.ptr : NULL, g->t_q,
                                            g->kv_rank, g->d_rope, NULL);
        launched(f, rc, "memra_mla_split_latent_f32");
        gc[run] = output_bytes(f, &bc, "c_kv", run + 1);
        if (k_pe) gp[run] = output_bytes(f, &bp, "k_pe", run + 1);
        gpu_buf_free(&bc);
        gpu_buf_free(&bp);
    }
    input_untouched(f, &bkv, kv->data, "kv");
    same_runs(f, c_kv, gc[0], gc[1]);
    against_oracle(f, c_kv, gc[0], MLA_TOL_EXACT, NULL);
    if (k_pe) {
        same_runs(f, k_pe, gp[0], gp[1]);
        against_oracle(f, k_pe, gp[0], MLA_TOL_EXACT, NULL);
    }
    for (int i = 0; i < 2; i++) {
        free(gc[i]);
        free(gp[i]);
    }
    gpu_buf_free(&bkv);
}

/* The pre-fill of the cache: a negative quiet NaN per word, never the poison word, so rows the
 * kernel must not touch are recognisable bit for bit. */
static uint32_t cache_fill_word(size_t i) { return 0xFFC00000u | (uint32_t)(i & 0x3FFFFFu); }

static void run_append_latent(fx *f) {
    const mla_geom *g = f->g;
    const mla_tensor *c_kv = tensor(f, "c_kv"), *rows = tensor(f, "cache_rows");
    const mla_tensor *k_pe = g->d_rope > 0 ? tensor(f, "k_pe") : NULL;
    golden_matches_oracle(f, rows);
    int32_t w = g->kv_rank + g->d_rope, slot = g->t_kv - g->t_q;
    /* Two spare rows after the appended ones: they must stay untouched too. */
    size_t cache_rows_n = (size_t)g->t_kv + 2, n = cache_rows_n * (size_t)w;
    uint32_t *fill = xmalloc(n * 4);
    for (size_t i = 0; i < n; i++) fill[i] = cache_fill_word(i);
    gpu_buf bc = gpu_buf_from_host(c_kv->data, c_kv->nbytes);
    gpu_buf bp = gpu_buf_from_host(k_pe ? k_pe->data : NULL, k_pe ? k_pe->nbytes : 0);
    uint32_t *got[2];
    for (int run = 0; run < 2; run++) {
        gpu_buf cache = gpu_buf_from_host(fill, n * 4);
        int rc = memra_mla_append_latent_f32(cache.ptr, bc.ptr, k_pe ? bp.ptr : NULL, slot,
                                             g->t_q, g->kv_rank, g->d_rope, NULL);
        launched(f, rc, "memra_mla_append_latent_f32");
        cr_expect(gpu_buf_guards_intact(&cache),
                  "dense_gpu/%s: run %d wrote outside the cache (guard band)\n  re-run: %s",
                  f->id, run + 1, f->rerun);
        got[run] = xmalloc(n * 4);
        gpu_buf_download(&cache, got[run], n * 4);
        gpu_buf_free(&cache);
    }
    input_untouched(f, &bc, c_kv->data, "c_kv");
    if (k_pe) input_untouched(f, &bp, k_pe->data, "k_pe");
    cr_expect(memcmp(got[0], got[1], n * 4) == 0,
              "dense_gpu/%s: run-to-run: the two appends left different caches\n  re-run: %s",
              f->id, f->rerun);
    /* Rows outside slot..slot+t-1: the pre-fill, bit for bit. */
    size_t lo = (size_t)slot * w, hi = lo + (size_t)g->t_q * w, first_bad = (size_t)-1;
    for (size_t i = 0; i < n && first_bad == (size_t)-1; i++)
        if ((i < lo || i >= hi) && got[0][i] != fill[i]) first_bad = i;
    cr_expect(first_bad == (size_t)-1,
              "dense_gpu/%s: append wrote outside rows %d..%d: cache[%zu][%zu] = 0x%08X, "
              "pre-fill 0x%08X\n  re-run: %s",
              f->id, slot, slot + g->t_q - 1, first_bad / (size_t)w, first_bad % (size_t)w,
              first_bad == (size_t)-1 ? 0u : got[0][first_bad],
              first_bad == (size_t)-1 ? 0u : fill[first_bad], f->rerun);
    against_oracle(f, rows, got[0] + lo, MLA_TOL_EXACT, NULL);
    free(got[0]);
    free(got[1]);
    free(fill);
    gpu_buf_free(&bc);
    gpu_buf_free(&bp);
}

typedef int (*matvec_fn)(const float *, const float *, float *, int32_t, int32_t, int32_t,
                         int32_t, void *);

/* absorb_q / decompress_v: in, w -> out (exact). */
static void run_matvec(fx *f, const char *in_name, const char *w_name, const char *out_name,
                       matvec_fn fn, const char *fn_name, int32_t head_dim) {
    const mla_geom *g = f->g;
    const mla_tensor *in = tensor(f, in_name), *w = tensor(f, w_name), *out = tensor(f, out_name);
    golden_matches_oracle(f, out);
    gpu_buf bi = gpu_buf_from_host(in->data, in->nbytes);
    gpu_buf bw = gpu_buf_from_host(w->data, w->nbytes);
    void *got[2];
    for (int run = 0; run < 2; run++) {
        gpu_buf bo = gpu_buf_alloc(out->nbytes);
        int rc = fn(bi.ptr, bw.ptr, bo.ptr, g->t_q, g->n_head, head_dim, g->kv_rank, NULL);
        launched(f, rc, fn_name);
        got[run] = output_bytes(f, &bo, out_name, run + 1);
        gpu_buf_free(&bo);
    }
    input_untouched(f, &bi, in->data, in_name);
    input_untouched(f, &bw, w->data, w_name);
    same_runs(f, out, got[0], got[1]);
    against_oracle(f, out, got[0], MLA_TOL_EXACT, NULL);
    free(got[0]);
    free(got[1]);
    gpu_buf_free(&bi);
    gpu_buf_free(&bw);
}

static void run_absorb_q(fx *f) {
    run_matvec(f, "q_nope", "wk_b", "q_lat", memra_mla_absorb_q_f32, "memra_mla_absorb_q_f32",
               f->g->d_nope);
}

static void run_decompress_v(fx *f) {
    run_matvec(f, "o_lat", "wv_b", "out", memra_mla_decompress_v_f32,
               "memra_mla_decompress_v_f32", f->g->d_v);
}

static void run_attn_absorbed(fx *f) {
    const mla_geom *g = f->g;
    const mla_tensor *ql = tensor(f, "q_lat"), *cache = tensor(f, "cache"),
                     *o = tensor(f, "o_lat");
    const mla_tensor *qp = g->d_rope > 0 ? tensor(f, "q_pe") : NULL;
    golden_matches_oracle(f, o);
    gpu_buf bq = gpu_buf_from_host(ql->data, ql->nbytes);
    gpu_buf bp = gpu_buf_from_host(qp ? qp->data : NULL, qp ? qp->nbytes : 0);
    gpu_buf bc = gpu_buf_from_host(cache->data, cache->nbytes);
    void *got[2];
    for (int run = 0; run < 2; run++) {
        gpu_buf bo = gpu_buf_alloc(o->nbytes);
        int rc = memra_mla_attn_absorbed_f32(bq.ptr, qp ? bp.ptr : NULL, bc.ptr, bo.ptr,
                                             g->n_head, g->kv_rank, g->d_rope, g->t_q, g->t_kv,
                                             g->scale, NULL);
        launched(f, rc, "memra_mla_attn_absorbed_f32");
        got[run] = output_bytes(f, &bo, "o_lat", run + 1);
        gpu_buf_free(&bo);
    }
    input_untouched(f, &bq, ql->data, "q_lat");
    if (qp) input_untouched(f, &bp, qp->data, "q_pe");
    input_untouched(f, &bc, cache->data, "cache");
    same_runs(f, o, got[0], got[1]);
    double *atol = xmalloc(o->nbytes / 4 * sizeof *atol);
    mla_tol_attn_bounds(ql->data, qp ? qp->data : NULL, cache->data, g->n_head, g->kv_rank,
                        g->d_rope, g->t_q, g->t_kv, g->scale, 0, 0, atol);
    against_oracle(f, o, got[0], MLA_TOL_ATTN, atol);
    free(atol);
    free(got[0]);
    free(got[1]);
    gpu_buf_free(&bq);
    gpu_buf_free(&bp);
    gpu_buf_free(&bc);
}

/* The bf16 GEMM stages of glm5_prefill: x, w converted on the host exactly as the case does
 * (oracle_bf16_from_f32), the GEMM on the device, y f32 or bf16 against the oracle's. */
static void run_bf16_gemm(fx *f, int absorb, int y_is_bf16) {
    const mla_geom *g = f->g;
    int32_t t = g->t_q, H = g->n_head, R = g->kv_rank;
    int32_t nn = absorb ? R : g->d_v, k = absorb ? g->d_nope : R;
    const mla_tensor *x32 = tensor(f, absorb ? "q_nope" : "o_lat");
    const mla_tensor *w32 = tensor(f, absorb ? "wk_b" : "wv_b");
    char yname[64];
    snprintf(yname, sizeof yname, "%s_bf16_y_%s", absorb ? "absorb" : "decompress",
             y_is_bf16 ? "bf16" : "f32");
    const mla_tensor *y = tensor(f, yname);
    golden_matches_oracle(f, y);
    size_t nx = (size_t)t * H * k, nw = (size_t)H * nn * k, ny = (size_t)t * H * nn;
    uint16_t *x = xmalloc(nx * 2), *w = xmalloc(nw * 2);
    const float *xs = x32->data, *ws = w32->data;
    for (size_t i = 0; i < nx; i++) x[i] = oracle_bf16_from_f32(xs[i]);
    if (absorb) /* wk_b [H][d_nope][R] -> w [H][R][d_nope] */
        for (int32_t h = 0; h < H; h++)
            for (int32_t r = 0; r < R; r++)
                for (int32_t d = 0; d < k; d++)
                    w[((size_t)h * R + r) * k + d] =
                        oracle_bf16_from_f32(ws[((size_t)h * k + d) * R + r]);
    else
        for (size_t i = 0; i < nw; i++) w[i] = oracle_bf16_from_f32(ws[i]);
    int64_t x_rs = (int64_t)H * k, x_bs = k, y_rs = (int64_t)H * nn, y_bs = nn;
    gpu_buf bx = gpu_buf_from_host(x, nx * 2), bw = gpu_buf_from_host(w, nw * 2);
    gpu_buf bws = gpu_buf_alloc(GEMM_WS_BYTES);
    void *got[2];
    for (int run = 0; run < 2; run++) {
        gpu_buf by = gpu_buf_alloc(y->nbytes);
        int rc = memra_bf16_gemm_sb(bw.ptr, bx.ptr, by.ptr, t, nn, k, x_rs, x_bs, y_rs, y_bs, H,
                                    y_is_bf16, bws.ptr, GEMM_WS_BYTES, NULL);
        launched(f, rc, "memra_bf16_gemm_sb");
        cr_expect(gpu_buf_guards_intact(&bws),
                  "dense_gpu/%s: run %d wrote outside the cuBLASLt workspace\n  re-run: %s",
                  f->id, run + 1, f->rerun);
        /* bf16 output: a word still equal to the poison word holds the bf16 pair (0xDEAD,
         * 0x7FC0), impossible for a written pair (0x7FC0 is a NaN the oracle never has). */
        got[run] = output_bytes(f, &by, yname, run + 1);
        gpu_buf_free(&by);
    }
    input_untouched(f, &bx, x, "x_bf16");
    input_untouched(f, &bw, w, "w_bf16");
    same_runs(f, y, got[0], got[1]);
    double *atol = xmalloc(ny * sizeof *atol);
    mla_tol_bf16_gemm_bounds(w, x, y_is_bf16 ? (const uint16_t *)y->data : NULL, t, nn, k, x_rs,
                             x_bs, y_rs, y_bs, H, y_is_bf16, atol);
    against_oracle(f, y, got[0], MLA_TOL_BF16_GEMM, atol);
    free(atol);
    free(got[0]);
    free(got[1]);
    free(x);
    free(w);
    gpu_buf_free(&bx);
    gpu_buf_free(&bw);
    gpu_buf_free(&bws);
}

static void run_bf16_absorb_f32(fx *f) { run_bf16_gemm(f, 1, 0); }
static void run_bf16_absorb_bf16(fx *f) { run_bf16_gemm(f, 1, 1); }
static void run_bf16_decompress_f32(fx *f) { run_bf16_gemm(f, 0, 0); }
static void run_bf16_decompress_bf16(fx *f) { run_bf16_gemm(f, 0, 1); }

/* ------------------------------------------------------------------ the tests -------------- */
static void dense_gpu(const char *case_name, const char *stage, void (*run)(fx *)) {
    GPU_REQUIRE();
    fx f;
    fx_open(&f, case_name, stage);
    run(&f);
    fx_close(&f);
}

#define DENSE_STAGES_OF(X, c)                                                                 \
    X(c, rope) X(c, split_latent) X(c, append_latent) X(c, absorb_q) X(c, attn_absorbed)      \
        X(c, decompress_v)

#define DEFINE_TEST(c, stage)                                                                 \
    Test(dense_gpu, c##__##stage, .timeout = 300) { dense_gpu(#c, #stage, run_##stage); }

DENSE_STAGES_OF(DEFINE_TEST, glm5_decode)
DENSE_STAGES_OF(DEFINE_TEST, glm5_verify)
DENSE_STAGES_OF(DEFINE_TEST, glm5_prefill)
DENSE_STAGES_OF(DEFINE_TEST, glm5_next_decode)
DENSE_STAGES_OF(DEFINE_TEST, glm5_next_verify)
DEFINE_TEST(glm5_rope_maxpos, rope)
DEFINE_TEST(glm5_prefill, bf16_absorb_f32)
DEFINE_TEST(glm5_prefill, bf16_absorb_bf16)
DEFINE_TEST(glm5_prefill, bf16_decompress_f32)
DEFINE_TEST(glm5_prefill, bf16_decompress_bf16)

/* Every dense stage of every case has a test above (CPU: runs everywhere). */
Test(dense_gpu, every_dense_stage_has_a_test) {
    static const char *dense_stages[] = {"rope",          "split_latent", "append_latent",
                                         "absorb_q",      "attn_absorbed", "decompress_v",
                                         "bf16_absorb",   "bf16_decompress"};
    static const char *covered[] = {
#define NAME_OF(c, stage) #c "/" #stage,
        DENSE_STAGES_OF(NAME_OF, glm5_decode)      DENSE_STAGES_OF(NAME_OF, glm5_verify)
        DENSE_STAGES_OF(NAME_OF, glm5_prefill)     DENSE_STAGES_OF(NAME_OF, glm5_next_decode)
        DENSE_STAGES_OF(NAME_OF, glm5_next_verify) NAME_OF(glm5_rope_maxpos, rope)
        NAME_OF(glm5_prefill, bf16_absorb)         NAME_OF(glm5_prefill, bf16_decompress)
#undef NAME_OF
    };
    size_t nc = sizeof covered / sizeof covered[0], nd = sizeof dense_stages / sizeof *dense_stages;
    for (size_t i = 0; i < mla_case_count(); i++) {
        const mla_case *c = mla_case_at(i);
        for (int s = 0; s < MLA_MAX_STAGES && c->stages[s].fn; s++) {
            int dense = 0, found = 0;
            for (size_t k = 0; k < nd; k++) dense |= strcmp(c->stages[s].name, dense_stages[k]) == 0;
            if (!dense) continue; /* the k-pool stages have their own suites */
            char key[160];
            snprintf(key, sizeof key, "%s/%s", c->name, c->stages[s].name);
            for (size_t k = 0; k < nc; k++) found |= strcmp(key, covered[k]) == 0;
            cr_expect(found, "dense case %s stage %s has no dense_gpu test: add it to "
                      "tests/test_dense_gpu_goldens.c", c->name, c->stages[s].name);
        }
    }
}

/* A call with bad arguments writes nothing: absorb_q_split with split out of range returns
 * 40023 and the poisoned output stays fully poisoned (and the valid call before it worked). */
Test(dense_gpu, bad_arguments_write_nothing, .timeout = 120) {
    GPU_REQUIRE();
    const char *rerun = "bazel test //tests:dense_gpu_goldens_test "
                        "--test_arg=--filter='dense_gpu/bad_arguments_write_nothing'";
    const int32_t t = 1, H = 4, dn = 8, R = 64, dv = 16;
    float *q = xmalloc((size_t)t * H * dn * 4), *wk = xmalloc((size_t)H * dn * R * 4);
    float *ol = xmalloc((size_t)t * H * R * 4), *wv = xmalloc((size_t)H * dv * R * 4);
    mla_fill_host_f32(q, (size_t)t * H * dn, MLA_FILL_REALISTIC, 7u, "q_nope", 1.0f);
    mla_fill_host_f32(wk, (size_t)H * dn * R, MLA_FILL_REALISTIC, 7u, "wk_b", 0.25f);
    mla_fill_host_f32(ol, (size_t)t * H * R, MLA_FILL_REALISTIC, 7u, "o_lat", 1.0f);
    mla_fill_host_f32(wv, (size_t)H * dv * R, MLA_FILL_REALISTIC, 7u, "wv_b", 0.125f);
    gpu_buf bq = gpu_buf_from_host(q, (size_t)t * H * dn * 4);
    gpu_buf bwk = gpu_buf_from_host(wk, (size_t)H * dn * R * 4);
    gpu_buf bol = gpu_buf_from_host(ol, (size_t)t * H * R * 4);
    gpu_buf bwv = gpu_buf_from_host(wv, (size_t)H * dv * R * 4);
    gpu_buf out = gpu_buf_alloc((size_t)t * H * R * 4);
    gpu_buf outv = gpu_buf_alloc((size_t)t * H * dv * 4);
    struct {
        const char *what;
        int rc, want;
        gpu_buf *o;
    } calls[] = {
        {"absorb_q_split split = 0", memra_mla_absorb_q_split_f32(bq.ptr, bwk.ptr, out.ptr, t, H, dn, R, 0, NULL), 40023, &out},
        {"absorb_q_split split = kv_rank + 1", memra_mla_absorb_q_split_f32(bq.ptr, bwk.ptr, out.ptr, t, H, dn, R, R + 1, NULL), 40023, &out},
        {"absorb_q_split split = -1", memra_mla_absorb_q_split_f32(bq.ptr, bwk.ptr, out.ptr, t, H, dn, R, -1, NULL), 40023, &out},
        {"absorb_q kv_rank = 1025", memra_mla_absorb_q_f32(bq.ptr, bwk.ptr, out.ptr, t, H, dn, 1025, NULL), 40002, &out},
        {"absorb_q q_lat aliases wk_b", memra_mla_absorb_q_f32(bq.ptr, bwk.ptr, (float *)bwk.ptr, t, H, dn, R, NULL), 40028, &out},
        {"decompress_v_split split = d_v + 1", memra_mla_decompress_v_split_f32(bol.ptr, bwv.ptr, outv.ptr, t, H, dv, R, dv + 1, NULL), 40023, &outv},
        {"decompress_v NULL wv_b", memra_mla_decompress_v_f32(bol.ptr, NULL, outv.ptr, t, H, dv, R, NULL), 40020, &outv},
    };
    int s = gpu_sync();
    cr_assert(s == 0, "sync: %d (%s)", s, mla_status_message(s));
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        cr_expect(calls[i].rc == calls[i].want, "%s: returned %d (%s), want %d (%s)\n  re-run: %s",
                  calls[i].what, calls[i].rc, mla_status_message(calls[i].rc), calls[i].want,
                  mla_status_message(calls[i].want), rerun);
    cr_expect(gpu_buf_count_poison(&out) == out.bytes / 4 && gpu_buf_guards_intact(&out),
              "a refused absorb call wrote to q_lat (%zu of %zu words still poisoned)\n  re-run: %s",
              gpu_buf_count_poison(&out), out.bytes / 4, rerun);
    cr_expect(gpu_buf_count_poison(&outv) == outv.bytes / 4 && gpu_buf_guards_intact(&outv),
              "a refused decompress call wrote to out\n  re-run: %s", rerun);
    /* wk_b was the aliased "output" of a refused call: still the input bytes. */
    float *h = xmalloc((size_t)H * dn * R * 4);
    gpu_buf_download(&bwk, h, (size_t)H * dn * R * 4);
    cr_expect(memcmp(h, wk, (size_t)H * dn * R * 4) == 0,
              "a refused aliasing call wrote into wk_b\n  re-run: %s", rerun);
    /* The same buffers with a valid split do work (the check is not vacuous). */
    int rc = memra_mla_absorb_q_split_f32(bq.ptr, bwk.ptr, out.ptr, t, H, dn, R, 2, NULL);
    cr_assert(rc == 0 && gpu_sync() == 0, "the valid split call returned %d (%s)\n  re-run: %s",
              rc, mla_status_message(rc), rerun);
    float *got = xmalloc(out.bytes), *ref = xmalloc(out.bytes);
    gpu_buf_download(&out, got, out.bytes);
    oracle_absorb_q_f32(q, wk, ref, t, H, dn, R);
    cr_expect(memcmp(got, ref, out.bytes) == 0,
              "the valid split call differs from the oracle\n  re-run: %s", rerun);
    free(got);
    free(ref);
    free(h);
    free(q);
    free(wk);
    free(ol);
    free(wv);
    gpu_buf_free(&bq);
    gpu_buf_free(&bwk);
    gpu_buf_free(&bol);
    gpu_buf_free(&bwv);
    gpu_buf_free(&out);
    gpu_buf_free(&outv);
}
