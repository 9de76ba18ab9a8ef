#!/usr/bin/env bash
# `trainrt tune` outside Slurm (mpiexec), FIFO, random search: 4 trials of fashion_mlp (1 rank each,
# 2 at once) on the small dataset. Each trial is an ordinary run in SWEEP_DIR/trial_NNNN with the
# values sweep.json records; a rerun of a finished sweep starts nothing; a changed definition is
# refused (exit 8, the difference named) unless --resume-changed (then 2 trials are added to the 4
# finished ones, which are not rerun); a stop (USR2) mid-sweep exits 9 with the running trials
# resumable, and the rerun finishes them from their checkpoints with every result row once; a
# trial that fails is retried, then ERROR, while the others finish; a bad domain is one line, exit
# 2, nothing written; so is a key of a scheduler the sweep does not use (--tune.asha.max_t beside fifo).
# ctest: fixture=small_data
source "$(dirname "$0")/../lib/common.sh"
require_small_data
cat >"$WORK/sweep.ini" <<INI
[tune]
base = $TRAINRT_SRC/jobs/fashion_mlp.ini
metric = test_accuracy
num_samples = 4
max_failures_per_trial = 1
[space]
train.lr = loguniform(1e-3, 1e-1)
train.batch_size = choice(64, 128)
INI
common=(--data.path="$SMALL_DATA" --run.storage_path="$WORK" --ranks 2)
tune() { local out=$1; shift; rc=0; timeout -k 10 300 "$TRAINRT" tune --config "$WORK/sweep.ini" "${common[@]}" "$@" >"$out" 2>&1 || rc=$?; }
statuses() { jq -r '[.trials[].status] | join(" ")' "$1/sweep.json"; }

tune "$WORK/first.out" --run.name=sweep --train.epochs=1
S=$WORK/sweep
[ "$rc" -eq 0 ] && [ "$(statuses "$S")" = "TERMINATED TERMINATED TERMINATED TERMINATED" ] \
  && pass "4 trials TERMINATED: $(grep -m1 -o 'sweep finished.*' "$WORK/first.out")" \
  || { tail -20 "$WORK/first.out" >&2; fail "sweep: exit $rc, $(statuses "$S" 2>/dev/null)"; }
ok=1
for i in 0 1 2 3; do
  t=$S/trial_000$i
  lr=$(jq -r ".trials[$i].values[\"train.lr\"]" "$S/sweep.json"); batch=$(jq -r ".trials[$i].values[\"train.batch_size\"]" "$S/sweep.json")
  [ "$(wc -l <"$t/result.jsonl")" -eq 1 ] || ok=0
  grep -q -- "--train.lr=$lr .*--train.batch_size=$batch\|train.lr=$lr train.batch_size=$batch" "$WORK/first.out" || ok=0
  awk -v lr="$lr" 'BEGIN { exit !(lr >= 0.001 && lr <= 0.1) }' || ok=0
  [[ "$batch" == 64 || "$batch" == 128 ]] || ok=0
done
[ "$ok" = 1 ] && [ "$(jq -r '[.trials[].values["train.lr"]] | unique | length' "$S/sweep.json")" -eq 4 ] \
  && pass "each trial is a run of its own with the values sweep.json records: $(jq -c '[.trials[].values]' "$S/sweep.json" | cut -c1-160)" \
  || fail "trial runs and sweep.json disagree"
jq -e -s 'map(select(.event == "start")) | length == 1' "$S/trial_0002/events.jsonl" >/dev/null || fail "trial_0002 started more than once"
src=0; "$TRAINRT" results "$S" --json >"$WORK/results.json" || src=$?
best=$(for i in 0 1 2 3; do jq -r '.test_accuracy' "$S/trial_000$i/result.jsonl" | sed "s/^/trial_000$i /"; done | sort -k2 -g | tail -1)
[ "$src" -eq 0 ] && jq -e --arg name "${best% *}" --argjson value "${best#* }" \
    '(.trials | length) == 4 and .best_trial == $name and .best_metric == $value
     and (.best_checkpoint | test("/" + $name + "/checkpoints/checkpoint_"))' "$WORK/results.json" >/dev/null \
  && pass "trainrt results SWEEP_DIR: 4 trials, the best is the best reported ($(jq -c '{best_trial, best_metric}' "$WORK/results.json"))" \
  || { cat "$WORK/results.json" >&2; fail "trainrt results on the sweep: exit $src"; }

tune "$WORK/again.out" --run.name=sweep --train.epochs=1
[ "$rc" -eq 0 ] && ! grep -q "started (attempt" "$WORK/again.out" && pass "rerun of a finished sweep: exit 0, nothing started" \
  || { tail "$WORK/again.out" >&2; fail "rerun: exit $rc"; }

tune "$WORK/changed.out" --run.name=sweep --train.epochs=1 --tune.num_samples=6
[ "$rc" -eq "$TRAINRT_EXIT_CONFIG" ] && [ "$(grep -c . "$WORK/changed.out")" -eq 1 ] && grep -q "tune.num_samples: 4 -> 6" "$WORK/changed.out" \
  && pass "another definition in the same directory: exit 2 (bad input), $(cut -c1-150 "$WORK/changed.out")" \
  || { cat "$WORK/changed.out" >&2; fail "changed sweep: exit $rc"; }
