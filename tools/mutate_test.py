"""tools/mutate_test.py: the mutation operators (tools/mutate.py) on a planted CUDA source, and
the report's arithmetic, on the CPU.

  - each operator yields the planted mutants with the expected replacement, and only in code:
    comments, strings, preprocessor lines and template argument lists are never mutated;
  - each mutant is attributed to its enclosing function (templates, __launch_bounds__, extern
    "C" entries and anonymous namespaces included);
  - ids are stable across runs; --sample with a seed is reproducible;
  - the report's score per file / kernel, equivalents leaving the score, CPU-only mutants not
    counted as survivors, killers and times listed;
  - the GPU checks run the mutated file's own fixture checks (not every suite whole), and a
    kill or timeout counts only when the same check passes on the unmutated bundle; with
    --prime-baselines the sanitizer checks' unmutated runs start with the run, once each.
"""
import argparse
import contextlib
import json
import shutil
import subprocess
import time
import os
import re
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutate as mu  # noqa: E402
from pycheck import main, test  # noqa: E402

PLANTED = r'''/* planted.cu: a < b in a comment must not mutate; __syncthreads(); fminf( */
#include <cuda_runtime.h>
#define LIMIT(a) ((a) < 4 ? (a) : 4)
namespace {
template <int HT>
static __global__ void __launch_bounds__(256, 2) walk(const float *x, float *y, int n) {
    __shared__ float s[256];
    const char *msg = "i < n";
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        for (long c = 0; c < n; c += 4 * (long)blockDim.x) y[c] = 0.0f;
        s[threadIdx.x] = __fmaf_rn(x[i], 2.0f, 1.0f);
        __syncthreads();
        float v = fminf(s[threadIdx.x], 3.0f);
        if (v != v) v = 0.0f; /* NaN special case */
        if (i < n) y[i] = __fadd_rn(v, -0.0f);
        if (i < n) y[i] = __uint_as_float(at_tf32(v));
    }
}
} // namespace

static __device__ __forceinline__ uint32_t at_tf32(float x) {
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}

static __device__ bool key_less(int a, int b, int ia, int ib) {
    return a < b || (a == b && ia < ib); /* ties: lower index first */
}

static __device__ int clampi(int a, int b) {
#if defined(MLA_BITE_PLANTED)
    return a < b ? a : b - 1; /* a test-only bite: never mutated */
#else
    return a <= b ? a : b;
#endif
}

static __device__ void shaken(unsigned *h) {
#if defined(MLA_SHAKE_PLANTED)
    if (threadIdx.x >= 32) __nanosleep(100); /* a test-only shake: never mutated */
#endif
    h[threadIdx.x] = 0u;
}

extern "C" int entry(const float *x, float *y, int n) {
    if (n < 1) return 40021;
    walk<32><<<1, 256>>>(x, y, n);
    return 0;
}
'''


def planted(tmp):
    os.makedirs(os.path.join(tmp, "kernels"))
    with open(os.path.join(tmp, "kernels", "planted.cu"), "w") as f:
        f.write(PLANTED)
    return mu.mutants_of(os.path.join(tmp, "kernels", "planted.cu"), "kernels/planted.cu")


def find(ms, op, before_sub, after_sub):
    return [m for m in ms if m["operator"] == op and before_sub in m["before"] and
            after_sub in m["after"]]


@test
def every_operator_yields_its_planted_mutant():
    with tempfile.TemporaryDirectory() as t:
        ms = planted(t)
    want = [
        ("REL", "i < n; i +=", "i <= n; i +="),
        ("OFF1", "i < n; i +=", "i < (n) - 1; i +="),
        ("OFF1", "i < n; i +=", "i < (n) + 1; i +="),
        ("FMA", "__fmaf_rn(x[i], 2.0f, 1.0f)", "__fadd_rn(__fmul_rn(x[i], 2.0f), 1.0f)"),
        ("RND", "__fadd_rn(v, -0.0f)", "__fadd_rz(v, -0.0f)"),
        ("SYNC", "__syncthreads();", ";"),
        ("MINMAX", "fminf(s[threadIdx.x], 3.0f)", "fmaxf(s[threadIdx.x], 3.0f)"),
        ("GUARD", "if (i < n) y[i]", "if (1) y[i]"),
        ("GUARD", "if (n < 1) return 40021;", "if (0) return 40021;"),
        ("STRIDE", "i += blockDim.x", "i += 2 * (blockDim.x)"),
        ("STRIDE", "c += 4 * (long)blockDim.x", "c += 2 * (4 * (long)blockDim.x)"),
        ("TIE", "ia < ib", "ia > ib"),
        ("NANZ", "if (v != v)", "if (0)"),
        ("NANZ", "__fadd_rn(v, -0.0f)", "__fadd_rn(v, 0.0f)"),
        ("CVT", "__uint_as_float(at_tf32(v))", "__uint_as_float(__float_as_uint(v))"),
    ]
    for op, before, after in want:
        assert find(ms, op, before, after), (op, before, after,
                                             [(m["operator"], m["after"]) for m in ms
                                              if m["operator"] == op])
    assert {m["operator"] for m in ms} == set(mu.OPERATORS)
    # a conversion helper's definition is not a call: only the call site mutates
    assert [m["after"].strip() for m in ms if m["operator"] == "CVT"] == [
        "if (i < n) y[i] = __uint_as_float(__float_as_uint(v));"], [
        m for m in ms if m["operator"] == "CVT"]


@test
def comments_strings_preprocessor_and_templates_are_never_mutated():
    with tempfile.TemporaryDirectory() as t:
        ms = planted(t)
    lines = PLANTED.splitlines()
    for m in ms:
        line = lines[m["line"] - 1]
        assert not line.lstrip().startswith(("/*", "#", "//")), m
        assert "const char *msg" not in line, m  # the string "i < n"
        assert "template <int HT>" not in line and "walk<32><<<" not in line, m
    # the comment after the NaN test is kept verbatim
    nanz = find(ms, "NANZ", "if (v != v)", "if (0)")[0]
    assert nanz["after"].endswith("/* NaN special case */"), nanz


@test
def test_only_bite_branches_are_never_mutated():
    with tempfile.TemporaryDirectory() as t:
        ms = planted(t)
    lines = PLANTED.splitlines()
    inside = [m for m in ms if "test-only bite" in lines[m["line"] - 1]
              or "test-only shake" in lines[m["line"] - 1]]
    assert inside == [], inside
    # the shake line would be mutated as code (REL >=), were it not a test-only branch
    assert find(ms, "REL", "if (threadIdx.x >= 32)", "if (threadIdx.x > 32)") == []
    # the product branch after #else is mutated as any code
    assert find(ms, "REL", "return a <= b ? a : b;", "return a < b ? a : b;"), \
        [m["after"] for m in ms if m["kernel"] == "clampi"]


@test
def mutants_are_attributed_to_their_function():
    with tempfile.TemporaryDirectory() as t:
        ms = planted(t)
    by = {}
    for m in ms:
        by.setdefault(m["kernel"], set()).add(m["operator"])
    assert "SYNC" in by["walk"] and "FMA" in by["walk"], by  # template + __launch_bounds__
    assert "TIE" in by["key_less"], by
    assert "GUARD" in by["entry"], by  # extern "C"
    assert "(file scope)" not in by, by


@test
def ids_are_stable_and_sampling_is_reproducible():
    with tempfile.TemporaryDirectory() as t:
        a, b = planted(t), mu.mutants_of(os.path.join(t, "kernels", "planted.cu"),
                                         "kernels/planted.cu")
    assert [m["id"] for m in a] == [m["id"] for m in b]
    assert len({m["id"] for m in a}) == len(a)

    class A:
        file = kernel = operator = None
        sample, seed = 5, 3
    s1, s2 = mu.select(a, A), mu.select(a, A)
    assert [m["id"] for m in s1] == [m["id"] for m in s2] and len(s1) == 5
    A.seed = 4
    assert [m["id"] for m in mu.select(a, A)] != [m["id"] for m in s1]


@test
def applying_a_mutant_changes_exactly_its_span():
    with tempfile.TemporaryDirectory() as t:
        ms = planted(t)
    m = find(ms, "SYNC", "__syncthreads();", ";")[0]
    out = mu.apply(m, PLANTED)
    assert out.count("__syncthreads();") == PLANTED.count("__syncthreads();") - 1
    assert len(out) == len(PLANTED) - len("__syncthreads();") + 1


