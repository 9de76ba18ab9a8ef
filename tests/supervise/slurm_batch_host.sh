#!/usr/bin/env bash
# The batch host (the node running the sbatch script, trainrt supervise and the job's srun) dies
# under a 3-node job (sbatch --no-kill, 2 tasks per node) on a cluster with SlurmdTimeout=300:
# it loses power (node-poweroff: its link cut, then every process killed, so nothing a dying
# process sends reaches the others; srun's helper would otherwise cancel the job's steps, the
# watcher's too, in the instant between srun's death and its own). Slurm would keep such a job RUNNING with nothing in it
# (--no-kill) or notice only after SlurmdTimeout. the supervisor's watcher step on another node sees
# the batch host silent (its supervisor's beat and its ranks' heartbeat) for [failure] peer_timeout
# (10 s here), takes the job over, relaunches on the 2 nodes left (4 ranks, the batch host
# excluded), trainrt resumes from the latest checkpoint and trains to the end, and the watcher ends
# the job (scancel: CANCELLED, the run itself finished). The time from the kill to training again
# is logged and must be well under SlurmdTimeout. The node is brought back once the relaunch runs.
# ctest: resource=slurm_cluster
# ctest: fixture=small_data
# ctest: processors=1
set -euo pipefail
# shellcheck source=tests/lib/slurm.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup
need_nodes 3
CLUSTER=$TRAINRT_SRC/slurm/local-cluster.sh
slurmd_timeout=$(cluster_slurmd_timeout)
((slurmd_timeout >= 120)) || fail "SlurmdTimeout is ${slurmd_timeout:-?} s: this test needs Slurm slow to notice (>= 120 s)"

batch_index=""
restore_batch_host() {
  [[ -n $batch_index ]] || return 0
  [[ "$(sinfo -h -N -n "node$batch_index" -o %T 2>/dev/null)" == idle ]] && return 0
  bash "$CLUSTER" node-kill "$batch_index" >/dev/null 2>&1 || true
  bash "$CLUSTER" node-start "$batch_index" >/dev/null 2>&1 || true
}
trap 'rc=$?; restore_batch_host; _on_exit $rc' EXIT

args="--data.path=$SMALL_DATA --train.epochs=12 --train.batch_size=240 --checkpoint.every_steps=5 --failure.peer_timeout=10"
submit_fashion batchhost jobs/fashion_mlp.sbatch "$args" -p multi -N 3 --ntasks=6 --ntasks-per-node=2 --no-kill
wait_start "$RUN" 0
wait_rows "$RUN" 4
wait_checkpoint "$RUN" 4
batch_host=$(job_field "$JOB" BatchHost)
[[ $batch_host =~ ^node([1-3])$ ]] || fail "unexpected batch host '$batch_host'"
batch_index=${BASH_REMATCH[1]}
grep -q "watcher for this batch host ($batch_host) on node" "$OUT" ||
  fail "the wrapper started no watcher step: $(grep "trainrt supervise" "$OUT" | tail -3)"
# The watcher step runs once it says so (its srun, on the batch host, may still be starting it:
# a batch host lost before its watcher runs is lost with the job, as without trainrt).
wait_for_line "$OUT" "watches the batch host $batch_host" 60
t_kill=$(date +%s.%N)
bash "$CLUSTER" node-poweroff "$batch_index"
log "$batch_host (the batch host): powered off at row $(rows "$RUN")"

wait_relaunch "$RUN" "the kill"
t_again=$T_AGAIN
state=$(sinfo -h -N -n "$batch_host" -o %T)
log "relaunched; Slurm calls $batch_host '$state'"
[[ $state != down* ]] || fail "Slurm marked $batch_host down before trainrt relaunched (SlurmdTimeout $slurmd_timeout s)"
restore_batch_host
wait_job "$JOB" 300
[[ $JOB_STATE == CANCELLED* ]] || fail "job ended $JOB_STATE; the watcher should end it (scancel) once the run finished"

relaunch=$(jq -c 'select(.event == "relaunch")' "$RUN/events.jsonl")
jq -e -s --arg b "$batch_host" 'any(.[]; .took_over_from == $b and (.excluded_nodes | index($b)))' <<<"$relaunch" >/dev/null \
  || fail "no relaunch event taken over from $batch_host excluding it: $relaunch"
others=$(printf 'node%s\n' 1 2 3 | grep -v -x "$batch_host" | paste -sd, -)
[[ "$(jq -s -r '[.[] | select(.event == "start")] | last | .hosts | join(",")' "$RUN/events.jsonl")" == "$others" ]] \
  || fail "the relaunch did not run on $others: $(jq -c 'select(.event == "start") | .hosts' "$RUN/events.jsonl")"
[[ "$(jq -s -r '[.[] | select(.event == "start")] | last | .world_size' "$RUN/events.jsonl")" == 4 ]] \
  || fail "the relaunch did not start on 4 ranks"
[[ "$(count_events "$RUN" '.event == "restore"')" -ge 1 ]] || fail "the relaunch did not restore a checkpoint"
restored_at_least "$RUN" 4
[[ "$(count_events "$RUN" '.event == "finish"')" == 1 ]] || fail "expected 1 finish event"
rows_once "$RUN"
[[ "$(jq -s -r 'last | .epoch' "$RUN/result.jsonl")" == 12 ]] || fail "the last row is not epoch 12"
grep -q "took over job $JOB from the silent batch host $batch_host" "$OUT" ||
  fail "the watcher's lines are not in the job's output"
again=$(awk -v a="$t_kill" -v b="$t_again" 'BEGIN{printf "%.1f", b-a}')
awk -v a="$again" -v t="$slurmd_timeout" 'BEGIN{exit !(a < t / 2)}' ||
  fail "training again only $again s after the kill: not well before SlurmdTimeout ($slurmd_timeout s)"
log "batch host $batch_host killed: training again on $others after $again s (SlurmdTimeout $slurmd_timeout s," \
    "peer_timeout 10 s); $(rows "$RUN") rows once each; job $JOB_STATE by the watcher (fault at $t_kill)"
