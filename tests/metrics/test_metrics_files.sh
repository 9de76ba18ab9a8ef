#!/usr/bin/env bash
# The three metrics files of one run: result.jsonl rows (autofilled fields, cross-rank summaries
# with known values, tags, a key that appears later), progress.csv (same rows, flattened
# columns) and metrics.h5 (the schema of hdf5_schemas/metrics.md, read with h5dump, h5py and
# pandas) hold the same 12 rows.
source "$(dirname "$0")/lib.sh"

report_run 2 files "$WORK/files.out" --train.reports=12 --train.late_key_at=6 --train.checkpoint_every=4
[ "$rc" -eq 0 ] || { show "$WORK/files.out"; fail "run exits $rc"; finish; }
run="$WORK/files"

# result.jsonl: 12 rows, iterations 1..12, autofilled fields, rank 0's values.
jq -se 'length == 12 and ([.[]._training_iteration] == [range(1;13)])' "$run/result.jsonl" >/dev/null \
  && pass "result.jsonl: 12 rows, iterations 1..12" || fail "result.jsonl iterations: $(jq -c ._training_iteration "$run/result.jsonl" | tr '\n' ' ')"
jq -se 'all(.[]; (._timestamp > 1.7e9) and (._time_this_iter_s >= 0) and (._time_total_s >= ._time_this_iter_s)
        and .world_size == 2 and .restart_count == 0)' "$run/result.jsonl" >/dev/null \
  && pass "autofilled: _timestamp, _time_this_iter_s, _time_total_s, world_size 2, restart_count 0" \
  || fail "autofilled fields: $(head -1 "$run/result.jsonl")"
jq -se 'all(.[]; (.loss - (1 / ._training_iteration) | fabs) < 1e-12 and .samples_per_s == 1000)' "$run/result.jsonl" >/dev/null \
  && pass "row values are rank 0's" || fail "row values: $(sed -n 3p "$run/result.jsonl")"
jq -se '[.[] | .phase] == ["warmup","warmup"] + [range(10) | "train"]' "$run/result.jsonl" >/dev/null \
  && pass "string tag kept" || fail "tags: $(jq -c .phase "$run/result.jsonl" | tr '\n' ' ')"
jq -se '([.[:5][] | has("val_loss")] | any | not) and ([.[5:][] | has("val_loss")] | all)' "$run/result.jsonl" >/dev/null \
  && pass "val_loss appears from iteration 6" || fail "late key"

# Cross-rank summaries: loss = 1/i + 0.01 rank, samples_per_s = 1000 (rank + 1).
jq -se 'all(.[]; . as $r | ._ranks.loss as $l | ($l.min - (1 / $r._training_iteration) | fabs) < 1e-12
        and ($l.max - (1 / $r._training_iteration + 0.01) | fabs) < 1e-12
        and ($l.mean - (1 / $r._training_iteration + 0.005) | fabs) < 1e-12 and $l.max_rank == 1)' "$run/result.jsonl" >/dev/null \
  && pass "_ranks.loss: min/mean/max/max_rank across the 2 ranks" || fail "_ranks.loss: $(jq -c ._ranks.loss "$run/result.jsonl" | head -3)"
jq -se 'all(.[]; ._ranks.samples_per_s == {"min":1000,"mean":1500,"max":2000,"max_rank":1}
        and (._ranks._time_this_iter_s | has("max_rank")) and (._ranks._time_compute_s.min >= 0)
        and (._ranks | has("phase") | not))' "$run/result.jsonl" >/dev/null \
  && pass "_ranks: samples_per_s exact, step times present, tags not summarized" || fail "_ranks: $(sed -n 2p "$run/result.jsonl" | jq -c ._ranks)"
jq -se '.[5]._ranks.val_loss.max_rank == 1 and (.[4]._ranks | has("val_loss") | not)' "$run/result.jsonl" >/dev/null \
  && pass "late key summarized from its first row" || fail "late key summaries"

# progress.csv: same rows, flattened columns, missing values empty.
"$TRAINRT_PYTHON" - "$run" <<'PY' && pass "progress.csv: 12 rows equal to result.jsonl, flattened _ranks columns, empty val_loss before iteration 6" || fail "progress.csv"
import csv, json, sys
run = sys.argv[1]
rows = list(csv.DictReader(open(run + "/progress.csv")))
jsonl = [json.loads(l) for l in open(run + "/result.jsonl")]
assert len(rows) == 12, len(rows)
header = list(rows[0].keys())
assert header[:6] == ["_training_iteration", "_timestamp", "_time_this_iter_s", "_time_total_s", "restart_count", "world_size"], header
for col in ["loss/min", "loss/mean", "loss/max", "loss/max_rank", "_time_compute_s/max", "val_loss", "phase"]:
    assert col in header, col
