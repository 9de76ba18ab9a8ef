#!/usr/bin/env bash
# The Lightning guide's script (tests/python/lightning_guide.py after `sed 's/ray\.train/trainrt/g'`)
# in a batch job, as a Ray user moving to Slurm submits it: `sbatch -n 2 --wrap "python3 train.py"`
# (fit() in the batch script starts its 2 ranks with srun). The same script run uninterrupted in one
# job, and in a second job that `scontrol requeue` ends after its second report: Slurm requeues the
# job, and the job's second run resumes from the newest checkpoint through
# trainer.fit(ckpt_path=...); every epoch is reported once, and every loss equals the
# uninterrupted job's. (That trainrt, not Lightning, takes a stop signal is test_python_lightning's.)
# ctest: resource=slurm_cluster
# ctest: fixture=small_data
# ctest: processors=1
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup
cd "$TRAINRT_SRC"
require_small_data
"$TRAINRT_PYTHON" -c 'import lightning' 2>/dev/null || fail "this Python has no lightning (make deps installs it)"
export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python:$TRAINRT_SRC/tests/python" LIGHTNING_DATA="$SMALL_IDX" \
  LIGHTNING_SAMPLES=6000 LIGHTNING_EPOCHS=6 LIGHTNING_STORAGE="$TEST_TMP/runs"
sed 's/ray\.train/trainrt/g' tests/python/lightning_guide.py >"$TEST_TMP/train.py"
losses() { jq -s -c '[.[] | [.epoch, .loss]]' "$TEST_TMP/runs/$1/result.jsonl"; }

LIGHTNING_NAME=whole submit -n 2 --output="$TEST_TMP/whole.out" --wrap "$TRAINRT_PYTHON $TEST_TMP/train.py"
wait_job "$JOB" 300
expect_job_ok "$JOB"
[[ "$(jq -s -c '[.[] | .epoch]' "$TEST_TMP/runs/whole/result.jsonl")" == "[0,1,2,3,4,5]" ]] \
  && grep -q '^LIGHTNING_GUIDE ' "$TEST_TMP/whole.out" \
  || fail "the uninterrupted job: $(tail -3 "$TEST_TMP/whole.out")"
log "uninterrupted job $JOB: $(losses whole)"

LIGHTNING_NAME=requeued submit -n 2 --requeue --output="$TEST_TMP/requeued.out" --open-mode=append \
  --wrap "$TRAINRT_PYTHON $TEST_TMP/train.py"
wait_rows "$TEST_TMP/runs/requeued" 2 180
timeout 20 scontrol requeue "$JOB" || fail "scontrol requeue $JOB failed"
log "requeued job $JOB after report $(rows "$TEST_TMP/runs/requeued")"
wait_start "$TEST_TMP/runs/requeued" 1
wait_job "$JOB" 300
expect_job_ok "$JOB"
[[ "$(job_field "$JOB" Restarts)" -ge 1 ]] || fail "job $JOB was not restarted"
grep -q 'resuming from' "$TEST_TMP/requeued.out" || fail "the requeued job did not resume: $(tail -5 "$TEST_TMP/requeued.out")"
[[ "$(losses requeued)" == "$(losses whole)" ]] \
  || fail "after the requeue: $(losses requeued), uninterrupted: $(losses whole)"
log "requeued after a stop at an epoch's report, resumed through ckpt_path: every epoch once, every loss as the uninterrupted job's"
