#!/usr/bin/env python3
"""tools/mutate.py: generated mutants of the CUDA kernel sources (docs/mutation.md).

  mutate.py list [--file F] [--kernel K] [--operator OP] [--sample N --seed S] [-o mutants.json]
      generate the mutants of kernels/*.cu (or --file), print a count per file and operator
  mutate.py show ID [...]             the mutant's line before and after
  mutate.py apply ID OUT.cu           write the mutated source
  mutate.py run [--bundle DIR] [--sample N --seed S] [--jobs N] [--timeout S] [--out DIR] ...
      each mutant through the relink-only loop (tools/relink.py) of an unpacked bundle: compile
      (a mutant that does not compile is reported and leaves the score), relink, then the checks
      that apply in order until one fails (the killer): the CPU checks (contract codes, the
      status table), then, with a GPU, the GPU test binaries on their fixture cases, the fuzz
      corpus replays, and racecheck on the survivors. A check past --timeout kills the mutant
      ("timeout") when the unmutated run of the same check passed within it under about the same
      load (CheckLoad), else the mutant is undecided. Writes OUT/mutation-report.md and .json:
      the score per file and per kernel, each survivor as its line and operator, each killed
      mutant's killer and seconds.

The operators (how kernel code goes wrong; each mutant changes one place):
  REL     relational flip: < <=, > >=, == !=
  OFF1    +-1 on a bound, offset or loop limit: `a < b` -> `a < b - 1` / `a < b + 1`
  FMA     fmaf / __fmaf_rn(a, b, c) -> multiply then add (two roundings)
  RND     a rounding intrinsic swapped: __fadd_rn -> __fadd_rz, __fmul_rn -> __fmul_rz, ...
  SYNC    a __syncthreads() / __syncwarp(...) removed
  MINMAX  fminf <-> fmaxf, min( <-> max(
  GUARD   a bounds guard dropped: `if (COND)` -> `if (1)` on a guard whose body stores or returns
  STRIDE  a loop stride or index term changed: `+= S` -> `+= 2 * (S)`
  TIE     a tie-break flipped: < <-> > on a line that orders equal keys by index ("tie")
  NANZ    a NaN or +-0 special case removed: `x != x` -> `0`, isnan(x) -> 0, -0.0f -> 0.0f,
          copysignf(a, b) -> (a)
  CVT     a round-to-nearest TF32 operand conversion dropped: at_tf32*(x) -> __float_as_uint(x),
          the raw f32 bits, which the mma reads truncated to TF32
Comments, strings and preprocessor lines are never mutated. Equivalent survivors (no behaviour
change) are listed with a reason in tools/mutation_equivalent.txt (key: file, operator, the
original line's text) and leave the score.
"""
import argparse
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sanitize_report  # noqa: E402  (tools/sanitize_set.tsv's reader and the table cells)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPERATORS = ["REL", "OFF1", "FMA", "RND", "SYNC", "MINMAX", "GUARD", "STRIDE", "TIE", "NANZ",
             "CVT"]
EQUIV_FILE = os.path.join(ROOT, "tools", "mutation_equivalent.txt")
# On a GPU host ROOT is the bundle (tools/mutate.py beside run-gpu-tier.sh): the kernel sources
# are relink/src/kernels (docs/relink.md).


# ------------------------------------------------------------------ source masking ------------
TEST_ONLY_IF = re.compile(r"^\s*#\s*(if|elif)\s+defined\s*\(\s*MLA_(BITE|SLOW|SHAKE)_")


def code_mask(text):
    """text with comments, string / char literals and preprocessor lines blanked (same length,
    newlines kept), so operators match code only; so is the code of the test-only variants
    (`#if defined(MLA_BITE_...)` / `MLA_SLOW_...` / `MLA_SHAKE_...` branches, up to their
    #else / #elif / #endif), which the product build never compiles."""
    text = _blank_test_only(text)
    out = list(text)
    i, n = 0, len(text)
    line_start = True

    def blank(a, b):  # spaces over [a, b), newlines kept
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if line_start and text[i:].lstrip(" \t").startswith("#"):
            j = text.find("\n", i)
            j = n if j < 0 else j
            while j > 0 and text[j - 1] == "\\" and j < n:  # continued directive
                j2 = text.find("\n", j + 1)
                j = n if j2 < 0 else j2
            blank(i, j)
            i = j
            continue
        if text.startswith("//", i) or text.startswith("/*", i):
            line = text.startswith("//", i)
            j = text.find("\n" if line else "*/", i + 2)
            j = n if j < 0 else (j if line else j + 2)
            blank(i, j)
            i = j
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            blank(i, j + 1)
            i = j + 1
            continue
        line_start = c == "\n" or (line_start and c in " \t")
        i += 1
    # static_assert(...): checked by the compiler, never code; a mutant there either does not
    # compile or is the same machine code (twenty-sixth session, same-code over attn_tc_f32)
    masked = "".join(out)
    for m in re.finditer(r"\bstatic_assert\s*\(", masked):
        depth, j = 0, m.end() - 1
        while j < n:
            depth += masked[j] == "("
            depth -= masked[j] == ")"
            j += 1
            if depth == 0:
                break
        blank(m.start(), j)
    return "".join(out)


def _blank_test_only(text):
    """text with the lines of the test-only #if branches blanked (see code_mask)."""
    lines = text.split("\n")
    stack = []  # per open #if: is the current branch test-only?
    for k, line in enumerate(lines):
        d = re.match(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b", line)
        if d:
            kw = d.group(1)
            if kw in ("if", "ifdef", "ifndef"):
                stack.append(bool(TEST_ONLY_IF.match(line)))
            elif kw == "elif" and stack:
                stack[-1] = bool(TEST_ONLY_IF.match(line))
            elif kw == "else" and stack:
                stack[-1] = False
            elif kw == "endif" and stack:
                stack.pop()
            continue
        if any(stack):
            lines[k] = " " * len(line)
    return "\n".join(lines)


def functions(mask):
    """[(name, start, end)] of the function bodies at file scope (descending into namespace and
    extern "C" blocks): the name is the identifier before the last parenthesised group of the
    header (so template heads and __launch_bounds__(...) are skipped)."""
    res = []

    def scan(lo, hi):
        depth, i, head_start = 0, lo, lo
        while i < hi:
            c = mask[i]
            if c == "{" and depth == 0:
                head = mask[head_start:i]
                close = i
                depth2, e = 0, i
                while e < hi:
                    if mask[e] == "{":
                        depth2 += 1
                    elif mask[e] == "}":
                        depth2 -= 1
                        if depth2 == 0:
                            break
                    e += 1
                h = head.strip()
                if re.match(r"^(namespace\b|extern\s*$)", h) or h.endswith('extern "C"') or \
                        re.fullmatch(r"namespace\s*\w*", h):
                    scan(close + 1, e)
                else:
                    r = head.rfind(")")
                    name = None
                    if r >= 0 and "=" not in head[r:]:
                        d, k = 0, r
                        while k >= 0:
                            if head[k] == ")":
                                d += 1
                            elif head[k] == "(":
                                d -= 1
                                if d == 0:
                                    break
                            k -= 1
                        mm = re.search(r"([A-Za-z_]\w*)\s*$", head[:k])
                        if mm and mm.group(1) not in ("if", "for", "while", "switch"):
                            name = mm.group(1)
                    if name:
                        res.append((name, head_start, e + 1))
                i = e + 1
                head_start = i
                continue
            if c in ";}" and depth == 0:
                head_start = i + 1
            i += 1

    scan(0, len(mask))
    return res


# ------------------------------------------------------------------ operators -----------------
def _args3(mask, start):
    """(end, [a, b, c]) of a call's three top-level arguments from the '(' at start."""
    depth, parts, cur = 0, [], start + 1
    for j in range(start, len(mask)):
        ch = mask[j]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                parts.append((cur, j))
                return j + 1, parts
        elif ch == "," and depth == 1:
            parts.append((cur, j))
            cur = j + 1
    return None, None


def _top_level_comma(expr):
    """Whether expr has a comma outside its parentheses and brackets."""
    depth = 0
    for ch in expr:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            return True
    return False


def gen_ops(text, mask):
    """Yield (op, start, end, replacement) over the masked text."""
    # REL: comparison operators (not <<, >>, ->, <=> templates are rare in kernels)
    # (clang-format puts spaces around binary operators; a `<` / `>` without them is a template)
    for m in re.finditer(r"(?<=\s)(<=|>=|==|!=|<|>)(?=\s)", mask):
        op = m.group(1)
        a, b = m.start(), m.end()
        line = mask[mask.rfind("\n", 0, a) + 1:mask.find("\n", a)]
        if op in ("<", ">") and re.search(r"\btemplate\b|<<<|>>>|static_cast|"
                                          r"reinterpret_cast|numeric_limits|std::", line):
            continue
        if op in ("<", ">") and re.search(r"[A-Za-z_]\w*\s*$", mask[:a]) and \
                re.match(r"\s*\d+\s*,|\s*[A-Z]\w*\s*[,>]", mask[b:]):
            continue  # template arguments: f<32, ...>
        flip = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}[op]
        yield "REL", a, b, flip
        if op in ("<", "<="):  # OFF1 on the right-hand bound, up to ; ) && ||
            rest = mask[b:]
            mm = re.match(r"\s*([^;&|?:]+?)\s*(?=[;)]|&&|\|\|)", rest)
            if mm and mm.group(1).strip() and "(" not in mm.group(1) or \
                    (mm and mm.group(1).count("(") == mm.group(1).count(")")):
                if mm and not _top_level_comma(mm.group(1)):
                    # (a bound ending at a top-level comma, as in static_assert(x <= 8, "..."),
                    # would take the comma into its parentheses and never compile)
                    s, e = b + mm.start(1), b + mm.end(1)
                    expr = text[s:e]
                    yield "OFF1", s, e, f"({expr}) - 1" if op == "<" else f"({expr}) + 1"
                    yield "OFF1", s, e, f"({expr}) + 1" if op == "<" else f"({expr}) - 1"
        if "tie" in line.lower() or "tie" in text[mask.rfind("\n", 0, a) + 1:
                                                   mask.find("\n", a)].lower():
            if op in ("<", ">"):
                yield "TIE", a, b, ">" if op == "<" else "<"
    # FMA
    for m in re.finditer(r"\b(__fmaf_rn|fmaf|__fma_rn|fma)\s*\(", mask):
        end, parts = _args3(mask, m.end() - 1)
        if not parts or len(parts) != 3:
            continue
        a, b, c = (text[s:e].strip() for s, e in parts)
        if m.group(1).startswith("__"):
            f = "f" if "fmaf" in m.group(1) else ""
            rep = f"__{'f' if f else 'd'}add_rn(__{'f' if f else 'd'}mul_rn({a}, {b}), {c})"
        else:
            rep = f"(({a}) * ({b}) + ({c}))"
        yield "FMA", m.start(), end, rep
    # RND
    for m in re.finditer(r"\b__(f?)(add|mul|div|sub|fmaf?|sqrt|rcp)_rn\b", mask):
        yield "RND", m.start(), m.end(), m.group(0)[:-2] + "rz"
    # SYNC
    for m in re.finditer(r"\b(__syncthreads|__syncwarp)\s*\([^;]*\)\s*;", mask):
        if "__syncthreads_or" in m.group(0) or "__syncthreads_and" in m.group(0):
            continue
        yield "SYNC", m.start(), m.end(), ";"
    # MINMAX
    for m in re.finditer(r"\b(fminf|fmaxf|min|max)\s*\(", mask):
        name = m.group(1)
        other = {"fminf": "fmaxf", "fmaxf": "fminf", "min": "max", "max": "min"}[name]
        yield "MINMAX", m.start(1), m.end(1), other
    # GUARD: if (COND) guarding a store or a return
    for m in re.finditer(r"\bif\s*\(", mask):
        end, parts = _args3(mask, m.end() - 1)
        if not parts:
            continue
        body = mask[end:end + 160]
        first = body.lstrip()
        if first.startswith("{"):
            first = first[1:].lstrip()
        stmt = first.split(";")[0]
        if re.search(r"\breturn\b|\[[^\]]*\]\s*=[^=]|\bcontinue\b|\bbreak\b", stmt):
            s, e = parts[0][0], parts[-1][1]
            if any(k in text[s:e] for k in ("rc", "err", "status")):
                continue  # error-code plumbing, not a bounds guard
            yield "GUARD", s, e, "1" if not re.match(r"\s*return|\s*continue|\s*break",
                                                     first) else "0"
    # STRIDE: the increment of a for header, up to the parenthesis that closes the header
    for m in re.finditer(r"\+=\s*", mask):
        depth, j = 0, m.end()
        while j < len(mask) and mask[j] not in ";{}":
            if mask[j] == "(":
                depth += 1
            elif mask[j] == ")":
                if depth == 0:
                    break
                depth -= 1
            j += 1
        if j >= len(mask) or mask[j] != ")" or j == m.end():
            continue  # not the last clause of a for header
        s, e = m.end(), j
        yield "STRIDE", s, e, f"2 * ({text[s:e].strip()})"
    # NANZ
    for m in re.finditer(r"\b([A-Za-z_][\w.\[\]]*)\s*!=\s*\1\b", mask):
        yield "NANZ", m.start(), m.end(), "0"
    for m in re.finditer(r"\b(isnan|__isnanf|isnanf)\s*\(", mask):
        end, parts = _args3(mask, m.end() - 1)
        if end:
            yield "NANZ", m.start(), end, "0"
    for m in re.finditer(r"-0\.0f\b", mask):
        yield "NANZ", m.start(), m.end(), "0.0f"
    for m in re.finditer(r"\bcopysignf\s*\(", mask):
        end, parts = _args3(mask, m.end() - 1)
        if parts and len(parts) == 2:
            yield "NANZ", m.start(), end, "(" + text[parts[0][0]:parts[0][1]].strip() + ")"
    # CVT: a call of a TF32 conversion helper (not its definition, whose name follows its type)
    for m in re.finditer(r"\bat_tf32(_hi|_v|_nan)?\s*\(", mask):
        if re.search(r"\buint32_t\s+$", mask[max(0, m.start() - 16):m.start()]):
            continue
        end, parts = _args3(mask, m.end() - 1)
        if parts and len(parts) == 1:
            yield "CVT", m.start(), end, ("__float_as_uint(" +
                                          text[parts[0][0]:parts[0][1]].strip() + ")")