for c, j in zip(rows, jsonl):
    assert int(c["_training_iteration"]) == j["_training_iteration"]
    assert float(c["loss"]) == j["loss"] and float(c["loss/max"]) == j["_ranks"]["loss"]["max"]
    assert c["phase"] == j["phase"]
    assert (c["val_loss"] == "") == ("val_loss" not in j)
PY

# metrics.h5: schema (h5dump), values (h5py + pandas, same as result.jsonl).
h5dump -H "$run/metrics.h5" >"$WORK/h5dump.txt" 2>&1 \
  && grep -q 'DATASET "metrics"' "$WORK/h5dump.txt" && grep -q 'H5T_COMPOUND' "$WORK/h5dump.txt" \
  && grep -q '"loss/max_rank"' "$WORK/h5dump.txt" && grep -q 'H5T_STD_I64LE "_training_iteration"' "$WORK/h5dump.txt" \
  && grep -q 'DATASPACE  SIMPLE { ( 12 ) / ( H5S_UNLIMITED ) }' "$WORK/h5dump.txt" \
  && pass "h5dump: /metrics compound, 12 rows, unlimited" || { cat "$WORK/h5dump.txt" >&2; fail "h5dump -H"; }
"$TRAINRT_PYTHON" - "$run" <<'PY' && pass "h5py + pandas: 12 rows equal to result.jsonl, NaN before val_loss, tags decode, attributes" || fail "h5py/pandas"
import json, math, sys, h5py, pandas as pd
run = sys.argv[1]
jsonl = [json.loads(l) for l in open(run + "/result.jsonl")]
with h5py.File(run + "/metrics.h5", "r") as f:
    ds = f["metrics"]
    assert ds.attrs["version"] == 1 and ds.attrs["source"] in (b"result.jsonl", "result.jsonl"), dict(ds.attrs)
    df = pd.DataFrame(ds[:])
assert len(df) == 12, len(df)
assert list(df["_training_iteration"]) == list(range(1, 13))
for i, j in enumerate(jsonl):
    assert df["loss"][i] == j["loss"] and df["loss/mean"][i] == j["_ranks"]["loss"]["mean"]
    assert df["samples_per_s/max_rank"][i] == 1
    assert df["phase"][i].decode() == j["phase"]
    assert math.isnan(df["val_loss"][i]) == ("val_loss" not in j)
assert df["_time_compute_s/max"].notna().all()
PY
grep -q '\[trainrt 0\] finished' "$WORK/files.out" && pass "run finished" || fail "no finish line"

# A stop (USR2) and the rerun: the tables are reopened and appended to, not rebuilt.
report_run 2 stopped "$WORK/stopped.out" --train.reports=30 --train.checkpoint_every=1 --train.sleep_ms=50 &
runner=$!
wait_rows "$WORK/stopped" 5 || fail "stop run: no 5 rows"
kill -USR2 "$(rank_pid stopped 1)"
wait "$runner" || true
rows_at_stop=$(wc -l <"$WORK/stopped/result.jsonl")
h5_inode=$(stat -c %i "$WORK/stopped/metrics.h5")
report_run 2 stopped "$WORK/stopped.rerun.out" --train.reports=30 --train.checkpoint_every=1 --train.sleep_ms=50
[ "$rc" -eq 0 ] || { show "$WORK/stopped.rerun.out"; fail "rerun exits $rc"; }
[ "$rows_at_stop" -lt 30 ] && [ "$(stat -c %i "$WORK/stopped/metrics.h5")" = "$h5_inode" ] && ! grep -q rebuilt "$WORK/stopped.rerun.out" \
  && pass "stopped after $rows_at_stop rows; the rerun appended to the same metrics.h5 (no rebuild)" \
  || fail "stop/rerun: $rows_at_stop rows at the stop, metrics.h5 replaced or rebuilt"
"$TRAINRT_PYTHON" - "$WORK/stopped" <<'PY' && pass "after the rerun: metrics.h5 and progress.csv hold iterations 1..30 once, restart rows included" || fail "tables after stop and rerun"
import csv, sys, h5py
run = sys.argv[1]
with h5py.File(run + "/metrics.h5", "r") as f:
    assert list(f["metrics"]["_training_iteration"]) == list(range(1, 31))
assert [int(r["_training_iteration"]) for r in csv.DictReader(open(run + "/progress.csv"))] == list(range(1, 31))
PY
finish
