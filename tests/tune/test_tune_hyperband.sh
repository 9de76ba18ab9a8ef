#!/usr/bin/env bash
# HyperBand under mpiexec: 5 fashion_mlp trials (1 rank, 2 at once) on the small dataset, learning
# rates from loguniform(1e-4, 0.3), hyperband.max_t = 3 (eta 3: two brackets per band, bracket 0 of
# 2 trials with its one milestone at epoch 3, bracket 1 of 3 trials with milestones 1 and 3, one of
# them kept at 1). Bracket 0's trials train 3 epochs in one step; bracket 1's each end at epoch 1
# and wait there (a step each, their checkpoints kept) until all 3 reached it; then the best by
# test_accuracy at epoch 1 goes on from its checkpoint to epoch 3 and the other two are TERMINATED
# at epoch 1, the decisions in sweep.json (the trials compared: 3; promoted: the best one). The kept
# trial's rows are epochs 1, 2, 3 once each (its second step resumed from its epoch-1 checkpoint).
# The same sweep counting reports (time_attr = training_iteration) decides the same way at report 1.
# ctest: fixture=small_data
source "$(dirname "$0")/../lib/common.sh"
require_small_data
cat >"$WORK/hb.ini" <<INI
[tune]
base = $TRAINRT_SRC/jobs/fashion_mlp.ini
metric = test_accuracy
mode = max
num_samples = 5
ranks_per_trial = 1
max_concurrent_trials = 2
scheduler = hyperband
hyperband.max_t = 3
[space]
train.lr = loguniform(1e-4, 0.3)
INI
sweep() {  # NAME [ARGS]: the sweep into $WORK/NAME
  rc=0
  timeout -k 10 400 "$TRAINRT" tune --config "$WORK/hb.ini" --train.epochs=10 --data.path="$SMALL_DATA" \
    --run.storage_path="$WORK" --run.name="$1" "${@:2}" >>"$WORK/$1.out" 2>&1 || rc=$?
}
check_sweep() {  # NAME TIME_KEY: the decisions and rows of a finished sweep
  local S=$WORK/$1 key=$2
  [ "$rc" -eq 0 ] && [ "$(jq '[.trials[] | select(.status == "TERMINATED")] | length' "$S/sweep.json")" -eq 5 ] \
    || { tail -20 "$WORK/$1.out" >&2; fail "$1: exit $rc"; return; }
  local lasts
  lasts=$(for t in 0 1 2 3 4; do jq -s -c "[.[].$key]" "$S/trial_000$t/result.jsonl"; done | tr '\n' ' ')
  local decided kept best
  decided=$(jq -c '[.trials[2:][] | .decisions[0] | [.rung, .seen]] | unique' "$S/sweep.json")
  kept=$(jq -r '.trials[2:][] | select(.decisions[0].promoted) | .name' "$S/sweep.json")
  best=$(for t in 2 3 4; do
    printf '%s %s\n' "$(jq -s ".[] | select(.$key == 1) | .test_accuracy" "$S/trial_000$t/result.jsonl")" "trial_000$t"
  done | sort -g | tail -1 | cut -d' ' -f2)
  [ "$decided" = "[[1,3]]" ] && [ "$(echo "$kept" | wc -w)" = 1 ] && [ "$kept" = "$best" ] \
    && pass "$1: bracket 1 decided at 1 among its 3 trials; $kept (the best at 1) kept" \
    || fail "$1: decisions $decided, kept '$kept', best at 1 '$best'"
  local want="" t
  for t in 0 1 2 3 4; do
    if [ $t -lt 2 ] || [ "trial_000$t" = "$kept" ]; then want+="[1,2,3] "; else want+="[1] "; fi
  done
  [ "$lasts" = "$want" ] && pass "$1: rows by $key: $lasts (the kept trial resumed at 2, the others stopped at 1)" \
    || fail "$1: rows by $key: $lasts, want $want"
}
sweep hb
check_sweep hb epoch
kept=$(jq -r '.trials[2:][] | select(.decisions[0].promoted) | .name' "$WORK/hb/sweep.json")
[ -n "$kept" ] && grep -q "resuming from .*/$kept/checkpoints/checkpoint_" "$WORK/hb/$kept.out" \
  && pass "the kept trial's second step resumed from its own checkpoint" \
  || fail "the kept trial ('$kept') did not resume from its checkpoint"
sweep hb_iter --tune.hyperband.time_attr=training_iteration --stop.criteria=training_iteration\>=3
check_sweep hb_iter _training_iteration
finish
