#!/usr/bin/env bash
# A stop signal to ONE task of a running job (USR2 to task 1 only, as `--signal` or a site's
# preemption tooling might deliver it): all ranks stop at the same step, commit a checkpoint,
# rank 0 requeues the job itself (`requeue` event by trainrt), the job comes back as restart 1,
# resumes and completes with the uninterrupted weights; result rows once each.
# Then the container case: trainrt finds no scontrol (TRAINRT_SCONTROL points nowhere), says so,
# exits 75, and the supervisor (which has scontrol) requeues the job instead. This second job
# goes through the generic template slurm/trainrt.sbatch.
# ctest: resource=slurm_cluster
# ctest: processors=1
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup

reference_digest "$LIFECYCLE_ARGS"

start_fashion one_task 5
kill -USR2 "$(task_pid "$JOB" 1)"
log "sent USR2 to task 1 of job $JOB at row $(rows "$RUN")"
wait_start "$RUN" 1
wait_job "$JOB" 300
expect_job_ok "$JOB"
stop=$(jq -c 'select(.event == "stop")' "$RUN/events.jsonl")
[[ "$(grep -c . <<<"$stop")" == 1 ]] || fail "expected one stop event: $stop"
jq -e '.reason == "signal" and .signal == "USR2" and .signal_rank == 1 and .boundaries_by_rank == [.boundary, .boundary]' \
  <<<"$stop" >/dev/null || fail "stop event: $stop"
[[ "$(count_events "$RUN" '.event == "requeue" and .by == "trainrt" and .restart_count == 0')" == 1 ]] \
  || fail "no requeue event by trainrt: $(jq -c 'select(.event == "requeue")' "$RUN/events.jsonl")"
grep -q "\[trainrt 0\] requeued job $JOB" "$OUT" || fail "trainrt did not say it requeued job $JOB"
[[ "$(digest_in "$OUT")" == "$BASE" ]] || fail "digest $(digest_in "$OUT") != uninterrupted $BASE"
rows_once "$RUN"
log "USR2 to one task: all ranks stopped at boundary $(jq .boundary <<<"$stop"), requeued by trainrt, same digest"

export TRAINRT_SCONTROL=/nonexistent/scontrol
submit_template no_scontrol "$LIFECYCLE_ARGS"
unset TRAINRT_SCONTROL
wait_start "$RUN" 0
wait_rows "$RUN" 5
timeout 20 scancel -s USR2 "$JOB" || fail "scancel -s USR2 $JOB failed"
wait_start "$RUN" 1
wait_job "$JOB" 300
expect_job_ok "$JOB"
grep -q "cannot requeue job $JOB: '/nonexistent/scontrol' not found.*exiting 75" "$OUT" \
  || fail "no clear line about the missing scontrol in $OUT"
grep -q "\[trainrt supervise\] requeued job $JOB" "$OUT" || fail "the supervisor did not requeue job $JOB"
[[ "$(count_events "$RUN" '.event == "requeue"')" == 0 ]] || fail "trainrt recorded a requeue it could not do"
[[ "$(digest_in "$OUT")" == "$BASE" ]] || fail "digest $(digest_in "$OUT") != uninterrupted $BASE"
rows_once "$RUN"
log "no scontrol: exit 75, the supervisor requeued, same digest"
