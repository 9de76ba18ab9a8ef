#!/usr/bin/env bash
# run.workload = xgboost stopped and resumed, on 2 ranks (breast_cancer, 300 rounds, a checkpoint
# every 25): USR2 to rank 1 mid-training stops the run at its next round with that round's booster
# committed (exit 9); the rerun resumes from it and ends with the same model bytes as the
# uninterrupted run, every round's metrics equal to it and reported once. kill -9 of rank 1
# mid-training ends the job in seconds (failure.collective_timeout is 300 s: no wait on Rabit's
# timeout); the rerun resumes from the last checkpoint, and ends with the same bytes, each round
# once.
# ctest: processors=2
source "$(dirname "$0")/../lib/common.sh"
export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python"
PY="$TRAINRT_PYTHON"
"$PY" -c "import xgboost" 2>/dev/null || { fail "python3-xgboost does not import (make deps installs it)"; finish; }
SK=/usr/lib/python3/dist-packages/sklearn/datasets/data
"$TRAINRT" data import csv "$SK/breast_cancer.csv" --skip-rows 1 --no-header --label -1 \
  --split train=0.8,test=0.2 --out "$WORK/bc.h5" >/dev/null
ROUNDS=300

# xgb NAME: the job on 2 ranks into $WORK/NAME; sets rc.
xgb() {
  rc=0
  timeout -k 10 240 mpiexec -n 2 "$TRAINRT" --run.workload=xgboost --data.path="$WORK/bc.h5" \
    --train.num_boost_round=$ROUNDS --train.checkpoint_every_rounds=25 --train.params.objective=binary:logistic \
    --train.params.eval_metric=logloss,error --train.params.max_depth=6 --train.params.eta=0.05 \
    --train.params.tree_method=hist --failure.collective_timeout=300 --metrics.progress=off \
    --run.storage_path="$WORK" --run.name="$1" >>"$WORK/$1.out" 2>&1 || rc=$?
}
model() { "$PY" tests/python/xgboost_check.py model "$WORK/$1"; }
metrics() { jq -c '[.round, ."train-logloss", ."train-error", ."test-logloss", ."test-error"]' "$WORK/$1/result.jsonl"; }
rounds_once() { [ "$(jq -r '.round' "$WORK/$1/result.jsonl" | tr '\n' ' ')" = "$(seq 1 $ROUNDS | tr '\n' ' ')" ]; }

xgb ref
[ "$rc" -eq 0 ] || { tail "$WORK/ref.out" >&2; fail "uninterrupted run exits $rc"; finish; }
base=$(model ref)
pass "uninterrupted: $ROUNDS rounds, model $base"

# interrupt NAME SIGNAL: SIGNAL to rank 1 once 60 rounds are reported; sets first_rc, seconds.
interrupt() {
  local runner pid start
  ( xgb "$1"; echo "$rc" >"$WORK/$1.rc" ) &
  runner=$!
  wait_rows "$WORK/$1" 60 || fail "$1: no 60 rounds within 60 s"
  pid=$(rank_pid "$1" 1)
  start=$SECONDS
  kill -"$2" "$pid"
  wait "$runner" || true
  seconds=$((SECONDS - start))
  first_rc=$(cat "$WORK/$1.rc")
}
resumed_same() {  # NAME: the rerun resumes, ends with the reference's bytes, every round once and equal
  local name=$1
  xgb "$name"
  [ "$rc" -eq 0 ] || { tail "$WORK/$name.out" >&2; fail "$name: rerun exits $rc"; return; }
  grep -q "resuming from" "$WORK/$name.out" || fail "$name: the rerun did not resume"
  [ "$(model "$name")" = "$base" ] && pass "$name: resumed, the same model bytes as uninterrupted ($base)" \
    || fail "$name: model $(model "$name") after resume, want $base"
  rounds_once "$name" && [ "$(metrics "$name")" = "$(metrics ref)" ] \
    && pass "$name: every round reported once, its metrics equal to the uninterrupted run's" \
    || fail "$name: rounds $(jq -r '.round' "$WORK/$name/result.jsonl" | tr '\n' ' ' | cut -c1-200) or metrics differ"
}

interrupt stopped USR2
stopped_at=$(rows "$WORK/stopped")
stop_ckpt=$(jq -r 'select(.event == "stop") | .checkpoint // empty' "$WORK/stopped/events.jsonl" | tail -1)
[ "$first_rc" -eq "$TRAINRT_EXIT_STOPPED" ] && [ "$stopped_at" -lt $ROUNDS ] && [ -n "$stop_ckpt" ] \
  && [ "$stop_ckpt" = "$(printf 'checkpoint_%06d' "$stopped_at")" ] \
  && pass "USR2: stopped after round $stopped_at with its booster committed ($stop_ckpt), exit $first_rc" \
  || { tail "$WORK/stopped.out" >&2; fail "USR2: exit $first_rc after $stopped_at rounds, stop checkpoint '$stop_ckpt'"; }
resumed_same stopped

interrupt killed KILL
[ "$first_rc" -ne 0 ] && [ "$seconds" -le 30 ] && [ "$(rows "$WORK/killed")" -lt $ROUNDS ] \
  && pass "kill -9 of rank 1: the job ended in ${seconds} s (exit $first_rc), not at the 300 s collective timeout" \
  || { tail "$WORK/killed.out" >&2; fail "kill -9: exit $first_rc after ${seconds} s"; }
resumed_same killed
finish
