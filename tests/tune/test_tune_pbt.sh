#!/usr/bin/env bash
# PBT under mpiexec: 4 fashion_mlp trials (1 rank, 2 at once) on the small dataset, learning rates
# from loguniform(1e-4, 0.3), 6 epochs, a boundary every 2 (perturbation_interval 2, quantile 0.25,
# resample_probability 0: every exploration is a x0.8 / x1.2 move). At each boundary the worst
# trial scored so far copies the best one's newest checkpoint and goes on with its rate moved:
# sweep.json records each decision with the donor; an exploiting trial resumes from the copy (in
# its own run directory; the restore event names the donor's checkpoint it copied), its rate is the donor's x0.8 or x1.2, and its rows go on from the copied
# epoch; every trial ends TERMINATED at epoch 6. The same sweep run again starts nothing.
# pbt.time_attr = training_iteration (Ray's): boundaries every 2 reports up to the base job's
# [stop] criteria training_iteration>=6; each step ends at its boundary (a pause whose verdict says
# stop), every trial reports iterations 1..6 once each, decided at 2, 4 and 6, an exploiting trial
# resumes from the donor's copy and counts on from its iteration; without such a criterion the
# sweep is refused with one line, exit 2.
# ctest: fixture=small_data
source "$(dirname "$0")/../lib/common.sh"
require_small_data
cat >"$WORK/pbt.ini" <<INI
[tune]
base = $TRAINRT_SRC/jobs/fashion_mlp.ini
metric = test_accuracy
mode = max
num_samples = 4
ranks_per_trial = 1
max_concurrent_trials = 2
scheduler = pbt
pbt.perturbation_interval = 2
pbt.quantile_fraction = 0.25
pbt.resample_probability = 0
[space]
train.lr = loguniform(1e-4, 0.3)
INI
sweep() {
  rc=0
  timeout -k 10 400 "$TRAINRT" tune --config "$WORK/pbt.ini" --train.epochs=6 --data.path="$SMALL_DATA" \
    --run.storage_path="$WORK" --run.name=pbt >>"$WORK/pbt.out" 2>&1 || rc=$?
}
sweep
S=$WORK/pbt
[ "$rc" -eq 0 ] && [ "$(jq '[.trials[] | select(.status == "TERMINATED")] | length' "$S/sweep.json")" -eq 4 ] \
  || { tail -20 "$WORK/pbt.out" >&2; fail "PBT sweep: exit $rc"; finish; }
exploits=$(jq '[.trials[].decisions[] | select(.donor >= 0)] | length' "$S/sweep.json")
[ "$exploits" -ge 1 ] && pass "4 trials TERMINATED; $exploits exploit decision(s) recorded with their donor" \
  || fail "no exploit recorded: $(jq -c '[.trials[].decisions]' "$S/sweep.json")"
ok=1
for t in $(jq -r '.trials[] | select(any(.decisions[]; .donor >= 0)) | .name' "$S/sweep.json"); do
  grep -q "sweep: $t copies trial_" "$WORK/pbt.out" || { ok=0; echo "no copy line for $t" >&2; }
  grep -q "resuming from .*/$t/checkpoints/checkpoint_" "$S/$t.out" || { ok=0; echo "$t did not resume from its copy" >&2; }
  # The restore right after each copy names the donor trial's checkpoint it came from.
  donors=$(jq -r --arg t "$t" '.trials[] | select(.name == $t) | .decisions[] | select(.donor >= 0) | .donor' "$S/sweep.json" |
    while read -r d; do printf 'trial_%04d\n' "$d"; done)
  sources=$(jq -r 'select(.event == "restore" and .copied_from != null) | .copied_from' "$S/$t/events.jsonl" |
    sed -n 's|.*/\(trial_[0-9]*\)/checkpoints/checkpoint_[0-9]*$|\1|p')
  [ -n "$sources" ] && [ "$sources" = "$donors" ] \
    || { ok=0; echo "$t: restores copied from '$(echo $sources)', donors '$(echo $donors)'" >&2; }
  jq -se '[.[].epoch] | (. == (. | sort)) and (.[-1] == 6)' "$S/$t/result.jsonl" >/dev/null \
    || { ok=0; echo "$t rows: $(jq -c .epoch "$S/$t/result.jsonl" | tr '\n' ' ')" >&2; }
