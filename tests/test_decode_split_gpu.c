/* test_decode_split_gpu.c: the decode-split twins are split-invariant, bit for bit, at the glm5
 * and glm5_next decode / verify geometries, and the MEMRA_MLA_DECODE_SPLIT door engages with a
 * receipt and the same bytes.
 *
 * One test per (geometry, kernel), named decode_split_gpu/<geometry>__<kernel>; it runs every
 * split the policy (mla_decode_split_policy) can choose at that geometry, plus 1, 2, 3, 7 and the
 * maximum (out_dim), with one check per split and a final fatal one, requiring bytes equal to
 * the unsplit launcher AND to the oracle (one fmaf chain: class exact). Everything runs on the
 * GPU testbed (tests/lib/testbed.h): guarded, poisoned buffers; a failing comparison prints the
 * testbed's report (case = the geometry name, the worst element unravelled as
 * [t_q][n_head][out_dim], both values, the re-run command) and writes the split output as
 * repro-decode_split_gpu-<geometry>__<kernel>-<tensor>_split<N>.safetensors (inputs regenerate
 * from the geometry name: the fill seed below) under $TEST_UNDECLARED_OUTPUTS_DIR (else /tmp).
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
#include "tests/lib/geometry.h"
#include "tests/lib/mla_fill.h"
#include "tests/lib/testbed_criterion.h"

#define TARGET "decode_split_gpu_test"
#define SUITE "decode_split_gpu"

/* The geometries (presets of tests/lib/geometry.h; t_kv is not used by absorb / decompress):
 * X(name, preset, t_q, fill seed). The names are those of the golden cases of the same shape;
 * the seeds are this suite's own. */
#define GEOMETRIES(X)                                                                              \
    X(glm5_decode, MLA_GEOM_GLM5, 1, 0x5D110501u)                                                  \
    X(glm5_verify, MLA_GEOM_GLM5, 4, 0x5D110502u)                                                  \
    X(glm5_next_decode, MLA_GEOM_GLM5_NEXT, 1, 0x5D110601u)                                        \
    X(glm5_next_verify, MLA_GEOM_GLM5_NEXT, 4, 0x5D110602u)                                        \
    X(san_small, SAN_GEOM, 2, 0x5D11A501u)                                                         \
    X(san_flat_straddle, STRADDLE_GEOM, 1, 0x5D11A601u)                                            \
    X(san_flat_straddle_tq2, STRADDLE_GEOM, 2, 0x5D11A603u)                                        \
    X(san_flat_straddle_tq3, STRADDLE_GEOM, 3, 0x5D11A604u)                                        \
    X(san_flat_straddle_tq4, STRADDLE_GEOM, 4, 0x5D11A605u)                                        \
    X(san_absorb_partial, ABSORB_PARTIAL_GEOM, 1, 0x5D11A602u)

/* The sanitizer tier's geometry (tests/lib/case_list.h's sanitizer cases): glm5's dims at 3
 * heads, so every split (1 .. out_dim) runs in seconds under compute-sanitizer. */
#define SAN_GEOM                                                                                   \
    .n_head = 3, .kv_rank = MLA_GLM5_KV_RANK, .d_rope = MLA_GLM5_D_ROPE,                           \
    .d_nope = MLA_GLM5_D_NOPE, .d_v = MLA_GLM5_D_V, .rope_base = MLA_GLM5_ROPE_BASE,               \
    .scale = MLA_GLM5_SCALE

/* decompress_v's flat arm (kernels/mla_dense.cu, decompress_v_flat_f32: t_q <= 4, kv_rank 512,
 * d_v >= 128) takes blocks of 128 flat outputs whatever their heads. At d_v 200 over 5 heads (1,000
 * outputs, 8 blocks) four of the blocks span two heads (1, 3, 4 and 6), block 3's first warp with
 * both heads in its lanes (outputs 384 .. 415: heads 1 and 2), and the last block is partial (104
 * outputs): what the decode presets (d_v 256, whole blocks a head) never reach. At t_q 2, 3 and 4
 * (_tq2 .. _tq4) the arm stages 2 or 4 tokens a head, and at t_q 3 a group of 4 with one token
 * missing (zero-staged, never stored). Small enough for the sanitizer tier (san_*:
 * tools/sanitize_set.tsv). */
#define STRADDLE_GEOM                                                                              \
    .n_head = 5, .kv_rank = MLA_GLM5_KV_RANK, .d_rope = MLA_GLM5_D_ROPE,                           \
    .d_nope = MLA_GLM5_D_NOPE, .d_v = 200, .rope_base = MLA_GLM5_ROPE_BASE,                        \
    .scale = MLA_GLM5_SCALE

