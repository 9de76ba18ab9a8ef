#!/usr/bin/env bash
# LightGBM on trainrt (trainrt.lightgbm: Ray Train's LightGBMTrainer, get_network_params and
# RayTrainReportCallback), with tests/python/lightgbm_guide.py: a regression on 8000 generated
# rows (each rank its share, pre_partition; 2000 held-out rows every rank evaluates), 40 rounds.
# From a plain python3, LightGBMTrainer(...).fit() on 1 worker gives single-process lightgbm.train's
# eval RMSE exactly, on 2 workers (LightGBM's socket network between the ranks) within 1 % of it;
# every iteration is one result row with LightGBM's metric name ("eval-rmse") and "iteration";
# a checkpoint every 5 iterations and at the end, whose model.txt (LightGBMTrainer.get_model)
# holds the 40 trees. As run.workload = python:...:train_func under mpiexec -n 2, 60 rounds: USR2
# to rank 1 mid-training stops the run at its next iteration with that iteration's booster
# committed (exit 9; no socket error); the rerun resumes from it (init_model) and ends at
# iteration 60 with every iteration reported once and every RMSE equal to the uninterrupted run's.
# run.workload = lightgbm from an INI file's keys alone, on the same 10000 rows written as CSV and
# imported with `trainrt data import csv`: on 1 and 2 ranks the test RMSE is within 1 % of single-process
# lightgbm.train on the same rows; `python3 -m trainrt.lightgbm predict` with the run's checkpoint
# gives the reported RMSE; an unknown train key is one line and exit 2.
# ctest: processors=2
source "$(dirname "$0")/../lib/common.sh"
export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python"
PY="$TRAINRT_PYTHON"
GUIDE="$TRAINRT_SRC/tests/python/lightgbm_guide.py"
"$PY" -c "import lightgbm" 2>/dev/null || { fail "lightgbm does not import (make deps installs it)"; finish; }
cd "$WORK"
within() { "$PY" -c "import sys; a, b, tol = map(float, sys.argv[1:]); sys.exit(0 if abs(a - b) <= tol * abs(b) else 1)" "$@"; }

ref=$("$PY" "$GUIDE" reference 40 | jq -r '."eval-rmse"')
for workers in 1 2; do
  out=$(timeout -k 10 240 "$PY" "$GUIDE" fit "$WORK" "fit$workers" "$workers" 40 2>"$WORK/fit$workers.err" | tail -1) \
    || { tail -5 "$WORK/fit$workers.err" >&2; fail "fit() on $workers worker(s) failed"; continue; }
  rmse=$(jq -r '."eval-rmse"' <<<"$out")
  tolerance=$([ "$workers" = 1 ] && echo 1e-12 || echo 0.01)
  within "$rmse" "$ref" "$tolerance" && pass "fit() on $workers worker(s): eval-rmse $rmse, single-process $ref (tolerance $tolerance)" \
    || fail "fit() on $workers worker(s): eval-rmse $rmse, single-process $ref (tolerance $tolerance)"
  [ "$(jq -c '[.iteration, .trees]' <<<"$out")" = "[40,40]" ] \
    && [ "$(jq -r '.iteration' "$WORK/fit$workers/result.jsonl" | tr '\n' ' ')" = "$(seq 1 40 | tr '\n' ' ')" ] \
    && [ "$(jq -s '[.[] | has("eval-rmse")] | all' "$WORK/fit$workers/result.jsonl")" = true ] \
    && [ "$(ls "$WORK/fit$workers/checkpoints" | grep -c '^checkpoint_')" = 8 ] \
    && pass "fit() on $workers worker(s): iterations 1..40 once each with eval-rmse, 8 checkpoints, the Result's model has 40 trees" \
    || fail "fit() on $workers worker(s): $out; rows $(jq -r .iteration "$WORK/fit$workers/result.jsonl" | tr '\n' ' '); checkpoints $(ls "$WORK/fit$workers/checkpoints" | tr '\n' ' ')"
done

# lgb NAME: 60 rounds as run.workload on 2 ranks into $WORK/NAME; sets rc.
lgb() {
  rc=0
  timeout -k 10 240 mpiexec -n 2 "$TRAINRT" --run.workload="python:$GUIDE:train_func" --train.rounds=60 \
    --train.pace_s=0.05 --metrics.progress=off --run.storage_path="$WORK" --run.name="$1" >>"$WORK/$1.out" 2>&1 || rc=$?
}
final() { tail -1 "$WORK/$1/result.jsonl" | jq -r '."eval-rmse"'; }
series() { jq -c '[.iteration, ."eval-rmse"]' "$WORK/$1/result.jsonl" | tr '\n' ' '; }
lgb whole
[ "$rc" -eq 0 ] || { tail -5 "$WORK/whole.out" >&2; fail "uninterrupted workload run exits $rc"; finish; }
( lgb stopped; echo "$rc" >"$WORK/stopped.rc" ) &
runner=$!
wait_rows "$WORK/stopped" 15 || fail "no 15 iterations within 60 s"
kill -USR2 "$(rank_pid stopped 1)"
wait "$runner" || true
first_rc=$(cat "$WORK/stopped.rc")
stopped_at=$(tail -1 "$WORK/stopped/result.jsonl" | jq -r .iteration)
[ "$first_rc" = 9 ] && [ -d "$WORK/stopped/checkpoints/$(printf 'checkpoint_%06d' "$stopped_at")" ] \
  && ! grep -q "Socket\|socket error" "$WORK/stopped.out" \
  && pass "USR2 to rank 1: exit 9 at iteration $stopped_at with its checkpoint, no socket error" \
  || { tail -5 "$WORK/stopped.out" >&2; fail "stop: exit $first_rc at iteration $stopped_at"; }
