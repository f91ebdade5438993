/* stages_dense.c: the dense MLA core's stage descriptors (case.h), each with its oracle half
 * (inputs from the fill, outputs from oracle/) and its GPU half (the kernel on the testbed).
 * Tolerance classes: docs/tolerances.md; the GPU checks of each stage: case_list.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mla.h"
#include "kernels/mla_door.h"
#include "oracle/mla_oracle.h"
#include "tests/lib/case.h"
#include "tests/lib/stage_util.h"

/* ------------------------------------------------------------------ non-finite inputs ------ */
/* The special-value overlay of the dense inputs (geometry nonfinite = 1): fixed elements of the
 * filled tensor are replaced, the rest keeps the fill. The values (bits):
 *   V0 NaN 0xFFC12345 (negative, quiet, payload), V1 +inf, V2 -inf, V3 -0, V4 2^-149 (the
 *   smallest subnormal), V5 -3 x 2^-149, V6 NaN 0x7F800001 (signalling).
 * The elements (an index past its dimension is skipped; [a % n] wraps to the tensor's size):
 *   kv       [t_q][w]:          [i][1 + k] = Vk for every row i and k = 0..6 (split_latent and
 *                               append_latent copy them: bytes, -0 and payloads included);
 *   q_pe_raw [n][H][d_rope]:    [0][0][0] = V0, [1 % n][0][2] = V1 (rope: the pair's results are
 *                               NaN, resp. +-inf, and flow into attention's q_pe);
 *   q_nope   [t_q][H][d_nope]:  [0][1][5] = V0 (q_lat row (0, 1) NaN), [1 % t_q][2][7] = V1
 *                               (q_lat row (1, 2) +-inf by the sign of each weight), [t_q-1][3][0]
 *                               = V3, [t_q-1][4][9] = V4;
 *   cache    [t_kv][w]:         [t_kv-1][w-1] = V0 (the last row: only the last query sees it),
 *                               [0][0] = V3, [0][1] = V4, [1][2] = V5;
 *   wv_b     [H][d_v][kv_rank]: [5 % H][7][11] = V1 (out[i][5 % H][7] +-inf where o_lat is finite
 *                               and nonzero, NaN where o_lat is NaN).
 * The propagation follows the contract (kernels/mla.h): copies keep bytes; the fmaf chains of
 * absorb / decompress give NaN or +-inf by IEEE rules, the oracle's order being the kernels';
 * a (query, head) with a NaN or +-inf logit gets an all-NaN o_lat row. tools/golden/mla_golden.py
 * (dense_nonfinite_overlay) restates this table; change both together. */
static const uint32_t k_nonfinite_bits[7] = {0xFFC12345u, 0x7F800000u, 0xFF800000u, 0x80000000u,
                                             0x00000001u, 0x80000003u, 0x7F800001u};

static void put_special(float *x, int64_t n, int64_t e, int k) {
    if (e < 0 || e >= n) return;
    memcpy(&x[e], &k_nonfinite_bits[k], sizeof(float));
}

static void dense_nonfinite_overlay(const mla_ctx *ctx, const char *name, float *x) {
    if (!G->nonfinite || !x) return;
    const int64_t H = G->n_head, R = G->kv_rank, W = (int64_t)G->kv_rank + G->d_rope;
    const int64_t tq = G->t_q, dr = G->d_rope, dn = G->d_nope, dv = G->d_v;
    if (strcmp(name, "kv") == 0) {
        for (int64_t i = 0; i < tq; i++)
            for (int k = 0; k < 7 && 1 + k < W; k++) put_special(x, tq * W, i * W + 1 + k, k);
    } else if (strcmp(name, "q_pe_raw") == 0 && dr > 2) {
        int64_t np = G->n_positions ? G->n_positions : tq, n = np * H * dr;
        put_special(x, n, 0, 0);
        put_special(x, n, (1 % np) * H * dr + 2, 1);
    } else if (strcmp(name, "q_nope") == 0 && H > 4 && dn > 9) {
        int64_t n = tq * H * dn;
        put_special(x, n, (0 * H + 1) * dn + 5, 0);
        put_special(x, n, ((1 % tq) * H + 2) * dn + 7, 1);
        put_special(x, n, ((tq - 1) * H + 3) * dn + 0, 3);
        put_special(x, n, ((tq - 1) * H + 4) * dn + 9, 4);
    } else if (strcmp(name, "cache") == 0 && G->t_kv > 1 && W > 2) {
        int64_t n = (int64_t)G->t_kv * W;
        put_special(x, n, n - 1, 0);
        put_special(x, n, 0, 3);
        put_special(x, n, 1, 4);
        put_special(x, n, W + 2, 5);
    } else if (strcmp(name, "wv_b") == 0 && dv > 7 && R > 11) {
        put_special(x, H * dv * R, ((5 % H) * dv + 7) * R + 11, 1);
    }
}

