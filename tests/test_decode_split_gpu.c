/* test_decode_split_gpu.c: the decode-split twins are split-invariant, bit for bit, at the glm5
 * and glm5_next decode / verify geometries, and the MEMRA_MLA_DECODE_SPLIT door engages with a
 * receipt and the same bytes.
 *
 * One test per (geometry, kernel), named decode_split_gpu/<geometry>__<kernel>; it runs every
 * split the policy (mla_decode_split_policy) can choose at that geometry, plus 1, 2, 3, 7 and the
 * maximum (out_dim), with one cr_expect per split and a final cr_assert, requiring bytes equal to
 * the unsplit launcher AND to the oracle (one fmaf chain: class exact). A failing split prints
 * the split, the worst index, both values and the re-run command, and writes the split output
 * as repro-decode_split_gpu-<geometry>__<kernel>-split<N>.safetensors (inputs regenerate from
 * the geometry name: the fill seed below) under $TEST_UNDECLARED_OUTPUTS_DIR (else /tmp).
 * decode_split_gpu/negative_control proves the comparison can fail (one ulp on one input).
 * decode_split_gpu/door_* check the receipt (mla_decode_split_dispatches) with the flag on/off.
 * Without a usable GPU every test reports SKIPPED (GPU_REQUIRE), never passed.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mla.h"
#include "kernels/mla_door.h"
#include "kernels/mla_status.h"
#include "oracle/mla_oracle.h"
#include "tests/lib/gpu_util.h"
#include "tests/lib/compare.h"
#include "tests/lib/mla_fill.h"
#include "tests/lib/safetensors.h"

typedef struct {
    const char *name;
    int32_t t_q, n_head, d_nope, d_v, kv_rank;
    uint32_t seed;
} geometry;

static const geometry GEOMS[] = {
    {"glm5_decode", 1, 64, 192, 256, 512, 0x5D110501u},
    {"glm5_verify", 4, 64, 192, 256, 512, 0x5D110502u},
    {"glm5_next_decode", 1, 64, 256, 256, 512, 0x5D110601u},
    {"glm5_next_verify", 4, 64, 256, 256, 512, 0x5D110602u},
};

static const geometry *geom(const char *name) {
    for (size_t i = 0; i < sizeof GEOMS / sizeof GEOMS[0]; i++)
        if (strcmp(GEOMS[i].name, name) == 0) return &GEOMS[i];
    cr_assert_fail("unknown geometry %s", name);
    return NULL;
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    cr_assert(p != NULL, "out of memory (%zu bytes)", n);
    return p;
}

/* Host inputs and the oracle of one (geometry, kernel): absorb (in = q_nope [t][H][d_nope],
 * w = wk_b [H][d_nope][R]) or decompress (in = o_lat [t][H][R], w = wv_b [H][d_v][R]). */
typedef struct {
    const geometry *g;
    int absorb;
    int32_t head_dim, out_dim;
    size_t n_in, n_w, n_out;
    float *in, *w, *ref;
    char id[128], rerun[512];
} job;

static void job_init(job *j, const char *gname, int absorb) {
    memset(j, 0, sizeof *j);
    j->g = geom(gname);
    j->absorb = absorb;
    const geometry *g = j->g;
    j->head_dim = absorb ? g->d_nope : g->d_v;
    j->out_dim = absorb ? g->kv_rank : g->d_v;
    j->n_in = (size_t)g->t_q * g->n_head * (absorb ? g->d_nope : g->kv_rank);
    j->n_w = (size_t)g->n_head * j->head_dim * g->kv_rank;
    j->n_out = (size_t)g->t_q * g->n_head * j->out_dim;
    j->in = xmalloc(j->n_in * 4);
    j->w = xmalloc(j->n_w * 4);
    j->ref = xmalloc(j->n_out * 4);
    mla_fill_host_f32(j->in, j->n_in, MLA_FILL_REALISTIC, g->seed, absorb ? "q_nope" : "o_lat",
                      1.0f);
    mla_fill_host_f32(j->w, j->n_w, MLA_FILL_REALISTIC, g->seed, absorb ? "wk_b" : "wv_b",
                      absorb ? 0.0721688f : 0.0441942f); /* ~ 1/sqrt(fan_in) */
    if (absorb)
        oracle_absorb_q_f32(j->in, j->w, j->ref, g->t_q, g->n_head, g->d_nope, g->kv_rank);
    else
        oracle_decompress_v_f32(j->in, j->w, j->ref, g->t_q, g->n_head, g->d_v, g->kv_rank);
    snprintf(j->id, sizeof j->id, "%s__%s", gname, absorb ? "absorb" : "decompress");
    snprintf(j->rerun, sizeof j->rerun,
             "bazel test //tests:decode_split_gpu_test --test_arg=--filter='decode_split_gpu/%s'"
             "   (GPU bundle: bin/decode_split_gpu_test --filter 'decode_split_gpu/%s')",
             j->id, j->id);
}

