#!/usr/bin/env bash
# A node fails under a 3-node job (sbatch --no-kill, 2 tasks per node, through trainrt supervise),
# on a cluster with SlurmdTimeout=300 (real clusters' default: Slurm notices after 5 minutes):
#   TRAINRT_NODE_FAULT=kill (default): every process of node2 gets SIGKILL (slurmd, slurmstepd,
#     its ranks), as a power loss;
#   TRAINRT_NODE_FAULT=freeze: every process of node2 is stopped (SIGSTOP), sockets open, as a
#     hung kernel or driver.
# Frozen, trainrt's own heartbeats ([failure] peer_timeout = 10 here) notice it: the survivors end
# the step ("peer_timeout" failure naming node2) and the supervisor excludes node2 while Slurm still
# calls it alive. Killed, node2's trainrt process closes its peer links without a goodbye: its
# neighbours end the step at once ("peer_lost" failure naming node2), and the supervisor, finding
# node2's slurmd gone, decides without waiting for srun (which waits KillWait for node2's tasks).
# Either way node2 is excluded before SlurmdTimeout, and the
# supervisor relaunches on the 2 nodes left with an explicit geometry (-N 2, 2 tasks per
# node, node2 excluded, --overlap past the dead step slurmctld keeps) and trainrt resumes from the
# latest checkpoint on 4 ranks (the fault comes right after checkpoint 4 is committed, so the
# relaunch must restore 4 or later): the job completes, every result row once, the last start has
# world size 4 on node1,node3, failure and relaunch records carry the failed step's world size
# (6), and `trainrt results` counts at least the time from the fault to the relaunch as lost
# (total_time_s - useful_time_s). The time from the fault to training again is logged and must be
# well under SlurmdTimeout. node2 is brought back (killed and restarted) once the relaunch runs,
# so that Slurm can end the job.
# ctest: resource=slurm_cluster
# ctest: fixture=small_data
# ctest: processors=1
set -euo pipefail
# shellcheck source=tests/lib/slurm.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup
need_nodes 3
CLUSTER=$TRAINRT_SRC/slurm/local-cluster.sh
FAULT=${TRAINRT_NODE_FAULT:-kill}
[[ $FAULT == kill || $FAULT == freeze ]] || fail "TRAINRT_NODE_FAULT must be kill or freeze, not '$FAULT'"
slurmd_timeout=$(cluster_slurmd_timeout)
((slurmd_timeout >= 120)) || fail "SlurmdTimeout is ${slurmd_timeout:-?} s: this test needs Slurm slow to notice (>= 120 s)"

restore_node2() {
  [[ "$(sinfo -h -N -n node2 -o %T 2>/dev/null)" == idle ]] && return 0
  bash "$CLUSTER" node-kill 2 >/dev/null 2>&1 || true
  bash "$CLUSTER" node-start 2 >/dev/null 2>&1 || true
}
trap 'rc=$?; restore_node2; _on_exit $rc' EXIT

# The small dataset: 25 steps of batch 240 per epoch, a checkpoint (and a result row) every 5.
args="--data.path=$SMALL_DATA --train.epochs=12 --train.batch_size=240 --checkpoint.every_steps=5 --failure.peer_timeout=10 --failure.peer_links=true"
submit_fashion "node$FAULT" jobs/fashion_mlp.sbatch "$args" -p multi -N 3 --ntasks=6 --ntasks-per-node=2 --no-kill
wait_start "$RUN" 0
wait_rows "$RUN" 4
wait_checkpoint "$RUN" 4
[[ "$(jq -r 'select(.event == "start") | .world_size' "$RUN/events.jsonl")" == 6 ]] || fail "the first start is not on 6 ranks"
t_kill=$(date +%s.%N)
bash "$CLUSTER" "node-$FAULT" 2
t_dead=$(date +%s.%N)  # every process of node2 killed or stopped: no row can follow
log "node2: $FAULT at row $(rows "$RUN")"

wait_relaunch "$RUN" "the $FAULT"
t_again=$T_AGAIN
node2_state=$(sinfo -h -N -n node2 -o %T)
log "relaunched; Slurm calls node2 '$node2_state'"
[[ $node2_state != down* ]] || fail "Slurm marked node2 down before trainrt relaunched (SlurmdTimeout $slurmd_timeout s)"
# A hung node leaves the survivors blocked: only the heartbeats end the step. A killed node's
# sockets close: its peer links' neighbours end the step at once.
reason=peer_lost
[[ $FAULT == freeze ]] && reason=peer_timeout
jq -e -s --arg n node2 --arg r $reason 'any(.[]; .event == "failure" and .reason == $r and (.message | contains($n)))' \
  "$RUN/events.jsonl" >/dev/null || fail "no $reason failure naming node2: $(jq -c 'select(.event == "failure")' "$RUN/events.jsonl")"