done
[ "$ok" = 1 ] && pass "each exploiting trial resumed from the copied checkpoint in its own directory (its restore events name the donor's checkpoints); its epochs rise to 6" \
  || fail "exploiting trials (see above)"
# Every exploration: the copying trial's rate is its donor's (at the copy) x0.8 or x1.2.
ratios=$(sed -n 's/.*copies trial_[0-9]* (train.lr=\([^;]*\);.* goes on with train.lr=\(.*\)$/\2 \1/p' "$WORK/pbt.out" |
  awk '{ printf "%d ", $1 / $2 * 100 + 0.5 }')
[ -n "$ratios" ] && [[ "$ratios" =~ ^((80|120)\ )+$ ]] && pass "explored rates: the donor's x0.8 or x1.2 (x/100: $ratios)" \
  || fail "explored rates over the donors' (x/100): '$ratios' (want 80 or 120 each)"
before=$(jq -c . "$S/sweep.json")
sweep
[ "$rc" -eq 0 ] && [ "$(jq -c . "$S/sweep.json")" = "$before" ] && pass "the finished sweep run again: nothing started, sweep.json unchanged" \
  || fail "second run: exit $rc or sweep.json changed"

by_reports() {  # the same sweep counting reports (fashion_mlp reports once an epoch), to name $1
  rc=0
  timeout -k 10 400 "$TRAINRT" tune --config "$WORK/pbt.ini" --tune.pbt.time_attr=training_iteration "${@:2}" \
    --train.epochs=20 --data.path="$SMALL_DATA" --run.storage_path="$WORK" --run.name="$1" >>"$WORK/$1.out" 2>&1 || rc=$?
}
by_reports pbt_iter --stop.criteria=training_iteration\>=6
I=$WORK/pbt_iter
[ "$rc" -eq 0 ] && [ "$(jq '[.trials[] | select(.status == "TERMINATED")] | length' "$I/sweep.json")" -eq 4 ] \
  || { tail -20 "$WORK/pbt_iter.out" >&2; fail "PBT by training_iteration: exit $rc"; finish; }
shape=$(jq -c '[.trials[] | [.decisions[].rung] | unique]' "$I/sweep.json")
rows=$(for t in "$I"/trial_*/; do jq -s -c '[.[]._training_iteration]' "$t/result.jsonl"; done | sort -u)
[ "$shape" = "[[2,4,6],[2,4,6],[2,4,6],[2,4,6]]" ] && [ "$rows" = "[1,2,3,4,5,6]" ] \
  && pass "by training_iteration: every trial decided at reports 2, 4 and 6 and reported iterations 1..6 once each" \
  || fail "by training_iteration: decisions $shape, rows $rows"
copied=$(jq -r '.trials[] | select(any(.decisions[]; .donor >= 0)) | .name' "$I/sweep.json")
ok=1
for t in $copied; do  # the restores from copies name the donors' checkpoints, and rows count on from the copy's
  donors=$(jq -r --arg t "$t" '.trials[] | select(.name == $t) | .decisions[] | select(.donor >= 0) | .donor' "$I/sweep.json" |
    while read -r d; do printf 'trial_%04d\n' "$d"; done)
  sources=$(jq -r 'select(.event == "restore" and .copied_from != null) | .copied_from' "$I/$t/events.jsonl" |
    sed -n 's|.*/\(trial_[0-9]*\)/checkpoints/checkpoint_[0-9]*$|\1|p')
  [ -n "$sources" ] && [ "$sources" = "$donors" ] || { ok=0; echo "$t: copied from '$(echo $sources)', donors '$(echo $donors)'" >&2; }
done
[ -n "$copied" ] && [ "$ok" = 1 ] && pass "by training_iteration: $(echo $copied | wc -w) exploiting trial(s) resumed from their donors' copies" \
  || fail "by training_iteration: exploits '$(echo $copied)'"
by_reports pbt_unbounded
[ "$rc" -eq 2 ] && grep -q "error: tune: tune.pbt.time_attr = training_iteration sets boundaries up to each trial's end.*training_iteration>=N" "$WORK/pbt_unbounded.out" \
  && [ ! -e "$WORK/pbt_unbounded/sweep.json" ] \
  && pass "by training_iteration without [stop] criteria training_iteration>=N: exit 2, one line, nothing written" \
  || fail "unbounded PBT by training_iteration: exit $rc, $(cat "$WORK/pbt_unbounded.out")"
finish
