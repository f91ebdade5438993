"""tools/select_ring_model_test.py: the synchronisation of the select's ring arm
(kpool_select_radix_f32<true, 1> and <true, 2>, kernels/mla_kpool.cu), checked on the CPU by a
model.

The ring arm's pass streams a row through SEL_RING_ST shared-memory stages. Thread 0 (warp 0's
lane 0) issues one bulk copy a stage onto the stage's `full` mbarrier (count 1, expect_tx). Every
warp waits for the stage's phase, reads it, and its lane 0 arrives on the stage's `empty` mbarrier
(count SEL_NT / 32). At iteration j >= 1, thread 0 waits for the release of stage j - 1 and
refills it with chunk j - 1 + SEL_RING_ST. A deadlock there would hang the GPU tier, and a
refill before a release would change the bytes only now and then. Neither needs a GPU to be
found, so this model finds them here, on every CI run.

The model keeps the kernel's order of operations, with the barriers' phase and parity rules
(try_wait.parity(p) is true once the phase of parity p has completed). Copies land at random later
steps, and the warps are scheduled at random. Each check asserts four things: no deadlock, every
warp reads chunk j at iteration j, every chunk is issued exactly once, and no copy lands in a
stage that some warp has not yet read. Both rings are modelled, their stage counts and sizes and
the warp count from mla_kpool.cu (SEL_RING_ST / _B, SEL_RING2_ST / _B, SEL_NT). The row sizes are
the tests' (34 stages) and the shipped shape's (262,144 pools: 128 stages of 8 KiB, 64 of 16
KiB) and the edges (1, ST - 1, ST, ST + 1 stages).

Planted (the model must fail on each): no wait for the release before a refill; the full wait
with a constant parity; the empty barrier counting one arrival, not one a warp; a warp's release
before its read of the stage.
"""
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pycheck import main, test  # noqa: E402


def kernel_constants():
    """[(stages, bytes a stage) of ring 1, of ring 2], warps a block."""
    here = os.path.dirname(os.path.abspath(__file__))
    src = open(os.path.join(here, "..", "kernels", "mla_kpool.cu")).read()
    rings = []
    for name in ("SEL_RING", "SEL_RING2"):
        st = int(re.search(r"#define %s_ST (\d+)" % name, src).group(1))
        b = int(re.search(r"#define %s_B (\d+)" % name, src).group(1))
        rings.append((st, b))
    nt = int(re.search(r"#define SEL_NT (\d+)", src).group(1))
    # the protocol as the model states it, so a rewrite of the kernel's pass fails here first
    flat = re.sub(r"\s+", " ", src).replace("( ", "(")
    for text in ("mla_mbar_init(&ring_full[st], 1)", "mla_mbar_init(&ring_empty[st], SEL_NT / 32)",
                 "mla_mbar_wait(&ring_full[st], (unsigned)(j / RST) & 1u)",
                 "if (lane == 0) mla_mbar_arrive(&ring_empty[st])",
                 "if (tid == 0 && j >= 1 && j - 1 + RST < n_st)",
                 "mla_mbar_wait(&ring_empty[sp], (unsigned)((j - 1) / RST) & 1u)",
                 "issue(sp, j - 1 + RST)", "#define RST (sel_ring_of<RING>::ST)"):
        assert text in flat, f"mla_kpool.cu lost {text!r}"
    return rings, nt // 32


class Broken(Exception):
    pass


