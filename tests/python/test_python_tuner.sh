#!/usr/bin/env bash
# Ray Tune's driver API (trainrt.tune): a plain `python3 script.py` whose Tuner(train_func,
# param_space, TuneConfig(ASHAScheduler), RunConfig).fit() runs a trainrt sweep (trials as mpiexec
# steps) and returns a ResultGrid. grid_search over 3 learning rates, one trial at a time, the
# best first: 3 trials, the best is the largest rate (the function is gradient descent on a
# quadratic), its Result has the config, metrics after the last rung and a checkpoint; ASHA
# stopped the two others at the first rung (epoch 1). Run again,
# the finished sweep starts no trial and gives the same grid. loguniform with num_samples=4 and
# OptunaSearch: 4 trials drawn by Optuna, the best is the one with the largest sampled rate. PopulationBasedTraining with
# hyperparam_mutations: 4 trials to epoch 6, at least one exploit. A trial whose rank 1 raises is
# retried once (FailureConfig(max_failures=1)), then ERROR, while the others finish; then
# Tuner.can_restore / Tuner.restore(path, trainable, resume_errored=True).fit() runs that trial again
# (its cause gone) to TERMINATED, restart_errored=True refused with one line. Ray Tune's README
# quickstart: a function that returns its metrics (reported as its last result), no metric in
# TuneConfig, the metric named at get_best_result(metric=, mode=). tune.with_parameters hands every
# trial the same objects (pickled once into the sweep's tuner/ folder), inside tune.with_resources
# (one CPU a trial); a fractional CPU is refused.
# ctest: processors=2
source "$(dirname "$0")/../lib/common.sh"
export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python" TUNER_RUNS="$WORK/runs"
PY="$TRAINRT_PYTHON"
driver() { grep -m1 '^driver: ' "$1" || true; }
starts() { cat "$WORK"/runs/"$1"/trial_*/events.jsonl 2>/dev/null | jq -c 'select(.event == "start")' | grep -c . || true; }

rc=0; TUNER_NAME=grid timeout -k 10 600 "$PY" tests/python/tuner_func.py >"$WORK/grid.out" 2>&1 || rc=$?
line=$(driver "$WORK/grid.out")
[ "$rc" -eq 0 ] && [[ "$line" == "driver: 3 trials, 0 errors, best lr 0.1, best loss "*", epochs 9, checkpoint w "*", dataframe rows 3 with config/lr True" ]] \
  && pass "grid_search of 3 rates with ASHA: $line" || { tail -20 "$WORK/grid.out" >&2; fail "grid sweep: exit $rc, '$line'"; }
[ -f "$WORK/runs/grid/sweep.json" ] && [ -f "$WORK/runs/grid/tuner/sweep.ini" ] \
  && grep -q "^train.lr = grid(0.1, 0.01, 0.001)" "$WORK/runs/grid/tuner/sweep.ini" \
  && pass "the sweep is trainrt's own: tuner/sweep.ini ($(grep -c . "$WORK/runs/grid/tuner/sweep.ini") lines) and sweep.json" \
  || fail "no sweep.json / tuner/sweep.ini with the grid in $WORK/runs/grid"
stopped=$(jq -c '[.trials[] | .iterations]' <("$TRAINRT" results "$WORK/runs/grid" --json))
[ "$stopped" = "[9,1,1]" ] && pass "ASHA: the best trial trained 9 epochs, the others stopped at epoch 1 ($stopped)" \
  || fail "ASHA: epochs per trial $stopped, want [9,1,1]: $("$TRAINRT" results "$WORK/runs/grid")"

before=$(starts grid)
rc=0; TUNER_NAME=grid timeout -k 10 300 "$PY" tests/python/tuner_func.py >"$WORK/again.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && [ "$(driver "$WORK/again.out")" = "$line" ] && [ "$(starts grid)" = "$before" ] \
  && pass "fit() again on the finished sweep: no trial started, the same ResultGrid" \
  || { tail "$WORK/again.out" >&2; fail "second fit(): exit $rc, starts $(starts grid) (were $before), '$(driver "$WORK/again.out")'"; }

