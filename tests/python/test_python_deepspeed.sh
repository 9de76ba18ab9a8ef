#!/usr/bin/env bash
# DeepSpeed as Ray Train's guide has it (tests/python/deepspeed_guide.py: deepspeed.initialize
# inside the function on trainrt's process group, ZeRO-3, every rank's save_checkpoint shard in one
# directory checkpoint, load_checkpoint from get_checkpoint()), after `sed 's/ray\.train/trainrt/g'` only:
#  - from a plain `python3 train.py`: fit() starts 2 ranks on the CPU; DeepSpeed runs ZeRO stage 3
#    over 2 processes on trainrt's backend (its all_gather_into_tensor and reduce_scatter_tensor),
#    one report per epoch, the loss falls, the warm-up schedule raises the learning rate, and the
#    checkpoint holds both ranks' ZeRO shards, from which DeepSpeed's zero_to_fp32 consolidates a
#    model that classifies the test images;
#  - its train_func as a trainrt workload under mpiexec: ZeRO-3 stopped by USR2 to rank 1 mid-run
#    at the epoch's report (exit stopped), its rerun resumed through load_checkpoint and killed
#    (kill -9 of rank 1) as it resumes, the second rerun resumed again: every reported loss and
#    learning rate equals the uninterrupted run's; ZeRO-2 stopped and rerun, the same; ZeRO-1
#    runs (the engine reports stage 1, the loss falls).
# ctest: fixture=small_data
source "$(dirname "$0")/framework_lib.sh"
require_small_data
"$TRAINRT_PYTHON" -c 'import deepspeed' 2>/dev/null || { fail "this Python has no deepspeed (make deps installs it)"; finish; }
export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python:$TRAINRT_SRC/tests/python" DEEPSPEED_DATA="$SMALL_IDX" DEEPSPEED_STORAGE="$WORK/runs"
sed_copy tests/python/deepspeed_guide.py

rc=0; DEEPSPEED_NAME=guide timeout -k 10 300 "$TRAINRT_PYTHON" "$WORK/deepspeed_guide.py" >"$WORK/guide.out" 2>&1 || rc=$?
line=$(sed -n 's/^DEEPSPEED_GUIDE //p' "$WORK/guide.out")
[ "$rc" -eq 0 ] && [ -n "$line" ] || { tail -30 "$WORK/guide.out" >&2; fail "the guide's script exits $rc"; finish; }
jq -e '.epochs == [0, 1, 2] and .world == 2 and .zero_stage == 3 and .losses[2] < .losses[0]
       and .lrs[0] < .lrs[1] and (.files | map(select(test("zero_pp_rank_[01]_mp_rank_00_model_states.pt$"))) | length == 2)
       and (.files | map(select(test("zero_pp_rank_[01]_mp_rank_00_optim_states.pt$"))) | length == 2)
       and .accuracy > 0.6' <<<"$line" >/dev/null \
  && pass "python3 train.py: ZeRO-3 on 2 processes, epochs $(jq -c .epochs <<<"$line"), losses $(jq -c '[.losses[] | . * 1000 | round / 1000]' <<<"$line"), checkpoint $(jq -c .files <<<"$line"), test accuracy $(jq '.accuracy * 1000 | round / 1000' <<<"$line")" \
  || fail "the guide's run reported $line"
fw_matches_ray deepspeed "$line"

FW_ROW='[.epoch, .loss, .lr, .zero_stage]' FW_EPOCHS='[0,1,2,3]'
FW_ARGS=(--run.workload=python:"$WORK/deepspeed_guide.py":train_func --train.epochs=4 --train.samples=3000
         --train.lr=0.001 --train.zero_stage=3)
fw_reference
fw_stop_and_kill USR2
# zero_stage_reference STAGE: the uninterrupted run of ZeRO-STAGE as "ref".
zero_stage_reference() {
  mv "$WORK/runs/ref" "$WORK/runs/ref_before_zero$1"
  FW_ARGS=("${FW_ARGS[@]/--train.zero_stage=*/--train.zero_stage=$1}")
  fw_reference
  [ "$(jq -s -c '[.[] | .zero_stage] | unique' "$WORK/runs/ref/result.jsonl")" = "[$1]" ] || fail "ZeRO-$1: the engine reports stages $(jq -s -c '[.[] | .zero_stage]' "$WORK/runs/ref/result.jsonl")"
}
zero_stage_reference 2
fw_interrupt stopped2 USR2
[ "$first_rc" = "$TRAINRT_EXIT_STOPPED" ] && [ "$first_rows" -lt 4 ] \
  && pass "ZeRO-2: SIGUSR2 to rank 1 stopped at report $first_rows" || fail "ZeRO-2: the stopped run exits $first_rc after $first_rows reports"
fw_rerun_matches stopped2 "ZeRO-2: SIGUSR2 stop"
zero_stage_reference 1
jq -s -e '.[-1].loss < .[0].loss' "$WORK/runs/ref/result.jsonl" >/dev/null \
  && pass "ZeRO-1 runs: losses $(jq -s -c '[.[] | .loss * 1000 | round / 1000]' "$WORK/runs/ref/result.jsonl")" \
  || fail "ZeRO-1: the loss does not fall: $(jq -s -c '[.[] | .loss]' "$WORK/runs/ref/result.jsonl")"
finish