def run(st_n, n_st, seed, nw, fault=None):
    rnd = random.Random(seed)
    full = [{"phase": 0, "pending": 1, "tx": 0} for _ in range(st_n)]
    e_count = 1 if fault == "empty_count_one" else nw
    empty = [{"phase": 0, "pending": e_count} for _ in range(st_n)]
    held = [None] * st_n  # the chunk a stage holds
    unread = [set() for _ in range(st_n)]  # warps yet to read the stage's chunk
    inflight, issued = [], []

    def done(bar, parity):
        return (bar["phase"] & 1) != parity

    def maybe_complete_full(s):
        b = full[s]
        if b["pending"] == 0 and b["tx"] == 0:
            b["phase"] += 1
            b["pending"] = 1

    def issue(s, c):  # mla_mbar_expect (expect_tx, then the arrival), then the bulk copy
        full[s]["tx"] += 1
        full[s]["pending"] -= 1
        maybe_complete_full(s)
        inflight.append((s, c))
        issued.append(c)

    def land(i):
        s, c = inflight.pop(i)
        if unread[s]:
            raise Broken(f"chunk {c} landed in stage {s} before warps {sorted(unread[s])} read "
                         f"chunk {held[s]}")
        held[s] = c
        unread[s] = set(range(nw))
        full[s]["tx"] -= 1
        maybe_complete_full(s)

    def warp(w):
        if w == 0:
            for s in range(min(st_n, n_st)):
                issue(s, s)
        for j in range(n_st):
            s = j % st_n
            parity = 0 if fault == "full_parity" else (j // st_n) & 1
            while not done(full[s], parity):
                yield
            def release():
                e = empty[s]
                e["pending"] -= 1
                if e["pending"] == 0:
                    e["phase"] += 1
                    e["pending"] = e_count

            if fault == "release_before_read":
                release()
                yield
            yield  # the loads of the stage
            if held[s] != j:
                raise Broken(f"warp {w} at iteration {j} read chunk {held[s]}")
            unread[s].discard(w)
            if fault != "release_before_read":
                release()
            if w == 0 and j >= 1 and j - 1 + st_n < n_st:
                sp = (j - 1) % st_n
                if fault != "no_release_wait":
                    while not done(empty[sp], ((j - 1) // st_n) & 1):
                        yield
                issue(sp, j - 1 + st_n)
            yield

    gens = [warp(w) for w in range(nw)]
    alive, idle = set(range(nw)), 0
    while alive or inflight:
        if inflight and (not alive or rnd.random() < 0.3):
            land(rnd.randrange(len(inflight)))
            idle = 0
            continue
        w = rnd.choice(sorted(alive))
        try:
            next(gens[w])
            idle += 1
        except StopIteration:
            alive.discard(w)
            idle = 0
        if idle > 200000 and not inflight:
            raise Broken(f"deadlock: warps {sorted(alive)} blocked, no copy in flight")
    if sorted(issued) != list(range(n_st)):
        raise Broken(f"chunks issued {sorted(issued)}, expected 0..{n_st - 1}")


def sizes(st_n):
    return sorted({1, 2, max(1, st_n - 1), st_n, st_n + 1, 2 * st_n + 1, 34, 128})


@test
def the_kernel_protocol_holds():
    rings, nw = kernel_constants()
    for ring, (st_n, b) in enumerate(rings, 1):
        assert b % 16 == 0 and st_n >= 2, (ring, st_n, b)
        rows = sorted(set(sizes(st_n)) | {262144 * 4 // b})  # and the shipped row (262,144 pools)
        runs = 0
        for n_st in rows:
            for seed in range(100 if n_st < 100 else 25):
                run(st_n, n_st, seed, nw)
                runs += 1
        print(f"     ring {ring}: {runs} interleavings, {st_n} stages of {b} B, {nw} warps, rows of "
              f"{rows} stages")


@test
def the_protocol_holds_at_other_depths():
    _, nw = kernel_constants()
    for st_n in (2, 3, 4, 8):
        for n_st in sizes(st_n):
            for seed in range(8):
                run(st_n, n_st, seed, nw)


@test
def planted_faults_are_found():
    rings, nw = kernel_constants()
    st_n = rings[0][0]
    for fault in ("no_release_wait", "full_parity", "empty_count_one", "release_before_read"):
        found = None
        for seed in range(40):
            try:
                run(st_n, 34, seed, nw, fault)
            except Broken as e:
                found = str(e)
                break
        assert found, f"the model did not find the planted fault {fault}"
        print(f"     {fault}: {found}")


if __name__ == "__main__":
    sys.exit(main("select_ring_model_test"))
