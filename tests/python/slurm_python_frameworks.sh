#!/usr/bin/env bash
# The Transformers, Accelerate, DeepSpeed and TensorFlow guides' scripts (tests/python/<guide>_guide.py after
# `sed 's/ray\.train/trainrt/g'`) in batch jobs, as a Ray user moving to Slurm submits them:
# `sbatch -n 2 --requeue --wrap "python3 train.py"` (fit() in the batch script starts its 2 ranks with
# srun), each job requeued by `scontrol requeue` after its first report. Slurm starts the job again,
# the script resumes from the newest checkpoint the way its guide does (Transformers:
# resume_from_checkpoint; Accelerate: load_state; DeepSpeed: load_checkpoint; TensorFlow: the Keras
# model file), and the summary line
# it prints at the end equals Ray's uninterrupted run of the same script number for number
# (tests/conformance/ray_guides.json): the requeue lost and repeated nothing. Lightning's job:
# slurm_python_lightning.sh.
# ctest: resource=slurm_cluster
# ctest: fixture=small_data
# ctest: processors=1
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup
cd "$TRAINRT_SRC"
require_small_data
export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python:$TRAINRT_SRC/tests/python"

for guide in transformers accelerate deepspeed tensorflow; do
  prefix=${guide^^}
  sed 's/ray\.train/trainrt/g' "tests/python/${guide}_guide.py" >"$TEST_TMP/train_$guide.py"
  run=$TEST_TMP/runs/$guide
  export "${prefix}_DATA=$SMALL_IDX" "${prefix}_STORAGE=$TEST_TMP/runs" "${prefix}_NAME=$guide" \
    TRANSFORMERS_OUT="$TEST_TMP/hf_out"
  submit -n 2 --requeue --output="$TEST_TMP/$guide.out" --open-mode=append \
    --wrap "$TRAINRT_PYTHON $TEST_TMP/train_$guide.py"
  wait_rows "$run" 1 240
  timeout 20 scontrol requeue "$JOB" || fail "$guide: scontrol requeue $JOB failed"
  log "$guide: requeued job $JOB after report $(rows "$run")"
  wait_start "$run" 1
  wait_job "$JOB" 300
  expect_job_ok "$JOB"
  [[ "$(job_field "$JOB" Restarts)" -ge 1 ]] || fail "$guide: job $JOB was not restarted"
  grep -q 'resuming from' "$TEST_TMP/$guide.out" || fail "$guide: the requeued job did not resume"
  line=$(sed -n "s/^${prefix}_GUIDE //p" "$TEST_TMP/$guide.out" | tail -1)
  said=$("$TRAINRT_PYTHON" tests/conformance/ray_guides.py compare --reference tests/conformance/ray_guides.json \
    "$guide" "$line" 2>&1) || fail "$guide: after the requeue, the run differs from Ray's: $said ($(tail -3 "$TEST_TMP/$guide.out"))"
  log "$guide: requeued, resumed, and $said"
done
log "every guide's job requeued and resumed with Ray's numbers"
