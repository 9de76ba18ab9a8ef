#!/usr/bin/env bash
# The first rank of node2 killed (SIGKILL) under a 3-node job, node2 itself fine: its peer links
# close without a goodbye, so node1's and node3's first ranks end the step at once ("peer_lost"
# failure naming node2). A lost process is not a lost node: the supervisor finds node2's slurmd
# answering and keeps it. The relaunch runs on all 3 nodes (6 ranks, nothing excluded) from the
# latest checkpoint, and the job completes with every result row once.
# ctest: resource=slurm_cluster
# ctest: fixture=small_data
# ctest: processors=1
set -euo pipefail
# shellcheck source=tests/lib/slurm.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup
need_nodes 3

args="--data.path=$SMALL_DATA --train.epochs=12 --train.batch_size=240 --checkpoint.every_steps=5 --failure.peer_timeout=10 --failure.peer_links=true"
submit_fashion leadercrash jobs/fashion_mlp.sbatch "$args" -p multi -N 3 --ntasks=6 --ntasks-per-node=2 --no-kill
wait_start "$RUN" 0
wait_rows "$RUN" 4
wait_checkpoint "$RUN" 4
leader=$(task_pid "$JOB" 2)  # 2 tasks per node: rank 2 is node2's first
kill -9 "$leader"
log "node2's first rank (pid $leader) killed at row $(rows "$RUN")"
wait_relaunch "$RUN" "the kill"
wait_job "$JOB" 300
expect_job_ok "$JOB"

jq -e -s 'any(.[]; .event == "failure" and .reason == "peer_lost" and (.message | contains("node2")))' \
  "$RUN/events.jsonl" >/dev/null ||
  fail "no peer_lost failure naming node2: $(jq -c 'select(.event == "failure")' "$RUN/events.jsonl")"
[[ "$(jq -s -c '[.[] | select(.event == "relaunch") | .excluded_nodes] | add' "$RUN/events.jsonl")" == '[]' ]] ||
  fail "a relaunch left a node out: $(jq -c 'select(.event == "relaunch")' "$RUN/events.jsonl")"
[[ "$(jq -s -r '[.[] | select(.event == "start")] | last | "\(.world_size) \(.hosts | join(","))"' "$RUN/events.jsonl")" \
  == "6 node1,node2,node3" ]] || fail "the relaunch did not start on 6 ranks on node1..3: $(jq -c 'select(.event == "start")' "$RUN/events.jsonl")"
grep -q "supervise. [a-z0-9]* is gone: its" "$OUT" && fail "the supervisor called a node gone: $(grep "supervise. [a-z0-9]* is gone: its" "$OUT")"
restored_at_least "$RUN" 4
[[ "$(count_events "$RUN" '.event == "finish"')" == 1 ]] || fail "expected 1 finish event"
rows_once "$RUN"
log "node2's first rank killed: relaunched on node1..3 (node2 kept), $(rows "$RUN") rows once each"