lgb stopped
rows=$(jq -r .iteration "$WORK/stopped/result.jsonl" | tr '\n' ' ')
[ "$rc" -eq 0 ] && grep -q "resuming from" "$WORK/stopped.out" && [ "$rows" = "$(seq 1 60 | tr '\n' ' ')" ] \
  && [ "$(series stopped)" = "$(series whole)" ] \
  && pass "resumed from iteration $stopped_at: iterations 1..60 once each, every eval-rmse equal to the uninterrupted run's (final $(final stopped))" \
  || fail "resume: exit $rc, rows $rows, final $(final stopped) vs $(final whole)"

"$PY" -c "
import sys, numpy as np
sys.path.insert(0, sys.argv[1])
from lightgbm_guide import data
x, y, xe, ye = data()
np.savetxt(sys.argv[2], np.column_stack([np.vstack([x, xe]), np.concatenate([y, ye])]), delimiter=',')
" "$TRAINRT_SRC/tests/python" "$WORK/regression.csv"
"$TRAINRT" data import csv "$WORK/regression.csv" --no-header --label -1 --split train=0.8,test=0.2 \
  --out "$WORK/regression.h5" >/dev/null
PARAMS=(--train.params.objective=regression --train.params.metric=rmse --train.params.learning_rate=0.1)
builtin() {  # NP NAME [ARGS]: the built-in workload, 30 rounds; sets rc
  rc=0
  timeout -k 10 240 mpiexec -n "$1" "$TRAINRT" --run.workload=lightgbm --data.path="$WORK/regression.h5" \
    --train.num_boost_round=30 "${PARAMS[@]}" "${@:3}" --metrics.progress=off --run.storage_path="$WORK" \
    --run.name="$2" >"$WORK/$2.out" 2>&1 || rc=$?
}
ref=$("$PY" - "$WORK/regression.h5" <<'PY'
import sys, lightgbm, numpy as np
from trainrt.data import Dataset
x, y = Dataset.open(sys.argv[1], "train").features_and_label()
xt, yt = Dataset.open(sys.argv[1], "test").features_and_label()
model = lightgbm.train({"objective": "regression", "learning_rate": 0.1, "verbose": -1}, lightgbm.Dataset(x, label=y), 30)
print(float(np.sqrt(np.mean((model.predict(xt) - yt) ** 2))))
PY
)
for np in 1 2; do
  builtin "$np" "ini$np"
  [ "$rc" -eq 0 ] || { tail -5 "$WORK/ini$np.out" >&2; fail "workload = lightgbm on $np rank(s): exit $rc"; continue; }
  rmse=$(tail -1 "$WORK/ini$np/result.jsonl" | jq -r '."test-rmse"')
  within "$rmse" "$ref" 0.01 && [ "$(jq -r .iteration "$WORK/ini$np/result.jsonl" | wc -l)" = 30 ] \
    && pass "workload = lightgbm on $np rank(s): 30 rows, test-rmse $rmse, single-process $ref" \
    || fail "workload = lightgbm on $np rank(s): test-rmse $rmse, single-process $ref"
done
"$PY" -m trainrt.lightgbm predict --checkpoint "$WORK/ini2" --data "$WORK/regression.h5" --out "$WORK/preds.h5" >/dev/null \
  && predicted=$("$PY" -c "import h5py, numpy as np, sys; f = h5py.File(sys.argv[1]); print(float(np.sqrt(np.mean((f['predictions'][...] - f['label'][...]) ** 2))))" "$WORK/preds.h5") \
  && within "$predicted" "$(tail -1 "$WORK/ini2/result.jsonl" | jq -r '."test-rmse"')" 1e-6 \
  && pass "predict with the run's checkpoint: RMSE $predicted, the reported one (LightGBM sums its metric in its own order: within 1e-6)" \
  || fail "predict: RMSE '${predicted:-}' vs reported $(tail -1 "$WORK/ini2/result.jsonl" | jq -r '."test-rmse"')"
builtin 1 badkey --train.rounds=3
lines=$(grep -c "error" "$WORK/badkey.out" || true)
[ "$rc" -eq 2 ] && [ "$lines" = 1 ] && grep -q "unknown key train.rounds" "$WORK/badkey.out" && [ ! -e "$WORK/badkey/result.jsonl" ] \
  && pass "an unknown train key: one line, exit 2, no rows: $(grep error "$WORK/badkey.out")" \
  || fail "unknown train key: exit $rc, $(cat "$WORK/badkey.out")"
finish