def mutants_of(path, rel):
    with open(path) as f:
        text = f.read()
    mask = code_mask(text)
    funcs = functions(mask)
    res, seen = [], set()
    for op, s, e, rep in gen_ops(text, mask):
        if (s, e, rep) in seen or text[s:e] == rep:
            continue
        seen.add((s, e, rep))
        line_no = text.count("\n", 0, s) + 1
        ls = text.rfind("\n", 0, s) + 1
        le = text.find("\n", s)
        le = len(text) if le < 0 else le
        kernel = next((n for n, a, b in funcs if a <= s < b), "(file scope)")
        new_text = text[:s] + rep + text[e:]
        nle = new_text.find("\n", s + len(rep))
        nle = len(new_text) if nle < 0 else nle
        mid = hashlib.sha1(f"{rel}:{s}:{e}:{op}:{rep}".encode()).hexdigest()[:10]
        res.append({"id": mid, "file": rel, "line": line_no, "kernel": kernel, "operator": op,
                    "start": s, "end": e, "replacement": rep, "before": text[ls:le].strip(),
                    "after": new_text[ls:nle].strip()})
    # "occurrence": the mutant's rank (from 1, in source order) among the file's mutants of the
    # same function, operator and before / after line text: with them it names one mutant by
    # content, which edits elsewhere in the file do not move (an id hashes character offsets)
    seen_n = {}
    for m in sorted(res, key=lambda m: m["start"]):
        k = (m["kernel"], m["operator"], m["before"], m["after"])
        seen_n[k] = seen_n.get(k, 0) + 1
        m["occurrence"] = seen_n[k]
    return res


def generate(files):
    out = []
    for rel in files:
        out += mutants_of(os.path.join(src_root(), rel), rel)
    out.sort(key=lambda m: (m["file"], m["start"], m["operator"], m["replacement"]))
    return out


def apply(m, src_text):
    return src_text[:m["start"]] + m["replacement"] + src_text[m["end"]:]


def read_equivalent(path=EQUIV_FILE):
    """{key: reason}; '#' comments; fields tab-separated, in one of two forms:
    - file, operator, before-line text, reason: every mutant of that operator on a line of that
      text; key (file, operator, text);
    - file, operator, before-line text, after-line text, function#occurrence, reason: the one
      mutant (mutants_of's "occurrence") where the line's text recurs and only that mutant is
      equivalent; key ("mutant", file, operator, before, after, function, occurrence).
    A line-text field "id:<mutant id>" (the old form of the second) still parses, key ("id",
    id), but an id moves with any edit above the line: the ninth session found 7 of 9 stale."""
    eq = {}
    if os.path.exists(path):
        with open(path) as f:
            for n, line in enumerate(f, 1):
                if not line.strip() or line.startswith("#"):
                    continue
                parts = line.rstrip("\n").split("\t")
                if len(parts) not in (4, 6) or not parts[-1].strip():
                    raise SystemExit(f"{path}:{n}: want file<TAB>operator<TAB>line text<TAB>"
                                     "reason, or file<TAB>operator<TAB>before<TAB>after<TAB>"
                                     "function#occurrence<TAB>reason")
                text = parts[2].strip()
                if len(parts) == 6:
                    fn, _, occ = parts[4].strip().rpartition("#")
                    if not fn or not occ.isdigit():
                        raise SystemExit(f"{path}:{n}: want function#occurrence, got "
                                         f"{parts[4]!r}")
                    key = ("mutant", parts[0], parts[1], text, parts[3].strip(), fn, int(occ))
                elif text.startswith("id:"):
                    key = ("id", text[3:])
                else:
                    key = (parts[0], parts[1], text)
                eq[key] = parts[-1].strip()
    return eq


def equivalent_key(r, eq):
    """The ledger key that makes result / mutant r equivalent, or None."""
    for k in ((r["file"], r["operator"], r["before"]), ("id", r.get("id")),
              ("mutant", r["file"], r["operator"], r["before"], r.get("after"), r.get("kernel"),
               r.get("occurrence"))):
        if k in eq:
            return k
    return None


def select(ms, a):
    """The mutants a command works on. A selection by --file / --kernel / --operator / --sample
    leaves out the ledger's equivalents (tools/mutation_equivalent.txt) before it samples, so no
    GPU time goes to a mutant already decided and a sample's size counts only mutants that can
    be killed; --with-equivalents keeps them (to audit the ledger). Mutants named by --ids or
    --also are always kept. a.ledger_left_out: how many were left out."""
    also = set(a.also.split(",")) if getattr(a, "also", None) else set()
    extra = [m for m in ms if m["id"] in also]
    a.ledger_left_out = 0
    if getattr(a, "ids", None):
        want = set(a.ids.split(","))
        ms = [m for m in ms if m["id"] in want]
    ms = _select_filtered(ms, a)
    if not getattr(a, "ids", None) and not getattr(a, "with_equivalents", False):
        eq = read_equivalent(EQUIV_FILE)  # the module's, read now (a test may point it elsewhere)
        kept = [m for m in ms if equivalent_key(m, eq) is None]
        a.ledger_left_out = len(ms) - len(kept)
        ms = kept
    ms = _select_sample(ms, a)
    return ms + [m for m in extra if m["id"] not in {x["id"] for x in ms}]


def _select_filtered(ms, a):
    if a.file:
        ms = [m for m in ms if m["file"] == a.file or os.path.basename(m["file"]) == a.file]
    if a.kernel:
        ms = [m for m in ms if m["kernel"] == a.kernel]
    if a.operator:
        ms = [m for m in ms if m["operator"] == a.operator]
    return ms


def _select_sample(ms, a):
    if a.sample and a.sample < len(ms):
        rng = random.Random(a.seed)
        ms = sorted(rng.sample(ms, a.sample), key=lambda m: (m["file"], m["start"]))
    return ms


def src_root():
    """The tree holding kernels/: the repository, or on a GPU host the bundle's relink/src."""
    if os.path.isdir(os.path.join(ROOT, "kernels")):
        return ROOT
    return os.path.join(ROOT, "relink", "src")


def default_files():
    return sorted("kernels/" + f for f in os.listdir(os.path.join(src_root(), "kernels"))
                  if f.endswith(".cu"))


# ------------------------------------------------------------------ run -----------------------
CPU_CHECKS = [(b, [f"bin/{b}"], {}) for b in ("contract_codes_test", "status_messages_test")]
GPU_BINARIES = ["dense_gpu_goldens_test", "kpool_gpu_goldens_test", "kpool_identities_gpu_test",
                "decode_split_gpu_test", "tc_prefill_gpu_test", "decode_chain_gpu_test",
                "tc_attn_gpu_test", "select_shake_gpu_test", "attn_shake_gpu_test"]


