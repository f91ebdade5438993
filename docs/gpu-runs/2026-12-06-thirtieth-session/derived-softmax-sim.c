/* derived-softmax-sim.c (thirtieth session, a record, not part of the build): a CPU check of the
 * argument that the wgmma arm's softmax without per-tile NaN bookkeeping (branch
 * wgmma-softmax-derived, as bf9c914: a NaN logit's weight is NaN, the poison read at the walk's end
 * as l != l, weights subtracting 0 while m' = -inf) gives the same output as 6cf65ee's (a quad
 * ballot a tile, NaN weights 0, poison flags), directly and through the combine. Rows of 0-3
 * tiles of 8 slots, 1-3 chunks, random validity, logits finite or special (+-inf, NaN, +-1e30)
 * with a random rate; f32 arithmetic, the bf16 roundings and the quad left out (the same in
 * both). Built with `gcc -O1 derived-softmax-sim.c -lm`: "cases 2000000, NaN outputs 857436,
 * mismatches 0". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#define N 8
typedef struct {
    float lg[N];
    bool vd[N];
    float v[N];
} tile;
typedef struct {
    float m, l, O;
    bool poison;
} st;
static st run(const tile *t, int nt, int derived) {
    st s = {-INFINITY, 0.0f, 0.0f, false};
    for (int k = 0; k < nt; k++) {
        float lm = -INFINITY;
        bool nan = false;
        for (int x = 0; x < N; x++)
            if (t[k].vd[x]) {
                if (t[k].lg[x] != t[k].lg[x])
                    nan = true;
                else
                    lm = fmaxf(lm, t[k].lg[x]);
            }
        if (!derived) s.poison = s.poison || nan;
        float mn = fmaxf(s.m, lm);
        bool live = mn != -INFINITY;
        float al = 1.0f;
        if (live) al = expf(s.m - mn);
        float p[N], ls = 0.0f, pv = 0.0f;
        for (int x = 0; x < N; x++) {
            if (!derived)
                p[x] =
                    (live && t[k].vd[x] && t[k].lg[x] == t[k].lg[x]) ? expf(t[k].lg[x] - mn) : 0.0f;
            else {
                float mref = live ? mn : 0.0f;
                p[x] = t[k].vd[x] ? expf(t[k].lg[x] - mref) : 0.0f;
            }
            ls += p[x];
            pv = fmaf(p[x], t[k].v[x], pv);
        }
        s.l = fmaf(s.l, al, ls);
        s.O = fmaf(s.O, al, pv);
        s.m = mn;
    }
    if (derived) s.poison = s.l != s.l;
    return s;
}
static float fin(st s, bool ne) {
    if (!ne) return 0.0f;
    if (s.poison || fabsf(s.m) == INFINITY) return NAN;
    return s.O / s.l;
}
static float comb(st *p, int *f, int n) {
    bool ne = false, po = false;
    float M = -INFINITY;
    for (int c = 0; c < n; c++) {
        ne |= f[c] != 0;
        po |= f[c] == 2;
        if (f[c] && p[c].m == p[c].m) M = fmaxf(M, p[c].m);
    }
    bool live = M != -INFINITY;
    float L = 0, o = 0;
    for (int c = 0; c < n; c++) {
        float mm = f[c] ? p[c].m : -INFINITY;
        float w = (live && mm != -INFINITY) ? expf(mm - M) : 0.0f;
        L = fmaf(w, f[c] ? p[c].l : 0.0f, L);
        o = fmaf(w, p[c].O, o);
    }
    if (!ne) return 0.0f;
    if (po || fabsf(M) == INFINITY) return NAN;
    return o / L;
}
static float rnd(void) { return (float)rand() / RAND_MAX; }
int main(void) {
    const float sp[] = {0.5f, -1.25f, 3.0f, INFINITY, -INFINITY, NAN, -7.0f, 1e30f, -1e30f};
    long bad = 0, nanc = 0, tot = 0;
    srand(7);
    for (int trial = 0; trial < 2000000; trial++) {
        int nch = 1 + rand() % 3;
        st po[3], pd[3];
        int fo[3], fd[3];
        float pspec = rnd() * 0.4f;
        for (int c = 0; c < nch; c++) {
            tile t[4];
            int nt = rand() % 4;
            bool any = false;
            for (int k = 0; k < nt; k++)
                for (int x = 0; x < N; x++) {
                    t[k].lg[x] = rnd() < pspec ? sp[rand() % 9] : rnd() * 10 - 5;
                    t[k].vd[x] = rnd() < 0.7f;
                    t[k].v[x] = rnd() * 2 - 1;
                    any |= t[k].vd[x];
                }
            po[c] = run(t, nt, 0);
            pd[c] = run(t, nt, 1);
            fo[c] = !any ? 0 : po[c].poison ? 2 : 1;
            fd[c] = !any ? 0 : pd[c].poison ? 2 : 1;
            if (nch == 1) {
                float a = fin(po[c], any), b = fin(pd[c], any);
                tot++;
                nanc += a != a;
                if (!((a != a && b != b) || a == b)) {
                    if (bad++ < 5) printf("direct %g %g\n", a, b);
                }
            }
        }
        if (nch > 1) {
            float a = comb(po, fo, nch), b = comb(pd, fd, nch);
            tot++;
            nanc += a != a;
            if (!((a != a && b != b) || (a == b && !(a != a)))) {
                if (bad++ < 5) printf("comb %g %g\n", a, b);
            }
        }
    }
    printf("cases %ld, NaN outputs %ld, mismatches %ld\n", tot, nanc, bad);
    return bad != 0;
}
