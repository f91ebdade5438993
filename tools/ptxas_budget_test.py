"""tools/ptxas_budget_test.py: tools/ptxas_budget.py on synthetic reports, on a planted kernel
compiled by ptxas, and the product kernels against the committed budget (the gate itself).

    ptxas_budget_test.py BUDGET PLANTED_REPORT KERNEL_REPORT...
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxas_budget as pb  # noqa: E402
from pycheck import main, test  # noqa: E402

BUDGET, PLANTED, REPORTS = sys.argv[1], sys.argv[2], sys.argv[3:]

REPORT = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90'
ptxas info    : Function properties for _Z1kPf
    16 bytes stack frame, 12 bytes spill stores, 28 bytes spill loads
ptxas info    : Used 64 registers, used 1 barriers, 144 bytes smem
ptxas info    : Compiling entry function '_Z1jPf' for 'sm_90'
ptxas info    : Function properties for _Z1jPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers
"""


def report_file(d, text):
    """A report file named as //kernels:ptxas_reports names them, in directory d."""
    rep = os.path.join(d, "a.cu.ptxas.txt")
    with open(rep, "w") as f:
        f.write(text)
    return rep


def budget_of(text):
    with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
        f.write(text)
    try:
        return pb.read_budget(f.name)
    finally:
        os.unlink(f.name)


@test
def a_report_is_parsed_per_function():
    got = pb.parse_report(REPORT)
    assert got["_Z1kPf"] == {"stack": 16, "spill_stores": 12, "spill_loads": 28,
                             "registers": 64}, got
    assert got["_Z1jPf"]["stack"] == 0 and got["_Z1jPf"]["registers"] == 32, got


@test
def internal_namespace_hashes_do_not_reach_the_key():
    # nvcc's internal-linkage namespace carries a hash that differs between checkouts
    a = pb.parse_report(REPORT.replace("_Z1jPf", "_ZN42_INTERNAL_63470f53_11_mla_attn_cu_982b71931jEPf"))
    b = pb.parse_report(REPORT.replace("_Z1jPf", "_ZN42_INTERNAL_fd4f1ad0_11_mla_attn_cu_982b71931jEPf"))
    assert a.keys() == b.keys(), (a.keys(), b.keys())
    assert "_ZN42_INTERNAL_xxxxxxxx_11_mla_attn_cu_982b71931jEPf" in a, a.keys()


@test
def equal_passes_and_under_budget_is_a_note():
    funcs = {("a.cu", k): v for k, v in pb.parse_report(REPORT).items()}
    fails, notes = pb.check(budget_of("a.cu\t_Z1kPf\t16\t12\t28\t64\tk\na.cu\t_Z1jPf\t0\t0\t0\n"),
                            funcs)
    assert not fails and not notes, (fails, notes)
    fails, notes = pb.check(budget_of("a.cu\t_Z1kPf\t32\t12\t28\ta.cu\na.cu\t_Z1jPf\t0\t0\t0\n"),
                            funcs)
    assert not fails and len(notes) == 1 and "stack 16 < 32" in notes[0], (fails, notes)


@test
def growth_fails_naming_the_function_and_both_numbers():
    funcs = {("a.cu", k): v for k, v in pb.parse_report(REPORT).items()}
    fails, _ = pb.check(budget_of("a.cu\t_Z1kPf\t16\t0\t28\na.cu\t_Z1jPf\t0\t0\t0\n"), funcs)
    assert len(fails) == 1, fails
    assert ("k(float*)" in fails[0] or "_Z1kPf" in fails[0]) and \
        "spill stores 12 B (budget 0 B)" in fails[0], fails


@test
def a_new_function_and_a_stale_line_fail():
    funcs = {("a.cu", k): v for k, v in pb.parse_report(REPORT).items()}
    fails, _ = pb.check(budget_of("a.cu\t_Z1kPf\t16\t12\t28\na.cu\t_Z4gonev\t0\t0\t0\n"), funcs)
    assert len(fails) == 2, fails
    # the names demangled by c++filt (binutils), or mangled where it is missing
    assert any("_Z1jPf" in f and "no budget line" in f for f in fails), fails
    assert any("_Z4gonev" in f and "names no compiled function" in f for f in fails), fails


@test
def update_then_check_round_trips():
    with tempfile.TemporaryDirectory() as d:
        rep = report_file(d, REPORT)
        tsv = os.path.join(d, "b.tsv")
        assert pb.main(["update", "--budget", tsv, rep]) == 0
        assert pb.main(["check", "--budget", tsv, rep]) == 0
        with open(tsv) as f:
            assert "a.cu\t_Z1kPf\t16\t12\t28\t64\t" in f.read()


@test
def a_report_without_ptxas_lines_is_an_error():
    with tempfile.TemporaryDirectory() as d:
        rep = report_file(d, "nvcc warning : something\n")
        try:
            pb.read_reports([rep])
        except SystemExit as e:
            assert "not built with -Xptxas -v" in str(e), e
        else:
            raise AssertionError("a report without ptxas lines was accepted")


@test
def the_planted_runtime_index_is_caught_from_a_real_ptxas_report():
    # ptxas_planted.cu: the same 12 values picked by constant indices and by a runtime index
    funcs = pb.read_reports([PLANTED])
    names = {k[1] for k in funcs}
    assert names == {"_Z14planted_staticPKfPfj", "_Z15planted_runtimePKfPfj"}, names
    zero = "".join(f"ptxas_planted.cu\t{n}\t0\t0\t0\n" for n in sorted(names))
    fails, _ = pb.check(budget_of(zero), funcs)
    assert len(fails) == 1 and "planted_runtime" in fails[0] and "stack" in fails[0], fails


@test
def the_kernels_keep_their_ptxas_budget():
    # the gate: every product kernel function's stack frame and spills within
    # tools/ptxas_budget.tsv (docs/perf-gate.md, "The ptxas budget")
    fails, notes = pb.check(pb.read_budget(BUDGET), pb.read_reports(REPORTS))
    for n in notes:
        print("note: " + n)
    assert not fails, "\n".join(fails)


if __name__ == "__main__":
    sys.exit(main("ptxas_budget_test"))