# The supervisor decided without waiting for srun: node2 gone by its slurmd (killed) or its heartbeat (hung).
gone="node2 is gone: its Slurm daemon does not answer"
[[ $FAULT == freeze ]] && gone="node2 is gone: its heartbeat is silent"
grep -q "$gone" "$OUT" || fail "the supervisor did not say '$gone': $(grep 'trainrt supervise' "$OUT" | tail -5)"
restore_node2
wait_job "$JOB" 300
expect_job_ok "$JOB"

relaunch=$(jq -c 'select(.event == "relaunch")' "$RUN/events.jsonl")
[[ "$(jq -s -c '[.[].excluded_nodes] | last' <<<"$relaunch")" == '["node2"]' ]] \
  || fail "relaunch events do not exclude node2: $relaunch"
[[ "$(jq -s -r '[.[] | select(.event == "start")] | last | .world_size' "$RUN/events.jsonl")" == 4 ]] \
  || fail "the relaunch did not start on 4 ranks: $(jq -c 'select(.event == "start")' "$RUN/events.jsonl")"
[[ "$(jq -s -r '[.[] | select(.event == "start")] | last | .hosts | join(",")' "$RUN/events.jsonl")" == node1,node3 ]] \
  || fail "the relaunch did not run on node1,node3"
jq -s -e '[.[] | select(.event == "failure" or .event == "relaunch") | .world_size] | length > 0 and all(. == 6)' \
  "$RUN/events.jsonl" >/dev/null || fail "failure/relaunch events do not carry the failed step's world size 6: \
$(jq -c 'select(.event == "failure" or .event == "relaunch")' "$RUN/events.jsonl")"
[[ "$(count_events "$RUN" '.event == "restore"')" -ge 1 ]] || fail "the relaunch did not restore a checkpoint"
restored_at_least "$RUN" 4
[[ "$(count_events "$RUN" '.event == "finish"')" == 1 ]] || fail "expected 1 finish event"
rows_once "$RUN"
# trainrt results counts the time from the failed attempt's last record to the relaunch as lost:
# at least the time from node2's end (the other ranks may still log a row while it is killed) on.
lost=$("$TRAINRT" results "$RUN" --json | jq '.total_time_s - .useful_time_s') || fail "trainrt results --json $RUN failed"
relaunched=$(date -d "$(jq -s -r '[.[] | select(.event == "start") | .time] | .[1]' "$RUN/events.jsonl")" +%s.%N)
gap=$(awk -v a="$t_dead" -v b="$relaunched" 'BEGIN{printf "%.1f", b-a}')
awk -v l="$lost" -v g="$gap" 'BEGIN{exit !(l >= g)}' ||
  fail "trainrt results: total - useful = ${lost} s, less than the ${gap} s from node2's end to the relaunch"
# Goodput names that time: detection (last row -> failure record) and relaunch (-> next launch).
goodput=$("$TRAINRT" results "$RUN" --json | jq -c .goodput)
jq -e '.lost_rank_s.detection + .lost_rank_s.relaunch > 0 and .ratio > 0 and .ratio < 1
       and ((.lost_rank_s | add) + .useful_rank_s - .allocated_rank_s | fabs) < 1e-6' <<<"$goodput" >/dev/null ||
  fail "trainrt results: goodput without the failure's detection and relaunch: $goodput"
# And the way back by phase: one recovery, its phases adding up to (at most) the time from the
# failed attempt's last row to the first row after the relaunch.
recovery=$("$TRAINRT" results "$RUN" --json | jq -c '.recoveries')
jq -e 'length == 1 and (.[0] | .training_again_s > 0
       and ([.detection_s, .relaunch_s, .start_up_s, .restore_s, .first_iteration_s] | add) as $sum
       | $sum <= .training_again_s + 1e-6 and $sum >= 0.5 * .training_again_s)' <<<"$recovery" >/dev/null ||
  fail "trainrt results: recoveries $recovery"
[[ "$(jq -s -r 'last | .epoch' "$RUN/result.jsonl")" == 12 ]] || fail "the last row is not epoch 12"
again=$(awk -v a="$t_kill" -v b="$t_again" 'BEGIN{printf "%.1f", b-a}')
awk -v a="$again" -v t="$slurmd_timeout" 'BEGIN{exit !(a < t / 2)}' ||
  fail "training again only $again s after the $FAULT: not well before SlurmdTimeout ($slurmd_timeout s)"
log "goodput: $goodput"
log "recovery: $recovery"
log "node2 $FAULT: training again on node1,node3 after $again s (SlurmdTimeout $slurmd_timeout s," \
    "peer_timeout 10 s); $(rows "$RUN") rows once each (fault at $t_kill)"
