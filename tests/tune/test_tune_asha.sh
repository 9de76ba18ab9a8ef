#!/usr/bin/env bash
# ASHA under mpiexec, the shipped jobs/fashion_mlp_sweep.ini made smaller: 6 fashion_mlp trials (1 rank, 2 at once) on the small dataset, rungs at epochs
# 1 and 3 (grace_period 1, reduction_factor 3, max_t 3). Every trial reports epoch 1 and waits there
# for the sweep's verdict (decisions/1 in its run directory); those not worse than the rung's cutoff
# then (recorded in sweep.json with the values it was based on) go on in the same step to epoch 3,
# the others end at epoch 1: each trial is one step, stopped trials report epoch 1 only and promoted
# ones epochs 1..3 once; and `trainrt results` names as best the best test accuracy any trial
# reported, with the checkpoint saved at that report (trials rank their checkpoints by the sweep's
# metric); `trainrt plot` draws every trial's curve, the stopped ones grey. Then the same sweep with
# asha.time_attr = training_iteration (Ray's default) makes the same decisions.
# ctest: fixture=small_data
source "$(dirname "$0")/../lib/common.sh"
require_small_data
# The shipped sweep (jobs/fashion_mlp_sweep.ini), smaller: 6 trials of 1 rank, rungs at epochs 1 and 3.
rc=0; timeout -k 10 300 "$TRAINRT" tune --config "$TRAINRT_SRC/jobs/fashion_mlp_sweep.ini" --tune.num_samples=6 \
  --tune.ranks_per_trial=1 --tune.max_concurrent_trials=2 --tune.asha.max_t=3 --data.path="$SMALL_DATA" \
  --run.storage_path="$WORK" --run.name=asha >"$WORK/asha.out" 2>&1 || rc=$?
S=$WORK/asha
[ "$rc" -eq 0 ] && [ "$(jq '[.trials[] | select(.status == "TERMINATED")] | length' "$S/sweep.json")" -eq 6 ] \
  || { tail -20 "$WORK/asha.out" >&2; fail "ASHA sweep: exit $rc"; finish; }
promoted=$(jq '[.trials[] | select(any(.decisions[]; .promoted))] | length' "$S/sweep.json")
stopped=$(jq '[.trials[] | select(.decisions | length == 1 and (.[0].promoted | not))] | length' "$S/sweep.json")
[ "$promoted" -ge 1 ] && [ "$stopped" -ge 1 ] && [ $((promoted + stopped)) -eq 6 ] \
  && pass "6 trials: $promoted continued past epoch 1, $stopped stopped there" || fail "promoted $promoted, stopped $stopped"
ok=1
for t in $(jq -r '.trials[] | select(any(.decisions[]; .promoted)) | .name' "$S/sweep.json"); do
  jq -se '[.[].epoch] == [1, 2, 3]' "$S/$t/result.jsonl" >/dev/null && [ "$(cat "$S/$t/decisions/1")" = continue ] || ok=0
done
for t in $(jq -r '.trials[] | select(.decisions | length == 1 and (.[0].promoted | not)) | .name' "$S/sweep.json"); do
  jq -se '[.[].epoch] == [1]' "$S/$t/result.jsonl" >/dev/null && [ "$(cat "$S/$t/decisions/1")" = stop ] \
    && grep -q "the sweep's scheduler ends this trial at iteration 1" "$S/$t.out" || ok=0
done
[ "$ok" = 1 ] && [ "$(jq '[.trials[].attempts] | unique' -c "$S/sweep.json")" = "[1]" ] \
  && pass "one step per trial: promoted trials went on from epoch 1 to 3 (rows once), stopped ones ended at epoch 1" \
  || fail "trial rows: $(for t in "$S"/trial_*/; do printf '%s ' "$(basename "$t"):$(jq -c .epoch "$t/result.jsonl" | tr '\n' ,)"; done), attempts $(jq -c '[.trials[].attempts]' "$S/sweep.json")"
# Every decision: promoted exactly when not worse than the cutoff recorded with it.
jq -e '[.trials[].decisions[] | select(.rung == 1) | (.promoted == (.value >= .cutoff))] | all' "$S/sweep.json" >/dev/null \
  && jq -e '[.trials[].decisions[] | select(.rung == 1)] | any(.seen == 1 and .promoted)' "$S/sweep.json" >/dev/null \
  && pass "each decision recorded with its value, cutoff and the trials seen at the rung" || fail "decisions: $(jq -c '[.trials[].decisions]' "$S/sweep.json")"
