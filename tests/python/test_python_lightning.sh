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
#    epoch's report, checkpoint committed, exit stopped; its rerun resumes from it through
#    ckpt_path and is killed (kill -9 of rank 1: the run fails) as it resumes; the second rerun
#    resumes from the last checkpoint, and every reported loss equals the uninterrupted run's,
#    each epoch reported once;
#  - a Trainer on Lightning's own DDPStrategy is refused by prepare_trainer with one line.
# ctest: fixture=small_data
source "$(dirname "$0")/framework_lib.sh"
require_small_data
"$TRAINRT_PYTHON" -c 'import lightning' 2>/dev/null || { fail "this Python has no lightning (make deps installs it)"; finish; }
export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python:$TRAINRT_SRC/tests/python" LIGHTNING_DATA="$SMALL_IDX" LIGHTNING_STORAGE="$WORK/runs"
sed_copy tests/python/lightning_guide.py

rc=0; LIGHTNING_NAME=guide timeout -k 10 300 "$TRAINRT_PYTHON" "$WORK/lightning_guide.py" >"$WORK/guide.out" 2>&1 || rc=$?
line=$(sed -n 's/^LIGHTNING_GUIDE //p' "$WORK/guide.out")
[ "$rc" -eq 0 ] && [ -n "$line" ] || { tail -30 "$WORK/guide.out" >&2; fail "the guide's script exits $rc"; finish; }
jq -e '.epochs == [0, 1, 2] and .step == 3 * 47 and (.losses | length) == 3 and .losses[2] < .losses[0]
       and .accuracy > 0.6' <<<"$line" >/dev/null \
  && pass "python3 train.py: epochs $(jq -c .epochs <<<"$line"), losses $(jq -c '[.losses[] | . * 1000 | round / 1000]' <<<"$line"), step $(jq .step <<<"$line"), load_from_checkpoint -> test accuracy $(jq '.accuracy * 1000 | round / 1000' <<<"$line")" \
  || fail "the guide's run reported $line"
fw_matches_ray lightning "$line"

FW_ARGS=(--run.workload=python:"$WORK/lightning_guide.py":train_func --train.epochs=6 --train.samples=6000)
FW_ROW='[.epoch, .loss]' FW_EPOCHS='[0,1,2,3,4,5]'
fw_reference
fw_stop_and_kill TERM  # the signal Lightning would take for itself: prepare_trainer leaves it to trainrt

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
