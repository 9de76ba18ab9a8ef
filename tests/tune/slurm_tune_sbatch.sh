#!/usr/bin/env bash
# `trainrt tune` as a batch job: `sbatch -n 4 --wrap "trainrt tune ..."` with ranks_per_trial = 2
# runs its 4 trials two at a time, each as its own srun step (--exact: CPUs no other step holds)
# of 2 PMIx ranks inside the one allocation; every trial records the job's id, and two trials'
# steps overlap in time. The same sweep of longer trials with --requeue, its steps sent USR2 while
# the first two trials train: they checkpoint and exit 9, the sweep requeues its job, and the job's
# next start resumes them and runs the rest; every trial TERMINATED, each result row once.
# ctest: resource=slurm_cluster
# ctest: fixture=small_data
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup
require_small_data
cat >"$TEST_TMP/sweep.ini" <<INI
[tune]
base = $TRAINRT_SRC/jobs/fashion_mlp.ini
metric = test_accuracy
num_samples = 4
ranks_per_trial = 2
[space]
train.lr = loguniform(1e-3, 1e-1)
INI
S=$TEST_TMP/runs/sweep
submit -n 4 --output="$TEST_TMP/sweep.out" --wrap "$TRAINRT tune --config $TEST_TMP/sweep.ini --data.path=$SMALL_DATA \
--train.epochs=1 --run.storage_path=$TEST_TMP/runs --run.name=sweep"
wait_job "$JOB" 300
expect_job_ok "$JOB"
[[ "$(jq -r '[.trials[].status] | join(" ")' "$S/sweep.json")" == "TERMINATED TERMINATED TERMINATED TERMINATED" ]] \
  || fail "trial statuses: $(jq -c '[.trials[].status]' "$S/sweep.json"); $(tail -5 "$TEST_TMP/sweep.out")"
for i in 0 1 2 3; do
  start=$(jq -c 'select(.event == "start") | {job_id, world_size, launcher}' "$S/trial_000$i/events.jsonl")
  [[ "$start" == "{\"job_id\":\"$JOB\",\"world_size\":2,\"launcher\":\"pmix\"}" ]] || fail "trial_000$i start: $start"
done
grep -q "^\[trainrt\] sweep: trial_0001 started" "$TEST_TMP/sweep.out" || fail "no trial_0001 start line"
# trial_0001 started before trial_0000 ended: two steps at once
first_end=$(jq -r 'select(.event == "finish") | .time' "$S/trial_0000/events.jsonl")
second_start=$(jq -r 'select(.event == "start") | .time' "$S/trial_0001/events.jsonl")
[[ "$second_start" < "$first_end" ]] || fail "trial_0001 started at $second_start, after trial_0000 ended at $first_end"
"$TRAINRT" results "$S" >"$TEST_TMP/results.txt" || fail "trainrt results on the sweep: exit $?"
log "4 trials as 2-rank srun steps of job $JOB, two at a time; $(grep '^best:' "$TEST_TMP/results.txt")"

R=$TEST_TMP/runs/requeued
submit -n 4 --requeue --output="$TEST_TMP/requeued.out" --open-mode=append --wrap "$TRAINRT tune --config $TEST_TMP/sweep.ini \
--data.path=$SMALL_DATA --train.epochs=6 --run.storage_path=$TEST_TMP/runs --run.name=requeued"
wait_rows "$R/trial_0000" 1
scancel --signal=USR2 "$JOB"
wait_job "$JOB" 400
expect_job_ok "$JOB"
[[ "$(jq -r '[.trials[].status] | join(" ")' "$R/sweep.json")" == "TERMINATED TERMINATED TERMINATED TERMINATED" ]] \
  || fail "after the requeue: $(jq -c '[.trials[].status]' "$R/sweep.json"); $(tail -5 "$TEST_TMP/requeued.out")"
grep -q "sweep stopped" "$TEST_TMP/requeued.out" || fail "the sweep did not stop: $(tail -5 "$TEST_TMP/requeued.out")"
[[ "$(jq -s 'map(select(.event == "start")) | .[-1].restart_count' "$R/trial_0000/events.jsonl")" -ge 1 ]] \
  || fail "trial_0000 did not start again after a requeue"
for i in 0 1 2 3; do
  jq -se '([.[]._training_iteration] == [range(1; length + 1)]) and last.epoch == 6' "$R/trial_000$i/result.jsonl" >/dev/null \
    || fail "trial_000$i rows: $(jq -c '[._training_iteration, .epoch]' "$R/trial_000$i/result.jsonl" | tr '\n' ' ')"
done
log "USR2 to the sweep's steps: trials stopped, job $JOB requeued by the sweep, resumed and finished; rows once each"