/* mla_ctx_input_f32 with the overlay above (idempotent: a tensor shared by stages is the same
 * buffer, overlaid again with the same values). */
static const float *dense_input(mla_ctx *ctx, const char *name, int ndim, const int64_t *shape,
                                mla_fill_kind kind, float scale) {
    float *x = (float *)mla_ctx_input_f32(ctx, name, ndim, shape, kind, scale);
    dense_nonfinite_overlay(ctx, name, x);
    return x;
}

/* ------------------------------------------------------------------ oracle halves ---------- */
/* Fill scales (tests/lib/geometry.h): activations and cache rows ~ U(-1, 1), weights
 * ~ U(-1, 1) / sqrt(fan_in). */

static int rope_oracle(mla_ctx *ctx) {
    if (G->d_rope == 0) return 0; /* NoPE: nothing to rotate */
    int32_t n_pos = G->n_positions ? G->n_positions : G->t_q;
    int64_t pshape[1] = {n_pos};
    int32_t *pos = mla_ctx_input_i32(ctx, "positions", 1, pshape);
    if (!pos) return -1;
    for (int32_t i = 0; i < n_pos; i++)
        pos[i] = G->n_positions ? G->positions[i] : G->t_kv - G->t_q + i;
    const int64_t shape[3] = {n_pos, G->n_head, G->d_rope};
    const float *raw = dense_input(ctx, "q_pe_raw", 3, shape, MLA_FILL_REALISTIC, 1.0f);
    if (!raw) return -1;
    float *q_pe = mla_ctx_output(ctx, "q_pe", ST_F32, 3, shape);
    if (!q_pe) return -1;
    memcpy(q_pe, raw, (size_t)n_pos * G->n_head * G->d_rope * sizeof(float));
    oracle_rope_interleaved_f32(q_pe, n_pos, G->n_head, G->d_rope, pos, G->rope_base);
    return 0;
}

static int split_latent_oracle(mla_ctx *ctx) {
    int32_t w = G->kv_rank + G->d_rope;
    const float *kv = dense_input(ctx, "kv", 2, SHAPE(G->t_q, w), EXACT_FILL, LATENT_SCALE);
    if (!kv) return -1;
    float *c_kv = mla_ctx_output(ctx, "c_kv", ST_F32, 2, SHAPE(G->t_q, G->kv_rank));
    if (!c_kv) return -1;
    float *k_pe = NULL;
    if (G->d_rope > 0) {
        k_pe = mla_ctx_output(ctx, "k_pe", ST_F32, 2, SHAPE(G->t_q, G->d_rope));
        if (!k_pe) return -1;
    }
    oracle_split_latent_f32(kv, c_kv, k_pe, G->t_q, G->kv_rank, G->d_rope);
    return 0;
}

/* The appended rows land at slot t_kv - t_q of the generated cache; only those rows are an
 * output ("cache_rows"); the rest of the cache is unchanged by contract. */
static int append_latent_oracle(mla_ctx *ctx) {
    int32_t w = G->kv_rank + G->d_rope, slot = G->t_kv - G->t_q;
    const float *c_kv = mla_ctx_need_f32(ctx, "c_kv");
    const float *k_pe = G->d_rope > 0 ? mla_ctx_need_f32(ctx, "k_pe") : NULL;
    if (!c_kv || (G->d_rope > 0 && !k_pe)) return -1;
    const float *cache = dense_input(ctx, "cache", 2, SHAPE(G->t_kv, w), EXACT_FILL, LATENT_SCALE);
    if (!cache) return -1;
    float *rows = mla_ctx_output(ctx, "cache_rows", ST_F32, 2, SHAPE(G->t_q, w));
    if (!rows) return -1;
    size_t n = (size_t)G->t_kv * (size_t)w;
    float *tmp = malloc(n * sizeof *tmp);
    if (!tmp) return mla_ctx_fail(ctx, "out of memory");
    memcpy(tmp, cache, n * sizeof *tmp);
    oracle_append_latent_f32(tmp, c_kv, k_pe, slot, G->t_q, G->kv_rank, G->d_rope);
    memcpy(rows, tmp + (size_t)slot * (size_t)w, (size_t)G->t_q * (size_t)w * sizeof *tmp);
    free(tmp);
    return 0;
}