/* absorb_q's register arm (absorb_q_reg_f32: t_q 1, d_nope 192; absorb_q_cp_f32 before the
 * fourteenth session) takes blocks of 128 columns of a head (256 until the twenty-second
 * session), two threads a column: at kv_rank 260 each head's third block holds 4 columns, and its
 * other threads load column 0's weights and store nothing (decompress runs its general arm here:
 * kv_rank is not 512). */
#define ABSORB_PARTIAL_GEOM                                                                        \
    .n_head = 3, .kv_rank = 260, .d_rope = MLA_GLM5_D_ROPE, .d_nope = MLA_GLM5_D_NOPE, .d_v = 200, \
    .rope_base = MLA_GLM5_ROPE_BASE, .scale = MLA_GLM5_SCALE

/* The weight fill scales this suite has always used, kept so that its inputs do not move:
 * 1/sqrt(192) and 1/sqrt(512) to six digits, at every geometry. They are NOT bit-equal to
 * mla_weight_scale (192: 0x3D93CD3C here vs 0x3D93CD3A; 512: 0x3D3504FA vs 0x3D3504F3), and at
 * glm5_next (d_nope 256) mla_weight_scale(d_nope) would be 0.0625. */
#define ABSORB_W_SCALE 0.0721688f     /* wk_b, ~ mla_weight_scale(MLA_GLM5_D_NOPE) */
#define DECOMPRESS_W_SCALE 0.0441942f /* wv_b, ~ mla_weight_scale(MLA_GLM5_KV_RANK) */

typedef struct {
    const char *name;
    mla_geom g;
    uint32_t seed;
} geometry;

#define GEOMETRY_ROW(name, preset, tq, seed) {#name, {preset, .t_q = (tq)}, (seed)},
static const geometry GEOMS[] = {GEOMETRIES(GEOMETRY_ROW)};

static const geometry *geom(tb *t, const char *name) {
    for (size_t i = 0; i < sizeof GEOMS / sizeof GEOMS[0]; i++)
        if (strcmp(GEOMS[i].name, name) == 0) return &GEOMS[i];
    tb_failf(t, 1, "unknown geometry %s", name);
    return NULL;
}

/* Host inputs and the oracle of one (geometry, kernel): absorb (in = q_nope [t][H][d_nope],
 * w = wk_b [H][d_nope][R], out q_lat [t][H][R]) or decompress (in = o_lat [t][H][R],
 * w = wv_b [H][d_v][R], out [t][H][d_v]). */
typedef struct {
    const geometry *geo;
    const mla_geom *g;
    int absorb;
    const char *out_name;
    int32_t out_dim;
    int64_t shape[3]; /* of the output */
    size_t n_in, n_w, n_out;
    float *in, *w, *ref;
} job;

static void job_init(tb *t, job *j, const char *gname, int absorb) {
    memset(j, 0, sizeof *j);
    j->geo = geom(t, gname);
    j->g = &j->geo->g;
    j->absorb = absorb;
    tb_set_case(t, gname);
    const mla_geom *g = j->g;
    int32_t head_dim = absorb ? g->d_nope : g->d_v;
    j->out_name = absorb ? "q_lat" : "out";
    j->out_dim = absorb ? g->kv_rank : g->d_v;
    j->shape[0] = g->t_q, j->shape[1] = g->n_head, j->shape[2] = j->out_dim;
    j->n_in = (size_t)g->t_q * g->n_head * (absorb ? g->d_nope : g->kv_rank);
    j->n_w = (size_t)g->n_head * head_dim * g->kv_rank;
    j->n_out = (size_t)g->t_q * g->n_head * j->out_dim;
    j->in = tb_xmalloc(t, j->n_in * 4);
    j->w = tb_xmalloc(t, j->n_w * 4);
    j->ref = tb_xmalloc(t, j->n_out * 4);
    mla_fill_host_f32(j->in, j->n_in, MLA_FILL_REALISTIC, j->geo->seed, absorb ? "q_nope" : "o_lat",
                      1.0f);
    mla_fill_host_f32(j->w, j->n_w, MLA_FILL_REALISTIC, j->geo->seed, absorb ? "wk_b" : "wv_b",
                      absorb ? ABSORB_W_SCALE : DECOMPRESS_W_SCALE);
    if (absorb)
        oracle_absorb_q_f32(j->in, j->w, j->ref, g->t_q, g->n_head, g->d_nope, g->kv_rank);
    else
        oracle_decompress_v_f32(j->in, j->w, j->ref, g->t_q, g->n_head, g->d_v, g->kv_rank);
}

