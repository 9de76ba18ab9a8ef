#!/usr/bin/env bash
# A job with a 1-minute limit and no --signal (the template without its --signal line): trainrt
# reads the end time from Slurm, stops by itself with time to spare ([stop] time_margin = 45 s
# here, so that it stops within seconds; the auto margin is unit-tested), commits a checkpoint and
# requeues the job (`stop` reason time_limit, `requeue` by trainrt); the job never reaches
# TIMEOUT, and the next run finishes the training. Result rows once each.
# ctest: resource=slurm_cluster
# ctest: processors=1
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup

sed '/^#SBATCH --signal/d' "$TRAINRT_SRC/jobs/fashion_mlp.sbatch" >"$TEST_TMP/nosignal.sbatch"
grep -q -- "^#SBATCH --signal" "$TEST_TMP/nosignal.sbatch" && fail "could not remove --signal from the template"
# ~1.8 s per epoch on 2 ranks at batch 64 (938 steps): 10 epochs outlast the ~13 s a run may train
# before less than the margin (45 s of the 60) is left, so the first run stops for the time limit;
# a later run finishes (each run trains ~13 s: one or two more).
submit_fashion time_limit "$TEST_TMP/nosignal.sbatch" "--train.epochs=10 --train.batch_size=64 --stop.time_margin=45" --time=1
wait_start "$RUN" 1
log "job $JOB restarted after $(jq -r 'select(.event == "stop") | .time' "$RUN/events.jsonl")"
wait_job "$JOB" 400
expect_job_ok "$JOB"
stop=$(jq -c 'select(.event == "stop")' "$RUN/events.jsonl" | head -1)
jq -e '.reason == "time_limit" and (.checkpoint | type) == "string"' <<<"$stop" >/dev/null || fail "first stop event: $stop"
[[ "$(count_events "$RUN" '.event == "requeue" and .by == "trainrt" and .reason == "time_limit"')" -ge 1 ]] \
  || fail "no requeue by trainrt for the time limit"
left=$(sed -n 's/^\[trainrt 0\] stopping for the time limit: \([0-9.]*\) s left.*/\1/p' "$OUT" | head -1)
[[ -n "$left" ]] || fail "no logged time-limit decision in $OUT"
awk -v l="$left" 'BEGIN { exit !(l > 0) }' || fail "stopped with $left s left"
grep -q 'DUE TO TIME LIMIT' "$OUT" && fail "Slurm killed the job for its time limit"
[[ "$(count_events "$RUN" '.event == "finish"')" == 1 ]] || fail "no finish event"
rows_once "$RUN"
[[ "$(jq -r 'select(has("test_accuracy")) | .epoch' "$RUN/result.jsonl" | tail -1)" == 10 ]] \
  || fail "training did not reach epoch 10"
log "stopped itself with ${left}s left, requeued, finished after $(job_field "$JOB" Restarts) restart(s)"
