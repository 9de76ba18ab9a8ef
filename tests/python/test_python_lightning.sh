#!/usr/bin/env bash
# PyTorch Lightning as Ray Train's guide has it (tests/python/lightning_guide.py: RayDDPStrategy,
# RayLightningEnvironment, RayTrainReportCallback, prepare_trainer, resume with
# trainer.fit(ckpt_path=...) from get_checkpoint()), after `sed 's/ray\.train/trainrt/g'` only:
#  - from a plain `python3 train.py`: fit() starts 2 ranks, one report per epoch with Lightning's
#    logged loss and Ray's "epoch" (0, 1, 2) and "step" (global steps of each rank's shard: the
#    sampler splits the data over trainrt's world), the loss falls, and the guide's step [4]
#    (load_from_checkpoint from result.checkpoint) gives a model that classifies the test images;
#  - its train_func as a trainrt workload under mpiexec: SIGTERM to rank 1 mid-run (the signal
#    Lightning would take for itself; prepare_trainer leaves it to trainrt) stops the run at the
#    epoch's report, checkpoint committed, exit stopped; the rerun resumes from it through
#    ckpt_path, and every reported loss equals the uninterrupted run's, each epoch reported once;
#    the same after kill -9 of rank 1 (the run fails; the rerun resumes from the last checkpoint);
#  - a Trainer on Lightning's own DDPStrategy is refused by prepare_trainer with one line.
# ctest: fixture=small_data
source "$(dirname "$0")/../lib/common.sh"
require_small_data
"$TRAINRT_PYTHON" -c 'import lightning' 2>/dev/null || { fail "this Python has no lightning (make deps installs it)"; finish; }
export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python" LIGHTNING_DATA="$SMALL_IDX" LIGHTNING_SAMPLES=6000 LIGHTNING_STORAGE="$WORK/runs"
sed 's/ray\.train/trainrt/g' tests/python/lightning_guide.py >"$WORK/lightning_guide.py"
grep -qE '^(import|from) ray|ray\.train\.' "$WORK/lightning_guide.py" && fail "the sed left a ray name in the script"

rc=0; LIGHTNING_NAME=guide timeout -k 10 300 "$TRAINRT_PYTHON" "$WORK/lightning_guide.py" >"$WORK/guide.out" 2>&1 || rc=$?
line=$(sed -n 's/^LIGHTNING_GUIDE //p' "$WORK/guide.out")
[ "$rc" -eq 0 ] && [ -n "$line" ] || { tail -30 "$WORK/guide.out" >&2; fail "the guide's script exits $rc"; finish; }
jq -e '.epochs == [0, 1, 2] and .step == 3 * 47 and (.losses | length) == 3 and .losses[2] < .losses[0]
       and .accuracy > 0.6' <<<"$line" >/dev/null \
  && pass "python3 train.py: epochs $(jq -c .epochs <<<"$line"), losses $(jq -c '[.losses[] | . * 1000 | round / 1000]' <<<"$line"), step $(jq .step <<<"$line"), load_from_checkpoint -> test accuracy $(jq '.accuracy * 1000 | round / 1000' <<<"$line")" \
  || fail "the guide's run reported $line"

# train NAME OUT [ARGS...]: train_func under mpiexec -n 2 as a trainrt workload; sets $rc.
train() {
  local name=$1 out=$2; shift 2
  rc=0
  timeout -k 10 300 mpiexec -n 2 "$TRAINRT" --run.workload=python:"$WORK/lightning_guide.py":train_func \
    --train.epochs=4 --train.samples=6000 --run.storage_path="$WORK/runs" --run.name="$name" --metrics.progress=off \
    "$@" >"$out" 2>&1 || rc=$?
}
losses() { jq -s -c '[.[] | .loss]' "$WORK/runs/$1/result.jsonl"; }
epochs() { jq -s -c '[.[] | .epoch]' "$WORK/runs/$1/result.jsonl"; }

train ref "$WORK/ref.out"
[ "$rc" -eq 0 ] && [ "$(epochs ref)" = "[0,1,2,3]" ] || { tail -30 "$WORK/ref.out" >&2; fail "the uninterrupted run exits $rc, epochs $(epochs ref)"; finish; }
( train stopped "$WORK/first.out"; echo "$rc" >"$WORK/first.rc" ) &
runner=$!
wait_rows "$WORK/runs/stopped" 2 || fail "no 2 result rows within 60 s"
kill -TERM "$(rank_pid stopped 1)"
wait "$runner" || true
first_rows=$(rows "$WORK/runs/stopped")
[ "$(cat "$WORK/first.rc")" = "$TRAINRT_EXIT_STOPPED" ] && [ "$first_rows" -lt 4 ] \
  && pass "SIGTERM to rank 1 reached trainrt, not Lightning: stopped at report $first_rows, exit $TRAINRT_EXIT_STOPPED" \
  || { tail -30 "$WORK/first.out" >&2; fail "the stopped run exits $(cat "$WORK/first.rc") after $first_rows rows"; }
train stopped "$WORK/rerun.out"
[ "$rc" -eq 0 ] && grep -q '^\[trainrt 0\] resuming from' "$WORK/rerun.out" \
  && [ "$(epochs stopped)" = "[0,1,2,3]" ] && [ "$(losses stopped)" = "$(losses ref)" ] \
  && pass "resumed through trainer.fit(ckpt_path=...): epochs $(epochs stopped), every loss as the uninterrupted run's" \
  || { tail -30 "$WORK/rerun.out" >&2; fail "after resume (exit $rc): epochs $(epochs stopped), losses $(losses stopped) vs $(losses ref)"; }

( train killed "$WORK/killed.out"; echo "$rc" >"$WORK/killed.rc" ) &
runner=$!
wait_rows "$WORK/runs/killed" 2 || fail "no 2 result rows within 60 s (killed run)"
kill -KILL "$(rank_pid killed 1)"
wait "$runner" || true
train killed "$WORK/killed_rerun.out"
[ "$(cat "$WORK/killed.rc")" != 0 ] && [ "$rc" -eq 0 ] && [ "$(epochs killed)" = "[0,1,2,3]" ] \
  && [ "$(losses killed)" = "$(losses ref)" ] \
  && pass "kill -9 of rank 1 (exit $(cat "$WORK/killed.rc")), rerun: every loss as the uninterrupted run's" \
  || { tail -30 "$WORK/killed_rerun.out" >&2; fail "after kill -9 and rerun (exit $rc): epochs $(epochs killed), losses $(losses killed) vs $(losses ref)"; }

"$TRAINRT_PYTHON" - >"$WORK/refused.out" 2>&1 <<'PY' && pass "prepare_trainer refuses Lightning's own DDPStrategy: $(grep -m1 'prepare_trainer:' "$WORK/refused.out")" || { cat "$WORK/refused.out" >&2; fail "a Trainer on DDPStrategy was not refused"; }
import lightning.pytorch as pl
import trainrt.lightning
trainer = pl.Trainer(strategy=pl.strategies.DDPStrategy(), logger=False, enable_progress_bar=False)
try:
    trainrt.lightning.prepare_trainer(trainer)
except RuntimeError as error:
    print(error, flush=True)
else:
    raise SystemExit("accepted")
PY
finish
