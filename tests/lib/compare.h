/* compare.h: comparing a result tensor with its reference, and the verdict of a tolerance class.
 *
 * Statistics (always computed): count of elements whose bits differ (any NaN equals any NaN),
 * max abs error (+ index and both values), max ULP distance (+ index) over the ordered-integer
 * mapping of the dtype (f32 or bf16; +0 and -0 are 0 apart; NaN vs non-NaN is infinite, reported
 * as UINT64_MAX), NaN and inf mismatches.
 *
 * Verdict:
 *  - MLA_TOL_EXACT: every element bitwise equal, except that any NaN equals any NaN.
 *  - every other class (docs/tolerances.md): a NaN passes only against a NaN reference (a NaN
 *    result against a number, or a number against a NaN reference, always fails), infinities
 *    match exactly (same sign: -inf masks must agree), and for finite pairs
 *    |got - ref| <= bound_i + rtol * |ref|  or  ulp(got, ref) <= max_ulp (max_ulp 0 disables
 *    the ulp door), where bound_i = atol_elem ? atol_elem[i] : atol; a non-finite bound_i
 *    means the element is compared exact.
 *    mla_tol_for_class fills atol from the class's documented rule (docs/tolerances.md) given
 *    the caller's per-tensor scale; callers with a per-element bound pass atol_elem.
 */
#ifndef MLA_GOLDEN_COMPARE_H
#define MLA_GOLDEN_COMPARE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    MLA_TOL_EXACT = 0,
    MLA_TOL_ROPE,
    MLA_TOL_ATTN,
    MLA_TOL_POOL_KEY,
    MLA_TOL_BF16_GEMM,
    MLA_TOL_CLASS_COUNT
} mla_tol_class;

typedef struct {
    mla_tol_class cls;
    double atol;             /* per-tensor absolute bound */
    const double *atol_elem; /* optional per-element absolute bound (overrides atol) */
    double rtol;             /* relative part, times |ref| */
    uint64_t max_ulp;        /* alternative ulp bound; 0 = not used */
} mla_tol;

#define MLA_ULP_INF UINT64_MAX

typedef struct {
    size_t n;
    size_t n_diff;         /* bitwise different (NaN == NaN) */
    size_t n_fail;         /* failing the tolerance */
    size_t n_nan_mismatch; /* NaN on exactly one side (and, for non-exact classes, NaN anywhere) */
    size_t n_inf_mismatch; /* an infinity on one side not matched exactly on the other */
    double max_abs;        /* over pairs of finite values */
    size_t max_abs_index;
    uint64_t max_ulp;
    size_t max_ulp_index;
    int has_worst;      /* 1 when some element differs */
    size_t worst_index; /* worst failing element (else the max-abs-error element) */
    float got_worst, ref_worst;
    double worst_abs;
    uint64_t worst_ulp;
    double worst_bound; /* the bound at worst_index (0 for exact) */
    int pass;
} mla_cmp_result;

const char *mla_tol_class_name(mla_tol_class c);
/* 0 and *out, or -1 for an unknown name. */
int mla_tol_class_parse(const char *name, mla_tol_class *out);
mla_tol mla_tol_exact(void);
/* The class's per-tensor bound for a tensor of characteristic magnitude `scale` (see
 * docs/tolerances.md; atol = atol_scale(class) * scale). */
mla_tol mla_tol_for_class(mla_tol_class c, double scale);
double mla_tol_atol_scale(mla_tol_class c);

/* Per-element bounds of docs/tolerances.md, evaluated in double as written there. Each writes
 * atol[] with the layout of the output it bounds; pass it as mla_tol.atol_elem. */
/* rope: x_in[n] is the rope INPUT (pairs (2j, 2j+1) contiguous, n even):
 * atol = 2^-21 (|x0| + |x1|) + 2^-148 for both elements of the pair. */
void mla_tol_rope_bounds(const float *x_in, size_t n, double *atol);
/* The walk an attention kernel states (kernels/mla.h, mla_attn_walk): R and D for a query with
 * n_terms valid terms over n_slots walk slots. NULL: an arbitrary walk, R = D = N + 1. */
typedef void (*mla_attn_walk_fn)(int64_t n_terms, int64_t n_slots, int64_t *R, int64_t *D);
/* attn_absorbed: atol[t_q][n_head][kv_rank] for the walk `walk` (query i: N = W =
 * t_kv - t_q + i + 1; R and D capped at N + 1). */
void mla_tol_attn_bounds(const float *q_lat, const float *q_pe, const float *cache, int32_t n_head,
                         int32_t kv_rank, int32_t d_rope, int32_t t_q, int32_t t_kv, float scale,
                         mla_attn_walk_fn walk, double *atol);
