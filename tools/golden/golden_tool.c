/* golden_tool.c: the `golden` CLI over tools/golden.
 *
 *   golden list
 *   golden regen  [--dir golden] [CASE|all]   write <dir>/<case>.safetensors, update manifest.json
 *   golden verify [--dir golden] [CASE|all]   recompute; check input / output sha256s and stored
 *                                             values; exit 1 with a report on any mismatch
 *   golden diff OLD NEW                       two .safetensors files, or two directories (files
 *                                             paired by name): per tensor max abs error, max ULP,
 *                                             count changed; exit 0 identical, 1 differ, 2 error
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "tests/lib/case.h"
#include "tests/lib/compare.h"
#include "tests/lib/manifest.h"
#include "tests/lib/safetensors.h"

static void usage(FILE *fp) {
    fprintf(fp, "usage: golden list\n"
                "       golden regen  [--dir DIR] [CASE|all]\n"
                "       golden verify [--dir DIR] [CASE|all]\n"
                "       golden diff OLD.safetensors NEW.safetensors | golden diff OLD_DIR NEW_DIR\n"
                "DIR defaults to golden (or $MLA_GOLDEN_DIR).\n");
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int cmd_list(void) {
    for (size_t i = 0; i < mla_case_count(); i++) {
        const mla_case *c = mla_case_at(i);
        printf("%-22s model %-10s seed 0x%08x t_q %-4d t_kv %-5d stages:", c->name, c->model,
               c->seed, c->geom.t_q, c->geom.t_kv);
        for (int s = 0; s < MLA_MAX_STAGES && c->stages[s]; s++) printf(" %s", c->stages[s]->name);
        printf("\n");
    }
    return 0;
}

/* Parses [--dir DIR] [CASE|all]; returns the selected case (NULL = all) via *sel. */
static int parse_sel(int argc, char **argv, const char **dir, const char **sel) {
    *dir = mla_golden_dir();
    *sel = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            *dir = argv[++i];
        else if (strncmp(argv[i], "--dir=", 6) == 0)
            *dir = argv[i] + 6;
        else if (argv[i][0] == '-') {
            fprintf(stderr, "golden: unknown option %s\n", argv[i]);
            return -1;
        } else if (*sel) {
            fprintf(stderr, "golden: more than one case given (%s, %s)\n", *sel, argv[i]);
            return -1;
        } else
            *sel = argv[i];
    }
    if (*sel && strcmp(*sel, "all") == 0) *sel = NULL;
    if (*sel && !mla_case_find(*sel)) {
        fprintf(stderr, "golden: unknown case '%s' (see golden list)\n", *sel);
        return -1;
    }
    return 0;
}

static int cmd_regen(int argc, char **argv, const char *command) {
    const char *dir, *sel;
    if (parse_sel(argc, argv, &dir, &sel)) return 2;
    if (!is_dir(dir)) {
        fprintf(stderr, "golden regen: %s is not a directory\n", dir);
        return 2;
    }
    char mpath[4096], err[1024];
    snprintf(mpath, sizeof mpath, "%s/manifest.json", dir);
    mla_manifest m;
    memset(&m, 0, sizeof m);
    m.format_version = MLA_MANIFEST_FORMAT_VERSION;
    FILE *probe = fopen(mpath, "rb");
    if (probe) {
        fclose(probe);
        if (mla_manifest_load(mpath, &m, err, sizeof err) != 0) {
            fprintf(stderr,
                    "golden regen: refusing to overwrite a manifest it cannot read: %s\n"
                    "  (move it away to start a fresh one)\n",
                    err);
            return 2;
        }
    }
    int rc = 0;
    size_t total = 0;
    for (size_t i = 0; i < mla_case_count(); i++) {
        const mla_case *c = mla_case_at(i);
        if (sel && strcmp(sel, c->name) != 0) continue;
        double t0 = now_s();
        size_t bytes = 0;
        if (mla_golden_regen(c, dir, command, &m, &bytes, err, sizeof err) != 0) {
            fprintf(stderr, "golden regen: %s\n", err);
            rc = 2;
            break;
        }
        total += bytes;
        printf("regen %-22s %9zu bytes  %.2f s\n", c->name, bytes, now_s() - t0);
        fflush(stdout);
    }
    if (rc == 0 && mla_manifest_save(&m, mpath, err, sizeof err) != 0) {
        fprintf(stderr, "golden regen: %s\n", err);
        rc = 2;
    }
    if (rc == 0) printf("wrote %s (%zu fixture bytes this run)\n", mpath, total);
    mla_manifest_free(&m);
    return rc;
}