static int absorb_q_oracle(mla_ctx *ctx) {
    const float *q_nope =
        dense_input(ctx, "q_nope", 3, SHAPE(G->t_q, G->n_head, G->d_nope), EXACT_FILL, 1.0f);
    const float *wk_b = dense_input(ctx, "wk_b", 3, SHAPE(G->n_head, G->d_nope, G->kv_rank),
                                    EXACT_FILL, WEIGHT_SCALE(G->d_nope));
    if (!q_nope || !wk_b) return -1;
    float *q_lat = mla_ctx_output(ctx, "q_lat", ST_F32, 3, SHAPE(G->t_q, G->n_head, G->kv_rank));
    if (!q_lat) return -1;
    oracle_absorb_q_f32(q_nope, wk_b, q_lat, G->t_q, G->n_head, G->d_nope, G->kv_rank);
    return 0;
}

/* Inputs: q_lat = absorb_q's output, q_pe = rope's output, cache = the generated cache. */
static int attn_absorbed_oracle(mla_ctx *ctx) {
    int32_t w = G->kv_rank + G->d_rope;
    const float *q_lat = mla_ctx_need_f32(ctx, "q_lat");
    const float *q_pe = G->d_rope > 0 ? mla_ctx_need_f32(ctx, "q_pe") : NULL;
    if (!q_lat || (G->d_rope > 0 && !q_pe)) return -1;
    const float *cache = dense_input(ctx, "cache", 2, SHAPE(G->t_kv, w), EXACT_FILL, LATENT_SCALE);
    if (!cache) return -1;
    float *o_lat = mla_ctx_output(ctx, "o_lat", ST_F32, 3, SHAPE(G->t_q, G->n_head, G->kv_rank));
    if (!o_lat) return -1;
    oracle_attn_absorbed_f32(q_lat, q_pe, cache, o_lat, G->n_head, G->kv_rank, G->d_rope, G->t_q,
                             G->t_kv, G->scale);
    return 0;
}

static int decompress_v_oracle(mla_ctx *ctx) {
    const float *o_lat = mla_ctx_need_f32(ctx, "o_lat");
    const float *wv_b = dense_input(ctx, "wv_b", 3, SHAPE(G->n_head, G->d_v, G->kv_rank),
                                    EXACT_FILL, WEIGHT_SCALE(G->kv_rank));
    if (!o_lat || !wv_b) return -1;
    float *out = mla_ctx_output(ctx, "out", ST_F32, 3, SHAPE(G->t_q, G->n_head, G->d_v));
    if (!out) return -1;
    oracle_decompress_v_f32(o_lat, wv_b, out, G->t_q, G->n_head, G->d_v, G->kv_rank);
    return 0;
}

/* The bf16 GEMM stages of glm5_prefill, one strided-batched GEMM per stage (batch = heads):
 *  absorb:     x = bf16(q_nope) [t][H][d_nope], w = bf16(wk_b) transposed per head to
 *              [H][kv_rank][d_nope], y [t][H][kv_rank];
 *  decompress: x = bf16(o_lat) [t][H][kv_rank], w = bf16(wv_b) [H][d_v][kv_rank], y [t][H][d_v];
 * y in f32 and in bf16. Both halves build the operands here, so the GPU is fed exactly the
 * oracle's bf16 bits. */
