#!/usr/bin/env bash
# Exact mid-epoch resume of the streaming reader: the stream's position is in every checkpoint,
# so a USR2 stop or a kill -9 in the middle of an epoch resumes with the next unseen global batch
# and ends with bitwise the weights of an uninterrupted run, for the shuffled streams (global,
# blocks) of fashion_mlp and for linear_model on an imported CSV. A checkpoint of the stream
# in another order (batch size, shuffle window) is refused (exit 8), positions saved before order
# keys still resume (and are refused under another batch size), and one from 2 ranks resumes on 3.
# fashion_mlp's stops and kills land where the newest checkpoint is mid-epoch.
# ctest: fixture=small_data
source "$(dirname "$0")/../checkpoint/lib.sh"
use_full_data  # its kills and signals land at moments of training

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

# mid_row REF_DIR MIN: the first result row R >= MIN such that rows R-1, R and R+1 of the
# uninterrupted run are all mid-epoch (a step row): a kill once R rows exist resumes mid-epoch
# whichever of them is the newest committed checkpoint.
mid_row() {
  jq -s -r --argjson min "$2" 'map(.step != null) as $mid | [range(($min | if . < 2 then 2 else . end); length - 1)
    | select($mid[. - 2] and $mid[. - 1] and $mid[.])] | first // empty' "$1/result.jsonl"
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
  at=$(mid_row "$WORK/ref_$shuffle" 5)
  [ -n "$at" ] || { fail "kill_$shuffle: no three mid-epoch rows in a row in the reference run"; continue; }
  interrupt "kill_$shuffle" KILL 0 "$at" "${args[@]}"
  [ "$rc" -ne 0 ] || fail "kill_$shuffle: a run whose rank was killed exits 0"
  resumes "kill_$shuffle" "$base" "$rc" 1 "${args[@]}"
done

# The position is only valid in the order it was saved in: the same batch size, and for blocks
# the same shuffle window.
cp -r "$WORK/ref_global" "$WORK/other_batch"
train 2 other_batch "$WORK/other_batch.out" --data.shuffle=global --train.batch_size=128 --train.epochs=3
[ "$rc" -eq 8 ] && grep -q "saved in the order 'global rows=60000 batch=256 seed=" "$WORK/other_batch.out" \
  && pass "a checkpoint of the stream under another batch size: exit 8, named" \
  || { show "$WORK/other_batch.out"; fail "other batch size: exit $rc"; }
cp -r "$WORK/ref_blocks" "$WORK/other_window"
train 2 other_window "$WORK/other_window.out" --data.shuffle=blocks --data.shuffle_buffer=4096 --train.epochs=3
[ "$rc" -eq 8 ] && grep -q "window=8192'.*window=4096'" "$WORK/other_window.out" \
  && pass "a checkpoint of the blocks stream under another shuffle_buffer: exit 8, named" \
  || { show "$WORK/other_window.out"; fail "other shuffle_buffer: exit $rc"; }

# Positions saved before order keys existed (no data.train.order in the manifest) resume when
# their batch size and shuffle match, and are refused (exit 8) under another batch size.
interrupt legacy USR2 1 2 --data.shuffle=global
orders=0
for m in "$WORK"/legacy/checkpoints/checkpoint_*/manifest.json; do
  jq -e '.attributes | has("data.train.order")' "$m" >/dev/null && orders=$((orders + 1))
  jq 'del(.attributes["data.train.order"])' "$m" >"$m.tmp" && mv "$m.tmp" "$m"
done
[ "$orders" -gt 0 ] || fail "legacy: no checkpoint manifest held data.train.order to remove"
cp -r "$WORK/legacy" "$WORK/legacy_batch"
resumes legacy "$(digest_of "$WORK/ref_global.out")" 9 1 --data.shuffle=global
train 2 legacy_batch "$WORK/legacy_batch.out" --data.shuffle=global --train.batch_size=128 --train.epochs=3
[ "$rc" -eq 8 ] && grep -q "saved in the order 'global batch=256 (saved before order keys)'" "$WORK/legacy_batch.out" \
  && pass "a position saved before order keys under another batch size: exit 8, named" \
  || { show "$WORK/legacy_batch.out"; fail "legacy position, other batch size: exit $rc"; }

# A mid-epoch checkpoint written by 2 ranks resumes on 3 (global batch k is the same samples).
interrupt world3 USR2 0 2 --data.shuffle=global
timeout -k 10 "$RUN_TIMEOUT" mpiexec -n 3 "$TRAINRT" "${CKPT_ARGS[@]}" --data.shuffle=global \
  --run.storage_path="$WORK" --run.name=world3 >"$WORK/world3.3.out" 2>&1 && rc=0 || rc=$?
