#!/usr/bin/env bash
# A node lost under a sweep takes that trial's slot away, not the sweep: `trainrt tune` in a
# 3-node job (sbatch --no-kill, 2 tasks per node) runs 5 trials of 2 ranks, 3 at once, each placed
# on a node of its own. Once three trials train, a node other than the batch host that runs one
# loses power (node-poweroff; Slurm, with SlurmdTimeout 300 s, would notice minutes later). No
# peer of that trial is left to notice: the sweep sees its heartbeats silent for peer_timeout
# (10 s) and the node's daemon gone, says so, ends the trial's step, retries it on the nodes left
# (resuming from its checkpoint; the attempt not counted as its failure, with
# max_failures_per_trial = 0) and runs 2 trials at once from then on; no trial step starts on the
# lost node again; the other trials go on undisturbed (one attempt each); every trial ends
# TERMINATED, each result row once, and the job COMPLETED. The node is brought back at the end.
# ctest: resource=slurm_cluster
# ctest: fixture=small_data
# ctest: processors=1
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup
need_nodes 3
require_small_data
CLUSTER=$TRAINRT_SRC/slurm/local-cluster.sh
lost_index=""
restore_node() {
  [[ -n $lost_index ]] || return 0
  bash "$CLUSTER" node-kill "$lost_index" >/dev/null 2>&1 || true
  bash "$CLUSTER" node-start "$lost_index" >/dev/null 2>&1 || true
}
trap 'rc=$?; restore_node; _on_exit $rc' EXIT

cat >"$TEST_TMP/sweep.ini" <<INI
[tune]
base = $TRAINRT_SRC/jobs/fashion_mlp.ini
metric = test_accuracy
num_samples = 5
ranks_per_trial = 2
[space]
train.lr = loguniform(1e-3, 1e-1)
INI
S=$TEST_TMP/runs/sweep
OUT=$TEST_TMP/sweep.out
submit -p multi -N 3 --ntasks-per-node=2 --no-kill --output="$OUT" --wrap "$TRAINRT tune --config $TEST_TMP/sweep.ini \
--data.path=$SMALL_DATA --train.epochs=40 --train.batch_size=240 --checkpoint.every_steps=5 --failure.peer_timeout=10 \
--run.storage_path=$TEST_TMP/runs --run.name=sweep"
# hosts TRIAL: the hosts of each start of the trial, one line per start.
hosts() { jq -r 'select(.event == "start") | .hosts | join(",")' "$S/$1/events.jsonl" 2>/dev/null; }
for t in trial_0000 trial_0001 trial_0002; do wait_rows "$S/$t" 1 180; done
batch_host=$(job_field "$JOB" BatchHost)
victim="" victim_trial=""
for t in trial_0000 trial_0001 trial_0002; do
  for h in $(hosts "$t" | tr ',' ' '); do
    if [[ $h != "$batch_host" && $h =~ ^node([1-3])$ ]]; then victim=$h victim_trial=$t lost_index=${BASH_REMATCH[1]}; break 2; fi
  done
done
[[ -n $victim ]] || fail "no running trial on a node other than the batch host $batch_host: $(for t in trial_000{0,1,2}; do echo "$t: $(hosts $t)"; done)"
# A row is reported before its checkpoint's save commits (async): the loss comes after the victim's
# first committed checkpoint, or its retry rightly starts afresh (seen once: lost at row 1, while
# checkpoint 1 was pending) and the resume below has nothing to check.
deadline=$((SECONDS + 60))
until compgen -G "$S/$victim_trial/checkpoints/checkpoint_[0-9]*" >/dev/null; do
  ((SECONDS < deadline)) || fail "$victim_trial committed no checkpoint within 60 s of its first row"
  sleep 0.1
done
t_loss=$(date -u +%FT%T.%3NZ)
bash "$CLUSTER" node-poweroff "$lost_index"
log "$victim (runs $victim_trial; batch host $batch_host): powered off at row $(rows "$S/$victim_trial")"

# The node comes back once its trial started again elsewhere (its dead step would otherwise keep
# the job COMPLETING until Slurm marks the node down); the sweep keeps it out all the same.
deadline=$((SECONDS + 180))
until (($(hosts "$victim_trial" | wc -l) >= 2)); do
  ((SECONDS < deadline)) || fail "$victim_trial did not start again within 180 s of the loss: $(grep 'sweep' "$OUT" | tail -5)"
  sleep 0.5
done
log "$victim_trial started again on $(hosts "$victim_trial" | tail -1), $(( $(date +%s) - $(date -d "$t_loss" +%s) )) s after the loss"
restore_node
wait_job "$JOB" 300
expect_job_ok "$JOB"
statuses=$(jq -r '[.trials[].status] | join(" ")' "$S/sweep.json")
[[ $statuses == "TERMINATED TERMINATED TERMINATED TERMINATED TERMINATED" ]] \
  || fail "trial statuses after the node loss: $statuses; $(tail -8 "$OUT")"
grep -q "sweep: $victim lost: its trials go on elsewhere, later trials leave it out; 2 trial(s) at once, 3 before" "$OUT" \
  || fail "no line on the lost node: $(grep 'sweep:' "$OUT" | tail -6)"
attempts=$(jq -r --arg t "$victim_trial" '.trials[] | select(.name == $t) | "\(.attempts) \(.node_losses) \(.failures)"' "$S/sweep.json")
[[ $attempts == "2 1 0" ]] || fail "$victim_trial: attempts, node losses, failures = $attempts, expected 2 1 0"
restored=$(jq -s -r 'map(select(.event == "restore")) | last | .iteration // 0' "$S/$victim_trial/events.jsonl")
((restored > 0)) || fail "$victim_trial's retry did not resume from its checkpoint"
for t in $(jq -r '.trials[].name' "$S/sweep.json"); do
  rows_once "$S/$t"
  late=$(jq -r --arg v "$victim" --arg since "$t_loss" \
    'select(.event == "start" and .time > $since and (.hosts | index($v)) != null) | .time' "$S/$t/events.jsonl")
  [[ -z $late ]] || fail "$t started on $victim after its loss, at $late"
done
for t in trial_0000 trial_0001 trial_0002; do
  [[ $t == "$victim_trial" ]] && continue
  if ! hosts "$t" | head -1 | grep -qw "$victim"; then
    a=$(jq -r --arg t "$t" '.trials[] | select(.name == $t) | .attempts' "$S/sweep.json")
    ((a == 1)) || fail "$t, not on $victim, ran $a attempts: the loss disturbed another trial"
  fi
done
log "lost $victim under $victim_trial: retried elsewhere from iteration $restored, later trials on $(hosts trial_0004 | tail -1), 5 trials TERMINATED"