int mla_bf16_gemm_operands(const mla_geom *g, int absorb, const float *x32, const float *w32,
                           mla_bf16_gemm *a) {
    int32_t H = g->n_head, R = g->kv_rank;
    a->m = g->t_q, a->batch = H;
    a->n = absorb ? R : g->d_v;
    a->k = absorb ? g->d_nope : R;
    a->x_rs = (int64_t)H * a->k, a->x_bs = a->k, a->y_rs = (int64_t)H * a->n, a->y_bs = a->n;
    a->nx = (size_t)a->m * H * a->k, a->nw = (size_t)H * a->n * a->k;
    a->x = malloc(a->nx * 2), a->w = malloc(a->nw * 2);
    if (!a->x || !a->w) {
        free(a->x), free(a->w);
        return -1;
    }
    for (size_t i = 0; i < a->nx; i++) a->x[i] = oracle_bf16_from_f32(x32[i]);
    if (absorb) /* wk_b [H][d_nope][R] -> w [H][R][d_nope] */
        for (int32_t h = 0; h < H; h++)
            for (int32_t r = 0; r < R; r++)
                for (int32_t d = 0; d < a->k; d++)
                    a->w[((size_t)h * R + r) * a->k + d] =
                        oracle_bf16_from_f32(w32[((size_t)h * a->k + d) * R + r]);
    else
        for (size_t i = 0; i < a->nw; i++) a->w[i] = oracle_bf16_from_f32(w32[i]);
    return 0;
}

static const char *const k_bf16_x[2] = {"o_lat", "q_nope"}, *const k_bf16_w[2] = {"wv_b", "wk_b"};
static const char *const k_bf16_y[2][2] = {
    {"decompress_bf16_y_f32", "decompress_bf16_y_bf16"},
    {"absorb_bf16_y_f32", "absorb_bf16_y_bf16"},
};

static int bf16_gemm_oracle(mla_ctx *ctx, int absorb) {
    const float *x32 = mla_ctx_need_f32(ctx, k_bf16_x[absorb]);
    const float *w32 = mla_ctx_need_f32(ctx, k_bf16_w[absorb]);
    if (!x32 || !w32) return -1;
    int32_t t = G->t_q, H = G->n_head, n = absorb ? G->kv_rank : G->d_v;
    float *y32 = mla_ctx_output(ctx, k_bf16_y[absorb][0], ST_F32, 3, SHAPE(t, H, n));
    uint16_t *y16 = mla_ctx_output(ctx, k_bf16_y[absorb][1], ST_BF16, 3, SHAPE(t, H, n));
    if (!y32 || !y16) return -1;
    mla_bf16_gemm a;
    if (mla_bf16_gemm_operands(G, absorb, x32, w32, &a)) return mla_ctx_fail(ctx, "out of memory");
    oracle_bf16_gemm_sb(a.w, a.x, y32, a.m, a.n, a.k, a.x_rs, a.x_bs, a.y_rs, a.y_bs, a.batch, 0);
    oracle_bf16_gemm_sb(a.w, a.x, y16, a.m, a.n, a.k, a.x_rs, a.x_bs, a.y_rs, a.y_bs, a.batch, 1);
    free(a.x), free(a.w);
    return 0;
}

static int bf16_absorb_oracle(mla_ctx *ctx) { return bf16_gemm_oracle(ctx, 1); }
static int bf16_decompress_oracle(mla_ctx *ctx) { return bf16_gemm_oracle(ctx, 0); }

/* ------------------------------------------------------------------ GPU halves ------------- */
/* Each: inputs (the oracle's tensors of the case) into guarded device buffers, two launches
 * into freshly poisoned outputs, then guards, input-untouched, no poison left, run 1 == run 2
 * bytes, and the output against the oracle's in its class. */

static void rope_gpu(tb *t, mla_ctx *ctx, int variant) {
    (void)variant;
    const mla_geom *g = &ctx->c->geom;
    if (g->d_rope == 0) {
        /* NoPE: a no-op returning 0; x and positions may be NULL and are never touched. */
        int rc =
            memra_mla_rope_interleaved_f32(NULL, g->t_q, g->n_head, 0, NULL, g->rope_base, NULL);
        tb_launched(t, rc, "memra_mla_rope_interleaved_f32(d_rope = 0, NULL, NULL)");
        gpu_buf x = gpu_buf_alloc((size_t)g->t_q * g->n_head * 4);
        rc = memra_mla_rope_interleaved_f32(x.ptr, g->t_q, g->n_head, 0, NULL, g->rope_base, NULL);
        tb_launched(t, rc, "memra_mla_rope_interleaved_f32(d_rope = 0)");
        tb_expectf(t, gpu_buf_guards_intact(&x) && gpu_buf_count_poison(&x) == x.bytes / 4,
                   "rope with d_rope = 0 wrote to x");
        gpu_buf_free(&x);
        return;
    }
    const mla_tensor *pos = tb_tensor(t, ctx, "positions"), *raw = tb_tensor(t, ctx, "q_pe_raw"),
                     *q_pe = tb_tensor(t, ctx, "q_pe");
    int32_t n_pos = (int32_t)raw->shape[0], n_vec = (int32_t)raw->shape[1];
    gpu_buf bp = gpu_buf_from_host(pos->data, pos->nbytes);
    void *got[2];
    for (int run = 0; run < 2; run++) {
        gpu_buf bx = gpu_buf_from_host(raw->data, raw->nbytes); /* in place: x is the input */
        int rc = memra_mla_rope_interleaved_f32(bx.ptr, n_pos, n_vec, g->d_rope, bp.ptr,
                                                g->rope_base, NULL);
        tb_launched(t, rc, "memra_mla_rope_interleaved_f32");
        got[run] = tb_output(t, &bx, "x", run ? "run 2" : "run 1", 0);
        gpu_buf_free(&bx);
    }
    tb_input_untouched(t, &bp, pos->data, "positions");
    tb_same_runs(t, q_pe, got[0], got[1]);
    size_t n = q_pe->nbytes / 4;
    double *atol = tb_xmalloc(t, n * sizeof *atol);
    mla_tol_rope_bounds(raw->data, n, atol);
    tb_against_oracle(t, ctx, q_pe, got[0], "kernel", atol);
    free(atol), free(got[0]), free(got[1]);
    gpu_buf_free(&bp);
}