ref_loss=$(jq -r 'select(.epoch == 2 and .step == null) | .loss' "$WORK/ref_global/result.jsonl")
loss=$(jq -r 'select(.epoch == 2 and .step == null) | .loss' "$WORK/world3/result.jsonl" | tail -1)
[ "$rc" -eq 0 ] && awk -v a="$loss" -v b="$ref_loss" 'BEGIN { d = a - b; exit !(d < 1e-4 && d > -1e-4) }' \
  && pass "2-rank checkpoint resumed on 3 ranks: epoch-2 loss $loss (2 ranks throughout: $ref_loss)" \
  || { show "$WORK/world3.3.out"; fail "resume on 3 ranks: exit $rc, loss '$loss' vs '$ref_loss'"; }

# A version-1 file (FashionMNIST as trainrt wrote it before schema v2: contiguous uint8 images and
# labels, fixed-length string attributes, no column attributes) is read as it is: one epoch on it
# gives the digest of one epoch on the v2 import of the same data.
"$TRAINRT_PYTHON" - "$DATA" "$WORK/v1.h5" <<'PY'
import sys, h5py, numpy as np
src, dst = sys.argv[1:]
with h5py.File(src, "r") as f, h5py.File(dst, "w") as g:
    g.attrs["format"] = np.bytes_("trainrt-dataset")
    g.attrs["format_version"] = np.int64(1)
    g.attrs["name"] = np.bytes_("fashion-mnist")
    g.attrs["source"] = np.bytes_("v1 copy for the test")
    for split in ("train", "test"):
        group = g.create_group(split)
        group.attrs["source"] = np.bytes_("v1 copy")
        group.attrs["count"] = np.int64(f[split]["labels"].shape[0])
        group.create_dataset("images", data=f[split]["images"][...])
        group.create_dataset("labels", data=f[split]["labels"][...])
PY
[ "$("$TRAINRT" data info "$WORK/v1.h5" 2>&1 | grep -c 'version 1')" -ge 1 ] || fail "trainrt data info does not call v1.h5 version 1: $("$TRAINRT" data info "$WORK/v1.h5" 2>&1 | head -3)"
train 2 v2_epoch "$WORK/v2_epoch.out" --train.epochs=1
train 2 v1_epoch "$WORK/v1_epoch.out" --train.epochs=1 --data.path="$WORK/v1.h5"
[ "$rc" -eq 0 ] && [ -n "$(digest_of "$WORK/v1_epoch.out")" ] && [ "$(digest_of "$WORK/v1_epoch.out")" = "$(digest_of "$WORK/v2_epoch.out")" ] \
  && pass "a version-1 dataset file trains like its v2 import (digest $(digest_of "$WORK/v1_epoch.out"))" \
  || { show "$WORK/v1_epoch.out"; fail "v1 file: exit $rc, digest '$(digest_of "$WORK/v1_epoch.out")' vs v2 '$(digest_of "$WORK/v2_epoch.out")'"; }

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
# linear_model reports dozens of rows a second, so where a stop or a kill lands (mid-epoch or at an
# epoch's end) is left to chance here; fashion_mlp's above are the mid-epoch ones.
interrupt lin_usr2 USR2 1 30
resumes lin_usr2 "$base" 9 0
interrupt lin_kill KILL 1 40
[ "$rc" -ne 0 ] || fail "lin_kill: a run whose rank was killed exits 0"
resumes lin_kill "$base" "$rc" 0

# linear_model's regression path on sklearn's diabetes data (gzipped, space-separated, the target
# in its own file): least squares on standardised features must explain a good part of the
# variance of the held-out split (sklearn's own LinearRegression gets R^2 ~0.45-0.5 on such splits).
"$TRAINRT" data import csv "$SK/diabetes_data_raw.csv.gz" --delimiter space --no-header \
  --label-file "$SK/diabetes_target.csv.gz" --split train=0.8,test=0.2 --seed 0 --out "$WORK/diabetes.h5" >/dev/null
CKPT_ARGS=(--run.workload=linear_model --data.path="$WORK/diabetes.h5" --train.lr=0.05 --train.epochs=30
           --train.batch_size=16)
train 2 diabetes "$WORK/diabetes.out"
r2=$(jq -r 'select(.step == null) | .test_r2' "$WORK/diabetes/result.jsonl" | tail -1)
[ "$rc" -eq 0 ] && awk -v r="$r2" 'BEGIN { exit !(r >= 0.35 && r < 1) }' \
  && pass "linear_model regression on diabetes: test R^2 $r2" \
  || { show "$WORK/diabetes.out"; fail "linear_model on diabetes: exit $rc, test R^2 '$r2'"; }
finish
