#!/usr/bin/env bash
# `trainrt tune` with search = optuna (Optuna 3.1's TPE through the Python component): 8 trials of
# fashion_mlp (1 rank each, 2 at once) on the small dataset, every value drawn inside its domain
# when its trial starts and recorded in sweep.json; with one trial at a time the same seed draws
# the same 8 trials, also when the sweep is stopped (USR2) mid-way and run again (the drawn trials
# kept, the rest drawn from the same results); TPE's draws after n_startup_trials differ from
# random search's. Without Optuna (hidden from Python) and with a domain Optuna cannot sample, one
# line, exit 2, nothing written.
# ctest: fixture=small_data
source "$(dirname "$0")/../lib/common.sh"
require_small_data
cat >"$WORK/sweep.ini" <<INI
[tune]
base = $TRAINRT_SRC/jobs/fashion_mlp.ini
metric = test_accuracy
num_samples = 8
search = optuna
optuna.n_startup_trials = 3
[space]
train.lr = loguniform(1e-3, 1e-1)
train.batch_size = choice(64, 128)
data.prefetch_batches = randint(1, 9)
INI
common=(--data.path="$SMALL_DATA" --run.storage_path="$WORK" --ranks 2 --train.epochs=2)
tune() { local out=$1; shift; rc=0; timeout -k 10 300 "$TRAINRT" tune --config "$WORK/sweep.ini" "${common[@]}" "$@" >"$out" 2>&1 || rc=$?; }
statuses() { jq -r '[.trials[].status] | unique | join(" ")' "$1/sweep.json"; }
drawn() { jq -c '[.trials[].values]' "$1/sweep.json"; }

tune "$WORK/concurrent.out" --run.name=concurrent
S=$WORK/concurrent
in_domain=$(jq '[.trials[].values | (.["train.lr"] | tonumber) as $lr | (.["data.prefetch_batches"] | tonumber) as $h
                 | $lr >= 0.001 and $lr <= 0.1 and (.["train.batch_size"] == "64" or .["train.batch_size"] == "128")
                   and $h >= 1 and $h <= 8 and ($h | floor) == $h] | all' "$S/sweep.json")
ran_as_drawn=1
for i in $(seq 0 7); do
  lr=$(jq -r ".trials[$i].values[\"train.lr\"]" "$S/sweep.json")
  grep -q "trial_000$i started (attempt 1): train.lr=$lr " "$WORK/concurrent.out" || ran_as_drawn=0
  [ "$(wc -l <"$S/trial_000$i/result.jsonl")" -eq 2 ] || ran_as_drawn=0
done
[ "$rc" -eq 0 ] && [ "$(statuses "$S")" = TERMINATED ] && [ "$in_domain" = true ] && [ "$ran_as_drawn" = 1 ] \
  && [ "$(jq '[.trials[].values["train.lr"]] | unique | length' "$S/sweep.json")" -eq 8 ] \
  && pass "8 Optuna trials, 2 at once: TERMINATED, each value in its domain and run as recorded ($(drawn "$S" | cut -c1-120)...)" \
  || { tail -20 "$WORK/concurrent.out" >&2; fail "optuna sweep: exit $rc, $(statuses "$S" 2>/dev/null), in domain: $in_domain, ran as drawn: $ran_as_drawn"; }

tune "$WORK/serial.out" --run.name=serial --tune.max_concurrent_trials=1
tune "$WORK/random.out" --run.name=random --tune.max_concurrent_trials=1 --tune.search=random
# A stop once trial_0004 (drawn by TPE from 4 results) has reported, then the same command again.
( tune "$WORK/stopped.out" --run.name=stopped --tune.max_concurrent_trials=1; echo "$rc" >"$WORK/stopped.rc" ) &
runner=$!
rows_reached "$WORK/stopped/trial_0004" 1 120 || fail "trial_0004 reported no row within 120 s"
for pid in $(pgrep -f -- "--run.name=stopped|--run.storage_path=$WORK/stopped " || true); do
  [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = trainrt ] && kill -USR2 "$pid"
done
wait "$runner" || true
stopped_drawn=$(jq -c '[.trials[].values | select(length > 0)] | length' "$WORK/stopped/sweep.json")
tune "$WORK/resumed.out" --run.name=stopped --tune.max_concurrent_trials=1
[ "$(cat "$WORK/stopped.rc")" -eq "$TRAINRT_EXIT_STOPPED" ] && [ "$stopped_drawn" -eq 5 ] && [ "$rc" -eq 0 ] \
  && [ "$(drawn "$WORK/serial")" = "$(drawn "$WORK/stopped")" ] && [ "$(statuses "$WORK/stopped")" = TERMINATED ] \
  && grep -q "resuming from" "$WORK/stopped/trial_0004.out" \
  && pass "one at a time, the same seed draws the same 8 trials; stopped after 5 draws (exit 9) and run again: the same 8, trial_0004 resumed" \
  || { tail -5 "$WORK/stopped.out" "$WORK/resumed.out" >&2; fail "optuna determinism/stop: stop exit $(cat "$WORK/stopped.rc"), $stopped_drawn drawn, rerun exit $rc"; }