static void split_latent_gpu(tb *t, mla_ctx *ctx, int variant) {
    (void)variant;
    const mla_geom *g = &ctx->c->geom;
    const mla_tensor *kv = tb_tensor(t, ctx, "kv"), *c_kv = tb_tensor(t, ctx, "c_kv");
    const mla_tensor *k_pe = g->d_rope > 0 ? tb_tensor(t, ctx, "k_pe") : NULL;
    gpu_buf bkv = gpu_buf_from_host(kv->data, kv->nbytes);
    void *gc[2], *gp[2] = {NULL, NULL};
    for (int run = 0; run < 2; run++) {
        gpu_buf bc = gpu_buf_alloc(c_kv->nbytes);
        gpu_buf bp = gpu_buf_alloc(k_pe ? k_pe->nbytes : 0);
        int rc = memra_mla_split_latent_f32(bkv.ptr, bc.ptr, k_pe ? bp.ptr : NULL, g->t_q,
                                            g->kv_rank, g->d_rope, NULL);
        tb_launched(t, rc, "memra_mla_split_latent_f32");
        gc[run] = tb_output(t, &bc, "c_kv", run ? "run 2" : "run 1", 1);
        if (k_pe) gp[run] = tb_output(t, &bp, "k_pe", run ? "run 2" : "run 1", 1);
        gpu_buf_free(&bc);
        gpu_buf_free(&bp);
    }
    tb_input_untouched(t, &bkv, kv->data, "kv");
    tb_same_runs(t, c_kv, gc[0], gc[1]);
    tb_against_oracle(t, ctx, c_kv, gc[0], "kernel", NULL);
    if (k_pe) {
        tb_same_runs(t, k_pe, gp[0], gp[1]);
        tb_against_oracle(t, ctx, k_pe, gp[0], "kernel", NULL);
    }
    for (int i = 0; i < 2; i++) free(gc[i]), free(gp[i]);
    gpu_buf_free(&bkv);
}

/* The pre-fill of the cache: a negative quiet NaN per word, never the poison word, so rows the
 * kernel must not touch are recognisable bit for bit. */
static uint32_t cache_fill_word(size_t i) { return 0xFFC00000u | (uint32_t)(i & 0x3FFFFFu); }

