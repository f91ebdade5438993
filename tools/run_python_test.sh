#!/usr/bin/env bash
# run_python_test.sh SCRIPT [ARGS...]: a Python test as a Bazel sh_test (python3 from PATH).
set -uo pipefail
exec python3 "$@"
