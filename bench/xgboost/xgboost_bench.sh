#!/usr/bin/env bash
# The XGBoost benchmark (bench/run.sh, part "xgboost"): trainrt's built-in xgboost workload against
# a hand-written xgboost.train with its own tracker (plain_xgboost.py), same HIGGS-shaped table
# (make_table.py), parameters and threads, 1 and 2 ranks, the two alternated REPS times per rank
# count (the machine is shared: a single pair moves by ±20 %; the report takes the median ratio).
#   bash bench/xgboost/xgboost_bench.sh TRAINRT OUT.jsonl WORKDIR [ROWS] [ROUNDS] [REPS]
# One JSON line per run into OUT.jsonl:
#   xgboost_trainrt (checkpoint.async = true, a checkpoint every 4 rounds): "round_s" (median
#     over rounds 2..), "stall_s" (median time report() spent on a checkpoint), "serialize_s"
#     (median time of trainrt.xgboost.model_checkpoint() on the final booster: save_raw to a
#     Checkpoint, what the callback does before report()), "rep";
#   xgboost_trainrt_sync (checkpoint.async = false): "save_s", the median synchronous save;
#   xgboost_plain: "round_s", "save_s" (booster.save_model() to a local file), "save_fsync_s", "rep".
set -euo pipefail
TRAINRT=$1 OUT=$2 WORK=$3 ROWS=${4:-1000000} ROUNDS=${5:-20} REPS=${6:-3}
source "$(dirname "${BASH_SOURCE[0]}")/../lib/machine.sh"
PY=$(build_python "$(dirname "$TRAINRT")")
mkdir -p "$WORK"
TABLE=$WORK/higgs_like.h5
if [[ ! -f $TABLE ]]; then
  "$PY" bench/xgboost/make_table.py --rows "$ROWS" --out "$WORK/npy"
  "$TRAINRT" data import npy features="$WORK/npy/features.npy" label="$WORK/npy/label.npy" --label label \
    --split train=0.9,test=0.1 --out "$TABLE" >&2
  rm -rf "$WORK/npy"
fi
export PYTHONPATH="$(dirname "$TRAINRT")/lib/trainrt/python${PYTHONPATH:+:$PYTHONPATH}"

# trainrt_run RANKS NAME ROUNDS ASYNC: the built-in workload, a checkpoint every 4 rounds.
trainrt_run() {
  rm -rf "${WORK:?}/$2"
  mpiexec -n "$1" "$TRAINRT" --run.workload=xgboost --data.path="$TABLE" --train.num_boost_round="$3" \
    --train.checkpoint_every_rounds=4 --train.params.objective=binary:logistic --train.params.eval_metric=logloss,error \
    --train.params.max_depth=8 --train.params.eta=0.1 --train.params.tree_method=hist --train.params.nthread=1 \
    --checkpoint.async="$4" --metrics.progress=off --run.storage_path="$WORK" --run.name="$2" >&2
}

# summary RUN RANKS BENCH REP: the run's JSON line (see above).
summary() {
  "$PY" - "$@" "$TABLE" <<'PYEOF'
import json, statistics, sys, time
import h5py, xgboost
from trainrt.xgboost import model_checkpoint
run, ranks, bench, rep, table = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
rows = [json.loads(l) for l in open(f"{run}/result.jsonl")]
saves = [e["stall_s"] for e in map(json.loads, open(f"{run}/events.jsonl")) if e.get("event") == "checkpoint"]
with h5py.File(table, "r") as f:
    train_rows = int(f["train"]["label"].shape[0])
line = {"bench": bench, "ranks": ranks, "rep": rep, "train_rows": train_rows, "saves": len(saves)}
if bench == "xgboost_trainrt_sync":
    line["save_s"] = statistics.median(saves)
else:
    latest = open(f"{run}/checkpoints/latest").read().strip()
    with h5py.File(f"{run}/checkpoints/{latest}/rank_00000.h5", "r") as f:
        booster = xgboost.Booster(model_file=bytearray(f["tensors/xgboost.model"][...].tobytes()))
    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        model_checkpoint(booster)
        times.append(time.perf_counter() - t0)
    line.update(round_s=statistics.median(r["_time_this_iter_s"] for r in rows[1:]), stall_s=statistics.median(saves),
                serialize_s=statistics.median(times), test_error=rows[-1]["test-error"])
print(json.dumps(line))
PYEOF
}

for ranks in 1 2; do
  for rep in $(seq 1 "$REPS"); do
    trainrt_run "$ranks" "xgb_n$ranks" "$ROUNDS" true
    summary "$WORK/xgb_n$ranks" "$ranks" xgboost_trainrt "$rep" >>"$OUT"
    "$PY" bench/xgboost/plain_xgboost.py --ranks "$ranks" --data "$TABLE" --rounds "$ROUNDS" --dir "$WORK/plain" \
      | sed "s/}\$/, \"rep\": $rep}/" >>"$OUT"
  done
  trainrt_run "$ranks" "xgb_sync_n$ranks" 8 false
  summary "$WORK/xgb_sync_n$ranks" "$ranks" xgboost_trainrt_sync 0 >>"$OUT"
done