[ "$(jq -c '[.trials[:3][].values]' "$WORK/serial/sweep.json")" != "$(jq -c '[.trials[:3][].values]' "$WORK/random/sweep.json")" ] \
  && [ "$(jq -c '[.trials[3:][].values]' "$WORK/serial/sweep.json")" != "$(jq -c '[.trials[3:][].values]' "$WORK/random/sweep.json")" ] \
  && pass "Optuna's trials are not random search's" || fail "search = optuna drew random search's trials"

# TPE models the results: past n_startup_trials, other results give another draw; before, not.
PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python" "$TRAINRT_PYTHON" - >"$WORK/tpe.out" 2>&1 <<'PY' && pass "$(cat "$WORK/tpe.out")" || { cat "$WORK/tpe.out" >&2; fail "TPE's draws"; }
import json
from trainrt import _optuna_search as search
space = [{"key": "train.lr", "kind": "loguniform", "values": [], "low": 1e-4, "high": 1.0, "q": 0}]
def draw(metrics, startup):
    finished = [{"values": {"train.lr": repr(10 ** -(i / 2))}, "metrics": [m]} for i, m in enumerate(metrics)]
    request = {"modes": ["max"], "seed": 7, "n_startup_trials": startup, "space": space, "finished": finished}
    return json.loads(search.suggest(json.dumps(request)))["train.lr"]
small_best, large_best = [1, 2, 3, 4, 5, 6, 7, 8], [8, 7, 6, 5, 4, 3, 2, 1]
assert draw(small_best, 4) != draw(large_best, 4), "TPE drew the same value for opposite results"
assert draw(small_best, 20) == draw(large_best, 20), "the start-up draws depend on the results"
print("TPE's draw follows the results past n_startup_trials, not before:", draw(small_best, 4), draw(large_best, 4))
PY

# tune.repeat (Ray's Repeater): each drawn configuration runs as two trials in a row, the searcher
# told their mean; with repeat_set_index each trial's values hold its place in the pair.
tune "$WORK/repeat.out" --run.name=repeat --tune.num_samples=4 --tune.repeat=2
pairs=$(jq '[.trials[].values | del(.["train.__trial_index__"])] as $v | ($v[0] == $v[1]) and ($v[2] == $v[3])
            and ($v[0] != $v[2])' "$WORK/repeat/sweep.json")
[ "$rc" -eq 0 ] && [ "$pairs" = true ] && [ "$(statuses "$WORK/repeat")" = TERMINATED ] \
  && ! jq -e '[.trials[].values | has("train.__trial_index__")] | any' "$WORK/repeat/sweep.json" >/dev/null \
  && pass "tune.repeat = 2: 4 trials, two drawn configurations each run twice in a row" \
  || { tail -5 "$WORK/repeat.out" >&2; fail "repeat: exit $rc, pairs $pairs, $(statuses "$WORK/repeat" 2>/dev/null)"; }

mkdir -p "$WORK/no_optuna/optuna"
echo 'raise ImportError("No module named optuna (hidden by the test)")' >"$WORK/no_optuna/optuna/__init__.py"
PYTHONPATH="$WORK/no_optuna" tune "$WORK/missing.out" --run.name=missing
[ "$rc" -eq "$TRAINRT_EXIT_CONFIG" ] && [ "$(grep -c . "$WORK/missing.out")" -eq 1 ] && grep -q "install optuna into the environment" "$WORK/missing.out" \
  && [ ! -e "$WORK/missing" ] && pass "Optuna not importable: exit 2, $(cut -c1-150 "$WORK/missing.out")" \
  || { cat "$WORK/missing.out" >&2; fail "without optuna: exit $rc"; }
sed -i 's/^train.lr = .*/train.lr = randn(0.01, 0.001)/' "$WORK/sweep.ini"
tune "$WORK/randn.out" --run.name=randn
[ "$rc" -eq "$TRAINRT_EXIT_CONFIG" ] && [ "$(grep -c . "$WORK/randn.out")" -eq 1 ] && grep -q "Optuna has no normal distribution" "$WORK/randn.out" \
  && [ ! -e "$WORK/randn" ] && pass "randn with Optuna: exit 2, $(cut -c1-150 "$WORK/randn.out")" \
  || { cat "$WORK/randn.out" >&2; fail "randn with optuna: exit $rc"; }
finish