# Per kernel source, the golden checks (<case>__<check> of the golden suites) whose stages it
# implements, and the other GPU binaries that exercise it: the second GPU stage runs those, not
# every fixture of every suite (a whole golden suite recomputes every case's oracle on the CPU:
# minutes per mutant with 16 mutants in flight).
FILE_CHECKS = {
    "kernels/mla_attn.cu": ["attn_absorbed", "attn_gathered", "attn_absorbed_tctf32",
                            "attn_gathered_tctf32", "attn_absorbed_tc3xtf32",
                            "attn_gathered_tc3xtf32", "attn_absorbed_tcbf16",
                            "attn_gathered_tcbf16", "attn_absorbed_tcwgmma",
                            "attn_gathered_tcwgmma"],
    # the wgmma door arm's kernel (its launch, plan, workspace and combine are mla_attn.cu's)
    "kernels/mla_attn_wg.cu": ["attn_absorbed_tcwgmma", "attn_gathered_tcwgmma"],
    "kernels/mla_dense.cu": ["rope", "split_latent", "append_latent", "absorb_q", "decompress_v"],
    "kernels/mla_gemm_bf16.cu": ["bf16_absorb_f32", "bf16_absorb_bf16", "bf16_decompress_f32",
                                 "bf16_decompress_bf16"],
    "kernels/mla_kpool.cu": ["index_append_ring", "pool_keys", "score", "select"],
}
FILE_BINARIES = {
    # attn_shake_gpu_test / select_shake_gpu_test: the shake build (kernels/BUILD), where a race
    # that no sanitizer sees loses on every launch; a few seconds, before the others
    "kernels/mla_attn.cu": ["attn_shake_gpu_test", "decode_split_gpu_test", "decode_chain_gpu_test",
                            "tc_attn_gpu_test"],
    "kernels/mla_attn_wg.cu": ["attn_shake_gpu_test", "tc_attn_gpu_test"],
    "kernels/mla_dense.cu": ["decode_split_gpu_test", "decode_chain_gpu_test"],
    "kernels/mla_gemm_bf16.cu": ["tc_prefill_gpu_test"],
    "kernels/mla_kpool.cu": ["select_shake_gpu_test", "kpool_identities_gpu_test",
                             "decode_chain_gpu_test"],
}
# A binary that a file's mutants can reach only through some of its cases, named by a token of
# their names: the value check runs the cases whose name holds the token (`*/*<token>*`), not the
# binary whole, and the sanitizer stages run their small set narrowed to them
# (narrow_case_filter). tc_attn_gpu_test holds every door arm's cases; only those named *wgmma*
# set the flag that launches mla_attn_wg.cu's kernel (its attributes, set for every attention
# call, are set by those cases too). Thirty-first session: with 14 workers the whole binary
# (about 110 cases) outlasted the pass's hard stop for 14 mutants of call 3, while its 29 wgmma
# cases took 20-26 s a mutant, four binaries at once (call 4); in call 2 racecheck of the whole
# small set (every arm's cases) held each mutant that passed the value checks past the deadline.
FILE_CASE_TOKENS = {
    "kernels/mla_attn_wg.cu": {"tc_attn_gpu_test": "wgmma"},
}
# The same narrowing for one kernel function of a file whose other functions every case reaches:
# (file, the mutated function's name prefix, {binary: token}). attn_tc_bf16, the bf16 door's
# kernel, runs only where a case opts in to that arm (tc 2; the wgmma arm declines to the f32
# walk, never to it), and every tc_attn_gpu_test case that does names its arm (`__bf16`,
# `*_bf16__*`). Thirty-fourth session: its 24 owed mutants would otherwise each run the whole
# binary (131 cases, every arm) under the pass's workers.
KERNEL_CASE_TOKENS = [
    ("kernels/mla_attn.cu", "attn_tc_bf16", {"tc_attn_gpu_test": "bf16"}),
]


def case_tokens(file, kernel=None):
    """{binary: token} of the binaries a mutant of kernel in file reaches only through some of
    their cases (FILE_CASE_TOKENS, then KERNEL_CASE_TOKENS)."""
    toks = dict(FILE_CASE_TOKENS.get(file, {}))
    for f, prefix, t in KERNEL_CASE_TOKENS:
        if f == file and kernel and kernel.startswith(prefix):
            toks.update(t)
    return toks


def stage_case_filter(stage, flts):
    """A golden suite's sanitizer filter for the stages in `stage`: `*/@(san_*__<stage>|...)`
    with the alternatives of the suite's small-set filters (flts, `*/@(...)` form) that are not
    san_ cases (tests of their own, such as bad_arguments_write_nothing)."""
    alts = ["san_*__" + s for s in stage]
    for flt in flts:
        m = re.fullmatch(r"\*/@\((.*)\)", flt)
        alts += [a for a in (m.group(1).split("|") if m else []) if not a.startswith("san_")
                 and a not in alts]
    return "*/@(" + "|".join(alts) + ")"


def narrow_case_filter(flt, token):
    """A small set's filter `*/@(alt|alt|...)` narrowed to the cases whose name holds token: an
    alternative that holds the token stays, one of the arm-suffix form `<case>__*` becomes
    `<case>__<token>`, any other goes. None when nothing is left; flt itself when it is not of that
    form (a filter this cannot read is run as it is)."""
    m = re.fullmatch(r"\*/@\((.*)\)", flt)
    if not m:
        return flt
    kept = []
    for alt in m.group(1).split("|"):
        if token in alt:
            kept.append(alt)
        elif alt.endswith("__*"):
            kept.append(alt[:-1] + token)
    return "*/@(" + "|".join(kept) + ")" if kept else None
# The fuzz targets (corpus replay, then 10 s of fuzzing) and the compute-sanitizer binaries
# (small case sets) that can see a mutant of each kernel source: each source is its own object,
# so a target that never calls into it cannot kill its mutants (contract_codes calls every
# launcher's validation and launch). A file not listed gets them all.
FILE_FUZZERS = {
    "kernels/mla_attn.cu": ["gathered_indices", "contract_codes"],
    "kernels/mla_attn_wg.cu": ["gathered_indices"],
    "kernels/mla_dense.cu": ["split_invariance", "rope_positions", "contract_codes"],
    "kernels/mla_gemm_bf16.cu": [],
    "kernels/mla_kpool.cu": ["select_order", "score_identity", "ring_residency", "contract_codes"],
}
FILE_SANITIZE = {
    "kernels/mla_attn.cu": ["dense_gpu_goldens_test", "kpool_gpu_goldens_test",
                            "decode_split_gpu_test", "decode_chain_gpu_test", "tc_attn_gpu_test",
                            "attn_shake_gpu_test"],
    "kernels/mla_attn_wg.cu": ["dense_gpu_goldens_test", "kpool_gpu_goldens_test",
                               "tc_attn_gpu_test", "attn_shake_gpu_test"],
    "kernels/mla_dense.cu": ["dense_gpu_goldens_test", "decode_split_gpu_test",
                             "decode_chain_gpu_test"],
    "kernels/mla_gemm_bf16.cu": ["dense_gpu_goldens_test", "tc_prefill_gpu_test"],
    "kernels/mla_kpool.cu": ["kpool_gpu_goldens_test", "kpool_identities_gpu_test",
                             "decode_chain_gpu_test", "select_shake_gpu_test"],
}
# Narrower still: the checks of the stage a kernel function serves (name prefix -> checks);
# a function not listed (a shared helper) gets its file's checks.
KERNEL_CHECKS = [
    ("absorb_q", ["absorb_q"]), ("decompress_v", ["decompress_v"]), ("rope", ["rope"]),
    ("memra_mla_rope", ["rope"]), ("split_latent", ["split_latent"]),
    ("append_latent", ["append_latent"]), ("index_append_ring", ["index_append_ring"]),
    ("kpool_pool_keys", ["pool_keys"]), ("memra_mla_kpool_pool_keys", ["pool_keys"]),
    ("kpool_score", ["score"]), ("memra_mla_kpool_score", ["score"]), ("ks_plan", ["score"]),
    ("kpool_head_term", ["score"]), ("kpool_select", ["select"]), ("sel_", ["select"]),
    ("kpool_desc32", ["select"]), ("kpool_write_tail_pad", ["select"]),
    ("block_excl_scan", ["select"]),
    ("attn_tc_bf16", ["attn_absorbed_tcbf16", "attn_gathered_tcbf16"]),
    ("attn_tc_wg", ["attn_absorbed_tcwgmma", "attn_gathered_tcwgmma"]),
]
GOLDEN_SUITES = ["dense_gpu_goldens_test", "kpool_gpu_goldens_test"]


def stage_checks(file, kernel):
    """The golden checks a mutant of `kernel` in `file` must pass (KERNEL_CHECKS, else the
    file's FILE_CHECKS); None for a file the tables do not know."""
    if file not in FILE_CHECKS:
        return None
    for prefix, checks in KERNEL_CHECKS:
        if kernel and kernel.startswith(prefix) and set(checks) <= set(FILE_CHECKS[file]):
            return checks
    return FILE_CHECKS[file]


def own_stage(file, kernel):
    """The golden checks of `kernel`'s own stage where KERNEL_CHECKS narrows them below its
    file's FILE_CHECKS; None for a shared helper, or a file the tables do not know."""
    st = stage_checks(file, kernel)
    return st if st is not None and st != FILE_CHECKS[file] else None


# The compute-sanitizer tools of the last GPU checks, in order; each check's label starts with
# its tool's name (check_timeout gives them --sanitizer-timeout).
SANITIZER_TOOLS = ("racecheck", "memcheck")


