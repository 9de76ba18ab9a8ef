#!/usr/bin/env bash
# LibTorch workloads stop and resume bitwise (module, optimizer state, RNG and data position in
# the checkpoint): torch_fashion_mlp (SGD) stopped with USR2 on rank 1 and rerun, and killed with
# kill -9 mid-epoch and rerun, each ends with the uninterrupted run's digest; torch_fashion_cnn
# (Adam) the same after a USR2 stop; torch_fashion_mlp with background snapshots too. A checkpoint of the CNN given to the MLP (resume_from) is
# refused with exit 8 naming the tensor and both shapes.
# ctest: fixture=small_data
source "$(dirname "$0")/../checkpoint/lib.sh"

resume_case() {  # NAME WORKLOAD HOW(usr2|kill) ARGS...
  local name=$1 workload=$2 how=$3; shift 3
  CKPT_ARGS=(--config jobs/fashion_mlp.ini --run.workload="$workload" --metrics.progress=off "$@")
  # The uninterrupted run, once per workload and arguments (the MLP cases share theirs).
  local ref; ref=${workload}_ref_$(echo "$*" | md5sum | cut -c1-8)
  [ -f "$WORK/$ref.out" ] || train 2 "$ref" "$WORK/$ref.out"
  local base; base=$(digest_of "$WORK/$ref.out")
  [ -n "$base" ] || { show "$WORK/$ref.out"; fail "$name: uninterrupted run exits $rc"; return; }
  ( train 2 "$name" "$WORK/$name.first.out"; echo "$rc" >"$WORK/$name.rc" ) &
  local runner=$! pid
  wait_rows "$WORK/$name" 2 || fail "$name: no 2 result rows within 60 s"
  pid=$(rank_pid "$name" "$([ "$how" = usr2 ] && echo 1 || echo 0)") || { fail "$name: rank not found"; wait "$runner"; return; }
  if [ "$how" = usr2 ]; then kill -USR2 "$pid"; else kill -9 "$pid"; fi
  wait "$runner" || true
  local first_rc; first_rc=$(cat "$WORK/$name.rc")
  if [ "$how" = usr2 ]; then [ "$first_rc" = 9 ] || fail "$name: stopped run exits $first_rc, expected 9"
  else [ "$first_rc" != 0 ] || fail "$name: the killed run exited 0 (it finished before the kill)"; fi
  train 2 "$name" "$WORK/$name.rerun.out"
  [ "$rc" -eq 0 ] || { show "$WORK/$name.rerun.out"; fail "$name: rerun exits $rc"; return; }
  [ "$(digest_of "$WORK/$name.rerun.out")" = "$base" ] \
    && pass "$name ($workload, $how): resumed from iteration $(resumed_iteration "$WORK/$name.rerun.out"), same digest $base" \
    || fail "$name: digest $(digest_of "$WORK/$name.rerun.out") after resume != uninterrupted $base"
}

resume_case mlp_usr2 torch_fashion_mlp usr2 --train.epochs=2 --train.batch_size=256 --checkpoint.every_steps=60
resume_case mlp_kill torch_fashion_mlp kill --train.epochs=2 --train.batch_size=256 --checkpoint.every_steps=60
# Background snapshots (checkpoint.snapshot = background; spread_replicated = false so that rank 0
# holds fc1's 1.6 MB weights whole, copied on the save's thread while prepare_model's
# backward runs): the uninterrupted run trains as with synchronous saves, and a USR2 stop resumes.
resume_case mlp_background torch_fashion_mlp usr2 --train.epochs=2 --train.batch_size=256 --checkpoint.every_steps=60 \
  --checkpoint.async=true --checkpoint.snapshot=background --checkpoint.spread_replicated=false
mlp_refs=$(for d in "$WORK"/torch_fashion_mlp_ref_*; do if [ -d "$d" ] && [ -f "$d.out" ]; then echo "$d"; fi; done)
digests=$(for d in $mlp_refs; do digest_of "$d.out"; done | sort -u | grep -c . || true)
[ "$(echo "$mlp_refs" | grep -c .)" -eq 2 ] && [ "$digests" -eq 1 ] && pass "background snapshots: the uninterrupted run's digest equals synchronous saves'" \
  || fail "background snapshots: uninterrupted digests differ from synchronous saves' ($(for d in $mlp_refs; do digest_of "$d.out"; done | tr '\n' ' '))"
resume_case cnn_usr2 torch_fashion_cnn usr2 --data.path="$SMALL_DATA" --train.epochs=2 --train.batch_size=256 \
  --checkpoint.every_steps=4

cnn_ref=""; for d in "$WORK"/torch_fashion_cnn_ref_*; do [ -d "$d" ] && cnn_ref=$d; done
cnn_ckpt=$(newest_committed "$cnn_ref")
code=0
mpiexec -n 2 "$TRAINRT" --config jobs/fashion_mlp.ini --data.path="$SMALL_DATA" --run.workload=torch_fashion_mlp --train.epochs=1 \
  --checkpoint.resume_from="$cnn_ref/checkpoints/$cnn_ckpt" --run.storage_path="$WORK" --run.name=mismatch \
  >"$WORK/mismatch.out" 2>"$WORK/mismatch.err" || code=$?
[ "$code" -eq 8 ] && grep -q "tensor 'model.fc1.weight' is float32 \[128, 1600\], the model's is float32 \[512, 784\]" "$WORK/mismatch.err" \
  && pass "another model's checkpoint: exit 8, $(grep -m1 'model.fc1.weight' "$WORK/mismatch.err")" \
  || { cat "$WORK/mismatch.err" >&2; fail "mismatched checkpoint: exit $code"; }
finish
