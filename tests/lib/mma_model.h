/* mma_model.h: the bookkeeping the bf16 accumulator-model tests share
 * (//tests:bf16_mma_model_gpu_test for mma.sync.m16n8k16, //tests:wgmma_model_gpu_test for the
 * wgmma door arm's two instructions; docs/tolerances.md (H16)): one output D against its exact
 * sum (in double) and its scale |C| + sum |products|. Headers only, C. */
#ifndef MLA_TESTS_MMA_MODEL_H
#define MLA_TESTS_MMA_MODEL_H

#include <math.h>

/* The model's measure over random tiles. */
typedef struct {
    double max_units; /* max |D - exact| / scale / u (infinity once an output is a NaN) */
    double max_abs;   /* max |D - exact| where the scale is below 2^-100 */
    long n, n_rn;     /* outputs, outputs equal to RN(exact) */
} mma_model_stats;

static inline void mma_model_stats_add(mma_model_stats *st, double got, double exact, double scale,
                                       double u) {
    st->n++;
    st->n_rn += (float)exact == (float)got;
    const double err = fabs(got - exact);
    if (!(err == err)) { /* a NaN: fails the bound */
        st->max_units = INFINITY;
        return;
    }
    if (scale < 0x1p-100) {
        if (err > st->max_abs) st->max_abs = err;
        return;
    }
    const double units = err / scale / u;
    if (units > st->max_units) st->max_units = units;
}

/* The subnormal-operand probe's measure: a tiny exact result (below 2^-100) must be kept, not
 * flushed; against a subnormal operand times 2^100, the loss divided by 2^100. */
typedef struct {
    double max_abs;     /* max |D - exact| of the tiny results (infinity for a NaN) */
    double max_rel_big; /* max |D - exact| / 2^100 of the others */
    long kept, n_small; /* tiny non-zero results exactly RN(exact), tiny results */
} mma_subnormal_stats;

static inline void mma_subnormal_stats_add(mma_subnormal_stats *st, double got, double exact) {
    double err = fabs(got - exact);
    if (!(err == err)) err = INFINITY; /* a NaN fails */
    if (fabs(exact) < 0x1p-100) {
        st->n_small++;
        st->kept += got == (double)(float)exact && exact != 0.0;
        if (err > st->max_abs) st->max_abs = err;
    } else {
        /* a subnormal operand times 2^100: the operand's loss is 2^100 times its own */
        const double rel = err / 0x1p100;
        if (rel > st->max_rel_big) st->max_rel_big = rel;
    }
}

#endif /* MLA_TESTS_MMA_MODEL_H */