rc=0; TUNER_NAME=optuna timeout -k 10 600 "$PY" tests/python/tuner_func.py --optuna >"$WORK/random.out" 2>&1 || rc=$?
line=$(driver "$WORK/random.out")
largest=$("$TRAINRT" results "$WORK/runs/optuna" --json | jq -r '[.trials[].values."train.lr" | tonumber] | max')
best=$(sed -n 's/.*best lr \([^,]*\),.*/\1/p' <<<"$line")
[ "$rc" -eq 0 ] && [[ "$line" == "driver: 4 trials, 0 errors,"* ]] && [ -n "$best" ] \
  && "$PY" -c "import sys; sys.exit(0 if abs(float(sys.argv[1]) - float(sys.argv[2])) < 1e-12 else 1)" "$best" "$largest" \
  && grep -q "^search = optuna" "$WORK/runs/optuna/tuner/sweep.ini" \
  && pass "loguniform, num_samples=4, OptunaSearch: the best trial has the largest sampled rate ($best): $line" \
  || { tail -20 "$WORK/random.out" >&2; fail "OptunaSearch sweep: exit $rc, '$line', largest rate $largest"; }

rc=0; TUNER_NAME=pbt timeout -k 10 600 "$PY" tests/python/tuner_func.py --pbt >"$WORK/pbt.out" 2>&1 || rc=$?
line=$(driver "$WORK/pbt.out")
copies=$(grep -c "copies trial_" "$WORK/pbt.out" || true)
[ "$rc" -eq 0 ] && [[ "$line" == "driver: 4 trials, 0 errors, best lr "*", epochs 6, "* ]] && [ "$copies" -ge 1 ] \
  && grep -q "^scheduler = pbt" "$WORK/runs/pbt/tuner/sweep.ini" \
  && pass "PopulationBasedTraining (hyperparam_mutations over lr): $copies exploit(s), $line" \
  || { tail -20 "$WORK/pbt.out" >&2; fail "PBT sweep: exit $rc, $copies exploits, '$line'"; }

# A trial whose rank 1 raises (2-rank DataParallelTrainer trials, FailureConfig(max_failures=1)): it
# is started again once, then ERROR with the exception in its output; the other trials finish.
rc=0; TUNER_NAME=raise timeout -k 10 600 "$PY" tests/python/tuner_func.py --raise >"$WORK/raise.out" 2>&1 || rc=$?
line=$(driver "$WORK/raise.out")
S=$WORK/runs/raise
[ "$rc" -eq 0 ] && [[ "$line" == "driver: 3 trials, 1 errors, best lr 0.1, "* ]] \
  && grep -q "^driver: statuses 0.1:TERMINATED 0.01:ERROR 0.001:TERMINATED$" "$WORK/raise.out" \
  && [ "$(jq -c '[.trials[] | [.attempts, .failures]]' "$S/sweep.json")" = "[[1,0],[2,2],[1,0]]" ] \
  && [ "$(grep -c "ValueError: rank 1 cannot go on" "$S/trial_0001.out")" -ge 2 ] \
  && grep -q "^max_failures_per_trial = 1" "$S/tuner/sweep.ini" \
  && pass "rank 1 raising in one trial: retried once (2 attempts), ERROR; the others TERMINATED: $line" \
  || { tail -20 "$WORK/raise.out" >&2; fail "raising trial: exit $rc, '$line', $(jq -c '[.trials[] | [.status, .attempts, .failures]]' "$S/sweep.json" 2>/dev/null)"; }
rc=0; TUNER_NAME=raise TUNER_RAISE=0 timeout -k 10 600 "$PY" tests/python/tuner_func.py --restore >"$WORK/restore.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && grep -q "^driver: can_restore True False$" "$WORK/restore.out" \
  && grep -q "^driver: refused: trainrt.tune.Tuner.restore(restart_errored=True) is not supported" "$WORK/restore.out" \
  && grep -q "^driver: statuses 0.1:TERMINATED 0.01:TERMINATED 0.001:TERMINATED$" "$WORK/restore.out" \
  && [ "$(jq -c '[.trials[] | .attempts]' "$S/sweep.json")" = "[1,3,1]" ] \
  && [ "$(jq -sc '[.[].epoch]' "$S/trial_0001/result.jsonl")" = "[1,2,3]" ] \
  && pass "Tuner.restore(resume_errored=True).fit(): the ERROR trial ran again to TERMINATED, the finished ones not rerun" \
  || { tail -20 "$WORK/restore.out" >&2; fail "restore: exit $rc, $(grep '^driver' "$WORK/restore.out" | tr '\n' ' ') $(jq -c '[.trials[] | [.status, .attempts]]' "$S/sweep.json")"; }
