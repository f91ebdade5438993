/* fixture.c: golden fixture I/O of the case library: regenerate a case's fixture and manifest
 * entry, verify a stored fixture against a recomputation. See case.h. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/case.h"

/* Geometry fields recorded in the manifest (non-zero ones) and checked by verify. */
typedef struct {
    const char *name;
    size_t off;
    int is_float;
} geom_field;
#define GI(f)                                                                                      \
    { #f, offsetof(mla_geom, f), 0 }
#define GF(f)                                                                                      \
    { #f, offsetof(mla_geom, f), 1 }
static const geom_field k_geom_fields[] = {
    GI(n_head),        GI(kv_rank),     GI(d_rope),       GI(d_nope),    GI(d_v),
    GI(t_q),           GI(t_kv),        GF(rope_base),    GF(scale),     GI(bf16),
    GI(n_positions),   GI(idx_heads),   GI(idx_dim),      GI(pool),      GI(select_k),
    GI(width),         GI(always_tail), GI(first_pos),    GI(n_pools),   GF(qk_scale),
    GF(head_scale),    GI(state_rows),  GF(gate_scale),   GF(ape_scale), GI(small_int),
    GI(select_scores), GI(gather_idx),  GF(latent_scale), GI(nonfinite), GI(idx_repeat),
};
int mla_geom_set(mla_geom *g, const char *name, double v) {
    for (size_t i = 0; i < sizeof k_geom_fields / sizeof k_geom_fields[0]; i++) {
        if (strcmp(k_geom_fields[i].name, name) != 0) continue;
        char *p = (char *)g + k_geom_fields[i].off;
        if (k_geom_fields[i].is_float) {
            float f = (float)v;
            memcpy(p, &f, sizeof f);
        } else {
            if (v != (double)(int32_t)v) return -1;
            int32_t x = (int32_t)v;
            memcpy(p, &x, sizeof x);
        }
        return 0;
    }
    return -1;
}

static double geom_value(const mla_geom *g, const geom_field *f) {
    const char *p = (const char *)g + f->off;
    if (f->is_float) {
        float v;
        memcpy(&v, p, sizeof v);
        return (double)v;
    }
    int32_t v;
    memcpy(&v, p, sizeof v);
    return (double)v;
}

/* Gathers rows of t into a fresh buffer (caller frees). */
static void *gather_rows(const mla_tensor *t, const int64_t *rows, int n_rows, size_t *nbytes) {
    size_t row_bytes = t->nbytes / (size_t)(t->shape[0] ? t->shape[0] : 1);
    *nbytes = row_bytes * (size_t)n_rows;
    char *buf = malloc(*nbytes ? *nbytes : 1);
    if (!buf) return NULL;
    for (int i = 0; i < n_rows; i++)
        memcpy(buf + (size_t)i * row_bytes, (const char *)t->data + (size_t)rows[i] * row_bytes,
               row_bytes);
    return buf;
}

static char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

static int build_mf_case(const mla_case *c, const mla_ctx *ctx, const char *command,
                         mla_mf_case *mc) {
    memset(mc, 0, sizeof *mc);
    char file[256];
    snprintf(file, sizeof file, "%s.safetensors", c->name);
    mc->name = xstrdup(c->name);
    mc->model = xstrdup(c->model);
    mc->purpose = c->purpose ? xstrdup(c->purpose) : NULL;
    mc->command = xstrdup(command ? command : "");
    mc->file = xstrdup(file);
    mc->seed = c->seed;
    mc->generator_version = MLA_FILL_VERSION;
    size_t ng = sizeof k_geom_fields / sizeof k_geom_fields[0];
    mc->geometry = calloc(ng, sizeof *mc->geometry);
    mc->inputs = calloc(ctx->n ? ctx->n : 1, sizeof *mc->inputs);
    mc->outputs = calloc(ctx->n ? ctx->n : 1, sizeof *mc->outputs);
    if (!mc->name || !mc->model || !mc->command || !mc->file || !mc->geometry || !mc->inputs ||
        !mc->outputs)
        return -1;
    for (size_t i = 0; i < ng; i++) {
        double v = geom_value(&c->geom, &k_geom_fields[i]);
        if (v == 0.0) continue;
        mc->geometry[mc->n_geometry].key = xstrdup(k_geom_fields[i].name);
        mc->geometry[mc->n_geometry].value = v;
        if (!mc->geometry[mc->n_geometry++].key) return -1;
    }
    for (size_t i = 0; i < ctx->n; i++) {
        const mla_tensor *t = &ctx->t[i];
        if (!t->is_output) {
            mla_mf_input *in = &mc->inputs[mc->n_inputs++];
            in->name = xstrdup(t->name);
            in->dtype = t->dtype;
            in->ndim = t->ndim;
            memcpy(in->shape, t->shape, sizeof in->shape);
            in->fill_kind = xstrdup(mla_fill_kind_name(t->fill));
            in->fill_scale = (double)t->fill_scale;
            memcpy(in->sha256, t->sha256, 32);
            if (!in->name || !in->fill_kind) return -1;
            if (t->fill == MLA_FILL_EXPLICIT && t->dtype == ST_I32) {
                /* set by the case, not generated: the manifest records the values */
                in->n_values = t->nbytes / sizeof(int32_t);
                in->values = malloc((in->n_values ? in->n_values : 1) * sizeof(int32_t));
                if (!in->values) return -1;
                memcpy(in->values, t->data, t->nbytes);
                in->has_values = 1;
            }
        } else {
            mla_mf_output *o = &mc->outputs[mc->n_outputs++];
            o->name = xstrdup(t->name);
            o->dtype = t->dtype;
            o->ndim = t->ndim;
            memcpy(o->shape, t->shape, sizeof o->shape);
            o->stage = xstrdup(t->stage ? t->stage : "");
            o->tolerance = xstrdup(mla_tol_class_name(t->tol));
            memcpy(o->sha256, t->sha256, 32);
            if (!o->name || !o->stage || !o->tolerance) return -1;
            const int64_t *rows;
            int nr = mla_case_output_rows(c, t, &rows);
            if (nr > 0) {
                o->has_stored_rows = 1;
                o->stored_rows = malloc((size_t)nr * sizeof *o->stored_rows);
                if (!o->stored_rows) return -1;
                memcpy(o->stored_rows, rows, (size_t)nr * sizeof *rows);
                o->n_stored_rows = (size_t)nr;
            }
        }
    }
    return 0;
}

int mla_golden_regen(const mla_case *c, const char *dir, const char *command, mla_manifest *m,
                     size_t *bytes_written, char *err, size_t errlen) {
    mla_ctx ctx;
    if (mla_case_run(c, &ctx) != 0) {
        snprintf(err, errlen, "%s", ctx.err);
        mla_ctx_free(&ctx);
        return -1;
    }
    int rc = -1;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.safetensors", dir, c->name);
    st_writer w;
    st_writer_init(&w);
    void *bufs[64];
    int nbufs = 0;
    char gv[32];
    snprintf(gv, sizeof gv, "%d", MLA_FILL_VERSION);
    st_writer_meta(&w, "case", c->name);
    st_writer_meta(&w, "model", c->model);
    st_writer_meta(&w, "generator_version", gv);
    st_writer_meta(&w, "command", command ? command : "");
    mla_mf_case mc;
    memset(&mc, 0, sizeof mc);
    for (size_t i = 0; i < ctx.n; i++) {
        mla_tensor *t = &ctx.t[i];
        if (!t->is_output) continue;
        const int64_t *rows;
        int nr = mla_case_output_rows(c, t, &rows);
        const void *data = t->data;
        int64_t shape[ST_MAX_DIMS];
        memcpy(shape, t->shape, sizeof shape);
        if (nr > 0) {
            if (nbufs == 64) {
                snprintf(err, errlen, "case %s: too many subset outputs", c->name);
                goto done;
            }
            size_t nb;
            void *g = gather_rows(t, rows, nr, &nb);
            if (!g) {
                snprintf(err, errlen, "case %s: out of memory", c->name);
                goto done;
            }
            bufs[nbufs++] = g;
            data = g;
            shape[0] = nr;
            char key[128], val[512];
            int off = 0;
            for (int r = 0; r < nr && off < (int)sizeof val - 24; r++)
                off += snprintf(val + off, sizeof val - (size_t)off, "%s%lld", r ? "," : "",
                                (long long)rows[r]);
            snprintf(key, sizeof key, "stored_rows.%s", t->name);
            st_writer_meta(&w, key, val);
        }
        if (st_writer_add(&w, t->name, t->dtype, t->ndim, shape, data) != 0) {
            snprintf(err, errlen, "case %s: cannot add tensor %s", c->name, t->name);
            goto done;
        }
    }
    if (st_writer_write(&w, path, err, errlen) != 0) goto done;
    if (bytes_written) {
        FILE *fp = fopen(path, "rb");
        *bytes_written = 0;
        if (fp) {
            fseek(fp, 0, SEEK_END);
            *bytes_written = (size_t)ftell(fp);
            fclose(fp);
        }
    }
    if (build_mf_case(c, &ctx, command, &mc) != 0 || mla_manifest_put_case(m, &mc) != 0) {
        snprintf(err, errlen, "case %s: out of memory building the manifest entry", c->name);
        goto done;
    }
    rc = 0;
done:
    mla_mf_case_free(&mc);
    for (int i = 0; i < nbufs; i++) free(bufs[i]);
    st_writer_free(&w);
    mla_ctx_free(&ctx);
    return rc;
}

/* ------------------------------------------------------------------ verify ----------------- */
static void shape_str(char *buf, size_t n, int ndim, const int64_t *shape) {
    int off = snprintf(buf, n, "[");
    for (int i = 0; i < ndim && off > 0 && (size_t)off < n; i++)
        off += snprintf(buf + off, n - (size_t)off, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (off > 0 && (size_t)off < n) snprintf(buf + off, n - (size_t)off, "]");
}

static int same_shape(int na, const int64_t *a, int nb, const int64_t *b) {
    return na == nb && memcmp(a, b, (size_t)na * sizeof *a) == 0;
}

#define PROBLEM(...)                                                                               \
    do {                                                                                           \
        fprintf(report, "FAIL: case %s: ", c->name);                                               \
        fprintf(report, __VA_ARGS__);                                                              \
        fprintf(report, "\n");                                                                     \
        problems++;                                                                                \
    } while (0)

/* An input's manifest "values" against the recomputed input: required for explicit inputs
 * (their values come from the case, and readers outside the C library rebuild them from the
 * manifest), checked element by element wherever present. */
static void check_values(const mla_case *c, const mla_mf_input *in, const mla_tensor *t,
                         FILE *report, int *problems_io) {
    int problems = 0;
    if (!in->has_values) {
        if (t->fill == MLA_FILL_EXPLICIT)
            PROBLEM("input %s: explicit input without \"values\" in the manifest (golden regen %s)",
                    t->name, c->name);
    } else if (t->dtype != ST_I32) {
        PROBLEM("input %s: the manifest has \"values\" for a %s input", t->name,
                st_dtype_name(t->dtype));
    } else if (in->n_values != t->nbytes / sizeof(int32_t)) {
        PROBLEM("input %s: the manifest has %zu values, the recomputed input %zu elements", t->name,
                in->n_values, t->nbytes / sizeof(int32_t));
    } else {
        const int32_t *v = t->data;
        for (size_t k = 0; k < in->n_values; k++)
            if (in->values[k] != v[k]) {
                PROBLEM("input %s: manifest values[%zu] = %d, recomputed %d (and maybe more)",
                        t->name, k, (int)in->values[k], (int)v[k]);
                break;
            }
    }
    *problems_io += problems;
}

int mla_golden_verify(const mla_case *c, const char *dir, const mla_manifest *m, FILE *report,
                      const char *rerun_cmd) {
    int problems = 0;
    char hex1[65], hex2[65], s1[128], s2[128];
    const mla_mf_case *mc = mla_manifest_find(m, c->name);
    if (!mc) {
        PROBLEM("not in the manifest (run: golden regen --dir %s %s)", dir, c->name);
        if (rerun_cmd) fprintf(report, "  re-run: %s\n", rerun_cmd);
        return problems;
    }
    if (mc->generator_version != MLA_FILL_VERSION)
        PROBLEM("manifest generator_version %d, this build generates version %d",
                mc->generator_version, MLA_FILL_VERSION);
    if (mc->seed != c->seed) PROBLEM("manifest seed %u, case table seed %u", mc->seed, c->seed);
    if (!c->in_memory && (!c->purpose || !mc->purpose || strcmp(mc->purpose, c->purpose) != 0))
        PROBLEM("manifest purpose '%s', case table purpose '%s' (every case states its purpose)",
                mc->purpose ? mc->purpose : "(none)", c->purpose ? c->purpose : "(none)");
    if (strcmp(mc->model, c->model) != 0)
        PROBLEM("manifest model '%s', case table model '%s'", mc->model, c->model);
    size_t ng = sizeof k_geom_fields / sizeof k_geom_fields[0];
    for (size_t i = 0; i < ng; i++) {
        double v = geom_value(&c->geom, &k_geom_fields[i]), mv = 0.0;
        for (size_t k = 0; k < mc->n_geometry; k++)
            if (strcmp(mc->geometry[k].key, k_geom_fields[i].name) == 0) mv = mc->geometry[k].value;
        if (v != mv)
            PROBLEM("geometry %s: manifest %.9g, case table %.9g", k_geom_fields[i].name, mv, v);
    }
    for (size_t k = 0; k < mc->n_geometry; k++) {
        int known = 0;
        for (size_t i = 0; i < ng; i++)
            known |= strcmp(mc->geometry[k].key, k_geom_fields[i].name) == 0;
        if (!known) PROBLEM("manifest geometry field '%s' is unknown", mc->geometry[k].key);
    }

    mla_ctx ctx;
    if (mla_case_run(c, &ctx) != 0) {
        PROBLEM("recomputation failed: %s", ctx.err);
        mla_ctx_free(&ctx);
        return problems;
    }

    /* inputs */
    for (size_t i = 0; i < ctx.n; i++) {
        const mla_tensor *t = &ctx.t[i];
        if (t->is_output) continue;
        const mla_mf_input *in = mla_mf_find_input(mc, t->name);
        if (!in) {
            PROBLEM("input %s is not in the manifest", t->name);
            continue;
        }
        shape_str(s1, sizeof s1, in->ndim, in->shape);
        shape_str(s2, sizeof s2, t->ndim, t->shape);
        if (!same_shape(in->ndim, in->shape, t->ndim, t->shape) || in->dtype != t->dtype)
            PROBLEM("input %s: manifest %s %s, recomputed %s %s", t->name, st_dtype_name(in->dtype),
                    s1, st_dtype_name(t->dtype), s2);
        if (strcmp(in->fill_kind, mla_fill_kind_name(t->fill)) != 0 ||
            (float)in->fill_scale != t->fill_scale)
            PROBLEM("input %s: manifest fill %s x %.9g, case table fill %s x %.9g", t->name,
                    in->fill_kind, in->fill_scale, mla_fill_kind_name(t->fill),
                    (double)t->fill_scale);
        if (memcmp(in->sha256, t->sha256, 32) != 0) {
            mla_sha256_hex(in->sha256, hex1);
            mla_sha256_hex(t->sha256, hex2);
            PROBLEM("input %s: sha256 mismatch (manifest %s, regenerated %s): the generator or "
                    "the fill changed",
                    t->name, hex1, hex2);
        }
        check_values(c, in, t, report, &problems);
    }
    for (size_t k = 0; k < mc->n_inputs; k++) {
        const mla_tensor *t = mla_ctx_get(&ctx, mc->inputs[k].name);
        if (!t || t->is_output)
            PROBLEM("manifest input %s is not produced by the case", mc->inputs[k].name);
    }

    /* outputs */
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, mc->file);
    st_file sf;
    char err[ST_ERR_LEN];
    int have_file = st_read_file(path, &sf, err, sizeof err) == 0;
    if (!have_file) PROBLEM("cannot load fixture: %s", err);
    for (size_t i = 0; i < ctx.n; i++) {
        const mla_tensor *t = &ctx.t[i];
        if (!t->is_output) continue;
        const mla_mf_output *o = mla_mf_find_output(mc, t->name);
        if (!o) {
            PROBLEM("output %s is not in the manifest", t->name);
            continue;
        }
        shape_str(s1, sizeof s1, o->ndim, o->shape);
        shape_str(s2, sizeof s2, t->ndim, t->shape);
        if (!same_shape(o->ndim, o->shape, t->ndim, t->shape) || o->dtype != t->dtype) {
            PROBLEM("output %s: manifest %s %s, recomputed %s %s", t->name, st_dtype_name(o->dtype),
                    s1, st_dtype_name(t->dtype), s2);
            continue;
        }
        if (strcmp(o->tolerance, mla_tol_class_name(t->tol)) != 0)
            PROBLEM("output %s: manifest tolerance class %s, case table %s", t->name, o->tolerance,
                    mla_tol_class_name(t->tol));
        if (memcmp(o->sha256, t->sha256, 32) != 0) {
            mla_sha256_hex(o->sha256, hex1);
            mla_sha256_hex(t->sha256, hex2);
            PROBLEM("output %s: full-tensor sha256 mismatch (manifest %s, recomputed %s)", t->name,
                    hex1, hex2);
        }
        if (!have_file) continue;
        const st_tensor *st = st_find(&sf, t->name);
        if (!st) {
            PROBLEM("output %s is missing from %s", t->name, path);
            continue;
        }
        const int64_t *rows = o->has_stored_rows ? o->stored_rows : NULL;
        int nr = o->has_stored_rows ? (int)o->n_stored_rows : 0;
        int64_t want[ST_MAX_DIMS];
        memcpy(want, t->shape, sizeof want);
        if (rows) want[0] = nr;
        if (st->dtype != t->dtype || !same_shape(st->ndim, st->shape, t->ndim, want)) {
            shape_str(s1, sizeof s1, st->ndim, st->shape);
            shape_str(s2, sizeof s2, t->ndim, want);
            PROBLEM("output %s in %s is %s %s, expected %s %s", t->name, path,
                    st_dtype_name(st->dtype), s1, st_dtype_name(t->dtype), s2);
            continue;
        }
        size_t nb = t->nbytes;
        void *ref = t->data, *tmp = NULL;
        if (rows) {
            tmp = gather_rows(t, rows, nr, &nb);
            if (!tmp) {
                PROBLEM("out of memory");
                continue;
            }
            ref = tmp;
        }
        /* stored values vs recomputed, bitwise (the golden IS the oracle). */
        mla_tol tol = mla_tol_exact();
        mla_cmp_result r;
        int ok;
        size_t esz = st_dtype_size(t->dtype);
        if (t->dtype == ST_F32) {
            float *got = malloc(nb ? nb : 1);
            memcpy(got, st->data, nb); /* the mapped bytes may be unaligned */
            r = mla_compare_f32(got, ref, nb / 4, &tol);
            free(got);
            ok = r.pass;
        } else if (t->dtype == ST_BF16) {
            uint16_t *got = malloc(nb ? nb : 1);
            memcpy(got, st->data, nb);
            r = mla_compare_bf16(got, ref, nb / 2, &tol);
            free(got);
            ok = r.pass;
        } else {
            ok = memcmp(st->data, ref, nb) == 0;
            memset(&r, 0, sizeof r);
            if (!ok) {
                size_t k = 0;
                while (k < nb && ((const char *)st->data)[k] == ((const char *)ref)[k]) k++;
                r.worst_index = k / (esz ? esz : 1);
            }
        }
        if (!ok) {
            problems++;
            char tname[4400];
            snprintf(tname, sizeof tname, "%s (stored in %s%s)", t->name, path,
                     rows ? ", stored rows only; indices are into the stored subset" : "");
            int64_t sshape[ST_MAX_DIMS];
            memcpy(sshape, want, sizeof sshape);
            if (t->dtype == ST_F32 || t->dtype == ST_BF16)
                mla_cmp_report(report, c->name, tname, t->ndim, sshape, &r, &tol, rerun_cmd);
            else
                fprintf(report,
                        "FAIL: case %s, tensor %s: stored %s values differ from element "
                        "%zu\n  re-run: %s\n",
                        c->name, tname, st_dtype_name(t->dtype), r.worst_index,
                        rerun_cmd ? rerun_cmd : "");
        }
        free(tmp);
    }
    if (have_file) {
        for (size_t k = 0; k < sf.n_tensors; k++) {
            const mla_tensor *t = mla_ctx_get(&ctx, sf.tensors[k].name);
            if (!t || !t->is_output)
                PROBLEM("%s holds tensor %s that the case does not produce", path,
                        sf.tensors[k].name);
        }
        st_free(&sf);
    }
    for (size_t k = 0; k < mc->n_outputs; k++) {
        const mla_tensor *t = mla_ctx_get(&ctx, mc->outputs[k].name);
        if (!t || !t->is_output)
            PROBLEM("manifest output %s is not produced by the case", mc->outputs[k].name);
    }
    if (problems && rerun_cmd) fprintf(report, "  re-run case %s: %s\n", c->name, rerun_cmd);
    mla_ctx_free(&ctx);
    return problems;
}
