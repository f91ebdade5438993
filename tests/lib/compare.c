/* compare.c: see compare.h. */
#include "tests/lib/compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *k_names[MLA_TOL_CLASS_COUNT] = {"exact", "rope", "attn", "pool_key",
                                                   "bf16_gemm"};

/* Per-tensor absolute bound, in units of the caller's per-tensor scale: a coarse substitute for
 * the per-element rules of docs/tolerances.md (mla_tol_*_bounds below), for callers without
 * the inputs at hand. */
static const double k_atol_scale[MLA_TOL_CLASS_COUNT] = {
    0.0,     /* exact */
    0x1p-20, /* rope: |x| * a few f32 ulps */
    0x1p-18, /* attn: max|c_kv| * ~16 f32 ulps */
    0x1p-20, /* pool_key */
    0x1p-7,  /* bf16_gemm: scale = sum_k |x||w| bound, about one bf16 ulp */
};

const char *mla_tol_class_name(mla_tol_class c) {
    return (unsigned)c < MLA_TOL_CLASS_COUNT ? k_names[c] : "?";
}
int mla_tol_class_parse(const char *name, mla_tol_class *out) {
    for (int i = 0; i < MLA_TOL_CLASS_COUNT; i++)
        if (strcmp(name, k_names[i]) == 0) {
            *out = (mla_tol_class)i;
            return 0;
        }
    return -1;
}
double mla_tol_atol_scale(mla_tol_class c) {
    return (unsigned)c < MLA_TOL_CLASS_COUNT ? k_atol_scale[c] : 0.0;
}
mla_tol mla_tol_exact(void) {
    mla_tol t;
    memset(&t, 0, sizeof t);
    t.cls = MLA_TOL_EXACT;
    return t;
}
mla_tol mla_tol_for_class(mla_tol_class c, double scale) {
    mla_tol t = mla_tol_exact();
    t.cls = c;
    t.atol = mla_tol_atol_scale(c) * fabs(scale);
    return t;
}

