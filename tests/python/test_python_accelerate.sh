#!/usr/bin/env bash
# Hugging Face Accelerate as Ray Train's guide has it (tests/python/accelerate_guide.py: an
# Accelerator() inside the function, accelerator.prepare, save_state into a directory checkpoint,
# load_state from get_checkpoint()), after `sed 's/ray\.train/trainrt/g'` only:
#  - from a plain `python3 train.py`: fit() starts 2 ranks; the Accelerator finds trainrt's process
#    group (2 processes, on the CPU), one report per epoch, the loss falls, the learning rate steps,
#    and the checkpoint holds Accelerate's files (model, optimizer, scheduler, each rank's random
#    states) from which the driver loads a model that classifies the test images;
#  - its train_func as a trainrt workload under mpiexec: USR2 to rank 1 mid-run stops it at the
#    epoch's report (exit stopped); its rerun resumes through load_state and is killed (kill -9 of
#    rank 1) as it resumes; the second rerun resumes again, and every reported loss equals the
#    uninterrupted run's;
#  - the guide's DeepSpeed tab (a DeepSpeedPlugin, ZeRO-2, with ACCELERATE_USE_DEEPSPEED=true in the
#    job's environment, which keeps trainrt from marking the CPU ranks "cpu" for Accelerate): the
#    Accelerator runs DeepSpeed, and a USR2 stop's rerun reports every loss and learning rate of
#    the uninterrupted run.
# ctest: fixture=small_data
source "$(dirname "$0")/framework_lib.sh"
require_small_data
"$TRAINRT_PYTHON" -c 'import accelerate' 2>/dev/null || { fail "this Python has no accelerate (make deps installs it)"; finish; }
export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python:$TRAINRT_SRC/tests/python" ACCELERATE_DATA="$SMALL_IDX" ACCELERATE_STORAGE="$WORK/runs"
sed_copy tests/python/accelerate_guide.py

rc=0; ACCELERATE_NAME=guide timeout -k 10 300 "$TRAINRT_PYTHON" "$WORK/accelerate_guide.py" >"$WORK/guide.out" 2>&1 || rc=$?
line=$(sed -n 's/^ACCELERATE_GUIDE //p' "$WORK/guide.out")
[ "$rc" -eq 0 ] && [ -n "$line" ] || { tail -30 "$WORK/guide.out" >&2; fail "the guide's script exits $rc"; finish; }
jq -e '.epochs == [0, 1, 2] and .processes == 2 and .losses[2] < .losses[0] and .lrs[1] < .lrs[0]
       and (.files | index("model.safetensors")) and (.files | index("random_states_0.pkl"))
       and (.files | index("random_states_1.pkl")) and .accuracy > 0.6' <<<"$line" >/dev/null \
  && pass "python3 train.py: 2 processes, epochs $(jq -c .epochs <<<"$line"), losses $(jq -c '[.losses[] | . * 1000 | round / 1000]' <<<"$line"), checkpoint $(jq -c .files <<<"$line"), test accuracy $(jq '.accuracy * 1000 | round / 1000' <<<"$line")" \
  || fail "the guide's run reported $line"
fw_matches_ray accelerate "$line"

FW_ARGS=(--run.workload=python:"$WORK/accelerate_guide.py":train_func --train.epochs=6 --train.samples=6000
         --train.lr=0.001)
FW_ROW='[.epoch, .loss]' FW_EPOCHS='[0,1,2,3,4,5]'
fw_reference
fw_stop_and_kill USR2

mv "$WORK/runs/ref" "$WORK/runs/ref_ddp"
export ACCELERATE_USE_DEEPSPEED=true
FW_ARGS=(--run.workload=python:"$WORK/accelerate_guide.py":train_func --train.epochs=4 --train.samples=3000
         --train.lr=0.001 --train.zero_stage=2)
FW_ROW='[.epoch, .loss, .lr, .distributed]' FW_EPOCHS='[0,1,2,3]'
fw_reference
[ "$(jq -s -c '[.[] | .distributed] | unique' "$WORK/runs/ref/result.jsonl")" = '["DEEPSPEED"]' ] \
  && pass "DeepSpeedPlugin: the Accelerator runs DeepSpeed (Accelerate's own process count on a CPU rank: $(jq -s '.[0].processes' "$WORK/runs/ref/result.jsonl"))" \
  || fail "DeepSpeedPlugin: distributed types $(jq -s -c '[.[] | .distributed]' "$WORK/runs/ref/result.jsonl")"
fw_interrupt ds_stopped USR2
[ "$first_rc" = "$TRAINRT_EXIT_STOPPED" ] && [ "$first_rows" -lt 4 ] \
  && pass "DeepSpeedPlugin: SIGUSR2 to rank 1 stopped at report $first_rows" || fail "DeepSpeedPlugin: the stopped run exits $first_rc after $first_rows reports"
fw_rerun_matches ds_stopped "DeepSpeedPlugin ZeRO-2: SIGUSR2 stop"
finish