@test
def the_report_scores_files_and_kernels():
    rows = [
        {"id": "a", "file": "k.cu", "kernel": "f", "line": 1, "operator": "REL", "before": "x",
         "after": "y", "status": "killed", "killer": "t1", "seconds": 1.5,
         "build_seconds": 10.0, "trace": [["t0", "survived", 3.0], ["t1", "killed", 1.5]]},
        {"id": "b", "file": "k.cu", "kernel": "f", "line": 2, "operator": "SYNC",
         "before": "__syncthreads();", "after": ";", "status": "survived",
         "build_seconds": 20.0, "trace": [["t0", "survived", 5.0], ["t1", "survived", 2.5]]},
        {"id": "c", "file": "k.cu", "kernel": "g", "line": 3, "operator": "MINMAX",
         "before": "m = fmaxf(a, a);", "after": "m = fminf(a, a);", "status": "survived"},
        {"id": "d", "file": "k.cu", "kernel": "g", "line": 4, "operator": "REL", "before": "p",
         "after": "q", "status": "killed (timeout)", "killer": "t2", "seconds": 120.0},
        {"id": "e", "file": "k.cu", "kernel": "g", "line": 5, "operator": "OFF1", "before": "z",
         "after": "w", "status": "did not compile"},
        {"id": "f", "file": "k.cu", "kernel": "h", "line": 6, "operator": "REL", "before": "r",
         "after": "s", "status": "not killed by the CPU checks"},
        {"id": "g", "file": "k.cu", "kernel": "h", "line": 7, "operator": "REL", "before": "u",
         "after": "v", "status": "undecided (deadline)", "detail": "stopped before racecheck"},
    ]
    eq = {("k.cu", "MINMAX", "m = fmaxf(a, a);"): "both arguments equal"}
    with tempfile.TemporaryDirectory() as t:
        md = mu.report(rows, eq, t, "meta line")
        data = json.load(open(os.path.join(t, "mutation-report.json")))
    assert len(data["results"]) == 7
    # file: 2 killed, 1 survivor (b), 1 equivalent (c): 2 / 3; the undecided one (g) is outside
    assert "| k.cu | 7 | 2 | 1 | 1 | 1 | 67% |" in md, md
    assert "| k.cu:g | 3 | 1 | 0 | 1 | 1 | 100% |" in md, md
    assert "`k.cu:2` (f) SYNC: `__syncthreads();` -> `;`" in md, md
    assert "m = fmaxf" not in md.split("## Survivors")[1].split("## Killed")[0], md
    assert "| d | k.cu:4 g | REL | t2 (timeout) | 120.0 |" in md, md
    assert "**CPU only:** 1 compiled mutants" in md, md
    assert "**Undecided:** 1 mutants" in md, md
    # where the time went: 30 s of builds and 12 s of checks over the 7 mutants
    assert "42 worker-seconds over 7 mutants, 6 per mutant." in md, md
    assert "| build (nvcc + relink) | 2 | 15.0 | 20.0 | - |" in md, md
    assert "| t0 | 2 | 4.0 | 5.0 | 0 |" in md, md
    assert "| t1 | 2 | 2.0 | 2.5 | 1 |" in md, md
    # no deadline: nothing listed as not started; the next pass names the survivor, the undecided
    assert "## Not started" not in md, md
    assert "\nb,g\n" in md.split("## The next pass")[1], md
    assert data["not_started"] == []
    # the deadline's unstarted mutants: listed by id, in the JSON, and in the next pass's --ids
    late = [{"id": "h", "file": "k.cu", "kernel": "h", "line": 8, "operator": "SYNC",
             "before": "__syncthreads();", "after": ";", "status": "not run (deadline)"}]
    with tempfile.TemporaryDirectory() as t:
        md = mu.report(rows, eq, t, "meta line", late)
        data = json.load(open(os.path.join(t, "mutation-report.json")))
    assert "- `h` k.cu:8 (h) SYNC: `__syncthreads();` -> `;`" in md.split("## Not started")[1], md
    assert "\nb,g,h\n" in md.split("## The next pass")[1], md
    assert [m["id"] for m in data["not_started"]] == ["h"] and len(data["results"]) == 7


@test
def the_sanitizer_stages_take_their_own_timeout():
    a = argparse.Namespace(timeout=150.0, sanitizer_timeout=None)
    assert mu.check_timeout(a, "racecheck kpool_identities_gpu_test") == 150.0
    a.sanitizer_timeout = 400.0
    assert mu.check_timeout(a, "racecheck kpool_identities_gpu_test") == 400.0
    assert mu.check_timeout(a, "memcheck select_shake_gpu_test") == 400.0
    # the value checks keep --timeout, a binary whose name holds the word included
    assert mu.check_timeout(a, "kpool_identities_gpu_test") == 150.0
    assert mu.check_timeout(a, "select_order_replay") == 150.0
    assert mu.check_timeout(a, "racecheck_like_test --filter=*") == 150.0


@test
def the_equivalent_ledger_is_parsed_and_checked():
    with tempfile.TemporaryDirectory() as t:
        p = os.path.join(t, "eq.txt")
        with open(p, "w") as f:
            f.write("# comment\nk.cu\tREL\tif (a < b)\tb is a multiple of 4 and a < b + 3\n")
        assert mu.read_equivalent(p) == {("k.cu", "REL", "if (a < b)"):
                                         "b is a multiple of 4 and a < b + 3"}
        with open(p, "w") as f:
            f.write("k.cu\tREL\tif (a < b)\n")  # no reason
        try:
            mu.read_equivalent(p)
            raise AssertionError("an entry without a reason was accepted")
        except SystemExit as e:
            assert "reason" in str(e)
        with open(p, "w") as f:  # the content form: one mutant by function and occurrence
            f.write("k.cu\tREL\tif (a < b)\tif (a <= b)\tf#2\tthe second one only\n")
        assert mu.read_equivalent(p) == {("mutant", "k.cu", "REL", "if (a < b)", "if (a <= b)",
                                          "f", 2): "the second one only"}
        with open(p, "w") as f:
            f.write("k.cu\tREL\tif (a < b)\tif (a <= b)\tf\tno occurrence\n")
        try:
            mu.read_equivalent(p)
            raise AssertionError("a content entry without its occurrence was accepted")
        except SystemExit as e:
            assert "function#occurrence" in str(e)
    assert isinstance(mu.read_equivalent(), dict)  # the committed ledger parses


@test
def a_content_entry_names_one_occurrence_and_survives_edits_above():
    # ninth session: 7 of the ledger's 9 id entries no longer named any mutant (an id hashes the
    # span's offsets, which any edit above the line moves); the content form does not move
    src = ("__global__ void f(int *p, int n) {\n"
           "    if (threadIdx.x < n) p[0] = 1;\n"
           "    if (threadIdx.x < n) p[1] = 2;\n"
           "}\n")
    with tempfile.TemporaryDirectory() as t:
        os.makedirs(os.path.join(t, "kernels"))
        path = os.path.join(t, "kernels", "k.cu")
        eq = {("mutant", "kernels/k.cu", "REL", "if (threadIdx.x < n) p[1] = 2;",
               "if (threadIdx.x <= n) p[1] = 2;", "f", 1): "the second line's"}
        for prefix in ("", "// an edit above\nstatic int g;\n"):
            with open(path, "w") as f:
                f.write(prefix + src)
            ms = [m for m in mu.mutants_of(path, "kernels/k.cu")
                  if m["operator"] == "REL" and "<=" in m["after"]]
            assert len(ms) == 2 and all(m["occurrence"] == 1 for m in ms), ms
            hit = [m for m in ms if mu.equivalent_key(m, eq)]
            assert [m["before"] for m in hit] == ["if (threadIdx.x < n) p[1] = 2;"], hit
        # two mutants of one line text in one function: occurrences 1 and 2 tell them apart
        with open(path, "w") as f:
            f.write(src.replace("p[1] = 2", "p[0] = 1"))
        ms = [m for m in mu.mutants_of(path, "kernels/k.cu")
              if m["operator"] == "REL" and "<=" in m["after"]]
        assert sorted(m["occurrence"] for m in ms) == [1, 2], ms


@test
def every_committed_ledger_entry_names_a_current_mutant():
    ms = mu.generate(mu.default_files())
    for key in mu.read_equivalent():
        if key[0] == "mutant":
            _, f, op, before, after, fn, occ = key
            hit = [m for m in ms if (m["file"], m["operator"], m["before"], m["after"],
                                     m["kernel"], m["occurrence"]) == (f, op, before, after, fn, occ)]
        elif key[0] == "id":
            hit = [m for m in ms if m["id"] == key[1]]
        else:
            hit = [m for m in ms if (m["file"], m["operator"], m["before"]) == key]
        assert hit, f"stale ledger entry (names no mutant of the current kernels): {key}"
        if key[0] == "mutant":
            assert len(hit) == 1, (key, hit)


def fake_bundle(t):
    os.makedirs(os.path.join(t, "bin"))
    os.makedirs(os.path.join(t, "tools"))
    for b in mu.GPU_BINARIES + ["select_order_fuzzer"]:
        open(os.path.join(t, "bin", b), "w").close()
    with open(os.path.join(t, "tools", "sanitize_set.tsv"), "w") as f:
        f.write("# binary\tfilter\n" + "".join(f"{b}\t*/san_*\n" for b in mu.GPU_BINARIES))


