#!/usr/bin/env bash
# The XGBoost benchmark (bench/run.sh, part "xgboost"): trainrt's built-in xgboost workload against
# a hand-written xgboost.train with its own tracker (plain_xgboost.py), same HIGGS-shaped table
# (make_table.py), parameters and threads, alternated per rank count, 1 and 2 ranks.
#   bash bench/xgboost/xgboost_bench.sh TRAINRT OUT.jsonl WORKDIR [ROWS] [ROUNDS]
# One JSON line per run into OUT.jsonl: {"bench": "xgboost_trainrt"|"xgboost_plain", "ranks",
# "train_rows", "round_s" (median over rounds 2..), "save_s" (median per checkpoint / save_model)}.
set -euo pipefail
TRAINRT=$1 OUT=$2 WORK=$3 ROWS=${4:-1000000} ROUNDS=${5:-20}
PY=/usr/bin/python3
mkdir -p "$WORK"
TABLE=$WORK/higgs_like.h5
if [[ ! -f $TABLE ]]; then
  "$PY" bench/xgboost/make_table.py --rows "$ROWS" --out "$WORK/npy"
  "$TRAINRT" data import npy features="$WORK/npy/features.npy" label="$WORK/npy/label.npy" --label label \
    --split train=0.9,test=0.1 --out "$TABLE" >&2
  rm -rf "$WORK/npy"
fi
export PYTHONPATH="$(dirname "$TRAINRT")/lib/trainrt/python${PYTHONPATH:+:$PYTHONPATH}"
for ranks in 1 2; do
  name=xgb_n$ranks
  rm -rf "${WORK:?}/$name"
  mpiexec -n "$ranks" "$TRAINRT" --run.workload=xgboost --data.path="$TABLE" --train.num_boost_round="$ROUNDS" \
    --train.checkpoint_every_rounds=4 --train.params.objective=binary:logistic --train.params.eval_metric=logloss,error \
    --train.params.max_depth=8 --train.params.eta=0.1 --train.params.tree_method=hist --train.params.nthread=1 \
    --metrics.progress=off --run.storage_path="$WORK" --run.name="$name" >&2
  "$PY" - "$WORK/$name" "$ranks" "$TABLE" >>"$OUT" <<'PYEOF'
import json, statistics, sys, h5py
run, ranks, table = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = [json.loads(l) for l in open(f"{run}/result.jsonl")]
saves = [json.loads(l) for l in open(f"{run}/events.jsonl")]
saves = [e["stall_s"] for e in saves if e.get("event") == "checkpoint"]
with h5py.File(table, "r") as f:
    train_rows = int(f["train"]["label"].shape[0])
print(json.dumps({"bench": "xgboost_trainrt", "ranks": ranks, "train_rows": train_rows,
                  "round_s": statistics.median(r["_time_this_iter_s"] for r in rows[1:]),
                  "save_s": statistics.median(saves), "saves": len(saves),
                  "test_error": rows[-1]["test-error"]}))
PYEOF
  "$PY" bench/xgboost/plain_xgboost.py --ranks "$ranks" --data "$TABLE" --rounds "$ROUNDS" --dir "$WORK/plain" >>"$OUT"
done