static void job_free(job *j) {
    free(j->in);
    free(j->w);
    free(j->ref);
}

/* Launches the kernel (split 0: the unsplit launcher) into bo (the caller allocates it freshly
 * poisoned); returns the launcher's status (no sync). */
static int launch(const job *j, const gpu_buf *bi, const gpu_buf *bw, int32_t split,
                  const gpu_buf *bo) {
    const mla_geom *g = j->g;
    if (j->absorb)
        return split ? memra_mla_absorb_q_split_f32(bi->ptr, bw->ptr, bo->ptr, g->t_q, g->n_head,
                                                    g->d_nope, g->kv_rank, split, NULL)
                     : memra_mla_absorb_q_f32(bi->ptr, bw->ptr, bo->ptr, g->t_q, g->n_head,
                                              g->d_nope, g->kv_rank, NULL);
    return split ? memra_mla_decompress_v_split_f32(bi->ptr, bw->ptr, bo->ptr, g->t_q, g->n_head,
                                                    g->d_v, g->kv_rank, split, NULL)
                 : memra_mla_decompress_v_f32(bi->ptr, bw->ptr, bo->ptr, g->t_q, g->n_head, g->d_v,
                                              g->kv_rank, NULL);
}

static const char *launcher_name(const job *j, int32_t split) {
    if (j->absorb) return split ? "memra_mla_absorb_q_split_f32" : "memra_mla_absorb_q_f32";
    return split ? "memra_mla_decompress_v_split_f32" : "memra_mla_decompress_v_f32";
}

/* The unsplit launcher (fatal unless it returns 0 and syncs clean); its output is checked fully
 * written and inside its guards, and returned (caller frees). */
static float *run_unsplit(tb *t, const job *j, const gpu_buf *bi, const gpu_buf *bw) {
    char what[96];
    snprintf(what, sizeof what, "the unsplit launcher (%s)", launcher_name(j, 0));
    gpu_buf bo = gpu_buf_alloc(j->n_out * 4);
    tb_launched(t, launch(j, bi, bw, 0, &bo), what);
    float *out = tb_output(t, &bo, j->out_name, "the unsplit launcher", 1);
    gpu_buf_free(&bo);
    return out;
}

/* THE comparison of this suite (the invariance checks, the door and the negative control):
 * got and ref byte-identical (class exact, bytes), through the testbed's comparator. */
static int same_bytes(tb *t, const job *j, const char *tensor, const float *got,
                      const char *got_name, const float *ref, const char *ref_name) {
    return tb_compare(t, tensor, ST_F32, 3, j->shape, got, got_name, ref, ref_name, MLA_TOL_EXACT,
                      NULL, 1);
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
    char test[128];
    snprintf(test, sizeof test, "%s__%s", gname, absorb ? "absorb" : "decompress");
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, test);
    job j;
    job_init(&t, &j, gname, absorb);
    gpu_buf bi = gpu_buf_from_host(j.in, j.n_in * 4), bw = gpu_buf_from_host(j.w, j.n_w * 4);
    float *unsplit = run_unsplit(&t, &j, &bi, &bw);
    int unsplit_ok = same_bytes(&t, &j, j.out_name, unsplit, "unsplit", j.ref, "oracle");

    int32_t splits[128];
    int n = splits_to_try(j.out_dim, splits, 128);
    int failures = 0;
    char tried[1024];
    int off = 0;
    for (int i = 0; i < n; i++) {
        int32_t s = splits[i];
        off += snprintf(tried + off, sizeof tried - (size_t)off, "%s%d", i ? "," : "", s);
        int failures_before = t.failures;
        gpu_buf bo = gpu_buf_alloc(j.n_out * 4);
        int rc = launch(&j, &bi, &bw, s, &bo);
        if (rc == 0) rc = gpu_sync();
        /* not fatal: the other splits still run */
        if (!tb_expectf(&t, rc == 0, "split %d: %s (or the sync after it) returned %d (%s)", s,
                        launcher_name(&j, s), rc, mla_status_message(rc))) {
            failures++;
            gpu_buf_free(&bo);
            continue;
        }
        char what[64], tensor[64], got_name[32];
        snprintf(what, sizeof what, "split %d", s);
        snprintf(tensor, sizeof tensor, "%s_split%d", j.out_name, s);
        snprintf(got_name, sizeof got_name, "split%d", s);
        float *got = tb_output(&t, &bo, j.out_name, what, 1); /* guards, nothing unwritten */
        gpu_buf_free(&bo);
        int eq_unsplit = same_bytes(&t, &j, tensor, got, got_name, unsplit, "unsplit");
        int eq_oracle = same_bytes(&t, &j, tensor, got, got_name, j.ref, "oracle");
        if (t.failures != failures_before) {
            failures++;
            if (eq_unsplit && eq_oracle) /* guards / poison only: the comparisons wrote none */
                tb_write_repro(&t, tensor, ST_F32, 3, j.shape, got, got_name, j.ref, "oracle");
        }
        free(got);
    }
    if (failures || !unsplit_ok)
        tb_failf(&t, 1, "%d of %d splits failed (tried %s)%s", failures, n, tried,
                 unsplit_ok ? "" : "; the unsplit launcher differs from the oracle");
    free(unsplit);
    gpu_buf_free(&bi);
    gpu_buf_free(&bw);
    job_free(&j);
}