static void job_free(job *j) {
    free(j->in);
    free(j->w);
    free(j->ref);
}

/* Launches the kernel (split 0: the unsplit launcher) into a freshly poisoned buffer; returns
 * the launch status, and the output bytes in host (n_out floats) when it is 0. Guard bands of
 * the output are checked by the caller through *guards_ok. */
static int launch(const job *j, const gpu_buf *bi, const gpu_buf *bw, int32_t split, float *host,
                  int *guards_ok, size_t *poison_left) {
    const geometry *g = j->g;
    gpu_buf bo = gpu_buf_alloc(j->n_out * 4);
    int rc;
    if (j->absorb)
        rc = split ? memra_mla_absorb_q_split_f32(bi->ptr, bw->ptr, bo.ptr, g->t_q, g->n_head,
                                                  g->d_nope, g->kv_rank, split, NULL)
                   : memra_mla_absorb_q_f32(bi->ptr, bw->ptr, bo.ptr, g->t_q, g->n_head,
                                            g->d_nope, g->kv_rank, NULL);
    else
        rc = split ? memra_mla_decompress_v_split_f32(bi->ptr, bw->ptr, bo.ptr, g->t_q,
                                                      g->n_head, g->d_v, g->kv_rank, split, NULL)
                   : memra_mla_decompress_v_f32(bi->ptr, bw->ptr, bo.ptr, g->t_q, g->n_head,
                                                g->d_v, g->kv_rank, NULL);
    if (rc == 0) rc = gpu_sync();
    if (rc == 0) {
        *guards_ok = gpu_buf_guards_intact(&bo);
        *poison_left = gpu_buf_count_poison(&bo);
        gpu_buf_download(&bo, host, j->n_out * 4);
    }
    gpu_buf_free(&bo);
    return rc;
}

/* THE comparison of this suite (used by the invariance checks and the negative control):
 * 1 when got and ref are byte-identical; else 0 with a report (worst index, values) in msg. */
static int same_bytes(const float *got, const float *ref, size_t n, const char *label,
                      char *msg, size_t msg_len) {
    if (memcmp(got, ref, n * 4) == 0) return 1;
    mla_tol ex = mla_tol_exact();
    mla_cmp_result r = mla_compare_f32(got, ref, n, &ex);
    r.pass = 0;
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    mla_cmp_report(fp, NULL, label, 0, NULL, &r, &ex, NULL);
    fclose(fp);
    snprintf(msg, msg_len, "%s", buf);
    free(buf);
    return 0;
}

static void write_repro(const job *j, int32_t split, const float *got) {
    const char *dir = getenv("TEST_UNDECLARED_OUTPUTS_DIR");
    if (!dir || !*dir) dir = "/tmp";
    char path[4096], err[ST_ERR_LEN], sp[32], seed[32];
    snprintf(path, sizeof path, "%s/repro-decode_split_gpu-%s-split%d.safetensors", dir, j->id,
             split);
    snprintf(sp, sizeof sp, "%d", split);
    snprintf(seed, sizeof seed, "0x%08X", j->g->seed);
    int64_t shape[3] = {j->g->t_q, j->g->n_head, j->out_dim};
    st_writer w;
    st_writer_init(&w);
    st_writer_meta(&w, "test", j->id);
    st_writer_meta(&w, "split", sp);
    st_writer_meta(&w, "fill_seed", seed);
    st_writer_meta(&w, "rerun", j->rerun);
    st_writer_add(&w, "kernel", ST_F32, 3, shape, got);
    st_writer_add(&w, "oracle", ST_F32, 3, shape, j->ref);
    if (st_writer_write(&w, path, err, sizeof err) == 0)
        fprintf(stderr, "decode_split_gpu/%s: reproducer written: %s\n", j->id, path);
    st_writer_free(&w);
}

