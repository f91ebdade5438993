# tools/testlib.sh: test cases of a shell test, as JUnit XML (sourced by tools/*_test.sh).
#
#   check NAME STATUS [MESSAGE]   STATUS 0: the case passed; else it failed (with MESSAGE)
#   skip_case NAME REASON         a skipped case (never a pass)
#   finish                        writes $XML_OUTPUT_FILE (Bazel uses it as the target's
#                                 test.xml, which tools/summarize.py reads case by case) and
#                                 exits 1 when a case failed, else 0
TESTLIB_CASES=() TESTLIB_FAILED=0

testlib_escape() { printf '%s' "$1" | tr -d '\000-\010\013\014\016-\037' |
    sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g; s/"/\&quot;/g'; }

check() { # NAME STATUS [MESSAGE]
    if [ "$2" -eq 0 ]; then
        echo "ok   $1"
        TESTLIB_CASES+=("passed"$'\t'"$1"$'\t')
    else
        echo "FAIL $1${3:+ -- $3}"
        TESTLIB_CASES+=("failed"$'\t'"$1"$'\t'"${3:-}")
        TESTLIB_FAILED=1
    fi
}

skip_case() { # NAME REASON
    echo "SKIP $1 -- $2"
    TESTLIB_CASES+=("skipped"$'\t'"$1"$'\t'"$2")
}

finish() {
    local suite=${TESTLIB_SUITE:-$(basename "$0" .sh)} c st name msg
    if [ -n "${XML_OUTPUT_FILE:-}" ]; then
        {
            echo '<?xml version="1.0" encoding="UTF-8"?>'
            echo "<testsuites><testsuite name=\"$suite\" tests=\"${#TESTLIB_CASES[@]}\">"
            for c in "${TESTLIB_CASES[@]}"; do
                IFS=$'\t' read -r st name msg <<< "$c"
                name=$(testlib_escape "$name") msg=$(testlib_escape "$msg")
                echo "<testcase classname=\"$suite\" name=\"$name\">"
                case $st in
                    failed) echo "<failure message=\"$msg\"/>" ;;
                    skipped) echo "<skipped message=\"$msg\"/>" ;;
                esac
                echo "</testcase>"
            done
            echo "</testsuite></testsuites>"
        } > "$XML_OUTPUT_FILE"
    fi
    local p=0 f=0 s=0
    for c in "${TESTLIB_CASES[@]}"; do
        case ${c%%$'\t'*} in passed) p=$((p + 1)) ;; failed) f=$((f + 1)) ;; *) s=$((s + 1)) ;; esac
    done
    echo "$p passed, $f failed, $s skipped"
    exit "$TESTLIB_FAILED"
}