#define DEFINE_TESTS(gname, preset, tq, seed)                                                      \
    Test(decode_split_gpu, gname##__absorb, .timeout = 300) { split_invariance(#gname, 1); }       \
    Test(decode_split_gpu, gname##__decompress, .timeout = 300) { split_invariance(#gname, 0); }
GEOMETRIES(DEFINE_TESTS)

/* The split list really contains what the policy picks at these geometries (CPU: runs
 * everywhere): at decode (64 blocks) the policy picks 16 for both out_dims (512 / 256). */
Test(decode_split_gpu, split_list_covers_the_policy) {
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, "split_list_covers_the_policy");
    int32_t s[128];
    int n = splits_to_try(512, s, 128);
    int has[5] = {0};
    const int32_t want[5] = {1, 2, 3, 7, 512};
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 5; k++) has[k] |= s[i] == want[k];
    for (int k = 0; k < 5; k++) tb_expectf(&t, has[k], "split %d missing from the list", want[k]);
    int has16 = 0, has4 = 0;
    for (int i = 0; i < n; i++) {
        has16 |= s[i] == mla_decode_split_policy(1, 64, 512);
        has4 |= s[i] == mla_decode_split_policy(1, 256, 512);
    }
    tb_expectf(&t, has16 && has4, "the policy's decode / verify splits are not in the list");
}

/* A failure sink that keeps the report instead of failing the test (the negative control's
 * comparison is meant to fail). */
typedef struct {
    int n;
    char msg[8192];
} captured;

static void capture_fail(void *user, int fatal, const char *msg) {
    captured *c = user;
    c->n++;
    snprintf(c->msg, sizeof c->msg, "%s", msg);
    if (fatal) cr_assert_fail("the negative control's probe failed fatally: %s", msg);
}

/* Negative control: perturb one input element by one ulp and run the split kernel: the same
 * comparison (same_bytes) must report a difference against the unperturbed unsplit output, in
 * the testbed's report: the case, and the worst element unravelled inside q_lat[0][5][*]. */
Test(decode_split_gpu, negative_control, .timeout = 120) {
    GPU_REQUIRE();
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, "negative_control");
    job j;
    job_init(&t, &j, "glm5_decode", 1);
    gpu_buf bi = gpu_buf_from_host(j.in, j.n_in * 4), bw = gpu_buf_from_host(j.w, j.n_w * 4);
    float *unsplit = run_unsplit(&t, &j, &bi, &bw);
    /* q_nope[0][5][17]: feeds every q_lat[0][5][*] (non-zero weights). */
    size_t e = (size_t)5 * j.g->d_nope + 17;
    mla_perturb_ulp_f32(j.in, e, 1);
    gpu_buf_upload(&bi, j.in, j.n_in * 4);
    int32_t split = mla_decode_split_policy(1, (long)j.g->t_q * j.g->n_head, j.out_dim);
    gpu_buf bo = gpu_buf_alloc(j.n_out * 4);
    char what[64];
    snprintf(what, sizeof what, "split %d (perturbed q_nope)", split);
    tb_launched(&t, launch(&j, &bi, &bw, split, &bo), what);
    float *got = tb_output(&t, &bo, j.out_name, what, 1);
    gpu_buf_free(&bo);
    /* the probe: this test's id and case, its failures captured */
    captured cap;
    memset(&cap, 0, sizeof cap);
    tb probe;
    tb_init(&probe, TARGET, SUITE, "negative_control", capture_fail, &cap);
    probe.no_repro = 1; /* its failure is the expected one */
    tb_set_case(&probe, t.case_name);
    int same =
        same_bytes(&probe, &j, "q_lat_perturbed", got, "perturbed_split", unsplit, "unsplit");
    if (same)
        tb_failf(&t, 1,
                 "one ulp on q_nope[0][5][17] left every byte of q_lat unchanged: the invariance "
                 "comparison cannot fail (vacuous)");
    tb_expectf(&t, cap.n == 1 && probe.failures == 1,
               "the failing comparison reported %d failure(s), want 1", cap.n);
    tb_expectf(&t, strstr(cap.msg, "differ") != NULL, "the report names no difference: %s",
               cap.msg);
    tb_expectf(&t, strstr(cap.msg, "case glm5_decode") && strstr(cap.msg, " [0][5]["),
               "the report does not name the case and the worst element inside q_lat[0][5][*]: "
               "%s",
               cap.msg);
    free(unsplit);
    free(got);
    gpu_buf_free(&bi);
    gpu_buf_free(&bw);
    job_free(&j);
}

