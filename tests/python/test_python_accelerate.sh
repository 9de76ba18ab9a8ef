#!/usr/bin/env bash
# Hugging Face Accelerate as Ray Train's guide has it (tests/python/accelerate_guide.py: an
# Accelerator() inside the function, accelerator.prepare, save_state into a directory checkpoint,
# load_state from get_checkpoint()), after `sed 's/ray\.train/trainrt/g'` only:
#  - from a plain `python3 train.py`: fit() starts 2 ranks; the Accelerator finds trainrt's process
#    group (2 processes, on the CPU), one report per epoch, the loss falls, the learning rate steps,
#    and the checkpoint holds Accelerate's files (model, optimizer, scheduler, each rank's random
#    states) from which the driver loads a model that classifies the test images;
#  - its train_func as a trainrt workload under mpiexec: USR2 to rank 1 mid-run stops it at the
#    epoch's report (exit stopped); the rerun resumes through load_state and every reported loss
#    equals the uninterrupted run's; the same after kill -9 of rank 1 and a rerun.
# ctest: fixture=small_data
source "$(dirname "$0")/../lib/common.sh"
require_small_data
"$TRAINRT_PYTHON" -c 'import accelerate' 2>/dev/null || { fail "this Python has no accelerate (make deps installs it)"; finish; }
export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python" ACCELERATE_DATA="$SMALL_IDX" ACCELERATE_STORAGE="$WORK/runs"
sed 's/ray\.train/trainrt/g' tests/python/accelerate_guide.py >"$WORK/accelerate_guide.py"
grep -qE '^(import|from) ray|ray\.train\.' "$WORK/accelerate_guide.py" && fail "the sed left a ray name in the script"

rc=0; ACCELERATE_NAME=guide timeout -k 10 300 "$TRAINRT_PYTHON" "$WORK/accelerate_guide.py" >"$WORK/guide.out" 2>&1 || rc=$?
line=$(sed -n 's/^ACCELERATE_GUIDE //p' "$WORK/guide.out")
[ "$rc" -eq 0 ] && [ -n "$line" ] || { tail -30 "$WORK/guide.out" >&2; fail "the guide's script exits $rc"; finish; }
jq -e '.epochs == [0, 1, 2] and .processes == 2 and .losses[2] < .losses[0] and .lrs[1] < .lrs[0]
       and (.files | index("model.safetensors")) and (.files | index("random_states_0.pkl"))
       and (.files | index("random_states_1.pkl")) and .accuracy > 0.6' <<<"$line" >/dev/null \
  && pass "python3 train.py: 2 processes, epochs $(jq -c .epochs <<<"$line"), losses $(jq -c '[.losses[] | . * 1000 | round / 1000]' <<<"$line"), checkpoint $(jq -c .files <<<"$line"), test accuracy $(jq '.accuracy * 1000 | round / 1000' <<<"$line")" \
  || fail "the guide's run reported $line"

# train NAME OUT [ARGS...]: train_func under mpiexec -n 2 as a trainrt workload; sets $rc.
train() {
  local name=$1 out=$2; shift 2
  rc=0
  timeout -k 10 300 mpiexec -n 2 "$TRAINRT" --run.workload=python:"$WORK/accelerate_guide.py":train_func \
    --train.epochs=6 --train.samples=6000 --train.lr=0.001 --run.storage_path="$WORK/runs" --run.name="$name" \
    --metrics.progress=off "$@" >"$out" 2>&1 || rc=$?
}
losses() { jq -s -c '[.[] | .loss]' "$WORK/runs/$1/result.jsonl"; }
epochs() { jq -s -c '[.[] | .epoch]' "$WORK/runs/$1/result.jsonl"; }

train ref "$WORK/ref.out"
[ "$rc" -eq 0 ] && [ "$(epochs ref)" = "[0,1,2,3,4,5]" ] || { tail -30 "$WORK/ref.out" >&2; fail "the uninterrupted run exits $rc, epochs $(epochs ref)"; finish; }
( train stopped "$WORK/first.out"; echo "$rc" >"$WORK/first.rc" ) &
runner=$!
wait_rows "$WORK/runs/stopped" 2 || fail "no 2 result rows within 60 s"
kill -USR2 "$(rank_pid stopped 1)"
wait "$runner" || true
first_rows=$(rows "$WORK/runs/stopped")
[ "$(cat "$WORK/first.rc")" = "$TRAINRT_EXIT_STOPPED" ] && [ "$first_rows" -lt 6 ] \
  && pass "USR2 to rank 1: stopped at report $first_rows, exit $TRAINRT_EXIT_STOPPED" \
  || { tail -30 "$WORK/first.out" >&2; fail "the stopped run exits $(cat "$WORK/first.rc") after $first_rows rows"; }
train stopped "$WORK/rerun.out"
[ "$rc" -eq 0 ] && grep -q '^\[trainrt 0\] resuming from' "$WORK/rerun.out" \
  && [ "$(epochs stopped)" = "[0,1,2,3,4,5]" ] && [ "$(losses stopped)" = "$(losses ref)" ] \
  && pass "resumed through accelerator.load_state: epochs $(epochs stopped), every loss as the uninterrupted run's" \
  || { tail -30 "$WORK/rerun.out" >&2; fail "after resume (exit $rc): epochs $(epochs stopped), losses $(losses stopped) vs $(losses ref)"; }

( train killed "$WORK/killed.out"; echo "$rc" >"$WORK/killed.rc" ) &
runner=$!
wait_rows "$WORK/runs/killed" 2 || fail "no 2 result rows within 60 s (killed run)"
kill -KILL "$(rank_pid killed 1)"
wait "$runner" || true
train killed "$WORK/killed_rerun.out"
[ "$(cat "$WORK/killed.rc")" != 0 ] && [ "$rc" -eq 0 ] && [ "$(epochs killed)" = "[0,1,2,3,4,5]" ] \
  && [ "$(losses killed)" = "$(losses ref)" ] \
  && pass "kill -9 of rank 1 (exit $(cat "$WORK/killed.rc")), rerun: every loss as the uninterrupted run's" \
  || { tail -30 "$WORK/killed_rerun.out" >&2; fail "after kill -9 and rerun (exit $rc): epochs $(epochs killed), losses $(losses killed) vs $(losses ref)"; }
finish