best=$(for t in "$S"/trial_*/; do jq -r '.test_accuracy' "$t/result.jsonl"; done | sort -g | tail -1)
"$TRAINRT" results "$S" --json >"$WORK/results.json"
jq -e --argjson best "$best" '.best_metric == $best' "$WORK/results.json" >/dev/null \
  && [ "$(jq '.metrics.test_accuracy' "$(jq -r .best_checkpoint "$WORK/results.json")/manifest.json")" = "$best" ] \
  && pass "the best trial's accuracy is the best reported, and its best checkpoint the one saved with it: $(jq -c '{best_trial, best_metric}' "$WORK/results.json")" \
  || fail "best: $(jq -c '{best_trial, best_metric}' "$WORK/results.json"), the best reported $best"
# `trainrt plot SWEEP_DIR`: a line per trial, the stopped ones grey, the best one named.
rc=0; "$TRAINRT" plot "$S" -o "$WORK/sweep.png" --keep-script "$WORK/plot" >"$WORK/plot.out" 2>&1 || rc=$?
best_trial=$(jq -r .best_trial "$WORK/results.json")
blocks=$(grep -c '^# trial_' "$WORK/plot/rows.dat" || true)
[ "$rc" -eq 0 ] && [ "$(head -c 4 "$WORK/sweep.png" | od -An -c | tr -d ' ')" = "211PNG" ] && [ "$(stat -c %s "$WORK/sweep.png")" -gt 10240 ] \
  && [ "$blocks" -eq 6 ] && [ "$(grep -o '(stopped early)' "$WORK/plot/plot.gp" | wc -l)" -eq "$stopped" ] \
  && grep -q "$best_trial .*(best)" "$WORK/plot/plot.gp" && grep -q "best $best_trial" "$WORK/plot.out" \
  && pass "trainrt plot of the sweep: $(cat "$WORK/plot.out")" \
  || { cat "$WORK/plot.out" >&2; fail "plot of the sweep: exit $rc, $blocks trial blocks"; }
# asha.time_attr = training_iteration: rungs count reports (one per epoch here), decided alike.
rc=0; timeout -k 10 300 "$TRAINRT" tune --config "$TRAINRT_SRC/jobs/fashion_mlp_sweep.ini" --tune.num_samples=6 \
  --tune.ranks_per_trial=1 --tune.max_concurrent_trials=2 --tune.asha.max_t=3 --tune.asha.time_attr=training_iteration \
  --train.epochs=3 --data.path="$SMALL_DATA" --run.storage_path="$WORK" --run.name=asha_iterations >"$WORK/iterations.out" 2>&1 || rc=$?
I=$WORK/asha_iterations
shape() {  # per trial: its rows' iterations and its decisions' rungs, one attempt each
  jq -r '.trials[] | "\(.name) \(.attempts) \([.decisions[] | .rung] | join(","))"' "$I/sweep.json" | while read -r t a rungs; do
    echo "$a $(jq -r ._training_iteration "$I/$t/result.jsonl" | paste -sd,) $rungs"
  done | sort | uniq -c | tr -s ' ' | paste -sd';'
}
[ "$rc" -eq 0 ] && jq -e '[.trials[].decisions[] | (.promoted == (.value >= .cutoff and .rung < 3))] | all' "$I/sweep.json" >/dev/null \
  && [[ "$(shape)" =~ ^\ ?[0-9]+\ 1\ 1\ 1\;\ ?[0-9]+\ 1\ 1,2,3\ 1,3$ ]] \
  && pass "time_attr = training_iteration: trials promoted at report 1 reported 1..3, the others 1 ($(shape))" \
  || { tail -5 "$WORK/iterations.out" >&2; fail "time_attr = training_iteration: exit $rc, $(shape 2>&1)"; }
# The sweep's directory may not be a run's.
rc=0; "$TRAINRT" tune --config "$TRAINRT_SRC/jobs/fashion_mlp_sweep.ini" --data.path="$SMALL_DATA" --run.storage_path="$WORK/asha" \
  --run.name=trial_0000 >"$WORK/inrun.out" 2>&1 || rc=$?
[ "$rc" -eq "$TRAINRT_EXIT_CONFIG" ] && grep -q "is a run's directory" "$WORK/inrun.out" \
  && pass "a sweep into a run's directory: exit 2, $(cut -c1-120 "$WORK/inrun.out")" || { cat "$WORK/inrun.out" >&2; fail "sweep into a run dir: exit $rc"; }
finish