static void append_latent_gpu(tb *t, mla_ctx *ctx, int variant) {
    (void)variant;
    const mla_geom *g = &ctx->c->geom;
    const mla_tensor *c_kv = tb_tensor(t, ctx, "c_kv"), *rows = tb_tensor(t, ctx, "cache_rows");
    const mla_tensor *k_pe = g->d_rope > 0 ? tb_tensor(t, ctx, "k_pe") : NULL;
    int32_t w = g->kv_rank + g->d_rope, slot = g->t_kv - g->t_q;
    /* Two spare rows after the appended ones: they must stay untouched too. */
    size_t cache_rows_n = (size_t)g->t_kv + 2, n = cache_rows_n * (size_t)w;
    uint32_t *fill = tb_xmalloc(t, n * 4);
    for (size_t i = 0; i < n; i++) fill[i] = cache_fill_word(i);
    gpu_buf bc = gpu_buf_from_host(c_kv->data, c_kv->nbytes);
    gpu_buf bp = gpu_buf_from_host(k_pe ? k_pe->data : NULL, k_pe ? k_pe->nbytes : 0);
    uint32_t *got[2];
    for (int run = 0; run < 2; run++) {
        gpu_buf cache = gpu_buf_from_host(fill, n * 4);
        int rc = memra_mla_append_latent_f32(cache.ptr, bc.ptr, k_pe ? bp.ptr : NULL, slot, g->t_q,
                                             g->kv_rank, g->d_rope, NULL);
        tb_launched(t, rc, "memra_mla_append_latent_f32");
        got[run] = tb_output(t, &cache, "cache", run ? "run 2" : "run 1", 0);
        gpu_buf_free(&cache);
    }
    tb_input_untouched(t, &bc, c_kv->data, "c_kv");
    if (k_pe) tb_input_untouched(t, &bp, k_pe->data, "k_pe");
    const int64_t cshape[2] = {(int64_t)cache_rows_n, w};
    tb_compare(t, "cache", ST_F32, 2, cshape, got[1], "run2", got[0], "run1", MLA_TOL_EXACT, NULL,
               1);
    /* Rows outside slot..slot+t-1: the pre-fill, bit for bit. */
    size_t lo = (size_t)slot * w, hi = lo + (size_t)g->t_q * w, first_bad = (size_t)-1;
    for (size_t i = 0; i < n && first_bad == (size_t)-1; i++)
        if ((i < lo || i >= hi) && got[0][i] != fill[i]) first_bad = i;
    tb_expectf(t, first_bad == (size_t)-1,
               "append wrote outside rows %d..%d: cache[%zu][%zu] = 0x%08X, pre-fill 0x%08X", slot,
               slot + g->t_q - 1, first_bad / (size_t)w, first_bad % (size_t)w,
               first_bad == (size_t)-1 ? 0u : got[0][first_bad],
               first_bad == (size_t)-1 ? 0u : fill[first_bad]);
    tb_against_oracle(t, ctx, rows, got[0] + lo, "kernel", NULL);
    free(got[0]), free(got[1]), free(fill);
    gpu_buf_free(&bc);
    gpu_buf_free(&bp);
}

typedef int (*matvec_fn)(const float *, const float *, float *, int32_t, int32_t, int32_t, int32_t,
                         void *);

/* absorb_q / decompress_v: in, w -> out (exact). */
static void matvec_gpu(tb *t, mla_ctx *ctx, const char *in_name, const char *w_name,
                       const char *out_name, matvec_fn fn, const char *fn_name, int32_t head_dim) {
    const mla_geom *g = &ctx->c->geom;
    const mla_tensor *in = tb_tensor(t, ctx, in_name), *w = tb_tensor(t, ctx, w_name),
                     *out = tb_tensor(t, ctx, out_name);
    gpu_buf bi = gpu_buf_from_host(in->data, in->nbytes);
    gpu_buf bw = gpu_buf_from_host(w->data, w->nbytes);
    void *got[2];
    for (int run = 0; run < 2; run++) {
        gpu_buf bo = gpu_buf_alloc(out->nbytes);
        int rc = fn(bi.ptr, bw.ptr, bo.ptr, g->t_q, g->n_head, head_dim, g->kv_rank, NULL);
        tb_launched(t, rc, fn_name);
        got[run] = tb_output(t, &bo, out_name, run ? "run 2" : "run 1", 1);
        gpu_buf_free(&bo);
    }
    tb_input_untouched(t, &bi, in->data, in_name);
    tb_input_untouched(t, &bw, w->data, w_name);
    tb_same_runs(t, out, got[0], got[1]);
    tb_against_oracle(t, ctx, out, got[0], "kernel", NULL);
    free(got[0]), free(got[1]);
    gpu_buf_free(&bi);
    gpu_buf_free(&bw);
}

static void absorb_q_gpu(tb *t, mla_ctx *ctx, int variant) {
    (void)variant;
    matvec_gpu(t, ctx, "q_nope", "wk_b", "q_lat", memra_mla_absorb_q_f32, "memra_mla_absorb_q_f32",
               ctx->c->geom.d_nope);
}

static void decompress_v_gpu(tb *t, mla_ctx *ctx, int variant) {
    (void)variant;
    matvec_gpu(t, ctx, "o_lat", "wv_b", "out", memra_mla_decompress_v_f32,
               "memra_mla_decompress_v_f32", ctx->c->geom.d_v);
}