/* The split values to try: every policy choice (blocks 1..1023 at this out_dim), 1, 2, 3, 7 and
 * out_dim; deduplicated, ascending. Returns the count. */
static int add_split(int32_t *out, int n, int cap, int32_t s, int32_t out_dim) {
    if (s < 1 || s > out_dim || n >= cap) return n;
    for (int i = 0; i < n; i++)
        if (out[i] == s) return n;
    out[n] = s;
    return n + 1;
}

static int splits_to_try(int32_t out_dim, int32_t *out, int cap) {
    int n = 0;
    for (long blocks = 1; blocks < 1024; blocks++)
        n = add_split(out, n, cap, mla_decode_split_policy(1, blocks, out_dim), out_dim);
    const int32_t fixed[] = {1, 2, 3, 7, out_dim};
    for (int i = 0; i < 5; i++) n = add_split(out, n, cap, fixed[i], out_dim);
    for (int i = 1; i < n; i++) /* ascending */
        for (int k = i; k > 0 && out[k - 1] > out[k]; k--) {
            int32_t t = out[k];
            out[k] = out[k - 1];
            out[k - 1] = t;
        }
    return n;
}

static void split_invariance(const char *gname, int absorb) {
    GPU_REQUIRE();
    job j;
    job_init(&j, gname, absorb);
    gpu_buf bi = gpu_buf_from_host(j.in, j.n_in * 4), bw = gpu_buf_from_host(j.w, j.n_w * 4);
    float *unsplit = xmalloc(j.n_out * 4), *got = xmalloc(j.n_out * 4);
    int guards = 0;
    size_t left = 0;
    char msg[4096];
    int rc = launch(&j, &bi, &bw, 0, unsplit, &guards, &left);
    cr_assert(rc == 0, "decode_split_gpu/%s: the unsplit launcher returned %d (%s)\n  re-run: %s",
              j.id, rc, mla_status_message(rc), j.rerun);
    cr_expect(guards && left == 0, "decode_split_gpu/%s: unsplit: guards %s, %zu words unwritten"
              "\n  re-run: %s", j.id, guards ? "intact" : "OVERWRITTEN", left, j.rerun);
    int unsplit_ok = same_bytes(unsplit, j.ref, j.n_out, "unsplit vs oracle", msg, sizeof msg);
    cr_expect(unsplit_ok, "decode_split_gpu/%s: the unsplit launcher differs from the oracle:\n%s"
              "  re-run: %s", j.id, msg, j.rerun);

    int32_t splits[128];
    int n = splits_to_try(j.out_dim, splits, 128);
    int failures = 0;
    char tried[1024];
    int off = 0;
    for (int i = 0; i < n; i++) {
        int32_t s = splits[i];
        off += snprintf(tried + off, sizeof tried - (size_t)off, "%s%d", i ? "," : "", s);
        rc = launch(&j, &bi, &bw, s, got, &guards, &left);
        int ok = rc == 0;
        cr_expect(rc == 0, "decode_split_gpu/%s: split %d returned %d (%s)\n  re-run: %s", j.id,
                  s, rc, mla_status_message(rc), j.rerun);
        if (rc != 0) {
            failures++;
            continue;
        }
        cr_expect(guards && left == 0,
                  "decode_split_gpu/%s: split %d: guards %s, %zu words left unwritten\n"
                  "  re-run: %s", j.id, s, guards ? "intact" : "OVERWRITTEN", left, j.rerun);
        ok &= guards && left == 0;
        char label[64];
        snprintf(label, sizeof label, "split %d vs unsplit", s);
        int eq_unsplit = same_bytes(got, unsplit, j.n_out, label, msg, sizeof msg);
        cr_expect(eq_unsplit, "decode_split_gpu/%s: split %d differs from the unsplit launcher:\n"
                  "%s  re-run: %s", j.id, s, msg, j.rerun);
        snprintf(label, sizeof label, "split %d vs oracle", s);
        int eq_oracle = same_bytes(got, j.ref, j.n_out, label, msg, sizeof msg);
        cr_expect(eq_oracle, "decode_split_gpu/%s: split %d differs from the oracle:\n%s"
                  "  re-run: %s", j.id, s, msg, j.rerun);
        ok &= eq_unsplit && eq_oracle;
        if (!ok) {
            failures++;
            write_repro(&j, s, got);
        }
    }
    cr_assert(failures == 0 && unsplit_ok,
              "decode_split_gpu/%s: %d of %d splits failed (tried %s)\n  re-run: %s", j.id,
              failures, n, tried, j.rerun);
    free(unsplit);
    free(got);
    gpu_buf_free(&bi);
    gpu_buf_free(&bw);
    job_free(&j);
}