/* The door with MEMRA_MLA_DECODE_SPLIT=1 engages (receipt) and gives the unsplit bytes; with
 * the flag unset (or "0") it does not engage. Criterion runs each test in its own process, so
 * setenv here never leaks into another test. */
static int door_call(const job *j, const gpu_buf *bi, const gpu_buf *bw, const gpu_buf *bo) {
    const mla_geom *g = j->g;
    return j->absorb ? mla_door_absorb_q_f32(bi->ptr, bw->ptr, bo->ptr, g->t_q, g->n_head,
                                             g->d_nope, g->kv_rank, NULL)
                     : mla_door_decompress_v_f32(bi->ptr, bw->ptr, bo->ptr, g->t_q, g->n_head,
                                                 g->d_v, g->kv_rank, NULL);
}

static void door(const char *test, int absorb, int flag_on) {
    GPU_REQUIRE();
    tb t;
    TB_CRITERION_INIT(&t, TARGET, SUITE, test);
    job j;
    job_init(&t, &j, "glm5_decode", absorb);
    const mla_geom *g = j.g;
    gpu_buf bi = gpu_buf_from_host(j.in, j.n_in * 4), bw = gpu_buf_from_host(j.w, j.n_w * 4);
    float *unsplit = run_unsplit(&t, &j, &bi, &bw);

    if (flag_on)
        setenv("MEMRA_MLA_DECODE_SPLIT", "1", 1);
    else
        unsetenv("MEMRA_MLA_DECODE_SPLIT");
    uint64_t before = mla_decode_split_dispatches();
    gpu_buf bo = gpu_buf_alloc(j.n_out * 4);
    tb_launched(&t, door_call(&j, &bi, &bw, &bo),
                absorb ? "mla_door_absorb_q_f32" : "mla_door_decompress_v_f32");
    uint64_t after = mla_decode_split_dispatches();
    if (flag_on)
        tb_expectf(&t, after == before + 1,
                   "MEMRA_MLA_DECODE_SPLIT=1 at %d blocks: the split door did not engage "
                   "(dispatches %llu -> %llu; policy says split %d)",
                   g->t_q * g->n_head, (unsigned long long)before, (unsigned long long)after,
                   mla_decode_split_for((long)g->t_q * g->n_head, j.out_dim));
    else
        tb_expectf(&t, after == before, "flag unset: the split door engaged (%llu -> %llu)",
                   (unsigned long long)before, (unsigned long long)after);
    float *got = tb_output(&t, &bo, j.out_name, "the door", 1); /* guards, nothing unwritten */
    same_bytes(&t, &j, j.out_name, got, flag_on ? "door_flag_on" : "door_flag_off", unsplit,
               "unsplit");

    if (!flag_on) { /* "0" is not "1": still no engagement */
        setenv("MEMRA_MLA_DECODE_SPLIT", "0", 1);
        int rc = door_call(&j, &bi, &bw, &bo);
        tb_expectf(&t, rc == 0 && gpu_sync() == 0 && mla_decode_split_dispatches() == before,
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

Test(decode_split_gpu, door_absorb_engaged, .timeout = 120) { door("door_absorb_engaged", 1, 1); }
Test(decode_split_gpu, door_absorb_off, .timeout = 120) { door("door_absorb_off", 1, 0); }
Test(decode_split_gpu, door_decompress_engaged, .timeout = 120) {
    door("door_decompress_engaged", 0, 1);
}
Test(decode_split_gpu, door_decompress_off, .timeout = 120) { door("door_decompress_off", 0, 0); }
