"""tools/select_ring_model_test.py: the synchronisation of the select's ring arm
(kpool_select_radix_f32<true, true>, kernels/mla_kpool.cu), checked on the CPU by a model.

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
stage that some warp has not yet read. The stage count and the warp count come from
mla_kpool.cu's SEL_RING_ST and SEL_NT. The row sizes are those of the tests and the shipped shape
(70,000 pools: 34 stages; 262,144: 128) and the edges (1, ST - 1, ST, ST + 1 stages).

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
    here = os.path.dirname(os.path.abspath(__file__))
    src = open(os.path.join(here, "..", "kernels", "mla_kpool.cu")).read()
    st = int(re.search(r"#define SEL_RING_ST (\d+)", src).group(1))
    b = int(re.search(r"#define SEL_RING_B (\d+)", src).group(1))
    nt = int(re.search(r"#define SEL_NT (\d+)", src).group(1))
    # the protocol as the model states it, so a rewrite of the kernel's pass fails here first
    for text in ("mla_mbar_init(&ring_full[st], 1)", "mla_mbar_init(&ring_empty[st], SEL_NT / 32)",
                 "mla_mbar_wait(&ring_full[st], (unsigned)(j / SEL_RING_ST) & 1u)",
                 "if (lane == 0) mla_mbar_arrive(&ring_empty[st])",
                 "if (tid == 0 && j >= 1 && j - 1 + SEL_RING_ST < n_st)",
                 "issue(sp, j - 1 + SEL_RING_ST)"):
        assert text in re.sub(r"\s+", " ", src).replace("( ", "("), f"mla_kpool.cu lost {text!r}"
    return st, b, nt // 32


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
    st_n, b, nw = kernel_constants()
    assert b % 16 == 0 and st_n >= 2, (st_n, b)
    runs = 0
    for n_st in sizes(st_n):
        for seed in range(100 if n_st < 100 else 25):
            run(st_n, n_st, seed, nw)
            runs += 1
    print(f"     {runs} interleavings: {st_n} stages, {nw} warps, rows of {sizes(st_n)} stages")


@test
def the_protocol_holds_at_other_depths():
    _, _, nw = kernel_constants()
    for st_n in (2, 3, 4, 8):
        for n_st in sizes(st_n):
            for seed in range(8):
                run(st_n, n_st, seed, nw)


@test
def planted_faults_are_found():
    st_n, _, nw = kernel_constants()
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
