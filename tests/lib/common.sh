# Shared helpers for the shell test suites. Each test script is one ctest test; it gets TRAINRT
# (the binary), TRAINRT_BUILD and TRAINRT_SRC from ctest, and fails on the first broken check.
set -euo pipefail
: "${TRAINRT:?run through ctest (TRAINRT unset)}"
: "${TRAINRT_SRC:?run through ctest (TRAINRT_SRC unset)}"
cd "$TRAINRT_SRC"
DATA="$TRAINRT_SRC/data/fashion-mnist.h5"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/trainrt-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
failures=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
finish() {
  if [ "$failures" -ne 0 ]; then echo "$failures check(s) failed" >&2; exit 1; fi
  echo "all checks passed"
}
require_data() {
  [ -f "$DATA" ] || { echo "FAIL: $DATA missing (make test imports it first)" >&2; exit 1; }
}
