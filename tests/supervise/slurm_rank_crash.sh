#!/usr/bin/env bash
# kill -9 of one rank mid-epoch under slurm/trainrt-srun: the step fails within seconds of Slurm's
# KillWait (srun --kill-on-bad-exit ends the step; the survivor, blocked in a collective with the
# dead rank, gets SIGTERM and cannot reach its stop, so SIGKILL ends it KillWait later), the supervisor records the failure and relaunches the step
# in the same allocation, trainrt resumes from the latest checkpoint, and the job completes with
# the uninterrupted weights; reported rows: every iteration once (later ones superseded).
# Then max_failures exhausted: task 1 dies (fault injection) every time it reports iteration 3;
# with [failure] max_failures = 1 the supervisor relaunches once, then gives up with a final record,
# and the job ends FAILED with exit code 10.
# ctest: resource=slurm_cluster
# ctest: processors=1
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup

reference_digest "$LIFECYCLE_ARGS"

start_fashion crash 7
victim=$(task_pid "$JOB" 1)
killed_at=$(date +%s.%N)
kill -9 "$victim"
log "kill -9 task 1 (pid $victim) of job $JOB at row $(rows "$RUN")"
wait_for_line "$OUT" '\[trainrt supervise\] step exited with status [0-9]+: relaunch' 60
failed_after=$(awk -v a="$killed_at" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
kill_wait=$(cluster_kill_wait)
awk -v t="$failed_after" -v w="$kill_wait" 'BEGIN { exit !(t < w + 10) }' \
  || fail "the step took ${failed_after}s to fail after the kill (KillWait ${kill_wait}s)"
wait_job "$JOB" 300
expect_job_ok "$JOB"
[[ "$(count_events "$RUN" '.event == "failure" and .reason == "unrecorded_end"')" == 1 ]] \
  || fail "expected one failure record for the killed step: $(jq -c 'select(.event == "failure")' "$RUN/events.jsonl")"
[[ "$(count_events "$RUN" '.event == "relaunch" and .failures == 1')" == 1 ]] || fail "expected one relaunch event"
[[ "$(count_events "$RUN" '.event == "start"')" == 2 ]] || fail "expected 2 start events"
[[ "$(job_field "$JOB" Restarts)" == 0 ]] || fail "the job was requeued instead of relaunched in place"
[[ "$(digest_in "$OUT")" == "$BASE" ]] || fail "digest $(digest_in "$OUT") != uninterrupted $BASE"
rows_once "$RUN"
log "kill -9: step failed and was relaunched within ${failed_after}s, resumed, same digest"

export TRAINRT_FAULT=report:1:3
submit_fashion exhausted jobs/fashion_mlp.sbatch "$LIFECYCLE_ARGS --failure.max_failures=1"
unset TRAINRT_FAULT
wait_job "$JOB" 300
state=$(job_field "$JOB" JobState) code=$(job_field "$JOB" ExitCode)
[[ "$state" == FAILED && "$code" == 10:0 ]] || fail "job $JOB ended $state $code, expected FAILED 10:0"
[[ "$(grep -c 'fault injection: rank 1 dies at report (iteration 3)' "$OUT")" == 2 ]] \
  || fail "expected the fault to fire in 2 attempts"
final=$(jq -c 'select(.event == "failure" and .final == true)' "$RUN/events.jsonl")
[[ "$(grep -c . <<<"$final")" == 1 ]] || fail "expected one final failure record: $final"
jq -e '.failures == 2 and (.message | test("giving up: 2 failure\\(s\\), more than \\[failure\\] max_failures = 1"))' \
  <<<"$final" >/dev/null || fail "final record: $final"
grep -q '\[trainrt supervise\] step exited with status [0-9]*: give_up: giving up: 2 failure(s)' "$OUT" || fail "no give-up line in the job output"
[[ "$(count_events "$RUN" '.event == "relaunch"')" == 1 ]] || fail "expected exactly one relaunch"
rows_once "$RUN"
log "max_failures=1: one relaunch, then a final record and ExitCode 10"
