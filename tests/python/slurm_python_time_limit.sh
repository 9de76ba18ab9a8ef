#!/usr/bin/env bash
# A Python training function under a 1-minute time limit and no --signal: trainrt learns the time
# between its reports (about train.sleep_s = 2 s: every report is a step boundary) for the auto
# [stop] time_margin (10 s + 2 x the slowest step + 2 x the slowest checkpoint), stops at a report
# with that margin left, commits the checkpoint and requeues the job; Slurm never kills it for the
# limit. The requeued job is cancelled once it runs again (the resume itself is other tests').
# ctest: resource=slurm_cluster
# ctest: processors=1
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup
RUN=$TEST_TMP/runs/margin
submit -n 1 --time=1 --requeue --output="$TEST_TMP/margin.out" --open-mode=append \
  --wrap "PYTHONPATH=$TRAINRT_BUILD/lib/trainrt/python exec $TRAINRT --run.workload=python:$TRAINRT_SRC/tests/python/no_poll_func.py:train \
--train.epochs=60 --train.sleep_s=2 --metrics.progress=off --run.storage_path=$TEST_TMP/runs --run.name=margin"
wait_start "$RUN" 1
scancel "$JOB"
line=$(grep -m1 'stopping for the time limit' "$TEST_TMP/margin.out") || fail "no time-limit stop in $TEST_TMP/margin.out"
[[ "$line" =~ auto:\ 10\ s\ \+\ 2\ x\ slowest\ step\ ([0-9.]+)\ s ]] || fail "not the auto margin: $line"
awk -v s="${BASH_REMATCH[1]}" 'BEGIN { exit !(s >= 1.9 && s < 4) }' || fail "slowest step ${BASH_REMATCH[1]} s, not the ~2 s between reports: $line"
jq -e -s 'map(select(.event == "stop")) | first | .reason == "time_limit" and (.checkpoint | type) == "string"' "$RUN/events.jsonl" >/dev/null \
  || fail "stop event: $(grep '"stop"' "$RUN/events.jsonl")"
[[ "$(count_events "$RUN" '.event == "requeue" and .by == "trainrt" and .reason == "time_limit"')" -ge 1 ]] || fail "no requeue by trainrt"
grep -q 'DUE TO TIME LIMIT' "$TEST_TMP/margin.out" && fail "Slurm killed the job for its time limit"
log "$line"