def planted_kernel_bundle(t, bins):
    """An unpacked bundle of one planted kernel (kernels/k.cu, `i < n` at offsets 31-32) with no
    links, and bin/ entries: an empty file for a name mapped to None, else a shell script of
    that body."""
    for d in ("relink/src/kernels", "relink/kobj/opt", "bin"):
        os.makedirs(os.path.join(t, d))
    with open(os.path.join(t, "relink", "src", "kernels", "k.cu"), "w") as f:
        f.write("int f(int i, int n) { return i < n; }\n")
    with open(os.path.join(t, "relink", "links.json"), "w") as f:
        json.dump({}, f)
    for b, body in bins.items():
        path = os.path.join(t, "bin", b)
        with open(path, "w") as f:
            if body is not None:
                f.write("#!/bin/sh\n" + body + "\n")
        if body is not None:
            os.chmod(path, 0o755)


def planted_mutant():
    """The REL mutant (`i < n` -> `i <= n`) of planted_kernel_bundle's kernel, a fresh dict."""
    return {"id": "x", "file": "kernels/k.cu", "line": 1, "operator": "REL", "kernel": "f",
            "start": 31, "end": 32, "replacement": "<=", "before": "", "after": ""}


def planted_run_bundle(t, probe, golden_body=None):
    """A planted bundle for cmd_run in t: gpu_probe printing `probe`, CPU checks that pass, the
    golden suites as shell bodies (golden_body; None: none), a COMMIT; returns the planted
    source's mutants, filed under kernels/k.cu."""
    bins = {"gpu_probe": f"echo '{probe}'", "contract_codes_test": "exit 0",
            "status_messages_test": "exit 0"}
    if golden_body is not None:
        bins.update({b: golden_body for b in mu.GOLDEN_SUITES})
    planted_kernel_bundle(t, bins)
    with open(os.path.join(t, "COMMIT"), "w") as f:
        f.write("0123456789ab\n")
    ms = mu.generate([os.path.join(t, "relink", "src", "kernels", "k.cu")])
    for m in ms:
        m["file"] = "kernels/k.cu"
    return ms


@test
def a_small_set_narrows_to_a_files_cases():
    n = mu.narrow_case_filter
    flt = "*/@(san_exact_alloc__*|declines_uncovered|q_4byte_aligned_wgmma__*|glm5_next__bf16)"
    # an arm-suffix alternative takes the token, one that holds it stays, the others go
    assert n(flt, "wgmma") == "*/@(san_exact_alloc__wgmma|q_4byte_aligned_wgmma__*)", n(flt, "wgmma")
    assert n("*/@(declines_uncovered|bad_arguments)", "wgmma") is None  # nothing left: not run
    assert n("tc_attn_gpu/san_*", "wgmma") == "tc_attn_gpu/san_*"  # a form it cannot read: as is
    # the sanitizer stages of a file with a token run the narrowed set, others the whole set
    with tempfile.TemporaryDirectory() as t:
        fake_bundle(t)
        with open(os.path.join(t, "tools", "sanitize_set.tsv"), "w") as f:
            f.write("tc_attn_gpu_test\t" + flt + "\n")
            f.write("attn_shake_gpu_test\t*/@(declines_uncovered)\n")
        old_which = mu.shutil.which
        mu.shutil.which = lambda name: "/usr/bin/compute-sanitizer"
        try:
            wg = mu.gpu_checks(t, "kernels/mla_attn_wg.cu", "attn_tc_wg")
            att = mu.gpu_checks(t, "kernels/mla_attn.cu")
            bf = mu.gpu_checks(t, "kernels/mla_attn.cu", "attn_tc_bf16")
        finally:
            mu.shutil.which = old_which
        race = {c[0]: c[1] for c in wg if c[0].startswith("racecheck ")}
        assert "--filter=*/@(san_exact_alloc__wgmma|q_4byte_aligned_wgmma__*)" in race[
            "racecheck tc_attn_gpu_test"], race
        race_bf = {c[0]: c[1] for c in bf if c[0].startswith("racecheck ")}
        # (q_4byte_aligned_wgmma__bf16 names no case: an alternative that matches nothing)
        assert "--filter=*/@(san_exact_alloc__bf16|q_4byte_aligned_wgmma__bf16|glm5_next__bf16)" in race_bf[
            "racecheck tc_attn_gpu_test"], race_bf
        assert "racecheck attn_shake_gpu_test" in race, race  # no token for it: its whole set
        full = {c[0]: c[1] for c in att if c[0].startswith("racecheck ")}
        assert f"--filter={flt}" in full["racecheck tc_attn_gpu_test"], full


@test
def a_golden_suites_small_set_narrows_to_the_kernels_stage():
    with tempfile.TemporaryDirectory() as t:
        fake_bundle(t)
        with open(os.path.join(t, "tools", "sanitize_set.tsv"), "w") as f:
            f.write("dense_gpu_goldens_test\t*/san_*__attn_absorbed_tc*\tattn_tc\n")
            f.write("dense_gpu_goldens_test\t*/@(san_*__absorb_q|san_*__attn_absorbed)\tprod\n")
            f.write("dense_gpu_goldens_test\t*/@(san_*__rope|bad_arguments_write_nothing)\tother\n")
            f.write("decode_split_gpu_test\t*/@(san_*|negative_control)\n")
        old_which = mu.shutil.which
        mu.shutil.which = lambda name: "/usr/bin/compute-sanitizer"
        try:
            aq = mu.gpu_checks(t, "kernels/mla_dense.cu", "absorb_q_reg_f32")
            helper = mu.gpu_checks(t, "kernels/mla_dense.cu", "dense_slab_plan")
        finally:
            mu.shutil.which = old_which
        mem = {c[0]: c[1] for c in aq if c[0].startswith("memcheck ")}
        # one set for the suite: the stage's san_ cases and the set's cases not per stage
        assert sorted(mem) == ["memcheck decode_split_gpu_test",
                               "memcheck dense_gpu_goldens_test.absorb_q"], sorted(mem)
        assert "--filter=*/@(san_*__absorb_q|bad_arguments_write_nothing)" in mem[
            "memcheck dense_gpu_goldens_test.absorb_q"], mem
        assert "--filter=*/@(san_*|negative_control)" in mem["memcheck decode_split_gpu_test"]
        # a shared helper (no stage of its own): the suite's parts, whole
        memh = sorted(c[0] for c in helper if c[0].startswith("memcheck dense"))
        assert memh == ["memcheck dense_gpu_goldens_test.attn_tc",
                        "memcheck dense_gpu_goldens_test.other",
                        "memcheck dense_gpu_goldens_test.prod"], memh


