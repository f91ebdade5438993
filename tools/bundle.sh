#!/usr/bin/env bash
# tools/bundle.sh [DIR]: packs the GPU tier for a CUDA host without Bazel, clang or Criterion.
#
# DIR (default bundle/) gets: bin.tar.xz (every Criterion test binary, the libFuzzer+ASan GPU fuzzers,
# the benchmarks, the golden tool), lib.tar.xz (the shared libraries those binaries need that a
# plain CUDA host lacks: Criterion and its dependencies; never libcuda or cuBLASLt, which the
# host provides), relink.tar.xz (the relink-only loop: kernel sources, nvcc flags, objects, link
# lines; docs/relink.md), golden/, the fuzzers' corpora under fuzz/corpus/, docs/contract.md,
# tools/summarize.py and run-gpu-tier.sh, which runs the GPU tier there and prints the same
# summary as `tools/harness run`.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
DIR=${1:-bundle}
rm -rf "$DIR"
mkdir -p "$DIR/bin" "$DIR/lib" "$DIR/fuzz" "$DIR/docs" "$DIR/tools"

# Corpus replays on the GPU host use the libFuzzer binaries themselves (-runs=0), so the
# regression drivers (the CPU tier's replays) and the CPU-only fuzzers stay out of the bundle.
TESTS=$(bazel query 'kind("cc_test", //tests/...)' 2>/dev/null)
BENCH=$(bazel query 'kind("cc_binary", //tools/bench/...)' 2>/dev/null || true)
bazel build $TESTS $BENCH //tools/golden:golden //tools:gpu_probe
FUZZERS=$(bazel query 'attr(name, "_fuzzer$", kind("cc_binary", //fuzz/...))' 2>/dev/null |
          grep -v -e contract_codes_fuzzer -e golden_loader_fuzzer)
bazel build --config=fuzz $FUZZERS

copy_bin() { # label, output dir of the config
    local label=$1 tree=$2 path
    path="$tree/$(echo "${label#//}" | tr ':' '/')"
    cp "$path" "$DIR/bin/"
}
for t in $TESTS $BENCH //tools/golden:golden //tools:gpu_probe; do copy_bin "$t" bazel-out/k8-fastbuild/bin; done
for f in $FUZZERS; do copy_bin "$f" bazel-out/k8-fastbuildfuzz/bin; done

# Shared libraries: everything the binaries load except the C library, the CUDA driver and
# the CUDA libraries the host's toolkit provides.
for b in "$DIR"/bin/*; do
    ldd "$b" 2>/dev/null | awk '/=> \//{print $3}'
done | sort -u | while read -r lib; do
    case "$(basename "$lib")" in
        libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libgcc_s.so*|libstdc++.so*) ;;
        libcuda.so*|libcublas*|libcudart*|libnvidia*) ;;
        *) cp -L "$lib" "$DIR/lib/" ;;
    esac
done

# Debug info stays in the build tree; symbols stay in the binaries (readable stack traces).
chmod u+w "$DIR"/bin/* "$DIR"/lib/*
strip --strip-debug "$DIR"/bin/* "$DIR"/lib/* 2>/dev/null || true

cp -r golden "$DIR/golden"
mkdir -p "$DIR/fuzz/corpus"
for f in "$DIR"/bin/*_fuzzer; do
    t=$(basename "$f"); t=${t%_fuzzer}
    cp -r "fuzz/corpus/$t" "$DIR/fuzz/corpus/$t"
done
# contract_fuzz_ids_test replays the contract fuzzer's corpus (ids pinned per committed input).
cp -r fuzz/corpus/contract_codes "$DIR/fuzz/corpus/contract_codes"
cp fuzz/*.options "$DIR/fuzz/" 2>/dev/null || true
cp docs/contract.md "$DIR/docs/"
cp tools/summarize.py tools/sanitize_report.py tools/sanitize_set.tsv tools/ledger.py \
    tools/ledger_html.py "$DIR/tools/"
# The perf gate's A/B (docs/perf-gate.md): arms from `tools/harness perf-arm` beside the bundle.
cp tools/perf_compare.py "$DIR/tools/"
# Mutation testing on the GPU host (docs/mutation.md): mutants through the relink-only loop.
cp tools/mutate.py tools/mutation_equivalent.txt "$DIR/tools/"
# The shrinker (docs/shrink.md) and the shrunk regression cases it wrote (tests/regressions/).
cp tools/shrink.py "$DIR/tools/"
# The PyTorch peer of the benchmarks, the goals table (tools/bench/goals.py) and the golden
# reader the peer's self-check uses.
mkdir -p "$DIR/tools/bench" "$DIR/tools/golden"
cp tools/bench/torch_peer.py tools/bench/goals.py "$DIR/tools/bench/"
cp tools/golden/mla_golden.py "$DIR/tools/golden/"
mkdir -p "$DIR/regressions"
cp tests/regressions/*.json "$DIR/regressions/" 2>/dev/null || true
# --gpus / --shard / --merge (tools/gpu_dispatch.sh, tools/shard.py) and the Slurm job array.
cp tools/gpu_dispatch.sh tools/shard.py tools/shard_durations.json "$DIR/tools/"
cp tools/corpus_delta.sh "$DIR/tools/" # the new inputs of each fuzz target (corpus-delta/)
mkdir -p "$DIR/tools/slurm"
cp tools/slurm/nightly.sbatch tools/slurm/submit.sh "$DIR/tools/slurm/"
cp tests/known_failures.txt "$DIR/known_failures.txt"
cp tools/run-gpu-tier.sh "$DIR/run-gpu-tier.sh"
chmod +x "$DIR/run-gpu-tier.sh"
# The relink-only loop (docs/relink.md, run-gpu-tier.sh --rebuild): kernel sources, the nvcc
# flags, the other objects and each binary's link line, packed as relink.tar.xz.
python3 tools/relink_pack.py "$DIR"
tar -C "$DIR" -cJf "$DIR/relink.tar.xz" relink && rm -rf "$DIR/relink"
# The packed libraries and the binaries travel compressed (run-gpu-tier.sh unpacks them on
# start): every test binary links the kernels' sm_90 code, which compresses about 4x.
tar -C "$DIR" -cJf "$DIR/lib.tar.xz" lib && rm -rf "$DIR/lib"
XZ_OPT="-T0 -6" tar -C "$DIR" -cJf "$DIR/bin.tar.xz" bin && rm -rf "$DIR/bin"
git rev-parse HEAD > "$DIR/COMMIT" 2>/dev/null || echo unknown > "$DIR/COMMIT"
size_mib=$(du -sm "$DIR" | cut -f1)
echo "bundle size: ${size_mib} MiB"
if [ "$size_mib" -ge 50 ]; then
    echo "bundle: over the 50 MiB budget" >&2
    exit 1
fi
echo "bundle: $DIR (run: cd $DIR && ./run-gpu-tier.sh [--fuzz-seconds N] [--sanitize] [--bench])"
