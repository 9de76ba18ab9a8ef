# Shared helpers for the shell test suites. Each test script is one ctest test; it gets TRAINRT
# (the binary), TRAINRT_BUILD, TRAINRT_SRC and TRAINRT_PYTHON (the project environment's python3:
# PyTorch 2.x, numpy, h5py, pandas; tools/deps.sh) from ctest, and fails on the first broken check.
set -euo pipefail
: "${TRAINRT:?run through ctest (TRAINRT unset)}"
: "${TRAINRT_PYTHON:?run through ctest (TRAINRT_PYTHON unset)}"
: "${TRAINRT_SRC:?run through ctest (TRAINRT_SRC unset)}"
cd "$TRAINRT_SRC"
DATA="$TRAINRT_SRC/data/fashion-mnist.h5"
# 6000 training and 1000 test images of the same (fixture small_data: tests/lib/small_data.sh).
SMALL_DATA="$TRAINRT_SRC/data/fashion-mnist-6k.h5"
SMALL_IDX="$TRAINRT_SRC/data/fashion-mnist-6k-idx"  # the same, as IDX files (the Python example)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/trainrt-test.XXXXXX")
trap '[ -n "${TRAINRT_TEST_KEEP:-}" ] || rm -rf "$WORK"' EXIT
failures=0
# The exit code table (docs/reference/exit-codes.md) as TRAINRT_EXIT_<NAME> and TRAINRT_RESULTS_<STATUS>.
eval "$("$TRAINRT" --exit-codes)"

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
finish() {
  if [ "$failures" -ne 0 ]; then echo "$failures check(s) failed" >&2; exit 1; fi
  echo "all checks passed"
}
require_data() {
  [ -f "$DATA" ] || { echo "FAIL: $DATA missing (make test imports it first)" >&2; exit 1; }
}
require_small_data() {
  [ -f "$SMALL_DATA" ] || { echo "FAIL: $SMALL_DATA missing (the small_data fixture makes it)" >&2; exit 1; }
}

# rows RUN_DIR: result rows so far.
rows() { if [ -s "$1/result.jsonl" ]; then wc -l <"$1/result.jsonl"; else echo 0; fi; }
# count_events RUN JQ_CONDITION: how many events match (0 when there is no events.jsonl).
count_events() { [ -f "$1/events.jsonl" ] || { echo 0; return; }; jq -c "select($2)" "$1/events.jsonl" | grep -c . || true; }
# rows_reached RUN_DIR N LIMIT: waits up to LIMIT seconds until result.jsonl has at least N
# lines; returns 1 when it did not.
rows_reached() {
  local deadline=$((SECONDS + $3))
  until [ "$(rows "$1")" -ge "$2" ]; do
    ((SECONDS < deadline)) || return 1
    sleep 0.05
  done
}
# wait_rows RUN_DIR N: rows_reached within 60 s (the slurm suite's version fails the test instead).
wait_rows() { rows_reached "$1" "$2" 60; }

# rank_pid NAME RANK: pid of trainrt rank RANK of run NAME (mpiexec sets PMI_RANK).
rank_pid() {
  local name=$1 rank=$2 pid deadline=$((SECONDS + 30))
  while ((SECONDS < deadline)); do
    for pid in $(pgrep -f -- "--run.name=$name" || true); do
      [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = trainrt ] || continue
      tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "PMI_RANK=$rank" && { echo "$pid"; return 0; }
    done
    sleep 0.05
  done
  return 1
}