@test
def the_gpu_checks_run_the_mutated_files_own_fixture_checks():
    with tempfile.TemporaryDirectory() as t:
        fake_bundle(t)
        rest = [c[0] for c in mu.gpu_checks(t, "kernels/mla_kpool.cu")]
        f1, f2 = "*/*__@(index_append_ring|pool_keys)", "*/*__@(score|select)"
        # the killers first: the stage's fixture checks, then the file's binaries whole, then
        # the small sets of the file's other sanitizer binaries (those run whole hold theirs)
        # (the shake build's binary first among them: a second, where a missing barrier of the
        # sampled select loses its race)
        assert rest[:8] == [f"dense_gpu_goldens_test --filter={f1}",
                            f"kpool_gpu_goldens_test --filter={f1}",
                            f"dense_gpu_goldens_test --filter={f2}",
                            f"kpool_gpu_goldens_test --filter={f2}",
                            "select_shake_gpu_test", "kpool_identities_gpu_test",
                            "decode_chain_gpu_test", "kpool_gpu_goldens_test --filter=*/san_*"], rest
        assert rest[8:10] == ["select_order_replay", "fuzz_select_order 10 s"], rest
        assert "dense_gpu_goldens_test" not in rest  # never a golden suite whole
        assert not any(x.startswith("tc_attn_gpu_test") for x in rest), rest  # not the file's
        # a kernel of a listed stage: that stage's checks only; a shared helper: the file's
        sel = [c[0] for c in mu.gpu_checks(t, "kernels/mla_kpool.cu", "kpool_select_radix_f32")]
        assert "kpool_gpu_goldens_test --filter=*/*__@(select)" in sel, sel
        assr = [c[0] for c in mu.gpu_checks(t, "kernels/mla_dense.cu", "dense_slab_plan")]
        assert [x for x in assr if x.startswith("dense_gpu_goldens_test --filter=*/*__")] == [
            "dense_gpu_goldens_test --filter=*/*__@(" + g + ")"
            for g in ("rope|split_latent", "append_latent|absorb_q", "decompress_v")], assr
        # the attention file: the product checks, then the tensor-core doors' checks
        att = [c[0] for c in mu.gpu_checks(t, "kernels/mla_attn.cu")]
        assert att[:6] == [
            "dense_gpu_goldens_test --filter=*/*__@(attn_absorbed|attn_gathered)",
            "kpool_gpu_goldens_test --filter=*/*__@(attn_absorbed|attn_gathered)",
            "dense_gpu_goldens_test --filter=*/*__@(attn_absorbed_tctf32|attn_gathered_tctf32)",
            "kpool_gpu_goldens_test --filter=*/*__@(attn_absorbed_tctf32|attn_gathered_tctf32)",
            "dense_gpu_goldens_test --filter=*/*__@(attn_absorbed_tc3xtf32|attn_gathered_tc3xtf32)",
            "kpool_gpu_goldens_test --filter=*/*__@(attn_absorbed_tc3xtf32|attn_gathered_tc3xtf32)",
        ], att
        # the wgmma arm's file: tc_attn_gpu_test's wgmma cases only (FILE_CASE_TOKENS), its
        # other binary whole; no other file's check narrowed
        wg = [c for c in mu.gpu_checks(t, "kernels/mla_attn_wg.cu", "attn_tc_wg")]
        wgl = [c[0] for c in wg]
        assert "tc_attn_gpu_test --filter=*/*wgmma*" in wgl and "tc_attn_gpu_test" not in wgl, wgl
        assert "attn_shake_gpu_test" in wgl, wgl
        argv = next(c[1] for c in wg if c[0].startswith("tc_attn_gpu_test"))
        assert argv[:2] == ["bin/tc_attn_gpu_test", "--filter=*/*wgmma*"], argv
        assert "--fail-fast" in argv, argv
        assert "tc_attn_gpu_test" in [c[0] for c in mu.gpu_checks(t, "kernels/mla_attn.cu")]
        # one kernel of a file (KERNEL_CASE_TOKENS): the bf16 door's kernel runs only the bf16
        # cases; the file's other functions, and a name that merely starts alike elsewhere, whole
        bf = [c[0] for c in mu.gpu_checks(t, "kernels/mla_attn.cu", "attn_tc_bf16")]
        assert "tc_attn_gpu_test --filter=*/*bf16*" in bf and "tc_attn_gpu_test" not in bf, bf
        assert "attn_shake_gpu_test" in bf and "decode_split_gpu_test" in bf, bf
        for k in ("attn_combine_f32", "attn_walk_f32", None):
            assert "tc_attn_gpu_test" in [c[0] for c in mu.gpu_checks(t, "kernels/mla_attn.cu", k)]
        assert mu.case_tokens("kernels/mla_attn_wg.cu", "attn_tc_bf16") == {
            "tc_attn_gpu_test": "wgmma"}
        for f, prefix, toks in mu.KERNEL_CASE_TOKENS:  # names a function and a binary of its file
            assert any(m["kernel"] == prefix for m in mu.generate([f])), (f, prefix)
            assert set(toks) <= set(mu.FILE_BINARIES[f]), (f, toks)
        for f, toks in mu.FILE_CASE_TOKENS.items():  # a token narrows a binary of the file
            assert set(toks) <= set(mu.FILE_BINARIES[f]), (f, toks)
        # a shared helper of four stages (kpool_pool_visible): two filters of two stages (one of
        # four ran past the timeout unmutated)
        helper = [c[0] for c in mu.gpu_checks(t, "kernels/mla_kpool.cu", "kpool_pool_visible")]
        assert "kpool_gpu_goldens_test --filter=*/*__@(index_append_ring|pool_keys)" in helper
        assert "kpool_gpu_goldens_test --filter=*/*__@(score|select)" in helper, helper
        # fuzzers and sanitizer binaries of the mutated file only: select_order cannot see an
        # attention mutant, and kpool_identities_gpu_test never runs attention
        assert not any("select_order" in x for x in att), att
        os.makedirs(os.path.join(t, "fake"), exist_ok=True)
        old_which = mu.shutil.which
        mu.shutil.which = lambda name: "/usr/bin/compute-sanitizer"
        try:
            att_san = [c[0] for c in mu.gpu_checks(t, "kernels/mla_attn.cu")]
            kp_san = [c[0] for c in mu.gpu_checks(t, "kernels/mla_kpool.cu")]
        finally:
            mu.shutil.which = old_which
        assert "racecheck tc_attn_gpu_test" in att_san, att_san
        assert "racecheck kpool_identities_gpu_test" not in att_san, att_san
        assert "racecheck kpool_identities_gpu_test" in kp_san, kp_san
        assert "racecheck tc_attn_gpu_test" not in kp_san, kp_san
        # every Criterion check stops at its first failing case (a kill needs no more), the
        # fuzzers and their replays take libFuzzer's flags
        mu.shutil.which = lambda name: "/usr/bin/compute-sanitizer"
        try:
            full = mu.gpu_checks(t, "kernels/mla_kpool.cu")
        finally:
            mu.shutil.which = old_which
        for label, argv, _ in full:
            crit = any(x.startswith("bin/") and not x.endswith("_fuzzer") for x in argv)
            assert ("--fail-fast" in argv) == crit, (label, argv)
        for f in mu.FILE_CHECKS:
            assert f in mu.FILE_FUZZERS and f in mu.FILE_SANITIZE, f
        for m in mu.generate(mu.default_files()):  # every mutant gets checks of its own file
            assert set(mu.stage_checks(m["file"], m["kernel"])) <= set(mu.FILE_CHECKS[m["file"]])
        # a file the table does not know: every binary whole
        whole = [c[0] for c in mu.gpu_checks(t, "kernels/new.cu")]
        assert whole[:len(mu.GPU_BINARIES)] == mu.GPU_BINARIES, whole
        assert not any("--filter=*/san_*" in x for x in whole), whole  # held by the wholes
        for f in mu.FILE_CHECKS:  # the table covers every kernel source
            assert os.path.exists(os.path.join(mu.ROOT, f)), f
        mutated = sorted({m["file"] for m in mu.generate(mu.default_files())})
        assert sorted(mu.FILE_CHECKS) == mutated, mutated


@test
def a_case_set_in_parts_gives_a_check_per_part():
    # tools/sanitize_set.tsv's third column splits a binary's small set (run-gpu-tier.sh runs a
    # step per part): the mutants' small-set and sanitizer checks follow the same parts, each
    # labelled with its case set's key, so a part's baseline is its own argv
    with tempfile.TemporaryDirectory() as t:
        fake_bundle(t)
        with open(os.path.join(t, "tools", "sanitize_set.tsv"), "a") as f:
            f.write("# a part-split binary replaces its one-row set\n")
        rows = [r for r in open(os.path.join(t, "tools", "sanitize_set.tsv"))
                if not r.startswith("dense_gpu_goldens_test\t")]
        rows += ["dense_gpu_goldens_test\t*/san_*__tc*\ttc\n",
                 "dense_gpu_goldens_test\t*/@(san_*__[!t]*|bad_arguments)\trest\n"]
        with open(os.path.join(t, "tools", "sanitize_set.tsv"), "w") as f:
            f.writelines(rows)
        old_which = mu.shutil.which
        mu.shutil.which = lambda name: "/usr/bin/compute-sanitizer"
        try:
            checks = mu.gpu_checks(t, "kernels/mla_dense.cu")
        finally:
            mu.shutil.which = old_which
        labels = [c[0] for c in checks]
        for tool in mu.SANITIZER_TOOLS:
            mine = [c for c in checks if c[0].startswith(f"{tool} dense_gpu_goldens_test")]
            assert [c[0] for c in mine] == [f"{tool} dense_gpu_goldens_test.tc",
                                            f"{tool} dense_gpu_goldens_test.rest"], labels
            assert [c[1][c[1].index("bin/dense_gpu_goldens_test") + 1] for c in mine] == [
                "--filter=*/san_*__tc*", "--filter=*/@(san_*__[!t]*|bad_arguments)"], mine
        # each part's small set as a value check too (the golden suites never run whole)
        assert "dense_gpu_goldens_test --filter=*/san_*__tc*" in labels, labels
        assert "dense_gpu_goldens_test --filter=*/@(san_*__[!t]*|bad_arguments)" in labels, labels
        assert "racecheck decode_split_gpu_test" in labels, labels  # a one-row set: its name
        a = argparse.Namespace(timeout=100, sanitizer_timeout=400)
        assert mu.check_timeout(a, "racecheck dense_gpu_goldens_test.tc") == 400


@test
def a_workers_copy_sees_the_small_sets_and_the_sanitizer_checks():
    # the checks are planned in each worker's directory: it must see tools/sanitize_set.tsv
    # (fifth session, call 1: it did not, and no small set or sanitizer check ran)
    with tempfile.TemporaryDirectory() as t:
        b = os.path.join(t, "b")
        os.makedirs(b)
        fake_bundle(b)
        os.makedirs(os.path.join(b, "relink"))
        w = mu.worker_dir(b, os.path.join(t, "w0"))
        old_which = mu.shutil.which
        mu.shutil.which = lambda name: "/usr/bin/compute-sanitizer"
        try:
            labels = [c[0] for c in mu.gpu_checks(w, "kernels/mla_kpool.cu")]
        finally:
            mu.shutil.which = old_which
        assert "kpool_gpu_goldens_test --filter=*/san_*" in labels, labels
        assert "memcheck kpool_identities_gpu_test" in labels, labels


