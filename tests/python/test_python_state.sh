#!/usr/bin/env bash
# Every kind of state trainrt.torch checkpoints comes back exactly (tests/python/state_func.py:
# Adam, batch norm, dropout and torch/numpy/Python RNGs, a shuffled prepared loader, values of
# widened dtypes and nested structures): a run stopped with USR2 on rank 1 (exit 9) and rerun ends
# with the uninterrupted run's digest, and the restored extras equal the saved ones (dtype,
# shape, values) on both ranks.
source "$(dirname "$0")/../checkpoint/lib.sh"
CKPT_ARGS=(--run.workload=python:tests/python/state_func.py:train --train.epochs=3 --metrics.progress=off
           --failure.collective_timeout=60 --checkpoint.num_to_keep=2)
train 2 ref "$WORK/ref.out"
base=$(digest_of "$WORK/ref.out")
[ "$rc" -eq 0 ] && [ -n "$base" ] || { show "$WORK/ref.out" 30; fail "uninterrupted run exits $rc"; finish; }
( train 2 stopped "$WORK/first.out"; echo "$rc" >"$WORK/first.rc" ) &
runner=$!
wait_rows "$WORK/stopped" 20 || fail "no 20 result rows within 60 s"
kill -USR2 "$(rank_pid stopped 1)"
wait "$runner" || true
[ "$(cat "$WORK/first.rc")" = 9 ] || { show "$WORK/first.out"; fail "stopped run exits $(cat "$WORK/first.rc"), expected 9"; }
train 2 stopped "$WORK/rerun.out"
[ "$rc" -eq 0 ] || { show "$WORK/rerun.out" 30; fail "rerun exits $rc"; finish; }
[ "$(grep -o 'extras round trip ok on rank' "$WORK/rerun.out" | wc -l)" -eq 2 ] && pass "extras round trip on both ranks" \
  || { show "$WORK/rerun.out" 30; fail "extras did not come back"; }
[ "$(digest_of "$WORK/rerun.out")" = "$base" ] \
  && pass "resumed from iteration $(resumed_iteration "$WORK/rerun.out") of $(rows "$WORK/ref"): same digest $base" \
  || fail "digest $(digest_of "$WORK/rerun.out") after resume != uninterrupted $base"
finish