#define GEOMETRIES(X) X(glm5_decode) X(glm5_verify) X(glm5_next_decode) X(glm5_next_verify)
#define DEFINE_TESTS(gname)                                                                   \
    Test(decode_split_gpu, gname##__absorb, .timeout = 300) { split_invariance(#gname, 1); } \
    Test(decode_split_gpu, gname##__decompress, .timeout = 300) {                            \
        split_invariance(#gname, 0);                                                          \
    }
GEOMETRIES(DEFINE_TESTS)

/* The split list really contains what the policy picks at these geometries (CPU: runs
 * everywhere): at decode (64 blocks) the policy picks 16 for both out_dims (512 / 256). */
Test(decode_split_gpu, split_list_covers_the_policy) {
    int32_t s[128];
    int n = splits_to_try(512, s, 128);
    int has[5] = {0};
    const int32_t want[5] = {1, 2, 3, 7, 512};
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 5; k++) has[k] |= s[i] == want[k];
    for (int k = 0; k < 5; k++) cr_expect(has[k], "split %d missing from the list", want[k]);
    int has16 = 0, has4 = 0;
    for (int i = 0; i < n; i++) {
        has16 |= s[i] == mla_decode_split_policy(1, 64, 512);
        has4 |= s[i] == mla_decode_split_policy(1, 256, 512);
    }
    cr_expect(has16 && has4, "the policy's decode / verify splits are not in the list");
}

/* Negative control: perturb one input element by one ulp and run the split kernel: the same
 * comparison (same_bytes) must report a difference against the unperturbed unsplit output. */
Test(decode_split_gpu, negative_control, .timeout = 120) {
    GPU_REQUIRE();
    job j;
    job_init(&j, "glm5_decode", 1);
    gpu_buf bi = gpu_buf_from_host(j.in, j.n_in * 4), bw = gpu_buf_from_host(j.w, j.n_w * 4);
    float *unsplit = xmalloc(j.n_out * 4), *got = xmalloc(j.n_out * 4);
    int guards;
    size_t left;
    int rc = launch(&j, &bi, &bw, 0, unsplit, &guards, &left);
    cr_assert(rc == 0, "unsplit launch: %d (%s)", rc, mla_status_message(rc));
    /* q_nope[0][5][17]: feeds every q_lat[0][5][*] (non-zero weights). */
    size_t e = (size_t)5 * j.g->d_nope + 17;
    mla_perturb_ulp_f32(j.in, e, 1);
    gpu_buf_upload(&bi, j.in, j.n_in * 4);
    int32_t split = mla_decode_split_policy(1, (long)j.g->t_q * j.g->n_head, j.out_dim);
    rc = launch(&j, &bi, &bw, split, got, &guards, &left);
    cr_assert(rc == 0, "split %d launch: %d (%s)", split, rc, mla_status_message(rc));
    char msg[4096];
    int same = same_bytes(got, unsplit, j.n_out, "perturbed split vs unsplit", msg, sizeof msg);
    cr_assert(!same,
              "decode_split_gpu/negative_control: one ulp on q_nope[0][5][17] left every byte "
              "of q_lat unchanged: the invariance comparison cannot fail (vacuous)\n  re-run: "
              "bazel test //tests:decode_split_gpu_test "
              "--test_arg=--filter='decode_split_gpu/negative_control'");
    cr_expect(strstr(msg, "differ") != NULL, "the report names no difference: %s", msg);
    free(unsplit);
    free(got);
    gpu_buf_free(&bi);
    gpu_buf_free(&bw);
    job_free(&j);
}

/* The door with MEMRA_MLA_DECODE_SPLIT=1 engages (receipt) and gives the unsplit bytes; with
 * the flag unset (or "0") it does not engage. Criterion runs each test in its own process, so
 * setenv here never leaks into another test. */
static void door(int absorb, int flag_on) {
    GPU_REQUIRE();
    job j;
    job_init(&j, "glm5_decode", absorb);
    const geometry *g = j.g;
    const char *rerun_fmt = "bazel test //tests:decode_split_gpu_test "
                            "--test_arg=--filter='decode_split_gpu/door_*'";
    gpu_buf bi = gpu_buf_from_host(j.in, j.n_in * 4), bw = gpu_buf_from_host(j.w, j.n_w * 4);
    float *unsplit = xmalloc(j.n_out * 4), *got = xmalloc(j.n_out * 4);
    int guards;
    size_t left;
    int rc = launch(&j, &bi, &bw, 0, unsplit, &guards, &left);
    cr_assert(rc == 0, "unsplit launch: %d (%s)", rc, mla_status_message(rc));

    if (flag_on)
        setenv("MEMRA_MLA_DECODE_SPLIT", "1", 1);
    else
        unsetenv("MEMRA_MLA_DECODE_SPLIT");
    uint64_t before = mla_decode_split_dispatches();
    gpu_buf bo = gpu_buf_alloc(j.n_out * 4);
    rc = absorb ? mla_door_absorb_q_f32(bi.ptr, bw.ptr, bo.ptr, g->t_q, g->n_head, g->d_nope,
                                        g->kv_rank, NULL)
                : mla_door_decompress_v_f32(bi.ptr, bw.ptr, bo.ptr, g->t_q, g->n_head, g->d_v,
                                            g->kv_rank, NULL);
    if (rc == 0) rc = gpu_sync();
    cr_assert(rc == 0, "mla_door_%s returned %d (%s)\n  re-run: %s",
              absorb ? "absorb_q_f32" : "decompress_v_f32", rc, mla_status_message(rc),
              rerun_fmt);
    uint64_t after = mla_decode_split_dispatches();
    if (flag_on)
        cr_expect(after == before + 1,
                  "MEMRA_MLA_DECODE_SPLIT=1 at %d blocks: the split door did not engage "
                  "(dispatches %llu -> %llu; policy says split %d)\n  re-run: %s",
                  g->t_q * g->n_head, (unsigned long long)before, (unsigned long long)after,
                  mla_decode_split_for((long)g->t_q * g->n_head, j.out_dim), rerun_fmt);
    else
        cr_expect(after == before, "flag unset: the split door engaged (%llu -> %llu)\n  re-run: %s",
                  (unsigned long long)before, (unsigned long long)after, rerun_fmt);
    cr_expect(gpu_buf_guards_intact(&bo) && gpu_buf_count_poison(&bo) == 0,
              "door output: guard band overwritten or words left unwritten\n  re-run: %s",
              rerun_fmt);
    gpu_buf_download(&bo, got, j.n_out * 4);
    char msg[4096];
    int same = same_bytes(got, unsplit, j.n_out, "door vs unsplit launcher", msg, sizeof msg);
    cr_expect(same, "door (flag %s) bytes differ from the unsplit launcher:\n%s  re-run: %s",
              flag_on ? "on" : "off", msg, rerun_fmt);

    if (!flag_on) { /* "0" is not "1": still no engagement */
        setenv("MEMRA_MLA_DECODE_SPLIT", "0", 1);
        rc = absorb ? mla_door_absorb_q_f32(bi.ptr, bw.ptr, bo.ptr, g->t_q, g->n_head,
                                            g->d_nope, g->kv_rank, NULL)
                    : mla_door_decompress_v_f32(bi.ptr, bw.ptr, bo.ptr, g->t_q, g->n_head,
                                                g->d_v, g->kv_rank, NULL);
        cr_expect(rc == 0 && gpu_sync() == 0 && mla_decode_split_dispatches() == before,
                  "MEMRA_MLA_DECODE_SPLIT=0 engaged the door or failed (rc %d)", rc);
        unsetenv("MEMRA_MLA_DECODE_SPLIT");
    }
    gpu_buf_free(&bo);
    free(unsplit);
    free(got);
    gpu_buf_free(&bi);
    gpu_buf_free(&bw);
    job_free(&j);
}

Test(decode_split_gpu, door_absorb_engaged, .timeout = 120) { door(1, 1); }
Test(decode_split_gpu, door_absorb_off, .timeout = 120) { door(1, 0); }
Test(decode_split_gpu, door_decompress_engaged, .timeout = 120) { door(0, 1); }
Test(decode_split_gpu, door_decompress_off, .timeout = 120) { door(0, 0); }