static uint32_t f2u(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static float u2f(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static int64_t ord32(uint32_t b) {
    return (b & 0x80000000u) ? -(int64_t)(b & 0x7fffffffu) : (int64_t)b;
}
static int64_t ord16(uint16_t b) { return (b & 0x8000u) ? -(int64_t)(b & 0x7fffu) : (int64_t)b; }

uint64_t mla_ulp_f32(float a, float b) {
    if (isnan(a) || isnan(b)) return (isnan(a) && isnan(b)) ? 0 : MLA_ULP_INF;
    int64_t d = ord32(f2u(a)) - ord32(f2u(b));
    return (uint64_t)(d < 0 ? -d : d);
}
static int bf16_isnan(uint16_t b) { return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu); }
uint64_t mla_ulp_bf16(uint16_t a, uint16_t b) {
    if (bf16_isnan(a) || bf16_isnan(b)) return (bf16_isnan(a) && bf16_isnan(b)) ? 0 : MLA_ULP_INF;
    int64_t d = ord16(a) - ord16(b);
    return (uint64_t)(d < 0 ? -d : d);
}

/* One element: g, r widened to float; bits_equal; ulp. Updates r. */
static void step(mla_cmp_result *res, const mla_tol *tol, size_t i, float g, float r,
                 int bits_equal, uint64_t ulp, double *worst_key) {
    int gn = isnan(g), rn = isnan(r);
    int differs = !(bits_equal || (gn && rn));
    if (differs) res->n_diff++;
    if (ulp > res->max_ulp || (ulp == MLA_ULP_INF && res->max_ulp != MLA_ULP_INF && differs)) {
        res->max_ulp = ulp;
        res->max_ulp_index = i;
    }
    double ae = 0.0;
    int finite_pair = isfinite(g) && isfinite(r);
    if (finite_pair) {
        ae = fabs((double)g - (double)r);
        if (ae > res->max_abs) {
            res->max_abs = ae;
            res->max_abs_index = i;
        }
    }
    if (gn != rn) res->n_nan_mismatch++;
    if (!gn && !rn && (isinf(g) || isinf(r)) && g != r) res->n_inf_mismatch++;

    int fail;
    double bound = 0.0, key;
    if (tol->cls == MLA_TOL_EXACT) {
        fail = differs;
        key = finite_pair ? ae : INFINITY;
    } else if (gn || rn) {
        fail = gn != rn; /* docs/tolerances.md: a NaN passes only against a NaN */
        key = INFINITY;
    } else if (isinf(g) || isinf(r)) {
        fail = g != r; /* infinities (-inf masks) are exact */
        key = INFINITY;
    } else {
        bound =
            (tol->atol_elem ? (double)tol->atol_elem[i] : tol->atol) + tol->rtol * fabs((double)r);
        if (!isfinite(bound)) { /* inputs carried inf: compare exact */
            fail = differs;
            key = finite_pair ? ae : INFINITY;
        } else {
            fail = !(ae <= bound || (tol->max_ulp && ulp <= tol->max_ulp));
            key = bound > 0 ? ae / bound : (ae > 0 ? INFINITY : 0.0);
        }
    }
    if (fail) res->n_fail++;
    /* worst: failing elements first (by key), else the largest abs error among differing. */
    double wk = fail ? 2.0 + (isinf(key) ? 1e300 : key) : (differs ? 1.0 - 1.0 / (1.0 + ae) : -1.0);
    if (differs && wk > *worst_key) {
        *worst_key = wk;
        res->has_worst = 1;
        res->worst_index = i;
        res->got_worst = g;
        res->ref_worst = r;
        res->worst_abs = finite_pair ? ae : INFINITY;
        res->worst_ulp = ulp;
        res->worst_bound = bound;
    }
}

mla_cmp_result mla_compare_f32(const float *got, const float *ref, size_t n, const mla_tol *tol) {
    mla_cmp_result res;
    memset(&res, 0, sizeof res);
    res.n = n;
    double wk = -2.0;
    for (size_t i = 0; i < n; i++) {
        float g = got[i], r = ref[i];
        step(&res, tol, i, g, r, f2u(g) == f2u(r), mla_ulp_f32(g, r), &wk);
    }
    res.pass = res.n_fail == 0;
    return res;
}

static float bf2f(uint16_t b) { return u2f((uint32_t)b << 16); }

mla_cmp_result mla_compare_bf16(const uint16_t *got, const uint16_t *ref, size_t n,
                                const mla_tol *tol) {
    mla_cmp_result res;
    memset(&res, 0, sizeof res);
    res.n = n;
    double wk = -2.0;
    for (size_t i = 0; i < n; i++)
        step(&res, tol, i, bf2f(got[i]), bf2f(ref[i]), got[i] == ref[i],
             mla_ulp_bf16(got[i], ref[i]), &wk);
    res.pass = res.n_fail == 0;
    return res;
}

static void print_index(FILE *fp, size_t idx, int ndim, const int64_t *shape) {
    fprintf(fp, "%zu", idx);
    if (!shape || ndim <= 0) return;
    int64_t sub[16];
    size_t rem = idx;
    for (int d = ndim - 1; d >= 0 && d < 16; d--) {
        int64_t s = shape[d] > 0 ? shape[d] : 1;
        sub[d] = (int64_t)(rem % (size_t)s);
        rem /= (size_t)s;
    }
    fprintf(fp, " [");
    for (int d = 0; d < ndim && d < 16; d++)
        fprintf(fp, "%s%lld", d ? "][" : "", (long long)sub[d]);
    fprintf(fp, "]");
}

static void print_ulp(FILE *fp, uint64_t u) {
    if (u == MLA_ULP_INF)
        fprintf(fp, "inf");
    else
        fprintf(fp, "%llu", (unsigned long long)u);
}

void mla_cmp_report(FILE *fp, const char *case_name, const char *tensor, int ndim,
                    const int64_t *shape, const mla_cmp_result *r, const mla_tol *tol,
                    const char *rerun_cmd) {
    fprintf(fp, "%s: case %s, tensor %s, class %s", r->pass ? "PASS" : "FAIL",
            case_name ? case_name : "?", tensor ? tensor : "?", mla_tol_class_name(tol->cls));
    if (tol->cls != MLA_TOL_EXACT)
        fprintf(fp, " (atol %.3g%s, rtol %.3g, max_ulp %llu)", tol->atol,
                tol->atol_elem ? " per element" : "", tol->rtol, (unsigned long long)tol->max_ulp);
    fprintf(fp, "\n  %zu of %zu elements differ, %zu fail", r->n_diff, r->n, r->n_fail);
    if (r->n_nan_mismatch) fprintf(fp, ", %zu NaN", r->n_nan_mismatch);
    if (r->n_inf_mismatch) fprintf(fp, ", %zu inf/mask mismatch", r->n_inf_mismatch);
    fprintf(fp, "; max abs error %.9g at ", r->max_abs);
    print_index(fp, r->max_abs_index, ndim, shape);
    fprintf(fp, "; max ulp ");
    print_ulp(fp, r->max_ulp);
    fprintf(fp, " at ");
    print_index(fp, r->max_ulp_index, ndim, shape);
    fprintf(fp, "\n");
    if (r->has_worst) {
        fprintf(fp, "  worst element ");
        print_index(fp, r->worst_index, ndim, shape);
        fprintf(fp, ": got %.9g (0x%08x) ref %.9g (0x%08x) abs error %.9g ulp ",
                (double)r->got_worst, f2u(r->got_worst), (double)r->ref_worst, f2u(r->ref_worst),
                r->worst_abs);
        print_ulp(fp, r->worst_ulp);
        if (tol->cls != MLA_TOL_EXACT) fprintf(fp, " bound %.3g", r->worst_bound);
        fprintf(fp, "\n");
    }
    if (!r->pass && rerun_cmd) fprintf(fp, "  re-run: %s\n", rerun_cmd);
}

void mla_perturb_ulp_f32(float *x, size_t i, int ulps) {
    int64_t o = ord32(f2u(x[i])) + ulps;
    uint32_t b = o < 0 ? (0x80000000u | (uint32_t)(-o)) : (uint32_t)o;
    x[i] = u2f(b);
}
void mla_perturb_ulp_bf16(uint16_t *x, size_t i, int ulps) {
    int64_t o = ord16(x[i]) + ulps;
    x[i] = o < 0 ? (uint16_t)(0x8000u | (uint16_t)(-o)) : (uint16_t)o;
}

/* ------------------------------------------------------ docs/tolerances.md bounds --------- */
#define U_F32 0x1p-24

static double gamma_n(double n) { return n * U_F32 / (1.0 - n * U_F32); }

/* The tensor-core attention arms' arithmetic (docs/tolerances.md, under the accumulator model
 * (H): eps_m = 18u per mma.sync k8 instruction; //tests:tf32_mma_model_gpu_test measures it).
 * 3xTF32 (the nineteenth session's arm: the logits only; P . V is the f32 arm's fmaf chains):
 * 48u per product for the truncated split plus 6 instructions x 18u per 16-column logit chunk,
 * and nothing on P . V. The tf32 door's terms depend on the shape (mla_attn_tc_arith). */
const mla_attn_arith MLA_ATTN_ARITH_3XTF32 = {156 * 0x1p-24, 0.0, 0.0, 0.0, 0.0, 0.0};

void mla_tol_rope_bounds(const float *x_in, size_t n, double *atol) {
    for (size_t i = 0; i + 1 < n; i += 2) {
        double b = 0x1p-21 * (fabs((double)x_in[i]) + fabs((double)x_in[i + 1])) + 0x1p-148;
        atol[i] = atol[i + 1] = b;
    }
    if (n & 1) atol[n - 1] = 0x1p-21 * fabs((double)x_in[n - 1]) + 0x1p-148;
}

/* One (query, head): M[K] column maxima over the N rows, N terms over W walk slots. */
static void attn_one(const float *ql, const float *qp, const double *M, int32_t kv_rank,
                     int32_t d_rope, double N, double W, float scale, mla_attn_walk_fn walk,
                     const mla_attn_arith *ar, double *atol) {
    int32_t K = kv_rank + d_rope;
    double lam = 0.0, q_abs = 0.0, m_abs = 0.0;
    for (int32_t c = 0; c < kv_rank; c++) lam += fabs((double)ql[c]) * M[c];
    for (int32_t c = 0; c < d_rope; c++) lam += fabs((double)qp[c]) * M[kv_rank + c];
    lam *= fabs((double)scale);
    const double abs_e = ar ? ar->abs_e : 0.0;
    if (abs_e > 0.0) {
        for (int32_t c = 0; c < kv_rank; c++) q_abs += fabs((double)ql[c]);
        for (int32_t c = 0; c < d_rope; c++) q_abs += fabs((double)qp[c]);
        for (int32_t c = 0; c < K; c++) m_abs += M[c];
    }
    int64_t R = 0, D = 0;
    if (walk) walk((int64_t)N, (int64_t)W, &R, &D);
    double Rr = (R <= 0 || (double)R > N + 1) ? N + 1 : (double)R;
    double Dd = (D <= 0 || (double)D > N + 1) ? N + 1 : (double)D;
    /* underflow (docs/tolerances.md, class attn): each product of the logit dot may lose up to
     * 2^-150 absolutely when it is subnormal (K of them, times |scale|); on o's path every
     * product (N), rescale multiply and chunk-combine fma (each at most N) and the division,
     * plus the oracle's own rounding, likewise: (3N + 3) 2^-150, whatever the walk */
    const double dot_rel = ar ? ar->dot_rel : 0.0, pv_rel = ar ? ar->pv_rel : 0.0;
    double xi = (gamma_n(K) + 6 * U_F32 + dot_rel) * lam + (4 * Rr + log(N) + 4) * U_F32 +
                fabs((double)scale) * K * 0x1p-150;
    if (abs_e > 0.0) xi += fabs((double)scale) * abs_e * (q_abs + m_abs + ar->dot_inst);
    double tau = expm1(2 * xi) + 2 * gamma_n(2 * Dd) + pv_rel + 3 * U_F32;
    /* a partial O_c rounded once more on its way to the combine errs by part_rel |O_c| (+ what
     * pv_inst pays below the normal range); sum_c w_c |O_c| / L <= (1 + tau) M */
    if (ar && ar->part_rel > 0.0) tau += ar->part_rel * (1.0 + tau);
    double floor_abs = (3 * N + 3) * 0x1p-150;
    if (abs_e > 0.0) floor_abs += abs_e * (N + ar->pv_inst);
    for (int32_t r = 0; r < kv_rank; r++) atol[r] = (tau + abs_e * N) * M[r] + floor_abs;
}

void mla_tol_attn_bounds(const float *q_lat, const float *q_pe, const float *cache, int32_t n_head,
                         int32_t kv_rank, int32_t d_rope, int32_t t_q, int32_t t_kv, float scale,
                         mla_attn_walk_fn walk, double *atol) {
    mla_tol_attn_bounds_arith(q_lat, q_pe, cache, n_head, kv_rank, d_rope, t_q, t_kv, scale, walk,
                              NULL, atol);
}

void mla_tol_attn_bounds_arith(const float *q_lat, const float *q_pe, const float *cache,
                               int32_t n_head, int32_t kv_rank, int32_t d_rope, int32_t t_q,
                               int32_t t_kv, float scale, mla_attn_walk_fn walk,
                               const mla_attn_arith *ar, double *atol) {
    int32_t K = kv_rank + d_rope;
    double *M = calloc((size_t)K, sizeof *M);
    if (!M) return;
    int64_t seen = 0;
    for (int32_t i = 0; i < t_q; i++) {
        int64_t last = (int64_t)t_kv - t_q + i; /* rows 0..=last */
        for (; seen <= last; seen++)
            for (int32_t c = 0; c < K; c++) {
                double v = fabs((double)cache[(size_t)seen * K + c]);
                if (v > M[c] || isnan(v)) M[c] = v;
            }
        for (int32_t h = 0; h < n_head; h++) {
            size_t qh = (size_t)i * n_head + h;
            attn_one(q_lat + qh * kv_rank, d_rope ? q_pe + qh * d_rope : NULL, M, kv_rank, d_rope,
                     (double)(last + 1), (double)(last + 1), scale, walk, ar, atol + qh * kv_rank);
        }
    }
    free(M);
}

void mla_tol_attn_gathered_bounds(const float *q_lat, const float *q_pe, const float *cache,
                                  const int32_t *idx, int32_t n_head, int32_t kv_rank,
                                  int32_t d_rope, int32_t t_q, int32_t n_slots, float scale,
                                  mla_attn_walk_fn walk, double *atol) {
    mla_tol_attn_gathered_bounds_arith(q_lat, q_pe, cache, idx, n_head, kv_rank, d_rope, t_q,
                                       n_slots, scale, walk, NULL, atol);
}

void mla_tol_attn_gathered_bounds_arith(const float *q_lat, const float *q_pe, const float *cache,
                                        const int32_t *idx, int32_t n_head, int32_t kv_rank,
                                        int32_t d_rope, int32_t t_q, int32_t n_slots, float scale,
                                        mla_attn_walk_fn walk, const mla_attn_arith *ar,
                                        double *atol) {
    int32_t K = kv_rank + d_rope;
    double *M = malloc((size_t)K * sizeof *M);
    if (!M) return;
    for (int32_t i = 0; i < t_q; i++) {
        for (int32_t c = 0; c < K; c++) M[c] = 0.0;
        int64_t N = 0;
        for (int32_t s = 0; s < n_slots; s++) {
            int32_t row = idx[(size_t)i * n_slots + s];
            if (row < 0) continue;
            N++;
            for (int32_t c = 0; c < K; c++) {
                double v = fabs((double)cache[(size_t)row * K + c]);
                if (v > M[c] || isnan(v)) M[c] = v;
            }
        }
        for (int32_t h = 0; h < n_head; h++) {
            size_t qh = (size_t)i * n_head + h;
            if (N == 0) {
                for (int32_t r = 0; r < kv_rank; r++) atol[qh * kv_rank + r] = 0.0;
                continue;
            }
            attn_one(q_lat + qh * kv_rank, d_rope ? q_pe + qh * d_rope : NULL, M, kv_rank, d_rope,
                     (double)N, (double)n_slots, scale, walk, ar, atol + qh * kv_rank);
        }
    }
    free(M);
}

void mla_tol_pool_key_bounds(const float *state, const float *ape, int32_t pool_begin,
                             int32_t n_pools, int32_t pool, int32_t d, int32_t state_rows,
                             double *atol) {
    for (int32_t p = 0; p < n_pools; p++)
        for (int32_t c = 0; c < d; c++) {
            if (p < pool_begin) {
                atol[(size_t)p * d + c] = 0.0;
                continue;
            }
            double G = 0.0, M = 0.0;
            for (int32_t s = 0; s < pool; s++) {
                int64_t r = (int64_t)p * pool + s;
                if (state_rows) r %= state_rows;
                const float *row = state + (size_t)r * 2 * (size_t)d;
                double g = fabs((double)row[d + c] + (double)ape[(size_t)s * d + c]);
                double k = fabs((double)row[c]);
                if (g > G || isnan(g)) G = g;
                if (k > M || isnan(k)) M = k;
            }
            double xi = (3 * G + 4) * U_F32;
            double tau = expm1(2 * xi) + 2 * gamma_n(pool) + 3 * U_F32;
            atol[(size_t)p * d + c] = tau * M;
        }
}

static double bf(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return (double)f;
}

void mla_tol_bf16_gemm_bounds(const uint16_t *w_bf16, const uint16_t *x_bf16,
                              const uint16_t *ref_bf16, int32_t m, int32_t n, int32_t k,
                              int64_t x_rs, int64_t x_bs, int64_t y_rs, int64_t y_bs, int32_t batch,
                              int32_t y_is_bf16, double *atol) {
    double g2 = (double)k * 0x1p-23 / (1.0 - (double)k * 0x1p-23);
    for (int32_t b = 0; b < batch; b++)
        for (int32_t i = 0; i < m; i++)
            for (int32_t j = 0; j < n; j++) {
                const uint16_t *xr = x_bf16 + b * x_bs + (int64_t)i * x_rs;
                const uint16_t *wr = w_bf16 + ((int64_t)b * n + j) * k;
                double S = 0.0;
                for (int32_t kk = 0; kk < k; kk++) S += fabs(bf(xr[kk]) * bf(wr[kk]));
                int64_t yi = b * y_bs + (int64_t)i * y_rs + j;
                atol[yi] = y_is_bf16 ? (1.0 + 0x1p-6) * (g2 * S + 0x1p-7 * fabs(bf(ref_bf16[yi])))
                                     : g2 * S;
            }
}
