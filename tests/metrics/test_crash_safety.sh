#!/usr/bin/env bash
# kill -9 of the writing rank while it reports, at a random row between two checkpoints: each time
# metrics.h5 opens (SWMR reader, as while a job runs) and holds every row of result.jsonl whose
# report returned (the row being written when the kill came may be missing from it); the rerun
# resumes from the newest checkpoint, moves the rows of lost work aside, rebuilds the table and
# appends. In the end result.jsonl, progress.csv and metrics.h5 hold iterations 1..N exactly once.
# Then a truncated metrics.h5: the next start says so in one warning and repairs it.
source "$(dirname "$0")/lib.sh"
run="$WORK/crash"
every=10
args=(--train.checkpoint_every=$every --train.sleep_ms=4 --failure.max_failures=-1)

# kill_between_checkpoints RUN PID: kill -9 PID once result.jsonl's row count is K rows past a
# checkpoint (K random in 2..7). A checkpoint's row is written before its save, so the rows
# after the newest checkpoint are lost work whatever the save was doing.
kill_between_checkpoints() {
  local n k=$((2 + RANDOM % 6)) deadline=$((SECONDS + 30))
  while ((SECONDS < deadline)); do
    n=$(wc -l <"$1/result.jsonl")
    if ((n % every == k)); then kill -9 "$2"; return 0; fi
  done
  kill -9 "$2"; return 1
}

# compare RUN LABEL: metrics.h5 (SWMR read) against result.jsonl; prints "h5_rows jsonl_rows".
compare() {
  "$TRAINRT_PYTHON" - "$1" <<'PY'
import json, sys, h5py
run = sys.argv[1]
jsonl = []
for line in open(run + "/result.jsonl"):
    try: jsonl.append(json.loads(line))
    except ValueError: pass          # a line torn by the kill
with h5py.File(run + "/metrics.h5", "r", swmr=True) as f:
    d = f["metrics"][:]
assert len(jsonl) - 1 <= len(d) <= len(jsonl), (len(d), len(jsonl))
for row, j in zip(d, jsonl):
    assert row["_training_iteration"] == j["_training_iteration"] and row["loss"] == j["loss"], (row, j)
print(len(d), len(jsonl))
PY
}

target=60 lost=0
for attempt in 1 2 3 4; do
  report_run 2 crash "$WORK/crash.$attempt.out" "${args[@]}" --train.reports=100000 &
  runner=$!
  wait_rows "$run" "$target" || { fail "attempt $attempt: no $target rows"; kill "$runner"; break; }
  if [ "$attempt" = 1 ]; then  # a reader while the job writes: metrics.h5 first, then result.jsonl
    "$TRAINRT_PYTHON" - "$run" <<'PY' && pass "read while the job runs (h5py, swmr=True): every row so far, equal to result.jsonl" || fail "live read of metrics.h5"
import json, sys, h5py
run = sys.argv[1]
with h5py.File(run + "/metrics.h5", "r", swmr=True) as f:
    d = f["metrics"][:]
jsonl = [json.loads(l) for l in open(run + "/result.jsonl") if l.endswith("\n")]
assert len(d) >= 50 and len(d) <= len(jsonl), (len(d), len(jsonl))
for row, j in zip(d, jsonl):
    assert row["_training_iteration"] == j["_training_iteration"] and row["loss"] == j["loss"]
PY
  fi
  pid=$(rank_pid crash 0) || { fail "attempt $attempt: rank 0 not found"; break; }
  kill_between_checkpoints "$run" "$pid" || fail "attempt $attempt: no kill between two checkpoints in 30 s"
  wait "$runner" || true
  lost=$((lost + $(wc -l <"$run/result.jsonl") % every))
  if counts=$(compare "$run" 2>"$WORK/compare.err"); then
    pass "attempt $attempt: killed between checkpoints; metrics.h5 opens, rows (h5 jsonl) = $counts, equal to result.jsonl"
  else
    cat "$WORK/compare.err" >&2; fail "attempt $attempt: metrics.h5 after kill -9"
  fi
  target=$(( $(wc -l <"$run/result.jsonl") + 20 ))
done

report_run 2 crash "$WORK/crash.final.out" "${args[@]}" --train.reports=$((target + 10))
[ "$rc" -eq 0 ] || { show "$WORK/crash.final.out"; fail "final rerun exits $rc"; finish; }
n=$((target + 10))
jq -se --argjson n "$n" '[.[]._training_iteration] == [range(1; $n + 1)]' "$run/result.jsonl" >/dev/null \
  && pass "result.jsonl: iterations 1..$n exactly once across 4 kills" || fail "result.jsonl iterations"
moved=$(cat "$run/result.superseded.jsonl" 2>/dev/null | wc -l)
# at least the rows past the newest checkpoint's row; more when that checkpoint's save was cut
((lost > 0 && moved >= lost)) && pass "rows of lost work moved to result.superseded.jsonl: $moved (>= $lost rows past a checkpoint at the kills)" \
  || fail "result.superseded.jsonl has $moved rows; $lost rows were past a checkpoint at the kills"
"$TRAINRT_PYTHON" - "$run" "$n" <<'PY' && pass "metrics.h5 (plain open, h5dump-able) and progress.csv: the same $n rows" || fail "final tables"
import csv, sys, h5py
run, n = sys.argv[1], int(sys.argv[2])
with h5py.File(run + "/metrics.h5", "r") as f:
    assert list(f["metrics"]["_training_iteration"]) == list(range(1, n + 1))
rows = list(csv.DictReader(open(run + "/progress.csv")))
assert [int(r["_training_iteration"]) for r in rows] == list(range(1, n + 1))
PY
grep -q "rebuilt from result.jsonl" "$WORK/crash.2.out" && pass "a start after a kill rebuilds metrics.h5, saying so" \
  || fail "no rebuild notice after a kill: $(grep metrics.h5 "$WORK/crash.2.out")"

# Truncated (e.g. a copy cut short): the next start warns once and repairs it to the last row.
size=$(stat -c %s "$run/metrics.h5")
truncate -s $((size / 2)) "$run/metrics.h5"
src=0; "$TRAINRT" results "$run" --json >"$WORK/truncated.json" 2>"$WORK/truncated.err" || src=$?
[ "$src" -eq 0 ] && jq -e --argjson n "$n" '.rows == $n and (.warnings | map(select(test("metrics.h5 does not open"))) | length) == 1' "$WORK/truncated.json" >/dev/null \
  && [ ! -s "$WORK/truncated.err" ] \
  && pass "trainrt results on a truncated metrics.h5: exit 0, rows from result.jsonl, one warning: $(jq -r '.warnings[0]' "$WORK/truncated.json" | cut -c1-140)" \
  || { cat "$WORK/truncated.err" >&2; fail "trainrt results on a truncated metrics.h5: exit $src"; }
report_run 2 crash "$WORK/crash.truncated.out" "${args[@]}" --train.reports="$n"
[ "$rc" -eq 0 ] || { show "$WORK/crash.truncated.out"; fail "rerun after truncation exits $rc"; }
[ "$(grep -c 'metrics.h5 could not be opened' "$WORK/crash.truncated.out")" -eq 1 ] \
  && pass "truncated metrics.h5: one warning: $(grep -o 'warning: .*' "$WORK/crash.truncated.out" | cut -c1-160)" \
  || { show "$WORK/crash.truncated.out"; fail "no single warning for a truncated metrics.h5"; }
h5dump -d /metrics -H "$run/metrics.h5" | grep -q "( $n ) / ( H5S_UNLIMITED )" \
  && pass "repaired: $n rows" || fail "metrics.h5 not repaired"
finish