@test
def resume_keeps_an_earlier_passs_kills_and_reruns_the_rest():
    ms = [{"id": i, "file": "k.cu", "line": n, "before": "a", "after": "b"}
          for n, i in enumerate(["m1", "m2", "m3", "m4"])]
    rows = [dict(ms[0], status="killed", killer="t"), dict(ms[1], status="survived"),
            dict(ms[2], status="not run (deadline)"), dict(ms[3], status="did not compile")]
    with tempfile.TemporaryDirectory() as t:
        rep = os.path.join(t, "r.json")
        with open(rep, "w") as f:
            json.dump({"meta": "x, bundle commit abc123", "results": rows}, f)
        a = argparse.Namespace(resume=rep)
        got = mu.resume_verdicts(a, ms)
        assert sorted(got) == ["m1", "m4"] and got["m1"]["resumed"], got
        assert a.resume_commit == "abc123"
        changed = [dict(ms[0], before="other")] + ms[1:]
        try:
            mu.resume_verdicts(a, changed)
            raise AssertionError("a changed source was resumed")
        except SystemExit as e:
            assert "not the same change" in str(e)
        assert mu.resume_verdicts(argparse.Namespace(resume=None), ms) == {}


@test
def a_kill_counts_only_when_the_unmutated_bundle_passes_the_check():
    calls = []

    def fake_run_check(bdir, argv, extra, timeout, env):
        calls.append((bdir, argv[0]))
        return {"bin/ok": ("survived", 1.0), "bin/slow": ("timeout", 150.0),
                "bin/broken": ("killed", 2.0)}[argv[0]]

    saved = mu.run_check
    mu.run_check = fake_run_check
    try:
        class A:
            timeout = 150
        u = mu.Unmutated("/pristine", A(), {})
        assert u.verdict("ok", ["bin/ok"], {}) == ("survived", 1.0)
        assert u.verdict("ok", ["bin/ok"], {}) == ("survived", 1.0)
        assert calls == [("/pristine", "bin/ok")], calls  # once per check, in the bundle
        assert u.verdict("slow", ["bin/slow"], {})[0] == "timeout"
        assert u.verdict("broken", ["bin/broken"], {})[0] == "killed"
    finally:
        mu.run_check = saved


@test
def primed_baselines_start_each_check_once_and_a_kill_waits_on_it():
    # fourteenth session, call 6: a mutant's racecheck failure at 159 s started its unmutated run
    # then, which the hard stop cut (twenty-fifth session, call 2: the same for a value check,
    # tc_attn_gpu_test, when only the sanitizer checks were primed); primed at the start, every
    # baseline the warm-up does not give is there when the kill is
    started, release = [], threading.Event()

    def fake_run_check(bdir, argv, extra, timeout, env):
        started.append((bdir, tuple(argv)))
        release.wait(5)
        return ("survived", 1.0)

    saved = mu.run_check
    mu.run_check = fake_run_check
    try:
        a = argparse.Namespace(timeout=150, sanitizer_timeout=240, stop_at=0)
        u = mu.Unmutated("/pristine", a, {})
        u.note_whole("g_suite", "survived")  # the warm-up ran the golden suite whole
        rc = ["compute-sanitizer", "--tool", "racecheck", "bin/x", "--filter=*/san_*"]
        gf = ["bin/g_suite", "--filter=*/*__@(attn)"]
        checks = [("x", ["bin/x"], {}), ("racecheck x", rc, {}), ("racecheck x", rc, {}),
                  ("memcheck y", ["compute-sanitizer", "bin/y"], {}), ("g --filter", gf, {})]
        assert mu.prime_baselines(u, checks) == ["memcheck y", "racecheck x", "x"]
        for _ in range(100):  # the three runs start without any mutant asking
            if len(started) == 3:
                break
            time.sleep(0.02)
        assert set(started) == {("/pristine", ("compute-sanitizer", "bin/y")),
                                ("/pristine", tuple(rc)), ("/pristine", ("bin/x",))}, started
        # the value check is primed too; the golden suite's filter is the warm-up's answer
        assert u.known("racecheck x") and u.known("x") and not u.known("g --filter")
        assert u.known("g --filter", gf, {}, "killed")
        got = []
        t = threading.Thread(target=lambda: got.append(u.verdict("racecheck x", rc, {}, "killed")))
        t.start()
        time.sleep(0.1)
        assert not got  # the kill waits on the primed run ...
        release.set()
        t.join(5)
        assert got == [("survived", 1.0)] and len(started) == 3, (got, started)  # ... not a new one
    finally:
        release.set()
        mu.run_check = saved


@test
def the_unmutated_run_keeps_to_the_hard_stop_and_the_warm_up_spares_it():
    # seventh session, call 1: a kill shortly before the hard stop started its check's unmutated
    # run with the whole --timeout (420 s), the mutants killed by the same check waited on it,
    # and the command's limit ended the run with 9 of 14 unreported
    limits = []

    def fake_run_check(bdir, argv, extra, timeout, env):
        limits.append(timeout)
        return ("timeout", timeout)

    saved = mu.run_check
    mu.run_check = fake_run_check
    try:
        a = argparse.Namespace(timeout=420, stop_at=time.time() + 2)
        u = mu.Unmutated("/pristine", a, {})
        got = u.verdict("memcheck x", ["compute-sanitizer", "bin/x"], {}, "killed")
        assert got[0] == "cut" and limits[0] <= 2.5, (got, limits)  # bounded, and no verdict
        assert u.verdict("memcheck x", ["compute-sanitizer", "bin/x"], {}, "killed")[0] == "cut"
        assert len(limits) == 1, limits  # once per check
        # far from the stop: the whole timeout, a real verdict
        a.stop_at = time.time() + 10000
        assert u.verdict("slow", ["bin/slow"], {}, "timeout") == ("timeout", 420)
        # the warm-up's whole pass of a golden suite answers a failure under its filters, with
        # no run; a timeout (which needs the same load) or another suite still runs
        u.note_whole("dense_gpu_goldens_test", "survived")
        u.note_whole("kpool_gpu_goldens_test", "killed")
        flt = ["bin/dense_gpu_goldens_test", "--filter=*/*__@(absorb_q)", "--jobs=2"]
        n = len(limits)
        assert u.verdict("d absorb", flt, {}, "killed") == ("survived", 0.0)
        assert u.known("d absorb", flt, {}, "killed") and not u.known("d absorb")
        assert len(limits) == n, limits
        u.verdict("d absorb t", flt, {}, "timeout")
        kp = ["bin/kpool_gpu_goldens_test", "--filter=*/*__@(select)", "--jobs=2"]
        u.verdict("k select", kp, {}, "killed")
        assert len(limits) == n + 2, limits
        assert not u.by_warm_up(["bin/dense_gpu_goldens_test", "--jobs=2"], {}, "killed")
        assert not u.by_warm_up(flt, {"ASAN_OPTIONS": "x"}, "killed")

        # a run that raises leaves no waiter blocked: both get an error verdict
        def raising(bdir, argv, extra, timeout, env):
            time.sleep(0.2)
            raise OSError("planted")

        mu.run_check = raising
        got = []

        def ask():
            try:
                got.append(u.verdict("r", ["bin/r"], {}, "killed")[0])
            except OSError:
                got.append("raised")

        th = threading.Thread(target=ask)
        th.start()
        time.sleep(0.05)
        ask()
        th.join(5)
        assert not th.is_alive() and sorted(got) == ["harness error", "raised"], got
    finally:
        mu.run_check = saved

    # in run_one: a kill whose unmutated run is cut leaves the mutant undecided, not killed
    class Cut:
        def known(self, label, argv=None, extra=None, verdict=None):
            return True

        def verdict(self, label, argv, extra, mutant_verdict=None):
            return ("cut", 1.0)

    with tempfile.TemporaryDirectory() as t:
        planted_kernel_bundle(t, {"contract_codes_test": None, "status_messages_test": None})
        m = planted_mutant()
        a = argparse.Namespace(timeout=150, stop_at=time.time() + 100, bundle_abs=t, libdir=t)
        mu.run_check = lambda bdir, argv, extra, timeout, env: ("killed", 0.1)
        try:
            r = mu.run_one(m, t, a, {}, False, Cut())
        finally:
            mu.run_check = saved
        assert r["status"] == "undecided (deadline)", r
        assert "unmutated run was cut" in r["detail"], r


@test
def the_hard_stop_cuts_a_running_check_and_leaves_the_mutant_undecided():
    # fifth session, call 3: checks started just before the hard stop ran their whole timeout
    # past it, and the command's limit ended the run with nothing reported
    limits = []

    def fake_run_check(bdir, argv, extra, timeout, env):
        limits.append(timeout)
        return ("survived", 0.1) if len(limits) == 1 else ("timeout", timeout)

    with tempfile.TemporaryDirectory() as t:
        planted_kernel_bundle(t, {"contract_codes_test": None, "status_messages_test": None})
        m = planted_mutant()
        a = argparse.Namespace(timeout=150, stop_at=time.time() + 3, bundle_abs=t, libdir=t)
        saved = mu.run_check
        mu.run_check = fake_run_check
        try:
            r = mu.run_one(m, t, a, {}, False)
        finally:
            mu.run_check = saved
        assert r["status"] == "undecided (deadline)", r
        assert "cut at the hard stop in status_messages_test" in r["detail"], r
        assert limits[0] == 150 or limits[0] <= 3.5, limits  # bounded by the stop
        assert limits[1] <= 3.5, limits
        # the worker's source is restored
        assert "i < n" in open(os.path.join(t, "relink", "src", "kernels", "k.cu")).read()

        # a kill that ends just past the stop: it counts when no new unmutated run is needed
        # (no baseline on CPU, or the check's baseline already run), else it is undecided
        def slow_kill(bdir, argv, extra, timeout, env):
            time.sleep(0.3)
            return ("killed", 0.3)

        class Seen:
            def __init__(self, seen):
                self.seen = seen

            def known(self, label, argv=None, extra=None, verdict=None):
                return self.seen

            def verdict(self, label, argv, extra, mutant_verdict=None):
                return ("survived", 1.0)

        mu.run_check = slow_kill
        try:
            got = []
            for unm in (None, Seen(True), Seen(False)):
                a.stop_at = time.time() + 0.1
                got.append(mu.run_one(m, t, a, {}, False, unm)["status"])
        finally:
            mu.run_check = saved
        assert got == ["killed", "killed", "undecided (deadline)"], got


