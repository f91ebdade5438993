#!/usr/bin/env bash
# The fixture tool end to end (tools/golden): list names every case; verify passes on the stored
# fixtures and fails, naming the worst element, on a copy with one flipped bit; regen reproduces
# a stored fixture byte for byte (diff says identical); diff reports the flipped element with its
# abs error and ULP distance, and exits 1; diff pairs the files of two folders.
set -uo pipefail
GOLDEN=${1:?usage: golden_tool_test.sh GOLDEN_TOOL}
TMP=${TEST_TMPDIR:-$(mktemp -d)}
fail=0
check() { # description, condition-exit-status
    if [ "$2" -eq 0 ]; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}

out=$("$GOLDEN" list); rc=$?
n=$(grep -c "stages:" <<<"$out")
# Every case of the manifest, each exactly once.
cases=$(python3 -c 'import json; print("\n".join(c["name"] for c in
    json.load(open("golden/manifest.json"))["cases"]))')
want=$(grep -c . <<<"$cases")
missing=0
for c in $cases; do
    [ "$(grep -c "^$c " <<<"$out")" -eq 1 ] || missing=$((missing + 1))
done
check "list exits 0 and names the manifest's $want cases (got $n, $missing missing)" \
    $(( rc != 0 || n != want || missing != 0 ))

"$GOLDEN" verify --dir golden glm5_rope_maxpos > "$TMP/verify_ok.log" 2>&1
check "verify passes on the stored fixture" $?

mkdir -p "$TMP/regen"
"$GOLDEN" regen --dir "$TMP/regen" glm5_rope_maxpos > "$TMP/regen.log" 2>&1
check "regen writes the fixture" $?
out=$("$GOLDEN" diff golden/glm5_rope_maxpos.safetensors "$TMP/regen/glm5_rope_maxpos.safetensors"); rc=$?
check "regen reproduces the stored fixture (diff: identical, exit 0)" $(( rc != 0 ))
grep -q "identical" <<<"$out"; check "diff says identical" $?

mkdir -p "$TMP/bad"
cp golden/*.safetensors golden/manifest.json "$TMP/bad/"
chmod u+w "$TMP/bad"/*
python3 - "$TMP/bad/glm5_rope_maxpos.safetensors" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[-5] ^= 1  # one bit of the last element's exponent byte
open(p, "wb").write(b)
PY
out=$("$GOLDEN" diff golden/glm5_rope_maxpos.safetensors "$TMP/bad/glm5_rope_maxpos.safetensors"); rc=$?
check "diff exits 1 on a changed tensor (got $rc)" $(( rc != 1 ))
grep -q "1 of 32768 changed, max abs error" <<<"$out"; check "diff reports the count, abs error and ulp" $?
out=$("$GOLDEN" verify --dir "$TMP/bad" glm5_rope_maxpos 2>&1); rc=$?
check "verify exits 1 on the damaged copy (got $rc)" $(( rc != 1 ))
grep -q "worst element" <<<"$out"; check "verify names the worst element" $?
out=$("$GOLDEN" diff golden "$TMP/bad"); rc=$?
check "diff of two folders pairs the files and exits 1 (got $rc)" $(( rc != 1 ))
grep -q "glm5_decode" <<<"$out"; check "folder diff covers every file" $?
exit $fail
