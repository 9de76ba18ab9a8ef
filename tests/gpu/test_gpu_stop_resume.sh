#!/usr/bin/env bash
# fashion_mlp on a GPU end to end (label gpu; exit 77 = skipped where no GPU is visible): an
# uninterrupted GPU run, then the same run stopped with USR2 mid-training (exit 9, the stop
# checkpoint committed and verified) and rerun: it resumes on the GPU and ends with bitwise the
# uninterrupted run's weights (same weights_digest).
source "$(dirname "$0")/../checkpoint/lib.sh"
use_full_data  # its kills and signals land at moments of training
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  echo "SKIP: no GPU visible (nvidia-smi -L)"; exit 77
fi
# Batch 64 (938 steps an epoch), a checkpoint every 150 steps: the run lasts long enough on a
# GPU for the signal to land mid-training.
CKPT_ARGS=(--config jobs/fashion_mlp.ini --train.epochs=6 --checkpoint.every_steps=150
           --checkpoint.num_to_keep=3 --scaling.use_gpu=true --metrics.progress=off)

train 1 reference "$WORK/reference.out"
[ "$rc" -eq 0 ] || { show "$WORK/reference.out" 30; fail "uninterrupted GPU run exits $rc"; finish; }
grep -q 'GPU run: CUDA' "$WORK/reference.out" || fail "no GPU banner in the uninterrupted run"
base=$(digest_of "$WORK/reference.out")
pass "uninterrupted GPU run: digest $base"

( train 1 stopped "$WORK/stop.out"; echo "$rc" >"$WORK/stop.rc" ) &
runner=$!
wait_rows "$WORK/stopped" 2 || fail "no 2 result rows within 60 s"
pid=$(rank_pid stopped 0) || fail "rank 0 of the GPU run not found"
[ -n "${pid:-}" ] && kill -USR2 "$pid"
wait "$runner" || true
stop_rc=$(cat "$WORK/stop.rc")
[ "$stop_rc" = 9 ] && pass "USR2: the GPU run stopped with exit 9" \
  || { show "$WORK/stop.out" 30; fail "stopped GPU run exits $stop_rc, expected 9 (0: it finished before the signal)"; finish; }
verify "$WORK/stopped" "$WORK/verify.out"
[ "$vrc" -eq 0 ] && pass "the stop checkpoint $(newest_committed "$WORK/stopped") verifies" \
  || { show "$WORK/verify.out"; fail "checkpoints of the stopped run do not verify"; }

train 1 stopped "$WORK/rerun.out"
[ "$rc" -eq 0 ] || { show "$WORK/rerun.out" 30; fail "rerun exits $rc"; finish; }
iteration=$(resumed_iteration "$WORK/rerun.out")
[ -n "$iteration" ] && grep -q 'GPU run: CUDA' "$WORK/rerun.out" \
  && pass "the rerun resumed on the GPU from iteration $iteration" || fail "the rerun did not resume on the GPU"
[ "$(digest_of "$WORK/rerun.out")" = "$base" ] \
  && pass "stopped + resumed on the GPU: same digest as uninterrupted ($base)" \
  || fail "digest after resume $(digest_of "$WORK/rerun.out") != uninterrupted $base"
finish