def run_check_beside(n, result):
    """A fake run_check that runs 0.2 s with n more checks counted by CheckLoad meanwhile, then
    returns `result`."""
    def fake(bdir, argv, extra, timeout, env):
        with contextlib.ExitStack() as others:
            for _ in range(n):
                others.enter_context(mu.CheckLoad())
            time.sleep(0.2)
        return result
    return fake


@test
def a_timeout_under_a_heavier_load_than_the_unmutated_run_is_undecided():
    # twenty-fourth session, call 4: 15 mutants' tc_attn_gpu_test timed out at 150 s beside each
    # other, the unmutated run passed alone after them, and all 15 were counted as hangs
    crowded_timeout = run_check_beside(15, ("timeout", 150.0))

    class Base:
        def __init__(self, load):
            self.load = load

        def known(self, label, argv=None, extra=None, verdict=None):
            return True

        def verdict(self, label, argv, extra, mutant_verdict=None):
            return ("survived", 20.0)

        def load_of(self, label):
            return self.load

    class Unloaded(Base):  # an Unmutated without loads (the earlier fakes): the old rule
        load_of = None

    with tempfile.TemporaryDirectory() as t:
        planted_kernel_bundle(t, {"contract_codes_test": None, "status_messages_test": None})
        m = planted_mutant()
        a = argparse.Namespace(timeout=150, stop_at=time.time() + 1000, bundle_abs=t, libdir=t)
        saved = mu.run_check
        mu.run_check = crowded_timeout
        try:
            alone = mu.run_one(m, t, a, {}, False, Base(1.0))
            crowded = mu.run_one(m, t, a, {}, False, Base(15.0))
            old_rule = mu.run_one(m, t, a, {}, False, Unloaded(None))
        finally:
            mu.run_check = saved
        assert alone["status"] == "undecided (timeout under load)", alone
        assert "beside 1.0" in alone["detail"], alone
        assert crowded["status"] == "killed (timeout)", crowded
        assert old_rule["status"] == "killed (timeout)", old_rule
        assert mu.CheckLoad.running == 0, mu.CheckLoad.running


@test
def a_check_that_times_out_unmutated_leaves_its_mutants_undecided_and_says_what_decides_them():
    # thirtieth session, call 4: beside 16 workers the unmutated tc_attn_gpu_test outlasted its
    # 150 s; the 16 mutants it would decide read "check fails unmutated", with no advice
    crowded_timeout = run_check_beside(1, ("timeout", 150.0))

    class TimedOut:
        def known(self, label, argv=None, extra=None, verdict=None):
            return True

        def verdict(self, label, argv, extra, mutant_verdict=None):
            return ("timeout", 151.0)

        def load_of(self, label):
            return 16.0

    class Failing(TimedOut):
        def verdict(self, label, argv, extra, mutant_verdict=None):
            return ("killed", 12.0)

    with tempfile.TemporaryDirectory() as t:
        planted_kernel_bundle(t, {"contract_codes_test": None, "status_messages_test": None})
        m = planted_mutant()
        a = argparse.Namespace(timeout=150, stop_at=time.time() + 1000, bundle_abs=t, libdir=t)
        saved = mu.run_check
        mu.run_check = crowded_timeout
        try:
            slow = mu.run_one(m, t, a, {}, False, TimedOut())
            failing = mu.run_one(m, t, a, {}, False, Failing())
        finally:
            mu.run_check = saved
        assert slow["status"] == "undecided (check times out unmutated)", slow
        assert "timed out in 151 s beside 16.0" in slow["detail"], slow
        assert "fewer --jobs or a longer --timeout" in slow["detail"], slow
        assert failing["status"] == "undecided (check fails unmutated)", failing
        md = mu.report([slow, failing], set(), os.path.join(t, "rep"), "meta line")
        assert "**The unmutated run timed out** in " + slow["killer"] + ":" in md, md
        assert md.count("**The unmutated run timed out**") == 1, md
        md = mu.report([failing], set(), os.path.join(t, "rep2"), "meta line")
        assert "The unmutated run timed out" not in md, md


@test
def the_unmutated_run_keeps_the_load_it_ran_under():
    saved = mu.run_check
    mu.run_check = run_check_beside(3, ("survived", 0.2))
    try:
        u = mu.Unmutated("/pristine", argparse.Namespace(timeout=150), {})
        assert u.load_of("c") is None
        assert u.verdict("c", ["bin/c"], {}) == ("survived", 0.2)
        assert 3.0 <= u.load_of("c") <= 4.0, u.load_of("c")
    finally:
        mu.run_check = saved


@test
def the_hard_stop_cuts_a_running_build():
    # seventh session, call 4: the 9 k-pool mutants reached their fuzzers' nvcc compile together
    # near the hard stop; the build was not bounded, and the command's limit ended the run with
    # none reported
    with tempfile.TemporaryDirectory() as t:
        planted_kernel_bundle(t, {"contract_codes_test": "exit 0", "status_messages_test": "exit 0",
                                  "x_fuzzer": None})
        marker = os.path.join(t, "build-outlived")
        with open(os.path.join(t, "relink", "relink.py"), "w") as f:
            f.write("import os, subprocess, sys, time\n"
                    "if 'bin/x_fuzzer' in sys.argv[sys.argv.index('--only') + 1]:\n"
                    "    subprocess.Popen(['sh', '-c', 'sleep 3; touch %s'])\n"
                    "    time.sleep(30)\n" % marker)
        with open(os.path.join(t, "relink", "links.json"), "w") as f:
            json.dump({"bin/contract_codes_test": [], "bin/x_fuzzer": []}, f)
        m = planted_mutant()
        saved_cpu = mu.CPU_CHECKS
        # a CPU check list with a fuzzer after the first check: its build is the second phase
        mu.CPU_CHECKS = saved_cpu + [("x_replay", ["bin/x_fuzzer", "-runs=0"], {})]
        try:
            a = argparse.Namespace(timeout=150, stop_at=time.time() + 2, bundle_abs=t, libdir=t,
                                   t0=time.time())
            t1 = time.time()
            r = mu.run_one(m, t, a, dict(os.environ), False)
        finally:
            mu.CPU_CHECKS = saved_cpu
        assert time.time() - t1 < 10, time.time() - t1
        assert r["status"] == "undecided (deadline)", r
        assert "cut at the hard stop in the fuzzers' build" in r["detail"], r
        time.sleep(3.5)
        assert not os.path.exists(marker), "the cut build's child outlived it"
        # the first phase too
        a.stop_at = time.time() + 1
        with open(os.path.join(t, "relink", "relink.py"), "w") as f:
            f.write("import time\ntime.sleep(30)\n")
        r = mu.run_one(m, t, a, dict(os.environ), False)
        assert r["status"] == "undecided (deadline)", r
        assert "test binaries' build" in r["detail"], r


@test
def a_step_that_never_ends_is_reported_undecided_past_the_stop():
    # the last resort (seventh session, calls 1 and 4: the command's limit ended two runs with
    # most mutants unreported): STOP_MARGIN past the hard stop the run reports what is still out
    with tempfile.TemporaryDirectory() as t:
        ms = planted_run_bundle(t, "device: planted", "exit 0")
        out = os.path.join(t, "report")
        a = argparse.Namespace(bundle=t, libdir=t, jobs=len(ms), timeout=30, deadline=1, grace=1,
                               out=out, resume=None, sample=0, seed=1, also=None)
        release = threading.Event()
        saved, saved_margin = mu.run_one, mu.STOP_MARGIN
        hung_id = ms[0]["id"]

        def fake_run_one(m, *rest):
            if m["id"] == hung_id:  # a step that does not end before the test releases it
                release.wait(60)
            return dict(m, status="killed", killer="k", seconds=0.1)

        mu.run_one = fake_run_one
        mu.STOP_MARGIN = 1
        try:
            t0 = time.time()
            mu.cmd_run(a, ms)
            took = time.time() - t0
        finally:
            release.set()
            mu.run_one, mu.STOP_MARGIN = saved, saved_margin
        assert took < 15, took
        assert a.hung == [hung_id], a.hung
        with open(os.path.join(out, "mutation-report.json")) as f:
            rows = {r["id"]: r for r in json.load(f)["results"]}
        assert rows[hung_id]["status"] == "undecided (deadline)", rows[hung_id]
        assert "past the hard stop" in rows[hung_id]["detail"], rows[hung_id]
        assert all(r["status"] == "killed" for i, r in rows.items() if i != hung_id), rows