def gpu_checks(bundle, file=None, kernel=None):
    """The GPU checks in order, each (label, argv relative to the worker dir, extra env):
    1. the fixture cases of the mutated kernel's stage in the golden suites (KERNEL_CHECKS,
       else the file's FILE_CHECKS), and the other GPU binaries that exercise the file
       (FILE_BINARIES), whole; every GPU binary whole when the file is not listed;
    2. the small case sets (tools/sanitize_set.tsv: the san_* cases reach every kernel arm) of
       the binaries that exercise the file (FILE_SANITIZE) and did not already run whole in 1;
    3. the corpus replay of each GPU fuzzer that reaches the file (FILE_FUZZERS);
    4. 10 s of fuzzing per such target;
    5. racecheck, then memcheck, on the small case sets of the binaries that exercise the file
       (FILE_SANITIZE; compute-sanitizer, when on PATH).
    The killers first: in the H200 passes of 2026-12-01 the stage checks killed most mutants and
    the small sets, run first, killed none alone; each check before the killer is time lost."""
    small = {}  # binary: [(case set key, filter)], a binary split in parts has several
    tsv = os.path.join(bundle, "tools", "sanitize_set.tsv")
    if os.path.exists(tsv):
        for b, flt, key in sanitize_report.read_set(tsv):
            small.setdefault(b, []).append((key, flt))
    asan = {"ASAN_OPTIONS": "protect_shadow_gap=0:detect_leaks=0"}
    fuzzers = sorted(f[:-len("_fuzzer")] for f in os.listdir(os.path.join(bundle, "bin"))
                     if f.endswith("_fuzzer")
                     and (file not in FILE_FUZZERS or f[:-len("_fuzzer")] in FILE_FUZZERS[file]))
    sanitized = [b for b in GPU_BINARIES if b in small
                 and (file not in FILE_SANITIZE or b in FILE_SANITIZE[file])]
    # two Criterion workers per binary: the mutants run in parallel on one GPU, and each
    # worker process holds a CUDA context. --fail-fast: a kill is the first failing case, so
    # the check ends there instead of running the rest (the sixth session's H200 pass: 100-150 s
    # a stage check under 14 workers, most of it after the first failure); a passing check, and
    # so the unmutated baseline of the same argv, runs every case as before
    cj = ["--jobs=2", "--fail-fast"]
    checks = []
    if file in FILE_CHECKS:
        # the product arms' checks first, the doors' (the tensor-core attention arms) after
        # them: each group half the cases' work, so a product mutant dies before its timeout
        # (H200 2026-12-01: the four attention checks in one filter took 120 s under 14 workers)
        stage = stage_checks(file, kernel)
        groups = []
        for part in ([c for c in stage if "_tc" not in c], [c for c in stage if "_tc" in c]):
            # at most two stages a filter: a shared helper's four kpool stages in one filter took
            # 100 s unmutated under 14 workers, past the timeout (fifth session, call 1)
            groups += [part[j:j + 2] for j in range(0, len(part), 2)]
        for group in groups:
            flt = "*/*__@(" + "|".join(group) + ")"
            checks += [(f"{b} --filter={flt}", [f"bin/{b}", f"--filter={flt}", *cj], {})
                       for b in GOLDEN_SUITES]
        whole = FILE_BINARIES[file]
    else:
        whole = GPU_BINARIES
    tokens = case_tokens(file, kernel)
    flts = {b: f"*/*{tok}*" for b, tok in tokens.items()}
    checks += [(f"{b} --filter={flts[b]}", [f"bin/{b}", f"--filter={flts[b]}", *cj], {})
               if b in flts else (b, [f"bin/{b}", *cj], {}) for b in whole]
    checks += [(f"{b} --filter={flt}", [f"bin/{b}", f"--filter={flt}", *cj], {})
               for b in sanitized if b not in whole for _, flt in small[b]]
    checks += [(f"{t}_replay", [f"bin/{t}_fuzzer", "-runs=0", f"fuzz/corpus/{t}"], asan)
               for t in fuzzers]
    checks += [(f"fuzz_{t} 10 s", [f"bin/{t}_fuzzer", "-max_total_time=10", "{scratch}",
                                   f"fuzz/corpus/{t}"], asan) for t in fuzzers]
    if shutil.which("compute-sanitizer"):
        # racecheck, then memcheck: a mutant that only reads or writes out of bounds (an
        # off-by-one on a guard whose extra element is never used) changes no value
        # (a binary of case_tokens: its small set narrowed to the mutant's cases; a set with
        # none of them left is not run)
        # a golden suite's small set narrowed to the mutated kernel's own stage (KERNEL_CHECKS),
        # as its value checks are: the stage's san_ cases (each of a suite's cases runs one
        # stage), with the set's cases that are not per stage (bad_arguments_write_nothing,
        # which makes one valid absorb call); its parts become one set. The thirty-eighth
        # session: absorb_q's mutants ran memcheck of the whole attn_products part, which takes
        # 124 s unmutated in the tier and ran past the 200 s timeout under 16 workers
        # (twenty-second session)
        own = own_stage(file, kernel)
        sets = []
        for b in sanitized:
            if own and b in GOLDEN_SUITES:
                sets.append((b, f"{b}.{'+'.join(own)}",
                             stage_case_filter(own, [f for _, f in small[b]])))
            else:
                sets += [(b, key, narrow_case_filter(flt, tokens[b]) if b in tokens else flt)
                         for key, flt in small[b]]
        for tool in SANITIZER_TOOLS:
            checks += [(f"{tool} {key}", ["compute-sanitizer", "--tool", tool,
                                          "--error-exitcode", "1", f"bin/{b}",
                                          f"--filter={flt}", *cj], {})
                       for b, key, flt in sets if flt is not None]
    return checks


def check_timeout(a, label):
    """The --timeout of one check: --sanitizer-timeout for the compute-sanitizer stages (their
    labels start with the tool's name), when given. In the thirteenth session's pass (call 1, 16
    workers) racecheck of kpool_identities_gpu_test's small set timed out at 150 s unmutated, so
    11 mutants that had passed every value check ended undecided."""
    st = getattr(a, "sanitizer_timeout", None)
    if st and label.split(" ", 1)[0] in SANITIZER_TOOLS:
        return st
    return a.timeout


class CheckLoad:
    """The checks running at once (mutants' and unmutated runs'), as a time-weighted mean over one
    check's run: `with CheckLoad() as ld: run_check(...)`, then ld.load. A timeout counts as a
    hang only when the unmutated run of the same check passed inside the same timeout under at
    least LOAD_MATCH times the mutant's load. Twenty-fourth session, call 4: 15 mutants'
    tc_attn_gpu_test ran beside each other (17 checks at once) and timed out at 150 s; the
    unmutated run, started as the first timed out, ran alone once they ended and passed, so all
    15 were counted as hangs, among them one that only routes an aligned q through the equal
    scalar loads. Under the rule they are undecided (a lighter --jobs or a longer --timeout
    decides them)."""
    lock = threading.Lock()
    running, area, t_last = 0, 0.0, time.time()

    @classmethod
    def _tick(cls):
        now = time.time()
        cls.area += cls.running * (now - cls.t_last)
        cls.t_last = now

    def __enter__(self):
        with CheckLoad.lock:
            CheckLoad._tick()
            CheckLoad.running += 1
            self.a0, self.t0 = CheckLoad.area, CheckLoad.t_last
        return self

    def __exit__(self, *exc):
        with CheckLoad.lock:
            CheckLoad._tick()
            dt = CheckLoad.t_last - self.t0
            self.load = (CheckLoad.area - self.a0) / dt if dt > 0 else float(CheckLoad.running)
            CheckLoad.running -= 1
        return False


LOAD_MATCH = 0.75  # the unmutated run's load, at least this times the timed-out mutant's


class Unmutated:
    """Each check's verdict on the unmutated bundle, run once per check and only when needed:
    a mutant's kill counts only when the same check passes unmutated (a check that fails
    without a mutant kills nothing), and a timeout counts as a hang only when the unmutated
    binary finished the same check within the same timeout, under about the same load (its
    CheckLoad, kept in self.loads; run_one compares the two).

    Two rules keep it inside the run's clock (seventh session, call 1: a kill shortly before the
    hard stop started its check's unmutated run with the whole --timeout, and every mutant
    killed by that check waited on it past the command's limit, unreported):
    - the unmutated run is bounded by the hard stop like any check; cut there, its verdict is
      "cut" and the mutant is undecided;
    - a failure (not a timeout) under a --filter of a golden suite that passed whole in the
      warm-up needs no run: the filter's cases are among the ones that passed."""

    def __init__(self, bundle, a, env):
        self.bundle, self.a, self.env = bundle, a, env
        self.lock, self.seen = threading.Lock(), {}
        self.loads = {}  # label -> the mean load its unmutated run ran under (CheckLoad)
        self.whole_passed = set()  # golden suites the warm-up ran whole, with every case passing

    def note_whole(self, binary, verdict):
        if verdict == "survived":
            self.whole_passed.add(binary)

    def by_warm_up(self, argv, extra, verdict):
        """Whether the warm-up already gives this check's unmutated verdict (survived)."""
        return (verdict == "killed" and not extra and argv[0].startswith("bin/")
                and argv[0][len("bin/"):] in self.whole_passed
                and any(x.startswith("--filter=") for x in argv[1:]))

    def known(self, label, argv=None, extra=None, verdict=None):
        """Whether the check's unmutated verdict costs no new run (started, or the warm-up's)."""
        if argv is not None and self.by_warm_up(argv, extra, verdict):
            return True
        with self.lock:
            return label in self.seen

    def verdict(self, label, argv, extra, mutant_verdict=None):
        if self.by_warm_up(argv, extra, mutant_verdict):
            return "survived", 0.0
        with self.lock:
            ev = self.seen.get(label)
            if ev is None:
                ev = self.seen[label] = [threading.Event(), None]
                mine = True
            else:
                mine = False
        if mine:
            ev[1] = ("harness error", 0.0)  # what the waiters get if the run itself raises
            try:
                limit, cut = bounded(self.a, check_timeout(self.a, label))
                with CheckLoad() as ld:
                    v, dt = run_check(self.bundle, argv, extra, limit, self.env)
                self.loads[label] = ld.load
                ev[1] = ("cut", dt) if v == "timeout" and cut else (v, dt)
            finally:  # never leave a waiter blocked on a run that raised
                ev[0].set()
        ev[0].wait()
        return ev[1]

    def load_of(self, label):
        """The mean load the check's unmutated run ran under (None: not run here)."""
        with self.lock:
            return self.loads.get(label)


def prime_baselines(unmutated, checks):
    """Starts, in the background and at once, the unmutated run of every check among `checks`
    ((label, argv, extra) triples: the union over the selection) whose unmutated verdict the
    warm-up does not already give (a --filter of a golden suite that passed whole), each once. A
    mutant a check kills then finds that check's baseline done or running, where it would
    otherwise start it only when the kill lands, late in the run:
    - fourteenth session, call 6: a mutant failed racecheck of kpool_identities_gpu_test at
      159 s; the unmutated run it then started was cut at the hard stop, 180 s later, so the
      report could only say undecided;
    - twenty-fifth session, call 2: three mutants of the bf16 door failed tc_attn_gpu_test, a
      value check, and were left undecided the same way, when only the sanitizer checks were
      primed.
    The runs keep to the hard stop like any (Unmutated.verdict). Returns the labels started."""
    todo = {}
    for label, argv, extra in checks:
        if label not in todo and not unmutated.by_warm_up(argv, extra, "killed"):
            todo[label] = (argv, extra)
    for label, (argv, extra) in todo.items():
        threading.Thread(target=unmutated.verdict, args=(label, argv, extra, "killed"),
                         daemon=True).start()
    return sorted(todo)


# The process groups of the checks and builds running now (each starts a session of its own): a
# run that gives up on a step that did not end kills them all before it exits.
LIVE = set()
LIVE_LOCK = threading.Lock()
# Seconds past the hard stop after which the run stops waiting for a mutant and reports it
# undecided: the last resort against any step that does not end (leave more than this between
# the hard stop and the command's own limit).
STOP_MARGIN = 15


def kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def track(proc, alive):
    with LIVE_LOCK:
        (LIVE.add if alive else LIVE.discard)(proc.pid)


def bounded(a, limit):
    """(limit, cut): a step's time limit kept to the run's hard stop (a.stop_at, 0: none);
    cut when the stop, not `limit` (None: none), bounds it."""
    stop = getattr(a, "stop_at", 0)
    if stop and (limit is None or stop - time.time() < limit):
        return max(stop - time.time(), 1.0), True
    return limit, False


def run_group(argv, timeout, **popen):
    """argv in a process group of its own, at most `timeout` seconds (None: no bound); the group
    is killed when the leader ends or times out (stragglers too), and a pipe still held by a
    process outside the group is not waited on. -> (timed_out, returncode, stdout, stderr)."""
    popen.setdefault("stderr", subprocess.PIPE)
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, start_new_session=True,
                         **popen)
    track(p, True)
    out = err = ""
    timed_out = False
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        kill_group(p.pid)
        track(p, False)
        if timed_out:
            try:
                p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                for f in (p.stdout, p.stderr):
                    if f:
                        f.close()
                p.wait()
    return timed_out, p.returncode, out or "", err or ""


# What the last run_check of this thread saw fail (failure_excerpt), for the mutant's record:
# run_check returns (verdict, seconds) alone, and run_one reads the excerpt after it.
CHECK_NOTE = threading.local()
EXCERPT_LINES, EXCERPT_CHARS = 6, 600
# The lines of a check's output that say why it failed: Criterion's failed cases and assertion
# messages, libFuzzer's and the sanitizers' reports (their summaries with a nonzero count).
FAIL_LINE = re.compile(r"^\[FAIL\] |^\[----\].*(Assertion Failed|[Cc]rash)|^==\d+==ERROR|"
                       r"^SUMMARY: |^=+ (ERROR|RACECHECK) SUMMARY: [1-9]|^=+ (Invalid|Race|"
                       r"Barrier|Uninitialized|Program hit)")
CRITERION_TIMEOUT = re.compile(r"^\[FAIL\] \S+: Timed out\. \(")


def failure_excerpt(out):
    """(excerpt, only_timeouts): the first EXCERPT_LINES lines of `out` that say why the check
    failed (ANSI colours removed, at most EXCERPT_CHARS), and whether its only failures are
    Criterion's own case timeouts (`[FAIL] suite::case: Timed out. (300.00s)`, a case's
    .timeout), with no assertion, crash or sanitizer report beside them."""
    lines = [l.rstrip() for l in re.sub(r"\x1b\[[0-9;]*m", "", out).splitlines()]
    bad = [l for l in lines if FAIL_LINE.search(l)]
    timeouts = [l for l in bad if CRITERION_TIMEOUT.search(l)]
    excerpt = "\n".join(bad[:EXCERPT_LINES])[:EXCERPT_CHARS]
    return excerpt, bool(timeouts) and len(timeouts) == len(bad)


def run_check(bdir, argv, extra_env, timeout, env):
    """One check in its own process group. On a timeout the whole group is killed: Criterion's
    --jobs workers are forked children, and an orphaned one kept its binary busy (the next
    restore failed with ETXTBSY) and its CUDA context on the GPU (H200, 2026-12-01).
    A check whose only failures are Criterion's own case timeouts is a timeout too, not a kill:
    under load a case can outlast its .timeout as the whole check can outlast --timeout, and
    the same load rule (CheckLoad) decides both. Twenty-fifth session, call 3: a rounding-mode
    mutant of the bf16 door, whose value checks had all passed, was reported killed by racecheck
    of tc_attn_gpu_test after 380 s beside 14 other checks, with no record of why.
    CHECK_NOTE.excerpt: the failing lines (failure_excerpt), '' when it passed."""
    t0 = time.time()
    CHECK_NOTE.excerpt = ""
    scratch = tempfile.mkdtemp(dir=bdir)  # a fuzzer's new inputs, never the committed corpus
    argv = [a.replace("{scratch}", scratch) for a in argv]
    exe = argv[0] if not argv[0].startswith("bin/") else os.path.join(bdir, argv[0])
    try:
        timed_out, rc, out, _ = run_group([exe, *argv[1:]], timeout, cwd=bdir,
                                          env=dict(env, **extra_env), stderr=subprocess.STDOUT)
        skipped_all = "Tested: 0" in re.sub(r"\x1b\[[0-9;]*m", "", out)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if timed_out:
        return "timeout", time.time() - t0
    if rc != 0:
        excerpt, only_timeouts = failure_excerpt(out)
        CHECK_NOTE.excerpt = excerpt or f"exit {rc}, no failure line in its output"
        return ("timeout" if only_timeouts else "killed"), time.time() - t0
    return ("skipped" if skipped_all else "survived"), time.time() - t0


def restore_file(src, dst):
    """Copy src over dst by a rename: a binary still mapped by a process (ETXTBSY on open for
    writing) is replaced, not written into."""
    tmp = f"{dst}.restore.{os.getpid()}.{threading.get_ident()}"
    shutil.copy2(src, tmp)
    os.replace(tmp, dst)


def worker_dir(bundle, base):
    """A private copy of the unpacked bundle's bin/ and relink/ (shares golden/, lib/)."""
    os.makedirs(base)
    for d in ("bin", "relink"):
        shutil.copytree(os.path.join(bundle, d), os.path.join(base, d), symlinks=True)
    # tools/: sanitize_set.tsv, the small case sets of the small-set and sanitizer checks (the
    # H200 pass of 2026-12-01, fifth session, call 1, ran without them: gpu_checks read the
    # worker's copy, which had no tools/, so no small set and no sanitizer check ran)
    for d in ("golden", "fuzz", "lib", "known_failures.txt", "out", "tools"):
        src = os.path.join(bundle, d)
        if os.path.exists(src):
            os.symlink(src, os.path.join(base, d))
    return base


def progress(m, a, what):
    """A line a step, "mutate: - <id> <seconds since the run's start> s: <step>": a run cut from
    outside shows where each mutant was (seventh session: two runs ended with mutants
    unreported and nothing said where they were)."""
    t0 = getattr(a, "t0", None)
    at = f"{time.time() - t0:.0f} s" if t0 else "-"
    print(f"mutate: - {m['id']} {at}: {what}", flush=True)


def planned_checks(bdir, m, a, gpu):
    """The checks mutant m runs, in order: the CPU checks, then with a device gpu_checks; with
    --checks only those whose label matches."""
    checks = CPU_CHECKS + (gpu_checks(bdir, m["file"], m.get("kernel")) if gpu else [])
    pat = getattr(a, "checks", None)
    return [c for c in checks if re.search(pat, c[0])] if pat else checks


def run_one(m, wdir, a, env, gpu, unmutated=None):
    rl = os.path.join(wdir, "relink")
    src = os.path.join(rl, "src", m["file"])
    with open(src) as f:
        orig = f.read()
    mutated = os.path.join(wdir, os.path.basename(m["file"]))
    with open(mutated, "w") as f:
        f.write(apply(m, orig))
    t0 = time.time()
    checks = planned_checks(wdir, m, a, gpu)
    with open(os.path.join(rl, "links.json")) as f:
        relinkable = set(json.load(f))
    used = sorted({x for _, argv, _ in checks for x in argv if x in relinkable})
    # two builds: the test binaries first; the fuzzers (their own config, a second nvcc
    # compile) only when the mutant lives long enough to reach a fuzzer check
    phases = [[b for b in used if not b.endswith("_fuzzer")],
              [b for b in used if b.endswith("_fuzzer")]]
    built = []

    def build(binaries):
        """The relink of these binaries with the mutant, bounded by the hard stop like a check
        (seventh session, call 4: the 9 k-pool mutants reached their fuzzers' nvcc compile
        together near the stop, and the command's limit ended the run with none reported);
        "cut" when the stop ended it, its process group killed."""
        if not binaries:
            return None
        built.extend(binaries)
        progress(m, a, f"build {','.join(binaries)}")
        argv = [sys.executable, os.path.join(rl, "relink.py"), "--bundle", wdir, "--libdir",
                a.libdir, "--jobs", "1", "--only", ",".join(binaries), mutated]
        timed_out, rc, out, err = run_group(argv, bounded(a, None)[0])
        return "cut" if timed_out else subprocess.CompletedProcess(argv, rc, out, err)

    def cut_build(what):
        return dict(status="undecided (deadline)", detail=f"cut at the hard stop in the {what} build")

    def failed_build(p):
        return dict(status="did not compile" if "nvcc" in p.stdout and "FAILED" in p.stdout
                    else "did not link", detail=(p.stdout + p.stderr)[-400:])

    p = build(phases[0])
    build_s = time.time() - t0
    # every check run, in order: (label, verdict, seconds), for the report's time table
    res = dict(m, build_seconds=round(build_s, 1), trace=[])
    try:
        if p == "cut":
            res.update(cut_build("test binaries'"))
            return res
        if p is not None and p.returncode != 0:
            res.update(failed_build(p))
            return res
        for label, argv, extra in checks:
            if a.stop_at and time.time() > a.stop_at:  # the run's hard stop: no verdict
                res.update(status="undecided (deadline)", detail=f"stopped before {label}")
                return res
            binary = next((x for x in argv if x.startswith("bin/")), None)
            if binary and not os.path.exists(os.path.join(wdir, binary)):
                continue
            if binary in phases[1] and binary not in built:
                t1 = time.time()
                p = build(phases[1])
                res["build_seconds"] = round(res["build_seconds"] + time.time() - t1, 1)
                if p == "cut":
                    res.update(cut_build("fuzzers'"))
                    return res
                if p.returncode != 0:
                    res.update(failed_build(p))
                    return res
            # the hard stop bounds the check too: a check still running there is cut, and the
            # mutant is undecided, not killed by a timeout (fifth session, call 3: 13 mutants'
            # checks ran on past the stop and the command's own limit ended the run unreported)
            limit, cut = bounded(a, check_timeout(a, label))
            progress(m, a, label)
            with CheckLoad() as ld:
                verdict, dt = run_check(wdir, argv, extra, limit, env)
            res["trace"].append([label, verdict, round(dt, 1)])
            why = getattr(CHECK_NOTE, "excerpt", "")
            CHECK_NOTE.excerpt = ""
            if why:  # the failing lines of this check, kept with the mutant (the report's audit)
                res.setdefault("failures", {})[label] = why
            if verdict == "timeout" and cut:
                res.update(status="undecided (deadline)", detail=f"cut at the hard stop in {label}")
                return res
            if (verdict in ("killed", "timeout") and unmutated is not None and a.stop_at
                    and time.time() > a.stop_at
                    and not unmutated.known(label, argv, extra, verdict)):
                # its unmutated verdict would be a new run past the stop
                res.update(status="undecided (deadline)",
                           detail=f"{label} {verdict}; no time left for its unmutated run")
                return res
            if verdict in ("killed", "timeout") and unmutated is not None:
                base, base_dt = unmutated.verdict(label, argv, extra, verdict)
                if base == "cut":  # the unmutated run reached the hard stop: no verdict
                    res.update(status="undecided (deadline)",
                               detail=f"{label} {verdict}; its unmutated run was cut at the "
                               "hard stop")
                    return res
                load_of = getattr(unmutated, "load_of", None)
                base_load = load_of(label) if load_of else None
                if base == "timeout":
                    # thirtieth session, call 4: beside 16 workers the unmutated tc_attn_gpu_test
                    # outlasted its 150 s, and all 16 mutants were reported as if the check failed
                    # unmutated, with no word of what decides them
                    beside = (f" beside {base_load:.1f} checks on average"
                              if base_load is not None else "")
                    res.update(status="undecided (check times out unmutated)", killer=label,
                               detail=f"the unmutated bundle timed out in {base_dt:.0f} s{beside} "
                               "(fewer --jobs or a longer --timeout decides it)",
                               seconds=round(dt, 1))
                    return res
                if base != "survived" and base != "skipped":
                    res.update(status="undecided (check fails unmutated)", killer=label,
                               detail=f"the unmutated bundle: {base} in {base_dt:.0f} s",
                               seconds=round(dt, 1))
                    return res
                if (verdict == "timeout" and base_load is not None
                        and base_load < LOAD_MATCH * ld.load):
                    res.update(status="undecided (timeout under load)", killer=label,
                               detail=f"{label} timed out at {dt:.0f} s beside {ld.load:.1f} "
                               f"checks on average; the unmutated run passed in {base_dt:.0f} s "
                               f"beside {base_load:.1f} (fewer --jobs or a longer --timeout "
                               "decides it)", seconds=round(dt, 1))
                    return res
            if verdict in ("killed", "timeout"):
                res.update(status="killed" if verdict == "killed" else "killed (timeout)",
                           killer=label, seconds=round(dt, 1))
                return res
        res.update(status="survived" if gpu else "not killed by the CPU checks")
        return res
    finally:
        with open(src, "w") as f:  # the worker's copy back to the original for the next one
            f.write(orig)
        # and its kernel objects and relinked binaries: the next mutant may be in another file,
        # and its relink links this file's object (relink.py wrote the mutant's into kobj/)
        obj = os.path.basename(m["file"])[:-3] + ".o"
        for cfg in os.listdir(os.path.join(a.bundle_abs, "relink", "kobj")):
            pristine = os.path.join(a.bundle_abs, "relink", "kobj", cfg, obj)
            if os.path.exists(pristine):
                restore_file(pristine, os.path.join(rl, "kobj", cfg, obj))
        for b in built:
            if os.path.exists(os.path.join(a.bundle_abs, b)):
                restore_file(os.path.join(a.bundle_abs, b), os.path.join(wdir, b))