static int cmd_verify(int argc, char **argv) {
    const char *dir, *sel;
    if (parse_sel(argc, argv, &dir, &sel)) return 2;
    char mpath[4096], err[1024];
    snprintf(mpath, sizeof mpath, "%s/manifest.json", dir);
    mla_manifest m;
    if (mla_manifest_load(mpath, &m, err, sizeof err) != 0) {
        fprintf(stdout, "FAIL: %s\n", err);
        return 1;
    }
    int bad = 0, n = 0;
    for (size_t i = 0; i < mla_case_count(); i++) {
        const mla_case *c = mla_case_at(i);
        if (sel && strcmp(sel, c->name) != 0) continue;
        char rerun[4400];
        snprintf(rerun, sizeof rerun, "golden verify --dir %s %s", dir, c->name);
        double t0 = now_s();
        int p = mla_golden_verify(c, dir, &m, stdout, rerun);
        printf("%s %-22s %.2f s%s\n", p ? "FAIL" : "ok  ", c->name, now_s() - t0, p ? "" : "");
        fflush(stdout);
        bad += p != 0;
        n++;
    }
    if (!sel)
        for (size_t k = 0; k < m.n_cases; k++)
            if (!mla_case_find(m.cases[k].name)) {
                printf("FAIL: manifest case %s is not in the case table\n", m.cases[k].name);
                bad++;
            }
    printf("%d case(s) verified, %d failing\n", n, bad);
    mla_manifest_free(&m);
    return bad ? 1 : 0;
}

/* ------------------------------------------------------------------ diff ------------------- */
static void shape_str(char *buf, size_t n, int ndim, const int64_t *shape) {
    int off = snprintf(buf, n, "[");
    for (int i = 0; i < ndim && off > 0 && (size_t)off < n; i++)
        off += snprintf(buf + off, n - (size_t)off, "%s%lld", i ? "," : "", (long long)shape[i]);
    if (off > 0 && (size_t)off < n) snprintf(buf + off, n - (size_t)off, "]");
}

/* 0 identical, 1 differ, 2 error */
static int diff_files(const char *a, const char *b) {
    st_file fa, fb;
    char err[ST_ERR_LEN];
    if (st_read_file(a, &fa, err, sizeof err) != 0) {
        fprintf(stderr, "golden diff: %s\n", err);
        return 2;
    }
    if (st_read_file(b, &fb, err, sizeof err) != 0) {
        fprintf(stderr, "golden diff: %s\n", err);
        st_free(&fa);
        return 2;
    }
    int rc = 0;
    printf("--- %s\n+++ %s\n", a, b);
    for (size_t i = 0; i < fa.n_tensors; i++) {
        const st_tensor *ta = &fa.tensors[i], *tb = st_find(&fb, ta->name);
        char sa[128], sb[128];
        shape_str(sa, sizeof sa, ta->ndim, ta->shape);
        if (!tb) {
            printf("  %-28s removed (%s %s)\n", ta->name, st_dtype_name(ta->dtype), sa);
            rc = 1;
            continue;
        }
        shape_str(sb, sizeof sb, tb->ndim, tb->shape);
        if (ta->dtype != tb->dtype || strcmp(sa, sb) != 0) {
            printf("  %-28s changed type: %s %s -> %s %s\n", ta->name, st_dtype_name(ta->dtype), sa,
                   st_dtype_name(tb->dtype), sb);
            rc = 1;
            continue;
        }
        size_t nb = (size_t)(ta->end - ta->begin);
        mla_tol tol = mla_tol_exact();
        mla_cmp_result r;
        int numeric = 1;
        if (ta->dtype == ST_F32 || ta->dtype == ST_BF16) {
            void *x = malloc(nb ? nb : 1), *y = malloc(nb ? nb : 1);
            if (!x || !y) {
                free(x);
                free(y);
                rc = 2;
                continue;
            }
            memcpy(x, ta->data, nb);
            memcpy(y, tb->data, nb);
            r = ta->dtype == ST_F32 ? mla_compare_f32(y, x, nb / 4, &tol)
                                    : mla_compare_bf16(y, x, nb / 2, &tol);
            free(x);
            free(y);
        } else {
            numeric = 0;
            memset(&r, 0, sizeof r);
            size_t es = st_dtype_size(ta->dtype);
            r.n = es ? nb / es : 0;
            for (size_t e = 0; e < r.n; e++)
                if (memcmp(ta->data + e * es, tb->data + e * es, es) != 0) r.n_diff++;
        }
        if (r.n_diff == 0) {
            printf("  %-28s identical (%s %s)\n", ta->name, st_dtype_name(ta->dtype), sa);
            continue;
        }
        rc = 1;
        printf("  %-28s %s %s: %zu of %zu changed", ta->name, st_dtype_name(ta->dtype), sa,
               r.n_diff, r.n);
        if (numeric) {
            printf(", max abs error %.6g at %zu, max ulp ", r.max_abs, r.max_abs_index);
            if (r.max_ulp == MLA_ULP_INF)
                printf("inf (NaN)");
            else
                printf("%llu", (unsigned long long)r.max_ulp);
            printf(" at %zu", r.max_ulp_index);
            if (r.n_nan_mismatch) printf(", %zu NaN mismatches", r.n_nan_mismatch);
            if (r.n_inf_mismatch) printf(", %zu inf mismatches", r.n_inf_mismatch);
        }
        printf("\n");
    }
    for (size_t i = 0; i < fb.n_tensors; i++)
        if (!st_find(&fa, fb.tensors[i].name)) {
            char sb[128];
            shape_str(sb, sizeof sb, fb.tensors[i].ndim, fb.tensors[i].shape);
            printf("  %-28s added (%s %s)\n", fb.tensors[i].name,
                   st_dtype_name(fb.tensors[i].dtype), sb);
            rc = 1;
        }
    st_free(&fa);
    st_free(&fb);
    return rc;
}