@test
def a_kill_keeps_its_failing_lines_and_criterion_case_timeouts_are_timeouts():
    # twenty-fifth session, call 3: a rounding-mode mutant of the bf16 door was "killed" by
    # racecheck of tc_attn_gpu_test after 380 s under load, and nothing said why. Now the failing
    # lines go with the mutant, and a check whose only failures are Criterion's own case
    # timeouts is a timeout (the load rule decides it), not a kill.
    crit_fail = ("[----] t.c:5: Assertion Failed\n[----]   \n[----]   values differ\n"
                 "[FAIL] s::bad: (0.00s)\n[====] Synthesis: Tested: 2 | Passing: 1 | "
                 "Failing: 1 | Crashing: 0 ")
    crit_timeout = ("[FAIL] tc_attn_gpu::cache_4byte_aligned__absorbed: Timed out. (300.00s)\n"
                    "[====] Synthesis: Tested: 22 | Passing: 21 | Failing: 1 | Crashing: 0 ")
    race = ("========= Error: Race reported between Write access at 0x1f0 in k\n"
            "========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)")
    ex, only_to = mu.failure_excerpt(crit_fail)
    assert not only_to and ex.splitlines() == ["[----] t.c:5: Assertion Failed",
                                               "[FAIL] s::bad: (0.00s)"], ex
    ex, only_to = mu.failure_excerpt(crit_timeout)
    assert only_to and ex.startswith("[FAIL] tc_attn_gpu::cache_4byte"), ex
    ex, only_to = mu.failure_excerpt(crit_timeout + "\n" + race)  # a race beside it: a kill
    assert not only_to and "RACECHECK SUMMARY: 2 hazards" in ex, ex
    ex, only_to = mu.failure_excerpt("\x1b[0;31m[FAIL] s::x: Timed out. (1.00s)\x1b[0m")
    assert only_to and ex == "[FAIL] s::x: Timed out. (1.00s)", ex  # colours removed
    assert mu.failure_excerpt("========= ERROR SUMMARY: 0 errors\n") == ("", False)
    with tempfile.TemporaryDirectory() as t:
        said = os.path.join(t, "said.txt")
        bins = {"contract_codes_test": "exit 0", "status_messages_test": f"cat {said}; exit 1"}
        planted_kernel_bundle(t, bins)
        m = planted_mutant()
        a = argparse.Namespace(timeout=30, stop_at=0, bundle_abs=t, libdir=t,
                               checks="^status_")
        for body, status in ((crit_fail, "killed"), (crit_timeout, "killed (timeout)")):
            with open(said, "w") as f:
                f.write(body + "\n")
            r = mu.run_one(m, t, a, {}, False)
            assert r["status"] == status, r
            assert r["failures"]["status_messages_test"].startswith(body.splitlines()[0]), r
        # a check that fails with no failing line says so
        with open(os.path.join(t, "bin", "status_messages_test"), "w") as f:
            f.write("#!/bin/sh\nexit 3\n")
        r = mu.run_one(m, t, a, {}, False)
        assert r["failures"]["status_messages_test"] == "exit 3, no failure line in its output", r
        # the report's kill table shows the killer's first failing line
        r = dict(planted_mutant(), status="killed", killer="status_messages_test", seconds=1.0,
                 failures={"status_messages_test": "[FAIL] s::bad | x: (0.00s)\nmore"})
        md = mu.report([r], set(), os.path.join(t, "rep"), "meta line")
        assert "| 1.0 | `[FAIL] s::bad \\| x: (0.00s)` |" in md, md
        # a killer's label with extglob alternatives keeps the table's cells (pipes escaped)
        r.update(killer="g --filter=*/*__@(a|b)", failures={"g --filter=*/*__@(a|b)": "[FAIL] x"})
        md = mu.report([r], set(), os.path.join(t, "rep"), "meta line")
        row = [l for l in md.splitlines() if l.startswith("| x |")][0]
        assert "g --filter=*/*__@(a\\|b)" in row and len(re.split(r"(?<!\\)\|", row)) == 8, row


@test
def same_code_finds_the_mutants_nvcc_compiles_to_the_same_object():
    # twenty-fifth session: two attn_tc_bf16 mutants that survived every GPU check were the same
    # machine code (a loop one m-tile past its register arrays, removed by nvcc). same-code
    # compiles each mutant with the product flags and compares its object's sections with the
    # unmutated one's, built at the same path (nvcc's module id changes .strtab only).
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    assert os.path.exists(nvcc), "no nvcc: the kernels' build needs it too"
    with tempfile.TemporaryDirectory() as t:
        os.makedirs(os.path.join(t, "kernels"))
        with open(os.path.join(t, "kernels", "k.cu"), "w") as f:
            f.write("static int unused_f(int i, int n) { return i < n; }\n"
                    "__global__ void k_f32(float *o, int n) { o[0] = n < 4 ? 1.0f : 2.0f; }\n"
                    "int host_f(int i, int n) { return i < n; }\n")
        saved = mu.ROOT
        mu.ROOT = t
        out = os.path.join(t, "same.json")
        try:
            assert mu.main(["same-code", "--file", "k.cu", "--operator", "REL", "--jobs", "2",
                            "--nvcc", nvcc, "--out", out]) == 0
        finally:
            mu.ROOT = saved
        rows = {(r["kernel"], r["replacement"]): r for r in json.load(open(out))}
        got = {k: r["same_code"] for k, r in rows.items()}
        # the unused static function's mutants: removed with it, the same object
        assert {v for k, v in got.items() if k[0] == "unused_f"} == {"same machine code"}, got
        # the kernel's: a different cubin inside the fatbinary; the host function's: host code
        assert {v for k, v in got.items() if k[0] == "k_f32"} == {"differs"}, got
        assert all(".nv_fatbin" in r["detail"] for k, r in rows.items() if k[0] == "k_f32"), rows
        assert {v for k, v in got.items() if k[0] == "host_f"} == {"differs"}, got
        assert all(".text" in r["detail"] for k, r in rows.items() if k[0] == "host_f"), rows
    # the flags are the product build's (tools/cuda.bzl)
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "cuda.bzl")) as f:
        bzl = f.read()
    gencode = re.search(r'CUDA_GENCODE = "([^"]+)"', bzl).group(1)
    body = re.search(r'NVCC_FLAGS = " "\.join\(\[(.*?)\]\)', bzl, re.S).group(1)
    body = body.replace('"$${CUDA_GENCODE_OVERRIDE:-" + CUDA_GENCODE + "}"', f'"{gencode}"')
    flags = " ".join(re.findall(r'"([^"]*)"', body)).split()
    assert flags == mu.PRODUCT_NVCC_FLAGS, (flags, mu.PRODUCT_NVCC_FLAGS)
    # the sm_90a sources and their gencode (kernels/BUILD, tools/cuda.bzl)
    arch = re.search(r'CUDA_GENCODE_ARCH = "([^"]+)"', bzl).group(1)
    assert arch == mu.PRODUCT_ARCH_GENCODE, (arch, mu.PRODUCT_ARCH_GENCODE)
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernels",
                           "BUILD")) as f:
        kb = f.read()
    srcs = re.findall(r'"([^"]+)"', re.search(r"MLA_KERNEL_ARCH_SRCS = \[(.*?)\]", kb, re.S).group(1))
    assert tuple("kernels/" + x for x in srcs) == mu.PRODUCT_ARCH_SRCS, (srcs, mu.PRODUCT_ARCH_SRCS)
    assert mu.product_nvcc_flags("kernels/mla_attn_wg.cu") == [
        arch if f.startswith("-gencode") else f for f in mu.PRODUCT_NVCC_FLAGS]
    assert mu.product_nvcc_flags("kernels/mla_attn.cu") == mu.PRODUCT_NVCC_FLAGS


@test
def checks_restricts_the_steps_and_the_report_says_so():
    ran = []

    def fake_run_check(bdir, argv, extra, timeout, env):
        ran.append(argv[0])
        return ("survived", 0.1)

    with tempfile.TemporaryDirectory() as t:
        planted_kernel_bundle(t, {"contract_codes_test": None, "status_messages_test": None})
        m = planted_mutant()
        a = argparse.Namespace(timeout=150, stop_at=0, bundle_abs=t, libdir=t,
                               checks="^status_")
        saved = mu.run_check
        mu.run_check = fake_run_check
        try:
            r = mu.run_one(m, t, a, {}, False)
            a.checks = None
            mu.run_one(m, t, a, {}, False)
        finally:
            mu.run_check = saved
        assert ran == ["bin/status_messages_test", "bin/contract_codes_test",
                       "bin/status_messages_test"], ran
        assert [x[0] for x in r["trace"]] == ["status_messages_test"], r
        # the report's first line names the restriction
        b = os.path.join(t, "b")
        ms = planted_run_bundle(b, "no device: planted")[:1]
        out = os.path.join(t, "report")
        a = argparse.Namespace(bundle=b, libdir=b, jobs=1, timeout=30, deadline=0, grace=0,
                               out=out, resume=None, sample=0, seed=1, also=None,
                               checks="^status_")
        mu.cmd_run(a, ms)
        with open(os.path.join(out, "mutation-report.md")) as f:
            text = f.read()
        assert "restricted to those matching /^status_/" in text, text[:600]


