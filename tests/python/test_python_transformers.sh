#!/usr/bin/env bash
# Hugging Face Transformers as Ray Train's guide has it (tests/python/transformers_guide.py: a
# transformers.Trainer in the function, RayTrainReportCallback, prepare_trainer, resume with
# trainer.train(resume_from_checkpoint=...) from get_checkpoint()), after `sed 's/ray\.train/trainrt/g'`:
#  - from a plain `python3 train.py`: fit() starts 2 ranks and the Trainer runs distributed over
#    trainrt's process group (32 steps an epoch: 1024 sequences, 16 per device, 2 processes); one
#    report per epoch with the Trainer's logged loss and eval accuracy; the checkpoint holds the
#    Trainer's folder with both ranks' random states; from_pretrained on it gives a model that
#    classifies held-out sequences;
#  - its train_func as a trainrt workload under mpiexec: USR2 to rank 1 stops it at an epoch's
#    report (exit stopped); its rerun resumes through resume_from_checkpoint and is killed (kill -9
#    of rank 1) as it resumes; the second rerun resumes again, and every reported loss and eval
#    accuracy equals the uninterrupted run's.
# ctest: timeout=600
source "$(dirname "$0")/framework_lib.sh"
"$TRAINRT_PYTHON" -c 'import transformers' 2>/dev/null || { fail "this Python has no transformers (make deps installs it)"; finish; }
export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python" TRANSFORMERS_STORAGE="$WORK/runs" TRANSFORMERS_OUT="$WORK/out"
sed_copy tests/python/transformers_guide.py

rc=0; TRANSFORMERS_NAME=guide timeout -k 10 300 "$TRAINRT_PYTHON" "$WORK/transformers_guide.py" >"$WORK/guide.out" 2>&1 || rc=$?
line=$(sed -n 's/^TRANSFORMERS_GUIDE //p' "$WORK/guide.out")
[ "$rc" -eq 0 ] && [ -n "$line" ] || { tail -30 "$WORK/guide.out" >&2; fail "the guide's script exits $rc"; finish; }
jq -e '.epochs == [1, 2, 3] and .step == 96 and .losses[2] < .losses[0] and .accuracy > 0.8
       and (.files | index("model.safetensors")) and (.files | index("rng_state_0.pth"))
       and (.files | index("rng_state_1.pth")) and (.files | index("trainer_state.json"))' <<<"$line" >/dev/null \
  && pass "python3 train.py: epochs $(jq -c .epochs <<<"$line"), step $(jq .step <<<"$line") (2 processes), losses $(jq -c '[.losses[] | . * 1000 | round / 1000]' <<<"$line"), checkpoint $(jq -c .files <<<"$line"), held-out accuracy $(jq .accuracy <<<"$line")" \
  || fail "the guide's run reported $line"
fw_matches_ray transformers "$line"

FW_ARGS=(--run.workload=python:"$WORK/transformers_guide.py":train_func --train.epochs=6 --train.samples=1024
         --train.lr=0.002 --train.output_dir="$WORK/trainer_out")
FW_ROW='[.epoch, .loss, .eval_accuracy]' FW_EPOCHS='[1,2,3,4,5,6]'
# Every run and rerun as elsewhere: the Trainer's output_dir is a working folder, not what a run resumes from.
fw_before_run() { rm -rf "$WORK/trainer_out"; }
fw_reference
fw_stop_and_kill USR2
finish
