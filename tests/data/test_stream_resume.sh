#!/usr/bin/env bash
# Exact mid-epoch resume of the streaming reader: the stream's position is in every checkpoint,
# so a USR2 stop or a kill -9 in the middle of an epoch resumes with the next unseen global batch
# and ends with bitwise the weights of an uninterrupted run, for the shuffled streams (global,
# blocks) of fashion_mlp and for linear_model on an imported CSV. A checkpoint of the stream
# under another batch size is refused (exit 8), and one from 2 ranks resumes on 3.
source "$(dirname "$0")/../checkpoint/lib.sh"

# interrupt NAME SIGNAL RANK ROWS [ARGS...]: a run signalled at RANK once it has ROWS result rows;
# sets $rc to the run's exit code.
interrupt() {
  local name=$1 sig=$2 rank=$3 at=$4; shift 4
  ( train 2 "$name" "$WORK/$name.cut.out" "$@"; echo "$rc" >"$WORK/$name.rc" ) &
  local runner=$!
  wait_rows "$WORK/$name" "$at" || fail "$name: no $at result rows within 60 s"
  local pid
  pid=$(rank_pid "$name" "$rank") && kill -"$sig" "$pid"
  wait "$runner" || true
  rc=$(cat "$WORK/$name.rc")
}

# resumes NAME BASE EXPECT_RC MID ARGS...: the interrupted run exited EXPECT_RC, a rerun finishes
# with digest BASE, having resumed mid-epoch when MID is 1 (a stop always is; a kill resumes from
# the newest checkpoint, which may be an epoch's end).
resumes() {
  local name=$1 base=$2 want=$3 mid=$4; shift 4
  [ "$rc" = "$want" ] && pass "$name: interrupted run exits $rc" || fail "$name: interrupted run exits $rc, expected $want"
  train 2 "$name" "$WORK/$name.rerun.out" "$@"
  [ "$rc" -eq 0 ] || { show "$WORK/$name.rerun.out"; fail "$name: rerun exits $rc"; return; }
  local from step
  from=$(resumed_iteration "$WORK/$name.rerun.out")
  step=$(jq -r --argjson i "${from:-0}" 'select(._training_iteration == $i) | .step // "end"' "$WORK/$name/result.jsonl")
  [ -n "$from" ] && { [ "$mid" = 0 ] || [ "$step" != end ]; } && pass "$name: resumed from iteration $from (step $step)" \
    || fail "$name: rerun did not resume mid-epoch (iteration '${from}', step '$step')"
  [ "$(digest_of "$WORK/$name.rerun.out")" = "$base" ] && pass "$name: same digest as the uninterrupted run" \
    || fail "$name: digest $(digest_of "$WORK/$name.rerun.out") != $base"
}

for shuffle in global blocks; do
  args=(--data.shuffle="$shuffle")
  [ "$shuffle" = blocks ] && args+=(--data.shuffle_buffer=8192)
  train 2 "ref_$shuffle" "$WORK/ref_$shuffle.out" "${args[@]}"
  [ "$rc" -eq 0 ] || { show "$WORK/ref_$shuffle.out"; fail "$shuffle: uninterrupted run exits $rc"; continue; }
  base=$(digest_of "$WORK/ref_$shuffle.out")
  pass "fashion_mlp, shuffle $shuffle: uninterrupted digest $base"
  interrupt "usr2_$shuffle" USR2 1 2 "${args[@]}"
  resumes "usr2_$shuffle" "$base" 9 1 "${args[@]}"
  interrupt "kill_$shuffle" KILL 0 6 "${args[@]}"
  [ "$rc" -ne 0 ] || fail "kill_$shuffle: a run whose rank was killed exits 0"
  resumes "kill_$shuffle" "$base" "$rc" 0 "${args[@]}"
done

# The position is only valid under the batch size and shuffle it was saved with.
cp -r "$WORK/ref_global" "$WORK/other_batch"
train 2 other_batch "$WORK/other_batch.out" --data.shuffle=global --train.batch_size=128 --train.epochs=3
[ "$rc" -eq 8 ] && grep -q "saved with batch_size 256 and shuffle global" "$WORK/other_batch.out" \
  && pass "a checkpoint of the stream under another batch size: exit 8, named" \
  || { show "$WORK/other_batch.out"; fail "other batch size: exit $rc"; }

# A mid-epoch checkpoint written by 2 ranks resumes on 3 (global batch k is the same samples).
interrupt world3 USR2 0 2 --data.shuffle=global
timeout -k 10 "$RUN_TIMEOUT" mpiexec -n 3 "$TRAINRT" "${CKPT_ARGS[@]}" --data.shuffle=global \
  --run.storage_path="$WORK" --run.name=world3 >"$WORK/world3.3.out" 2>&1 && rc=0 || rc=$?
ref_loss=$(jq -r 'select(.epoch == 2 and .step == null) | .loss' "$WORK/ref_global/result.jsonl")
loss=$(jq -r 'select(.epoch == 2 and .step == null) | .loss' "$WORK/world3/result.jsonl" | tail -1)
[ "$rc" -eq 0 ] && awk -v a="$loss" -v b="$ref_loss" 'BEGIN { d = a - b; exit !(d < 1e-4 && d > -1e-4) }' \
  && pass "2-rank checkpoint resumed on 3 ranks: epoch-2 loss $loss (2 ranks throughout: $ref_loss)" \
  || { show "$WORK/world3.3.out"; fail "resume on 3 ranks: exit $rc, loss '$loss' vs '$ref_loss'"; }

# linear_model on breast_cancer.csv (imported), blocks shuffle, a checkpoint every 7 steps.
SK=/usr/lib/python3/dist-packages/sklearn/datasets/data
"$TRAINRT" data import csv "$SK/breast_cancer.csv" --skip-rows 1 --no-header --label -1 \
  --split train=0.8,test=0.2 --out "$WORK/bc.h5" >/dev/null
CKPT_ARGS=(--run.workload=linear_model --data.path="$WORK/bc.h5" --data.shuffle=blocks --data.shuffle_buffer=64
           --train.batch_size=8 --train.epochs=40 --checkpoint.every_steps=7)
train 2 lin_ref "$WORK/lin_ref.out"
base=$(digest_of "$WORK/lin_ref.out")
acc=$(jq -r 'select(.step == null) | .test_accuracy' "$WORK/lin_ref/result.jsonl" | tail -1)
[ "$rc" -eq 0 ] && awk -v a="$acc" 'BEGIN { exit !(a >= 0.9) }' \
  && pass "linear_model on breast_cancer.csv: test accuracy $acc, digest $base" \
  || { show "$WORK/lin_ref.out"; fail "linear_model: exit $rc, accuracy '$acc'"; }
interrupt lin_usr2 USR2 1 30
resumes lin_usr2 "$base" 9 1
interrupt lin_kill KILL 1 40
[ "$rc" -ne 0 ] || fail "lin_kill: a run whose rank was killed exits 0"
resumes lin_kill "$base" "$rc" 0
finish