@test
def checks_without_a_golden_suite_skip_the_warm_up():
    # ninth session, call 2: two mutants restricted to tc_attn / kpool_identities waited 143 s
    # on the golden suites' warm-up, past the 100 s --deadline, and neither started
    with tempfile.TemporaryDirectory() as t:
        ms = planted_run_bundle(t, "device: planted", "sleep 5")[:1]
        out = os.path.join(t, "report")
        a = argparse.Namespace(bundle=t, libdir=t, jobs=1, timeout=30, deadline=3, grace=20,
                               out=out, resume=None, sample=0, seed=1, also=None,
                               checks="^status_")
        t0 = time.time()
        mu.cmd_run(a, ms)
        took = time.time() - t0
        with open(os.path.join(out, "mutation-report.json")) as f:
            rows = json.load(f)["results"]
        with open(os.path.join(out, "mutation-report.md")) as f:
            text = f.read()
        assert "no warm-up" in text and "oracle cache warmed" not in text, text[:600]
        assert took < 5 and rows and rows[0]["status"] != "not run (deadline)", (took, rows)


@test
def the_deadline_counts_the_warm_up():
    # sixth session, call 2: --deadline / --grace counted from after the 70 s warm-up, so the
    # hard stop fell past the command's limit and the running mutants' verdicts were lost. Here
    # the (planted) warm-up alone outlasts the deadline: no mutant may start.
    with tempfile.TemporaryDirectory() as t:
        ms = planted_run_bundle(t, "device: planted", "sleep 2")
        assert ms, "the planted source has no mutant"
        out = os.path.join(t, "report")
        a = argparse.Namespace(bundle=t, libdir=t, jobs=1, timeout=30, deadline=1, grace=1,
                               out=out, resume=None, sample=0, seed=1, also=None)
        t0 = time.time()
        mu.cmd_run(a, ms)
        assert time.time() - t0 < 20
        assert abs(a.stop_at - t0 - 2) < 1.0, a.stop_at - t0  # deadline + grace from the start
        with open(os.path.join(out, "mutation-report.md")) as f:
            text = f.read()
        assert f"{len(ms)} of them not started by the 1 s deadline, so 0 ran" in text, text[:600]


@test
def the_no_device_reason_is_said_once():
    # the nightly's CPU run (sixth session) printed "no device: no device: cudaGetDeviceCount ..."
    assert mu.no_device("no device: cudaGetDeviceCount returned 35\n") == \
        "no device: cudaGetDeviceCount returned 35"
    assert mu.no_device("gpu_probe: odd answer") == "no device: gpu_probe: odd answer"


@test
def a_timed_out_check_leaves_no_process_and_a_busy_binary_is_restored():
    # H200 2026-12-01: a timed-out Criterion binary's forked workers outlived it, held the
    # binary (the restore failed with ETXTBSY, ending the run) and the GPU
    with tempfile.TemporaryDirectory() as t:
        os.makedirs(os.path.join(t, "bin"))
        prog = os.path.join(t, "bin", "forks")
        marker = os.path.join(t, "child-alive")
        with open(prog, "w") as f:
            f.write("#!/bin/sh\n( sleep 3; touch %s ) &\nsleep 30\n" % marker)
        os.chmod(prog, 0o755)
        v, dt = mu.run_check(t, ["bin/forks"], {}, 1, dict(os.environ))
        assert v == "timeout" and dt < 10, (v, dt)
        time.sleep(4)
        assert not os.path.exists(marker), "the forked child outlived the timed-out check"
        # a check that exits while a child still runs: the child goes too
        with open(prog, "w") as f:
            f.write("#!/bin/sh\n( sleep 2; touch %s ) > /dev/null 2>&1 &\nexit 0\n" % marker)
        assert mu.run_check(t, ["bin/forks"], {}, 10, dict(os.environ))[0] == "survived"
        time.sleep(3)
        assert not os.path.exists(marker), "a finished check's straggler outlived it"
        # restoring over a binary that is running (open for writing would fail: ETXTBSY)
        busy = os.path.join(t, "bin", "busy")
        shutil.copy2("/bin/sleep", busy)
        p = subprocess.Popen([busy, "5"])
        try:
            pristine = os.path.join(t, "pristine")
            with open(pristine, "w") as f:
                f.write("pristine")
            mu.restore_file(pristine, busy)
            assert open(busy).read() == "pristine"
        finally:
            p.kill()
            p.wait()


@test
def ids_and_also_pick_named_mutants():
    ms = mu.generate(mu.default_files())
    ids = [ms[3]["id"], ms[7]["id"]]

    class A:
        file = kernel = operator = None
        sample, seed, ids_, also = 0, 1, None, None

    a = A()
    a.ids = ",".join(ids)
    a.also = None
    assert [m["id"] for m in mu.select(ms, a)] == ids
    a.ids, a.sample, a.seed, a.also = None, 5, 9, ids[0]
    got = mu.select(ms, a)
    assert ids[0] in [m["id"] for m in got] and len(got) in (5, 6), len(got)
    a.also = None
    base = mu.select(ms, a)
    assert len(base) == 5 and all(m in got for m in base)  # the sample is unchanged by --also
    # an "id:" ledger key makes exactly that survivor equivalent, not its line's other mutants
    with tempfile.TemporaryDirectory() as t:
        led = os.path.join(t, "eq.txt")
        with open(led, "w") as f:
            f.write(f"{ms[3]['file']}\t{ms[3]['operator']}\tid:{ms[3]['id']}\tplanted reason\n")
        eq = mu.read_equivalent(led)
        twin = dict(ms[3], id="0000000000")
        rows = [dict(ms[3], status="survived"), dict(twin, status="survived")]
        tot = mu.totals(rows, eq)
        assert tot["equivalent"] == 1 and tot["survived"] == 1, tot



@test
def a_selection_leaves_out_the_ledgers_equivalents_before_it_samples():
    with tempfile.TemporaryDirectory() as t:
        ms = planted(t)
        m0 = ms[0]
        led = os.path.join(t, "eq.txt")
        with open(led, "w") as f:  # the line form: every mutant of m0's operator on m0's line
            f.write(f"{m0['file']}\t{m0['operator']}\t{m0['before']}\tplanted reason\n")
        eq = mu.read_equivalent(led)
        n_eq = sum(mu.equivalent_key(m, eq) is not None for m in ms)
        assert n_eq >= 1
        saved = mu.EQUIV_FILE
        mu.EQUIV_FILE = led
        try:
            class A:
                file = kernel = operator = ids = also = None
                sample, seed, with_equivalents = 0, 1, False
            a = A()
            got = mu.select(ms, a)
            assert len(got) == len(ms) - n_eq and a.ledger_left_out == n_eq, (len(got), n_eq)
            assert all(mu.equivalent_key(m, eq) is None for m in got)
            a.sample = len(ms) - n_eq  # a sample of all the others: none of the ledger's
            assert len(mu.select(ms, a)) == len(ms) - n_eq
            a.sample, a.with_equivalents = 0, True
            assert len(mu.select(ms, a)) == len(ms) and a.ledger_left_out == 0
            a.with_equivalents, a.ids = False, m0["id"]  # a named mutant is always kept
            assert [m["id"] for m in mu.select(ms, a)] == [m0["id"]]
        finally:
            mu.EQUIV_FILE = saved


@test
def static_asserts_and_bounds_before_a_top_level_comma_are_never_mutated():
    src = ("template <int K> __global__ void k(float *y, int n) {\n"
           "    static_assert(K >= 0 && K <= 8, \"arm\");\n"
           "    if (K < 4, n < 2) y[0] = 1.0f;\n"
           "}\n")
    with tempfile.TemporaryDirectory() as t:
        os.makedirs(os.path.join(t, "kernels"))
        path = os.path.join(t, "kernels", "sa.cu")
        with open(path, "w") as f:
            f.write(src)
        ms = mu.mutants_of(path, "kernels/sa.cu")
    assert not [m for m in ms if "static_assert" in m["before"]], ms
    assert find(ms, "OFF1", "n < 2)", "n < (2) - 1)")  # the bound after the comma is kept
    # `K < 4, n < 2`: the first bound would be `(4, n) - 1`, which is not the bound
    assert not [m for m in ms if m["operator"] == "OFF1" and "(4, n" in m["after"]], \
        [m["after"] for m in ms if m["operator"] == "OFF1"]


if __name__ == "__main__":
    sys.exit(main("mutate_test"))