first_values=$(jq -c '[.trials[:4][].values]' "$S/sweep.json")
tune "$WORK/grown.out" --run.name=sweep --train.epochs=1 --tune.num_samples=6 --resume-changed
starts_once=1
for i in 0 1 2 3 4 5; do [ "$(count_events "$S/trial_000$i" '.event == "start"')" -eq 1 ] || starts_once=0; done
[ "$rc" -eq 0 ] && [ "$(statuses "$S")" = "TERMINATED TERMINATED TERMINATED TERMINATED TERMINATED TERMINATED" ] \
  && [ "$(jq -c '[.trials[:4][].values]' "$S/sweep.json")" = "$first_values" ] && [ "$starts_once" = 1 ] \
  && [ "$(jq -r '.definition["tune.num_samples"]' "$S/sweep.json")" = 6 ] && grep -q "going on with a changed definition" "$WORK/grown.out" \
  && pass "--resume-changed with num_samples 4 -> 6: the 4 finished trials kept (not rerun), 2 added and run" \
  || { tail "$WORK/grown.out" >&2; fail "--resume-changed: exit $rc, $(statuses "$S")"; }

# A stop mid-sweep: USR2 to the sweep and its trials once the first trial has reported.
( tune "$WORK/stopped.out" --run.name=stopped --train.epochs=6 --tune.max_concurrent_trials=2; echo "$rc" >"$WORK/stopped.rc" ) &
runner=$!
wait_rows "$WORK/stopped/trial_0000" 1 || fail "no trial row within 60 s"
# As Slurm signals a job's tasks: the sweep and the trials' ranks (trainrt processes, not mpiexec).
for pid in $(pgrep -f -- "--run.name=stopped|--run.storage_path=$WORK/stopped " || true); do
  [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = trainrt ] && kill -USR2 "$pid"
done
wait "$runner" || true
src=0; "$TRAINRT" results "$WORK/stopped" >/dev/null || src=$?
[ "$(cat "$WORK/stopped.rc")" -eq "$TRAINRT_EXIT_STOPPED" ] && [ "$src" -eq "$TRAINRT_RESULTS_STOPPED" ] && [ "$(jq '[.trials[] | select(.status == "RUNNING")] | length' "$WORK/stopped/sweep.json")" -eq 0 ] \
  && pass "USR2 mid-sweep: exit 9, no trial left RUNNING ($(statuses "$WORK/stopped")), trainrt results says stopped" \
  || { tail -20 "$WORK/stopped.out" >&2; fail "stopped sweep: exit $(cat "$WORK/stopped.rc")"; }
tune "$WORK/resumed.out" --run.name=stopped --train.epochs=6 --tune.max_concurrent_trials=2
rows_ok=1
for i in 0 1 2 3; do
  jq -se '([.[]._training_iteration] == [range(1; length + 1)]) and last.epoch == 6' "$WORK/stopped/trial_000$i/result.jsonl" >/dev/null || rows_ok=0
done
[ "$rc" -eq 0 ] && [ "$(statuses "$WORK/stopped")" = "TERMINATED TERMINATED TERMINATED TERMINATED" ] && [ "$rows_ok" = 1 ] \
  && grep -q "resuming from" "$WORK/stopped/trial_0000.out" \
  && pass "rerun after the stop: every trial TERMINATED at epoch 6, each result row once, the stopped ones resumed" \
  || { tail -20 "$WORK/resumed.out" >&2; fail "resumed sweep: exit $rc, $(statuses "$WORK/stopped")"; }

# A trial that fails (its data file is missing) is retried once, then ERROR; the others finish.
sed -i 's/^train.batch_size = .*/data.path = grid('"${SMALL_DATA//\//\\/}"', \/nonexistent\/fashion.h5)/' "$WORK/sweep.ini"
tune "$WORK/failing.out" --run.name=failing --train.epochs=1
[ "$rc" -eq 0 ] && [ "$(statuses "$WORK/failing")" = "TERMINATED ERROR TERMINATED ERROR" ] \
  && [ "$(jq '.trials[1].attempts' "$WORK/failing/sweep.json")" -eq 2 ] \
  && pass "a failing trial: retried once (2 attempts, exit $(jq '.trials[1].last_exit' "$WORK/failing/sweep.json")), ERROR; the others TERMINATED" \
  || { tail -20 "$WORK/failing.out" >&2; fail "failing trial: exit $rc, $(statuses "$WORK/failing" 2>/dev/null)"; }

sed -i 's/^train.lr = .*/train.lrr = loguniform(1e-3, 1e-1)/' "$WORK/sweep.ini"
tune "$WORK/bad.out" --run.name=bad --train.epochs=1
[ "$rc" -eq "$TRAINRT_EXIT_CONFIG" ] && [ "$(grep -c . "$WORK/bad.out")" -eq 1 ] && grep -q "did you mean 'train.lr'" "$WORK/bad.out" \
  && [ ! -e "$WORK/bad" ] && pass "a misspelt key: exit 2, $(cut -c1-150 "$WORK/bad.out")" \
  || { cat "$WORK/bad.out" >&2; fail "bad space: exit $rc"; }

tune "$WORK/unused.out" --run.name=unused --tune.asha.max_t=4
[ "$rc" -eq "$TRAINRT_EXIT_CONFIG" ] && [ "$(grep -c . "$WORK/unused.out")" -eq 1 ] \
  && grep -q "tune.asha.max_t (command line) is set, but the sweep has scheduler = fifo" "$WORK/unused.out" \
  && [ ! -e "$WORK/unused" ] && pass "another scheduler's key: exit 2, $(cut -c1-150 "$WORK/unused.out")" \
  || { cat "$WORK/unused.out" >&2; fail "asha.max_t beside fifo: exit $rc"; }
finish
