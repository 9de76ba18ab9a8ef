#!/usr/bin/env bash
# PyTorch 2.x's FSDP2 and distributed checkpoint in a Ray-shaped script (tests/python/fsdp2_guide.py:
# fully_shard over trainrt's process group, torch.distributed.checkpoint save/load of every rank's
# shards into one directory checkpoint), after `sed 's/ray\.train/trainrt/g'` only:
#  - from a plain `python3 train.py`: fit() starts 2 ranks, the parameters are DTensors, the loss
#    falls, the checkpoint holds both ranks' .distcp shards and DCP's .metadata, and
#    dcp_to_torch_save turns it into a state dict that classifies the test images; the ranks exit 0
#    (torch's DTensor cache dropped at exit without the GIL was a fatal Python error before);
#  - its train_func as a trainrt workload under mpiexec: USR2 to rank 1 mid-run stops it at the
#    epoch's report (exit stopped); its rerun resumes through dcp.load and is killed (kill -9 of
#    rank 1) as it resumes; the second rerun resumes again, and every reported loss equals the
#    uninterrupted run's.
# ctest: fixture=small_data
source "$(dirname "$0")/framework_lib.sh"
require_small_data
export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python:$TRAINRT_SRC/tests/python" FSDP2_DATA="$SMALL_IDX" FSDP2_STORAGE="$WORK/runs"
sed_copy tests/python/fsdp2_guide.py

rc=0; FSDP2_NAME=guide timeout -k 10 300 "$TRAINRT_PYTHON" "$WORK/fsdp2_guide.py" >"$WORK/guide.out" 2>&1 || rc=$?
line=$(sed -n 's/^FSDP2_GUIDE //p' "$WORK/guide.out")
[ "$rc" -eq 0 ] && [ -n "$line" ] && ! grep -q 'Fatal Python error' "$WORK/guide.out" \
  || { tail -30 "$WORK/guide.out" >&2; fail "the guide's script exits $rc"; finish; }
jq -e '.epochs == [0, 1, 2] and .parameters == "DTensor" and .losses[2] < .losses[0]
       and .files == [".metadata", "__0_0.distcp", "__1_0.distcp", "epoch.json"] and .accuracy > 0.6' <<<"$line" >/dev/null \
  && pass "python3 train.py: FSDP2 on 2 processes, epochs $(jq -c .epochs <<<"$line"), losses $(jq -c '[.losses[] | . * 1000 | round / 1000]' <<<"$line"), checkpoint $(jq -c .files <<<"$line"), test accuracy $(jq '.accuracy * 1000 | round / 1000' <<<"$line")" \
  || fail "the guide's run reported $line"
fw_matches_ray fsdp2 "$line"

FW_ROW='[.epoch, .loss]' FW_EPOCHS='[0,1,2,3,4,5]'
FW_ARGS=(--run.workload=python:"$WORK/fsdp2_guide.py":train_func --train.epochs=6 --train.samples=3000 --train.lr=0.001)
fw_reference
fw_stop_and_kill USR2
finish