def first_failure(r):
    """The killer's first failing line, for a markdown cell ('' without one: a timeout)."""
    why = (r.get("failures") or {}).get(r.get("killer"), "")
    line = why.splitlines()[0] if why else ""
    return "`" + sanitize_report.cell(line[:140]).replace("`", "'") + "`" if line else ""


def totals(rows, eq):
    """The counts of a set of results: mutants, killed, survived (not equivalent), equivalent,
    no_compile, cpu_only, score = killed / (killed + survived) or None, and the survivors (the
    result rows). The report's tables and the nightly ledger (tools/ledger.py) both use it."""
    killed = sum(r["status"].startswith("killed") for r in rows)
    surv = [r for r in rows if r["status"] == "survived"]
    live = [r for r in surv if equivalent_key(r, eq) is None]
    denom = killed + len(live)
    return {"mutants": len(rows), "killed": killed, "survived": len(live),
            "equivalent": len(surv) - len(live),
            "no_compile": sum(r["status"].startswith("did not") for r in rows),
            "cpu_only": sum(r["status"] == "not killed by the CPU checks" for r in rows),
            "undecided": sum(r["status"].startswith("undecided") for r in rows),
            "score": killed / denom if denom else None, "survivors": live}


def rows_undecided(rows):
    return [r for r in rows if r["status"].startswith("undecided")]


def time_table(results):
    """Where the workers' time went: per check label, how often it ran, its mean and longest
    time, and how many mutants it killed; the builds first. A pass's sample size and worker
    count are planned from it."""
    rows = {}
    builds = [r["build_seconds"] for r in results if "build_seconds" in r]
    for r in results:
        for label, verdict, dt in r.get("trace", []):
            e = rows.setdefault(label, [0, 0.0, 0.0, 0])
            e[0] += 1
            e[1] += dt
            e[2] = max(e[2], dt)
            e[3] += verdict in ("killed", "timeout") and r["status"].startswith("killed")
    if not builds and not rows:
        return []
    total = sum(builds) + sum(e[1] for e in rows.values())
    md = ["", "## Where the time went", "",
          f"{total:.0f} worker-seconds over {len(results)} mutants"
          + (f", {total / len(results):.0f} per mutant" if results else "") + ".", "",
          "| step | runs | mean s | max s | killed |", "| --- | ---: | ---: | ---: | ---: |"]
    if builds:
        md.append(f"| build (nvcc + relink) | {len(builds)} | {sum(builds) / len(builds):.1f} | "
                  f"{max(builds):.1f} | - |")
    md += [f"| {sanitize_report.cell(label)} | {n} | {tot / n:.1f} | {mx:.1f} | {k} |"
           for label, (n, tot, mx, k) in rows.items()]
    return md