/* attn_gathered: the same over idx[i][0..n_slots) (negative entries skipped, repeats counted:
 * N valid terms over W = n_slots slots); a query with no valid entry gets 0 (exact). */
void mla_tol_attn_gathered_bounds(const float *q_lat, const float *q_pe, const float *cache,
                                  const int32_t *idx, int32_t n_head, int32_t kv_rank,
                                  int32_t d_rope, int32_t t_q, int32_t n_slots, float scale,
                                  mla_attn_walk_fn walk, double *atol);
/* An attention arm whose dot products are not f32 FMA chains (the tensor-core arms of the
 * MEMRA_MLA_TC_ATTN door): relative errors added to class attn's logit term (dot_rel, times
 * Lambda) and accumulation term (pv_rel, of sum w |c|). NULL or zeros: class attn itself. */
typedef struct {
    double dot_rel, pv_rel;
    /* below the normal range (the bf16 door, kernels/mla_door.h mla_attn_tcb_arith; 0 for the
     * others): the logit error gains |scale| abs_e (sum |q| + sum M + dot_inst), column c of the
     * output abs_e (N M_c + N + pv_inst) */
    double abs_e, dot_inst, pv_inst;
    /* the partials' storage rounding between the walk and the combine (the wgmma door's bf16
     * partials, kernels/mla_door.h mla_attn_tcw_arith: 2^-8 with several chunks; 0 for the
     * others): the accumulation term becomes tau + part_rel (1 + tau) */
    double part_rel;
} mla_attn_arith;
/* The 3xTF32 arm's terms (constants); the tf32 arm's depend on the chunk plan: kernels/mla_door.h,
 * mla_attn_tc_arith. */
extern const mla_attn_arith MLA_ATTN_ARITH_3XTF32;
void mla_tol_attn_bounds_arith(const float *q_lat, const float *q_pe, const float *cache,
                               int32_t n_head, int32_t kv_rank, int32_t d_rope, int32_t t_q,
                               int32_t t_kv, float scale, mla_attn_walk_fn walk,
                               const mla_attn_arith *ar, double *atol);
void mla_tol_attn_gathered_bounds_arith(const float *q_lat, const float *q_pe, const float *cache,
                                        const int32_t *idx, int32_t n_head, int32_t kv_rank,
                                        int32_t d_rope, int32_t t_q, int32_t n_slots, float scale,
                                        mla_attn_walk_fn walk, const mla_attn_arith *ar,
                                        double *atol);
/* pool_key: atol[n_pools][d]; pools below pool_begin get 0 (untouched: exact). */
void mla_tol_pool_key_bounds(const float *state, const float *ape, int32_t pool_begin,
                             int32_t n_pools, int32_t pool, int32_t d, int32_t state_rows,
                             double *atol);
/* bf16_gemm: atol indexed like y (b * y_bs + i * y_rs + j); ref_bf16 (the oracle's bf16 y, same
 * indexing) is needed when y_is_bf16, else NULL. */
void mla_tol_bf16_gemm_bounds(const uint16_t *w_bf16, const uint16_t *x_bf16,
                              const uint16_t *ref_bf16, int32_t m, int32_t n, int32_t k,
                              int64_t x_rs, int64_t x_bs, int64_t y_rs, int64_t y_bs, int32_t batch,
                              int32_t y_is_bf16, double *atol);

uint64_t mla_ulp_f32(float a, float b);
uint64_t mla_ulp_bf16(uint16_t a, uint16_t b);

mla_cmp_result mla_compare_f32(const float *got, const float *ref, size_t n, const mla_tol *tol);
mla_cmp_result mla_compare_bf16(const uint16_t *got, const uint16_t *ref, size_t n,
                                const mla_tol *tol);

/* A readable report (multi-line). shape (ndim dims) may be NULL; it unravels the worst index.
 * rerun_cmd may be NULL. */
void mla_cmp_report(FILE *fp, const char *case_name, const char *tensor, int ndim,
                    const int64_t *shape, const mla_cmp_result *r, const mla_tol *tol,
                    const char *rerun_cmd);

/* Negative-control helpers: move x[i] by `ulps` steps (signed) along the ordered-integer line. */
void mla_perturb_ulp_f32(float *x, size_t i, int ulps);
void mla_perturb_ulp_bf16(uint16_t *x, size_t i, int ulps);

#ifdef __cplusplus
}
#endif
#endif /* MLA_GOLDEN_COMPARE_H */
