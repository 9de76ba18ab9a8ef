#!/usr/bin/env bash
# `scontrol requeue` of a running fashion_mlp job, twice: each time every task gets TERM, the
# ranks agree to stop at one step, commit a checkpoint and exit; Slurm starts the job again
# (restart 1, then 2), trainrt resumes, and the job completes with weights bitwise identical to
# an uninterrupted run of the same training. Result rows: every iteration exactly once.
# TRAINRT_REQUEUE_SBATCH: extra sbatch options (test_multinode_requeue.sh: 2 nodes), and
# TRAINRT_REQUEUE_HOSTS: the hosts every start must report (comma separated).
# ctest: resource=slurm_cluster
# ctest: processors=1
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup
read -r -a sbatch_extra <<<"${TRAINRT_REQUEUE_SBATCH:-}"

reference_digest "$LIFECYCLE_ARGS"

submit_fashion requeue jobs/fashion_mlp.sbatch "$LIFECYCLE_ARGS" "${sbatch_extra[@]}"
for restart in 0 1; do
  wait_start "$RUN" "$restart"
  before=$(rows "$RUN")
  wait_rows "$RUN" $((before + 5))
  timeout 20 scontrol requeue "$JOB" || fail "scontrol requeue $JOB failed"
  log "requeued job $JOB during restart $restart at row $(rows "$RUN")"
done
wait_job "$JOB" 300
expect_job_ok "$JOB"
[[ "$(job_field "$JOB" Restarts)" == 2 ]] || fail "job $JOB Restarts=$(job_field "$JOB" Restarts), expected 2"

[[ "$(count_events "$RUN" '.event == "stop" and .reason == "signal" and .signal == "TERM"')" == 2 ]] \
  || fail "expected 2 stop events (signal TERM): $(jq -c 'select(.event == "stop")' "$RUN/events.jsonl")"
[[ "$(count_events "$RUN" '.event == "stop" and (.boundaries_by_rank | unique | length) == 1')" == 2 ]] \
  || fail "ranks stopped at different step boundaries"
[[ "$(count_events "$RUN" '.event == "requeue" and .by == "slurm"')" == 2 ]] || fail "expected 2 requeue events by slurm"
[[ "$(jq -s -c '[.[] | select(.event == "start") | .restart_count]' "$RUN/events.jsonl")" == "[0,1,2]" ]] \
  || fail "start events' restart counts: $(jq -s -c '[.[] | select(.event == "start") | .restart_count]' "$RUN/events.jsonl")"
[[ "$(count_events "$RUN" '.event == "restore"')" == 2 ]] || fail "expected 2 restore events"
[[ "$(count_events "$RUN" '.event == "finish"')" == 1 ]] || fail "expected 1 finish event"
jq -e -s '[.[] | select(.event == "stop") | .checkpoint] == [.[] | select(.event == "restore") | .checkpoint | split("/") | last]' \
  "$RUN/events.jsonl" >/dev/null || fail "the restores did not use the stop checkpoints"
if [[ -n "${TRAINRT_REQUEUE_HOSTS:-}" ]]; then
  hosts=$(jq -r 'select(.event == "start") | .hosts | join(",")' "$RUN/events.jsonl" | sort -u | paste -sd ' ' -)
  [[ "$hosts" == "$TRAINRT_REQUEUE_HOSTS" ]] || fail "start events' hosts '$hosts', expected $TRAINRT_REQUEUE_HOSTS"
fi
rows_once "$RUN"
[[ ! -e "$RUN/result.superseded.jsonl" ]] || fail "rows were superseded after clean stops"
[[ "$(grep -c 'restart [0-2] on' "$OUT")" == 3 ]] || fail "the output file does not hold all 3 runs (--open-mode=append)"
got=$(digest_in "$OUT")
[[ "$got" == "$BASE" ]] || fail "digest after two requeues $got != uninterrupted $BASE"
log "two requeues: stops at iterations $(jq -s -c '[.[] | select(.event == "stop") | .step]' "$RUN/events.jsonl"), same digest $got, $(rows "$RUN") rows once each"