static void attn_absorbed_gpu(tb *t, mla_ctx *ctx, int variant) {
    const int tc = tc_attn_of_variant(variant); /* the arm (tests/lib/tc_attn.h) */
    const mla_geom *g = &ctx->c->geom;
    const mla_tensor *ql = tb_tensor(t, ctx, "q_lat"), *cache = tb_tensor(t, ctx, "cache"),
                     *o = tb_tensor(t, ctx, "o_lat");
    const mla_tensor *qp = g->d_rope > 0 ? tb_tensor(t, ctx, "q_pe") : NULL;
    gpu_buf bq = gpu_buf_from_host(ql->data, ql->nbytes);
    gpu_buf bp = gpu_buf_from_host(qp ? qp->data : NULL, qp ? qp->nbytes : 0);
    gpu_buf bc = gpu_buf_from_host(cache->data, cache->nbytes);
    void *got[2];
    for (int run = 0; run < 2; run++) {
        gpu_buf bo = gpu_buf_alloc(o->nbytes);
        int rc;
        if (variant == 0) {
            rc =
                memra_mla_attn_absorbed_f32(bq.ptr, qp ? bp.ptr : NULL, bc.ptr, bo.ptr, g->n_head,
                                            g->kv_rank, g->d_rope, g->t_q, g->t_kv, g->scale, NULL);
        } else {
            setenv("MEMRA_MLA_TC_ATTN", tc_attn_flag(tc), 1);
            const uint64_t before = mla_tc_attn_dispatches();
            rc = mla_door_attn_absorbed_f32(bq.ptr, qp ? bp.ptr : NULL, bc.ptr, bo.ptr, g->n_head,
                                            g->kv_rank, g->d_rope, g->t_q, g->t_kv, g->scale, NULL);
            unsetenv("MEMRA_MLA_TC_ATTN");
            tc_attn_expect_receipt(t, tc, before, g, bc.ptr);
        }
        tb_launched(t, rc, variant ? "mla_door_attn_absorbed_f32" : "memra_mla_attn_absorbed_f32");
        got[run] = tb_output(t, &bo, "o_lat", run ? "run 2" : "run 1", 1);
        gpu_buf_free(&bo);
    }
    tb_input_untouched(t, &bq, ql->data, "q_lat");
    if (qp) tb_input_untouched(t, &bp, qp->data, "q_pe");
    tb_input_untouched(t, &bc, cache->data, "cache");
    tb_same_runs(t, o, got[0], got[1]);
    /* The bound of the walk the arm states (kernels/mla.h mla_attn_walk, or the tf32 arm's
     * mla_attn_tc_walk in kernels/mla_door.h; docs/tolerances.md) and its arithmetic. */
    double *atol = tb_xmalloc(t, o->nbytes / 4 * sizeof *atol);
    mla_attn_arith ar;
    mla_tol_attn_bounds_arith(
        ql->data, qp ? qp->data : NULL, cache->data, g->n_head, g->kv_rank, g->d_rope, g->t_q,
        g->t_kv, g->scale, tc_attn_walk(tc),
        tc_attn_arith(tc, g->n_head, g->kv_rank, g->d_rope, g->t_q, g->t_kv, &ar), atol);
    tb_against_oracle(t, ctx, o, got[0], variant ? "tc_arm" : "kernel", atol);
    free(atol), free(got[0]), free(got[1]);
    gpu_buf_free(&bq);
    gpu_buf_free(&bp);
    gpu_buf_free(&bc);
}

#define GEMM_WS_BYTES ((size_t)32 << 20)