rc=0; TUNER_NAME=returns timeout -k 10 600 "$PY" tests/python/tuner_func.py --returns >"$WORK/returns.out" 2>&1 || rc=$?
line=$(driver "$WORK/returns.out")
[ "$rc" -eq 0 ] && [ "$line" = "driver: 4 trials, best config {'a': 0.1, 'b': 1}, score 1.01, iterations [1, 1, 1, 1]" ] \
  && grep -q "^driver: without a metric: trainrt.tune: get_best_result() needs metric= and mode=" "$WORK/returns.out" \
  && ! grep -q '^metric' "$WORK/runs/returns/tuner/sweep.ini" \
  && pass "a function returning its metrics, the metric named at get_best_result: $line" \
  || { tail -20 "$WORK/returns.out" >&2; fail "returned metrics: exit $rc, '$line'"; }
rc=0; TUNER_NAME=parameters timeout -k 10 600 "$PY" tests/python/tuner_func.py --with-parameters >"$WORK/parameters.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && grep -q "^driver: called directly 100.0$" "$WORK/parameters.out" \
  && grep -q "^driver: totals \[100.0, 200.0\], best k 2$" "$WORK/parameters.out" \
  && [ -f "$WORK/runs/parameters/tuner/parameters.pickle" ] \
  && grep -q '^driver: with_resources: trainrt.tune.with_resources: "cpu": 0.5; whole CPUs' "$WORK/parameters.out" \
  && pass "tune.with_parameters: both trials got the objects ($(grep '^driver: totals' "$WORK/parameters.out"))" \
  || { tail -20 "$WORK/parameters.out" >&2; fail "with_parameters: exit $rc, $(grep '^driver' "$WORK/parameters.out" | tr '\n' ' ')"; }
# ray_compared GUIDE WHAT: tests/python/GUIDE_guide.py after the port, its summary line equal to the
# one Ray 2.60 printed for the same script (tests/conformance/ray_guides.json).
ray_compared() {
  local guide=$1 what=$2 prefix=${1^^} line said rc=0
  sed -e 's/\bray\.tune\b/trainrt.tune/g' -e 's/\bray\b/trainrt/g' "tests/python/${guide}_guide.py" >"$WORK/$guide.py"
  env "${prefix}_STORAGE=$WORK/runs" timeout -k 10 600 "$PY" "$WORK/$guide.py" >"$WORK/$guide.out" 2>&1 || rc=$?
  line=$(sed -n "s/^${prefix}_GUIDE //p" "$WORK/$guide.out" | tail -1)
  said=$("$PY" tests/conformance/ray_guides.py compare --reference tests/conformance/ray_guides.json "$guide" "$line" 2>&1) \
    && [ "$rc" -eq 0 ] && pass "$what: $line, $said" \
    || { tail -20 "$WORK/$guide.out" >&2; fail "$what: exit $rc, '$line': $said"; }
}
# Ray's MedianStoppingRule: six trials one at a time, the same trials stopped at the same report.
ray_compared median "MedianStoppingRule"
# Ray's Repeater around OptunaSearch: each drawn x ran twice, with __trial_index__ 0 and 1.
ray_compared repeater "Repeater(OptunaSearch(), repeat=2)"
# A driver callback that sets result[SHOULD_CHECKPOINT] on a class Trainable's results: checkpoints
# at those iterations only.
ray_compared callback_checkpoint "a callback's SHOULD_CHECKPOINT"
# Ray's HyperOptSearch over a conditional HyperOpt space: each trial's config nested as the option
# HyperOpt chose, the same config in the function and in its Result.
ray_compared hyperopt_search "HyperOptSearch(space=conditional HyperOpt space)"
finish