def report(results, eq, out, meta, late=()):
    """The report (mutation-report.md and .json in `out`) of `results`; `late`: the selection's
    mutants the deadline left unstarted, listed by id with the next pass's --ids (they are
    outside the score)."""
    md = ["# Mutation report", "", meta, ""]
    for key, title in (("file", "file"), ("kernel", "kernel")):
        md += [f"## Score per {title}", "",
               f"| {title} | mutants | killed | survived | equivalent | no compile | score |",
               "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        groups = {}
        for r in results:
            groups.setdefault(r["file"] if key == "file" else f"{r['file']}:{r['kernel']}",
                              []).append(r)
        for g, rows in sorted(groups.items()):
            t = totals(rows, eq)
            sc = t["score"]
            md.append(f"| {g} | {t['mutants']} | {t['killed']} | {t['survived']} | "
                      f"{t['equivalent']} | {t['no_compile']} | "
                      f"{'-' if sc is None else f'{sc:.0%}'} |")
        md.append("")
    t = totals(results, eq)
    sc = t["score"]
    md += [f"**Total: {t['killed']} killed, {t['survived']} survived, {t['equivalent']} "
           f"equivalent; score {'-' if sc is None else f'{sc:.1%}'}.**"]
    if t["undecided"]:
        md += ["", f"**Undecided:** {t['undecided']} mutants are outside the score: still "
               "running their checks at the run's hard stop (--deadline plus --grace), or "
               "failed by a check that also fails (or times out) on the unmutated bundle."]
        md += [f"- `{r['id']}` {r['file']}:{r['line']} {r['operator']}: {r['status']}"
               + (f" ({r['detail']})" if r.get("detail") else "")
               for r in rows_undecided(results)]
        slow = sorted({r["killer"] for r in results
                       if r["status"] == "undecided (check times out unmutated)"})
        if slow:
            md += ["", f"**The unmutated run timed out** in {', '.join(slow)}: the mutants it "
                   "would decide are undecided. Rerun them (the next pass's ids) with fewer "
                   "--jobs or a longer --timeout."]
    if t["cpu_only"]:
        md += ["", f"**CPU only:** {t['cpu_only']} compiled mutants were not killed by the CPU "
               "checks and need the GPU checks (no device here); they are not counted as "
               "survivors and the score above covers only what could be decided."]
    md += ["", "## Survivors (not equivalent)", ""]
    md += [f"- `{r['file']}:{r['line']}` ({r['kernel']}) {r['operator']}: `{r['before']}` -> "
           f"`{r['after']}`" for r in t["survivors"]] or ["none"]
    if late:
        md += ["", "## Not started (the deadline)", ""]
        md += [f"- `{m['id']}` {m['file']}:{m['line']} ({m['kernel']}) {m['operator']}: "
               f"`{m['before']}` -> `{m['after']}`" for m in late]
    again = ([r["id"] for r in t["survivors"]] + [r["id"] for r in rows_undecided(results)]
             + [m["id"] for m in late])
    if again:
        # the twelfth session's 18 unstarted mutants were never listed, and the next pass could
        # not select them (docs/mutation.md, thirteenth pass)
        md += ["", "## The next pass", "",
               f"The {len(again)} mutants without a final verdict here (survivors, undecided, not "
               "started), for `tools/mutate.py run --ids` on the same source (ids are offsets: "
               "an edit above a line changes them):", "", "```", ",".join(again), "```"]
    md += ["", "## Killed: by which check, in how long", "",
           "The failing line is the killer's first (Criterion's failed case or assertion, a "
           "sanitizer's report; the JSON's `failures` has up to six a check): a kill a reader "
           "cannot explain from the mutant is audited there.", "",
           "| mutant | where | operator | killer | s | first failing line |",
           "| --- | --- | --- | --- | ---: | --- |"]
    md += [f"| {r['id']} | {r['file']}:{r['line']} {r['kernel']} | {r['operator']} | "
           f"{sanitize_report.cell(r['killer'])}"
           f"{' (timeout)' if 'timeout' in r['status'] else ''} | "
           f"{r['seconds']} | "
           + first_failure(r) + " |" for r in results if r["status"].startswith("killed")]
    md += time_table(results)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "mutation-report.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(out, "mutation-report.json"), "w") as f:
        json.dump({"meta": meta, "results": results,
                   "not_started": [{k: m[k] for k in ("id", "file", "line", "kernel", "operator",
                                                      "before", "after") if k in m}
                                   for m in late]}, f, indent=1)
    return "\n".join(md)


def resume_verdicts(a, ms):
    """--resume REPORT.json: the final verdicts (killed, killed by a timeout, did not compile or
    link) of an earlier pass over the same selection, by mutant id; every other mutant of the
    selection (survived, undecided, not run) runs again. Each resumed mutant must be the same
    change of the same source here (id, line and text): a kernel edited since makes the run
    refuse, since its verdicts were of other code."""
    if not getattr(a, "resume", None):
        return {}
    with open(a.resume) as f:
        old = json.load(f)
    m = re.search(r"bundle commit ([0-9a-f]+)", old.get("meta", ""))
    a.resume_commit = m.group(1) if m else "?"
    here = {x["id"]: x for x in ms}
    out = {}
    for r in old["results"]:
        x = here.get(r["id"])
        if x is None or not (r["status"].startswith("killed") or r["status"].startswith("did not")):
            continue
        if (x["file"], x["line"], x["before"], x["after"]) != (r["file"], r["line"], r["before"],
                                                              r["after"]):
            raise SystemExit(f"mutate: --resume {a.resume}: mutant {r['id']} is not the same "
                             "change here (the kernel source changed since that pass)")
        out[r["id"]] = dict(r, resumed=True)
    return out


def no_device(probe_out):
    """gpu_probe's answer without a device, led by "no device:" once (it may already say so)."""
    text = probe_out.strip()
    return text if text.startswith("no device") else f"no device: {text}"


def cmd_run(a, ms):
    # The run's clock starts here: --deadline and --grace count the probe and the warm-up too, so
    # deadline + grace bounds the whole command (sixth session, call 2: counted from after a 70 s
    # warm-up, the hard stop fell past the command's own limit and 12 running verdicts were lost)
    t0 = a.t0 = time.time()
    bundle = os.path.abspath(a.bundle)
    for need in ("bin", "relink"):
        if not os.path.isdir(os.path.join(bundle, need)):
            raise SystemExit(f"mutate: {bundle}/{need} missing: unpack the bundle first "
                             "(tar -xJf bin.tar.xz relink.tar.xz, lib.tar.xz into out/)")
    a.libdir = os.path.abspath(a.libdir or os.path.join(bundle, "out", "lib"))
    env = dict(os.environ, LD_LIBRARY_PATH=f"{a.libdir}:/usr/local/cuda/lib64",
               MLA_GOLDEN_DIR=os.path.join(bundle, "golden"))
    probe = subprocess.run([os.path.join(bundle, "bin", "gpu_probe")], capture_output=True,
                           text=True, env=env)
    gpu = probe.returncode == 0 and "no device" not in probe.stdout
    eq = read_equivalent()
    import concurrent.futures as cf
    cache_tmp = tempfile.TemporaryDirectory(prefix="mla-oracle-cache-")
    warm = ""
    # Only mutants whose planned checks use a golden suite need the warm-up: a --checks that
    # keeps none of them skips it (ninth session, call 2: 143 s of warm-up for two mutants
    # restricted to other binaries ran past a 100 s --deadline, and neither started)
    one_per_kernel = {(m["file"], m.get("kernel")): m for m in ms}.values()
    golden_used = any(b in label for m in one_per_kernel
                      for label, _, _ in planned_checks(bundle, m, a, True) for b in GOLDEN_SUITES)
    verdicts = []
    if gpu and not golden_used:
        warm = "; no warm-up (--checks keeps no golden-suite check)"
        print(f"mutate: {warm[2:]}", flush=True)
    elif gpu:
        # The oracle cache (tests/lib/case.h, $MLA_ORACLE_CACHE): every golden check ran its whole
        # case's CPU oracle (about 30 s of CPU for a stage's cases; 44-72 s per check under 14
        # workers on the H200); the oracle is not mutated, so one computation serves the run.
        # Warmed by the unmutated golden suites, which are also the stage checks' baseline.
        env["MLA_ORACLE_CACHE"] = cache_tmp.name
        tw = time.time()
        with cf.ThreadPoolExecutor(max_workers=len(GOLDEN_SUITES)) as ex:
            verdicts = list(ex.map(lambda b: run_check(
                bundle, [f"bin/{b}", f"--jobs={max(1, a.jobs // len(GOLDEN_SUITES))}"], {},
                max(a.timeout, 600), env), GOLDEN_SUITES))
        warm = (f"; oracle cache warmed by the unmutated golden suites in {time.time() - tw:.0f} s ("
                + ", ".join(f"{b} {v}" for b, (v, _) in zip(GOLDEN_SUITES, verdicts)) + ")")
        print(f"mutate: {warm[2:]}", flush=True)
    a.stop_at = t0 + a.deadline + a.grace if a.deadline else 0
    a.bundle_abs = bundle
    unmutated = Unmutated(bundle, a, env) if gpu else None
    if unmutated is not None:
        for b, (v, _) in zip(GOLDEN_SUITES, verdicts):
            unmutated.note_whole(b, v)
    if unmutated is not None and getattr(a, "prime_baselines", False):
        kinds = {(m["file"], m.get("kernel")): m for m in ms}  # the checks depend on these alone
        primed = prime_baselines(unmutated, [c for m in kinds.values()
                                             for c in planned_checks(bundle, m, a, True)])
        warm += f"; {len(primed)} baselines started with the run (--prime-baselines)"
        print(f"mutate: {len(primed)} baselines started: {', '.join(primed)}", flush=True)
    # run in a seeded random order across files, so a run cut by --deadline is still an
    # unbiased sample (the report groups by file and kernel anyway)
    ms = list(ms)
    random.Random(a.seed).shuffle(ms)
    results = []
    resumed = resume_verdicts(a, ms)
    if resumed:  # the earlier pass's final verdicts stand; the rest of its selection runs
        ms = [m for m in ms if m["id"] not in resumed]
    commit = open(os.path.join(bundle, "COMMIT")).read().strip()[:12]
    with tempfile.TemporaryDirectory() as tmp:
        wdirs = [worker_dir(bundle, os.path.join(tmp, f"w{i}")) for i in range(a.jobs)]
        free = list(wdirs)
        lock = threading.Lock()

        def task(m):
            if a.deadline and time.time() - t0 > a.deadline:
                return dict(m, status="not run (deadline)")
            with lock:
                w = free.pop()
            try:
                return run_one(m, w, a, env, gpu, unmutated)
            except Exception as e:  # one mutant's harness error must not end the run
                return dict(m, status="undecided (harness error)",
                            detail=f"{type(e).__name__}: {e}"[:300])
            finally:
                with lock:
                    free.append(w)

        ex = cf.ThreadPoolExecutor(max_workers=a.jobs)
        # in the order they finish, each reported and written at once (in submission order,
        # one slow mutant held back every later verdict: fifth session, call 3)
        futs = {ex.submit(task, m): m for m in ms}
        # the last resort: STOP_MARGIN past the hard stop the run stops waiting, reports every
        # mutant still out as undecided and kills what its steps left running (seventh session,
        # calls 1 and 4: steps that did not end at the stop, and the command's limit ended the
        # run with most mutants unreported)
        wait_s = max(a.stop_at + STOP_MARGIN - time.time(), 1.0) if a.stop_at else None
        a.hung = []
        try:
            for i, fut in enumerate(cf.as_completed(futs, timeout=wait_s), 1):
                r = fut.result()
                results.append(r)
                print(f"mutate: [{i}/{len(ms)}] {r['id']} {r['file']}:{r['line']} "
                      f"{r['operator']}: {r['status']}"
                      + (f" by {r['killer']} in {r['seconds']} s" if "killer" in r else ""),
                      flush=True)
                # the report so far, after every mutant: a run cut from outside keeps its verdicts
                report(list(resumed.values())
                       + [x for x in results if x["status"] != "not run (deadline)"], eq, a.out,
                       f"PARTIAL: {i} of {len(ms)} mutants reported so far (the run did not "
                       f"finish writing its report), bundle commit {commit}")
        except cf.TimeoutError:
            for fut, m in futs.items():
                if not fut.done():
                    a.hung.append(m["id"])
                    results.append(dict(m, status="undecided (deadline)",
                                        detail=f"no verdict {STOP_MARGIN} s past the hard stop (a "
                                        "step that did not end; its processes were killed)"))
                    print(f"mutate: {m['id']} {m['file']}:{m['line']} {m['operator']}: "
                          "undecided (deadline): no verdict past the hard stop", flush=True)
            with LIVE_LOCK:
                for pg in list(LIVE):
                    kill_group(pg)
        ex.shutdown(wait=not a.hung, cancel_futures=True)
    late = [r for r in results if r["status"] == "not run (deadline)"]
    order = {m["id"]: k for k, m in enumerate(ms)}  # the report in the seeded order again
    results.sort(key=lambda r: order.get(r["id"], 0))
    results = list(resumed.values()) + [r for r in results if r["status"] != "not run (deadline)"]
    n_also = len(set(a.also.split(","))) if getattr(a, "also", None) else 0
    meta = (f"{len(ms) + len(resumed)} mutants ({'sampled: ' + str(a.sample) + ' with seed ' + str(a.seed) if a.sample else 'all generated'}"
            + (f", plus {n_also} named by --also (earlier survivors re-run)" if n_also else "")
            + (f"; {a.ledger_left_out} ledger equivalents left out before the selection "
               "(tools/mutation_equivalent.txt; --with-equivalents keeps them)"
               if getattr(a, "ledger_left_out", 0) else "")
            + (f"; {len(resumed)} final verdicts (killed, or no build) resumed from "
               f"{os.path.basename(a.resume)} (bundle commit {a.resume_commit}), the other "
               f"{len(ms)} run here" if resumed else "")
            + (f"; {len(late)} of them not started by the {a.deadline:.0f} s deadline, so "
               f"{len(results)} ran" if late else "")
            + f"), {'GPU' if gpu else 'CPU only (' + no_device(probe.stdout) + ')'} checks"
            + (f" restricted to those matching /{a.checks}/ (a survivor survived only these: its "
               "verdict over the whole tier needs an earlier pass's survival of the rest, on the "
               "same kernel source)" if getattr(a, "checks", None) else "") + ","
            f" {a.jobs} workers, {time.time() - t0:.0f} s, bundle commit {commit}{warm}")
    cache_tmp.cleanup()
    text = report(results, eq, a.out, meta, late)
    print(text.split("## Survivors")[0].rstrip())
    print(f"mutate: report {a.out}/mutation-report.md")
    return 0


# ------------------------------------------------------------------ same-code -----------------
# The product build's nvcc flags (tools/cuda.bzl: NVCC_FLAGS with the default gencode;
# //tools:mutate_test checks that they agree), for same-code's objects.
PRODUCT_NVCC_FLAGS = ["-std=c++17", "-O3", "-gencode=arch=compute_90,code=sm_90", "-Xcompiler",
                      "-fPIC"]
# The sources the product build compiles for sm_90a instead (kernels/BUILD MLA_KERNEL_ARCH_SRCS,
# tools/cuda.bzl CUDA_GENCODE_ARCH; //tools:mutate_test checks both): built with the plain
# gencode, the wgmma arm's kernel would be its __trap() stub, and every mutant of it the same code.
PRODUCT_ARCH_SRCS = ("kernels/mla_attn_wg.cu",)
PRODUCT_ARCH_GENCODE = "-gencode=arch=compute_90a,code=sm_90a"


def product_nvcc_flags(rel):
    """The product build's nvcc flags for the source rel (relative to the repository root)."""
    if rel not in PRODUCT_ARCH_SRCS:
        return PRODUCT_NVCC_FLAGS
    return [PRODUCT_ARCH_GENCODE if f.startswith("-gencode") else f for f in PRODUCT_NVCC_FLAGS]
# The one section of an nvcc object that differs from one build of the same source to the next:
# the symbol names, which carry nvcc's per-build module id (checked: every other section of two
# builds in the same directory is byte-identical; the embedded fatbinary depends on the source's
# path, so both builds of a comparison use one path).
UNSTABLE_SECTIONS = (".strtab",)


def elf_sections(path):
    """{section name: [sha256 of each section of that name]} of an ELF64 object (NOBITS: empty)."""
    import struct
    with open(path, "rb") as f:
        d = f.read()
    if d[:4] != b"\x7fELF" or d[4] != 2:
        raise ValueError(f"{path}: not an ELF64 object")
    shoff, = struct.unpack_from("<Q", d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
    names = secs[shstrndx][4]
    out = {}
    for name_off, kind, _, _, off, size, *_ in secs:
        end = d.index(b"\0", names + name_off)
        body = b"" if kind == 8 else d[off:off + size]
        out.setdefault(d[names + name_off:end].decode(), []).append(
            hashlib.sha256(body).hexdigest())
    return out


def differing_sections(a, b):
    """The section names (sorted) whose contents differ between two elf_sections maps, the
    unstable ones aside: [] means the same machine code, host and device."""
    return sorted(n for n in set(a) | set(b)
                  if n not in UNSTABLE_SECTIONS and a.get(n) != b.get(n))


def nvcc_object(nvcc, root, rel, out):
    """nvcc -c of root/rel with the product flags (-I root): (ok, the compiler's last lines)."""
    r = subprocess.run([nvcc, *product_nvcc_flags(rel), "-I", root, "-c", "-o", out,
                        os.path.join(root, rel)], capture_output=True, text=True)
    return r.returncode == 0, "\n".join((r.stdout + r.stderr).strip().splitlines()[-3:])


def cmd_same_code(a, ms):
    """Each mutant compiled, on this machine (no GPU), with the product flags to an object, and its
    sections compared with the unmutated source's object built at the same path: a mutant whose
    every section is the same (UNSTABLE_SECTIONS aside) is the same machine code, host and device,
    and so equivalent on any input; its ledger line (tools/mutation_equivalent.txt, the one-mutant
    form) is printed for review. The rest differ (the sections are named) or did not compile.
    Twenty-fifth session: two attn_tc_bf16 mutants that had survived every GPU check (an m-tile
    loop one trip past its register arrays) were the same machine code; the GPU checks of such a
    mutant are wasted. Workers (--jobs) each compile in a copy of kernels/ of their own."""
    import concurrent.futures as cf
    import queue
    nvcc = a.nvcc or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.path.exists(nvcc) and not shutil.which(nvcc):
        raise SystemExit(f"mutate: same-code needs nvcc ({nvcc} not found)")
    root = src_root()
    tmp = tempfile.TemporaryDirectory(prefix="mla-same-code-")
    free = queue.Queue()
    pristine = {}  # (worker, file) -> sections of the unmutated object built in that worker
    for w in range(max(1, a.jobs)):
        wd = os.path.join(tmp.name, f"w{w}")
        shutil.copytree(os.path.join(root, "kernels"), os.path.join(wd, "kernels"))
        free.put(wd)

    def one(m):
        wd = free.get()
        try:
            src = os.path.join(wd, m["file"])
            obj = os.path.join(wd, "obj.o")
            key = (wd, m["file"])
            if key not in pristine:
                ok, why = nvcc_object(nvcc, wd, m["file"], obj)
                if not ok:
                    raise SystemExit(f"mutate: the unmutated {m['file']} did not compile: {why}")
                pristine[key] = elf_sections(obj)
            with open(src) as f:
                orig = f.read()
            try:
                with open(src, "w") as f:
                    f.write(apply(m, orig))
                ok, why = nvcc_object(nvcc, wd, m["file"], obj)
                if not ok:
                    return dict(m, same_code="did not compile", detail=why)
                diff = differing_sections(pristine[key], elf_sections(obj))
                return dict(m, same_code="same machine code" if not diff else "differs",
                            detail=", ".join(diff[:8]) + (" ..." if len(diff) > 8 else ""))
            finally:
                with open(src, "w") as f:
                    f.write(orig)
        finally:
            free.put(wd)

    done = {}
    with cf.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        futs = {ex.submit(one, m): m["id"] for m in ms}
        for k, fut in enumerate(cf.as_completed(futs), 1):  # each verdict as it lands: a run cut
            r = done[futs[fut]] = fut.result()  # short still says what it found
            print(f"[{k}/{len(ms)}] {r['id']} {r['file']}:{r['line']} ({r['kernel']}) "
                  f"{r['operator']}: {r['same_code']}" + (f" ({r['detail']})" if r["detail"] else ""),
                  flush=True)
    tmp.cleanup()
    rows = [done[m["id"]] for m in ms]
    same = [r for r in rows if r["same_code"] == "same machine code"]
    for r in same:  # the ledger's one-mutant form names the mutant by content and occurrence
        occ = r.get("occurrence", 1)
        print("ledger: " + "\t".join([r["file"], r["operator"], r["before"], r["after"],
                                      f"{r['kernel']}#{occ}", "REASON (same machine code: every "
                                      "object section but .strtab identical, mutate.py same-code)"]))
    print(f"mutate: same-code: {len(same)} of {len(rows)} mutants are the same machine code, "
          f"{sum(r['same_code'] == 'differs' for r in rows)} differ, "
          f"{sum(r['same_code'] == 'did not compile' for r in rows)} did not compile")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("list", "run", "same-code"):
        p = sub.add_parser(name)
        p.add_argument("--file")
        p.add_argument("--kernel")
        p.add_argument("--operator", choices=OPERATORS)
        p.add_argument("--sample", type=int, default=0)
        p.add_argument("--ids", help="only these mutant ids (comma-separated), e.g. survivors")
        p.add_argument("--also", help="these mutant ids in addition to the selection (a sample "
                       "plus earlier survivors to re-kill)")
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("--with-equivalents", action="store_true",
                       help="keep the ledger's equivalents (tools/mutation_equivalent.txt) in a "
                            "selection by file, kernel, operator or sample (by default they are "
                            "left out before sampling; --ids / --also always keep theirs)")
        p.add_argument("--files", nargs="*", default=None, help=argparse.SUPPRESS)
    sub.choices["list"].add_argument("-o", "--output")
    r = sub.choices["run"]
    r.add_argument("--bundle", default=os.path.join(ROOT, "bundle"))
    r.add_argument("--libdir")
    r.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    r.add_argument("--timeout", type=float, default=120)
    r.add_argument("--sanitizer-timeout", type=float, default=None,
                   help="the timeout of the racecheck and memcheck checks (default --timeout): "
                        "under many workers a sanitizer stage can outlast the value checks' "
                        "timeout unmutated, which leaves its mutants undecided")
    r.add_argument("--prime-baselines", action="store_true",
                   help="start the unmutated run of every check at the start (all but the "
                        "golden suites' filters, which the warm-up answers), beside the first "
                        "mutants (one more GPU process per check), so that a mutant a check "
                        "kills near the end is not left undecided waiting for its baseline")
    r.add_argument("--deadline", type=float, default=0,
                   help="seconds after the run starts (the warm-up included) after which no "
                        "new mutant starts (those left are reported as not run, outside the "
                        "score); 0: none")
    r.add_argument("--grace", type=float, default=180,
                   help="with --deadline: seconds after it at which running mutants stop "
                        "before their next check (reported as undecided, outside the score)")
    r.add_argument("--checks", help="only the checks whose label matches this regular "
                   "expression (e.g. '^(racecheck|memcheck) ' for the sanitizer stages of earlier "
                   "survivors of the value checks): a kill is a kill; a survivor survived only "
                   "these, which the report says")
    r.add_argument("--out", default=os.path.join(ROOT, "out", "mutate"))
    r.add_argument("--resume", help="an earlier pass's mutation-report.json over the same "
                   "selection and bundle commit: its kills stand, the rest runs again")
    sc = sub.choices["same-code"]
    sc.add_argument("--jobs", type=int, default=2, help="parallel nvcc compiles")
    sc.add_argument("--nvcc", help="the nvcc to use (default: on PATH, else /usr/local/cuda)")
    sc.add_argument("--out", help="a JSON file of the mutants with their same_code verdict")
    s = sub.add_parser("show")
    s.add_argument("ids", nargs="+")
    ap_ = sub.add_parser("apply")
    ap_.add_argument("id")
    ap_.add_argument("output")
    a = ap.parse_args(argv)
    files = getattr(a, "files", None) or default_files()
    ms = generate(files)
    if a.cmd == "list":
        sel = select(ms, a)
        counts = {}
        for m in sel:
            counts.setdefault(m["file"], {}).setdefault(m["operator"], 0)
            counts[m["file"]][m["operator"]] += 1
        for f, c in sorted(counts.items()):
            print(f"{f}: {sum(c.values())} mutants (" +
                  ", ".join(f"{o} {c[o]}" for o in OPERATORS if o in c) + ")")
        print(f"mutate: {len(sel)} of {len(ms)} generated mutants selected"
              + (f" ({a.ledger_left_out} ledger equivalents left out)" if a.ledger_left_out
                 else ""))
        if a.output:
            with open(a.output, "w") as f:
                json.dump(sel, f, indent=1)
        return 0
    by = {m["id"]: m for m in ms}
    if a.cmd == "show":
        for i in a.ids:
            m = by.get(i)
            if not m:
                print(f"mutate: no mutant {i}", file=sys.stderr)
                return 2
            print(f"{m['id']} {m['file']}:{m['line']} ({m['kernel']}) {m['operator']}\n"
                  f"  - {m['before']}\n  + {m['after']}")
        return 0
    if a.cmd == "apply":
        m = by.get(a.id)
        if not m:
            print(f"mutate: no mutant {a.id}", file=sys.stderr)
            return 2
        with open(os.path.join(src_root(), m["file"])) as f:
            text = f.read()
        with open(a.output, "w") as f:
            f.write(apply(m, text))
        return 0
    if a.cmd == "same-code":
        return cmd_same_code(a, select(ms, a))
    rc = cmd_run(a, select(ms, a))
    if getattr(a, "hung", None):
        # threads of steps that never ended: the interpreter would join them at exit
        sys.stdout.flush()
        os._exit(rc)
    return rc


if __name__ == "__main__":
    sys.exit(main())