/* variant 0: y f32, 1: y bf16. */
static void bf16_gemm_gpu(tb *t, mla_ctx *ctx, int absorb, int y_is_bf16) {
    const mla_tensor *x32 = tb_tensor(t, ctx, k_bf16_x[absorb]);
    const mla_tensor *w32 = tb_tensor(t, ctx, k_bf16_w[absorb]);
    const mla_tensor *y = tb_tensor(t, ctx, k_bf16_y[absorb][y_is_bf16]);
    mla_bf16_gemm a;
    if (mla_bf16_gemm_operands(&ctx->c->geom, absorb, x32->data, w32->data, &a))
        tb_failf(t, 1, "out of host memory");
    gpu_buf bx = gpu_buf_from_host(a.x, a.nx * 2), bw = gpu_buf_from_host(a.w, a.nw * 2);
    gpu_buf bws = gpu_buf_alloc(GEMM_WS_BYTES);
    void *got[2];
    for (int run = 0; run < 2; run++) {
        gpu_buf by = gpu_buf_alloc(y->nbytes);
        int rc = memra_bf16_gemm_sb(bw.ptr, bx.ptr, by.ptr, a.m, a.n, a.k, a.x_rs, a.x_bs, a.y_rs,
                                    a.y_bs, a.batch, y_is_bf16, bws.ptr, GEMM_WS_BYTES, NULL);
        tb_launched(t, rc, "memra_bf16_gemm_sb");
        tb_expectf(t, gpu_buf_guards_intact(&bws), "run %d wrote outside the cuBLASLt workspace",
                   run + 1);
        /* bf16 output: a word still equal to the poison word holds the bf16 pair (0xDEAD,
         * 0x7FC0), impossible for a written pair (0x7FC0 is a NaN the oracle never has). */
        got[run] = tb_output(t, &by, y->name, run ? "run 2" : "run 1", 1);
        gpu_buf_free(&by);
    }
    tb_input_untouched(t, &bx, a.x, "x_bf16");
    tb_input_untouched(t, &bw, a.w, "w_bf16");
    tb_same_runs(t, y, got[0], got[1]);
    size_t ny = y->nbytes / st_dtype_size(y->dtype);
    double *atol = tb_xmalloc(t, ny * sizeof *atol);
    mla_tol_bf16_gemm_bounds(a.w, a.x, y_is_bf16 ? (const uint16_t *)y->data : NULL, a.m, a.n, a.k,
                             a.x_rs, a.x_bs, a.y_rs, a.y_bs, a.batch, y_is_bf16, atol);
    tb_against_oracle(t, ctx, y, got[0], "kernel", atol);
    free(atol), free(got[0]), free(got[1]), free(a.x), free(a.w);
    gpu_buf_free(&bx);
    gpu_buf_free(&bw);
    gpu_buf_free(&bws);
}

static void bf16_absorb_gpu(tb *t, mla_ctx *ctx, int variant) { bf16_gemm_gpu(t, ctx, 1, variant); }
static void bf16_decompress_gpu(tb *t, mla_ctx *ctx, int variant) {
    bf16_gemm_gpu(t, ctx, 0, variant);
}

/* ------------------------------------------------------------------ descriptors ------------ */
const mla_stage mla_stage_rope = {"rope", rope_oracle, rope_gpu, {{"q_pe", MLA_TOL_ROPE, 0}}};
const mla_stage mla_stage_split_latent = {"split_latent",
                                          split_latent_oracle,
                                          split_latent_gpu,
                                          {{"c_kv", MLA_TOL_EXACT, 0}, {"k_pe", MLA_TOL_EXACT, 0}}};
const mla_stage mla_stage_append_latent = {
    "append_latent", append_latent_oracle, append_latent_gpu, {{"cache_rows", MLA_TOL_EXACT, 0}}};
const mla_stage mla_stage_absorb_q = {
    "absorb_q", absorb_q_oracle, absorb_q_gpu, {{"q_lat", MLA_TOL_EXACT, 0}}};
const mla_stage mla_stage_attn_absorbed = {
    "attn_absorbed", attn_absorbed_oracle, attn_absorbed_gpu, {{"o_lat", MLA_TOL_ATTN, 0}}};
const mla_stage mla_stage_decompress_v = {
    "decompress_v", decompress_v_oracle, decompress_v_gpu, {{"out", MLA_TOL_EXACT, 0}}};
const mla_stage mla_stage_bf16_absorb = {
    "bf16_absorb",
    bf16_absorb_oracle,
    bf16_absorb_gpu,
    {{"absorb_bf16_y_f32", MLA_TOL_BF16_GEMM, 0}, {"absorb_bf16_y_bf16", MLA_TOL_BF16_GEMM, 0}}};
const mla_stage mla_stage_bf16_decompress = {"bf16_decompress",
                                             bf16_decompress_oracle,
                                             bf16_decompress_gpu,
                                             {{"decompress_bf16_y_f32", MLA_TOL_BF16_GEMM, 0},
                                              {"decompress_bf16_y_bf16", MLA_TOL_BF16_GEMM, 0}}};