static int has_suffix(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static int name_cmp(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted list of *.safetensors names in dir (caller frees). */
static char **list_st(const char *dir, size_t *n) {
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) return NULL;
    size_t cap = 16;
    char **v = malloc(cap * sizeof *v);
    struct dirent *e;
    while (v && (e = readdir(d))) {
        if (!has_suffix(e->d_name, ".safetensors")) continue;
        if (*n == cap) {
            char **nv = realloc(v, 2 * cap * sizeof *v);
            if (!nv) break;
            v = nv;
            cap *= 2;
        }
        size_t l = strlen(e->d_name) + 1;
        v[*n] = malloc(l);
        if (v[*n]) memcpy(v[(*n)++], e->d_name, l);
    }
    closedir(d);
    if (v) qsort(v, *n, sizeof *v, name_cmp);
    return v;
}

static int cmd_diff(int argc, char **argv) {
    if (argc != 2) {
        usage(stderr);
        return 2;
    }
    const char *a = argv[0], *b = argv[1];
    if (!is_dir(a) && !is_dir(b)) return diff_files(a, b);
    if (!is_dir(a) || !is_dir(b)) {
        fprintf(stderr, "golden diff: give two files or two directories\n");
        return 2;
    }
    size_t na, nb;
    char **la = list_st(a, &na), **lb = list_st(b, &nb);
    int rc = 0;
    char pa[4096], pb[4096];
    for (size_t i = 0; i < na; i++) {
        int found = 0;
        for (size_t k = 0; k < nb; k++) found |= strcmp(la[i], lb[k]) == 0;
        if (!found) {
            printf("only in %s: %s\n", a, la[i]);
            rc = rc > 1 ? rc : 1;
            continue;
        }
        snprintf(pa, sizeof pa, "%s/%s", a, la[i]);
        snprintf(pb, sizeof pb, "%s/%s", b, la[i]);
        int r = diff_files(pa, pb);
        rc = r > rc ? r : rc;
    }
    for (size_t k = 0; k < nb; k++) {
        int found = 0;
        for (size_t i = 0; i < na; i++) found |= strcmp(la[i], lb[k]) == 0;
        if (!found) {
            printf("only in %s: %s\n", b, lb[k]);
            rc = rc > 1 ? rc : 1;
        }
    }
    for (size_t i = 0; i < na; i++) free(la[i]);
    for (size_t k = 0; k < nb; k++) free(lb[k]);
    free(la);
    free(lb);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    /* the command recorded in the manifest: "golden" + the arguments, verbatim */
    char command[4096];
    int off = snprintf(command, sizeof command, "golden");
    for (int i = 1; i < argc && off > 0 && (size_t)off < sizeof command; i++) {
        int quote = strpbrk(argv[i], " \t'\"$") != NULL;
        off +=
            snprintf(command + off, sizeof command - (size_t)off, quote ? " '%s'" : " %s", argv[i]);
    }
    if (strcmp(argv[1], "list") == 0) return cmd_list();
    if (strcmp(argv[1], "regen") == 0) return cmd_regen(argc - 2, argv + 2, command);
    if (strcmp(argv[1], "verify") == 0) return cmd_verify(argc - 2, argv + 2);
    if (strcmp(argv[1], "diff") == 0) return cmd_diff(argc - 2, argv + 2);
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        usage(stdout);
        return 0;
    }
    usage(stderr);
    return 2;
}
