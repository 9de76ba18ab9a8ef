#!/usr/bin/env bash
# Ray's RunConfig(stop={"acc": 0.35}) (tests/python/stop_driver.py; [stop] criteria): a 2-rank fit()
# from a plain python3 ends at the first report whose acc reaches 0.35 (step 4 of 10), as finished,
# with that report's checkpoint; a Tuner's trials each end at their own such report (rate 0.1: 4
# rows, rate 0.2: 2), TERMINATED; a callable stopper is refused with one line; a criterion that is
# not METRIC>=NUMBER is a config error (exit 2) with one line naming the key.
# ctest: processors=2
source "$(dirname "$0")/../lib/common.sh"
export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python" STOP_RUNS="$WORK/runs"
eval "$("$TRAINRT" --exit-codes)"
run_driver() {  # run_driver MODE: exit code in rc, output in $WORK/MODE.out
  rc=0; STOP_MODE=$1 timeout -k 10 300 "$TRAINRT_PYTHON" "$TRAINRT_SRC/tests/python/stop_driver.py" >"$WORK/$1.out" 2>&1 || rc=$?
}

run_driver fit
line=$(grep -m1 '^driver: {' "$WORK/fit.out")
[ "$rc" -eq 0 ] && [ "${line#driver: }" = '{"rows": 4, "acc": 0.4, "step": 4, "error": "None"}' ] \
  && [ "$(jq -r 'select(.event == "finish") | .iterations' "$WORK/runs/fit/events.jsonl")" = 4 ] \
  && [ "$(grep -c 'stop criterion met at iteration 4 (acc = 0.4 >= 0.35)' "$WORK/fit.out")" -eq 1 ] \
  && pass "fit() with RunConfig(stop={'acc': 0.35}): ended as finished at step 4 with its checkpoint: $(grep -m1 'stop criterion met' "$WORK/fit.out")" \
  || { tail -20 "$WORK/fit.out" >&2; fail "fit() with a stop dict: exit $rc, '$line'"; }

run_driver tune
line=$(grep -m1 '^driver: \[' "$WORK/tune.out")
[ "$rc" -eq 0 ] && [ "${line#driver: }" = '[{"rate": 0.1, "status": "TERMINATED", "rows": 4, "acc": 0.4}, {"rate": 0.2, "status": "TERMINATED", "rows": 2, "acc": 0.4}]' ] \
  && pass "Tuner with RunConfig(stop=...): each trial ended at its own report: ${line#driver: }" \
  || { tail -20 "$WORK/tune.out" >&2; fail "Tuner with a stop dict: exit $rc, '$line'"; }

run_driver callable
[ "$rc" -eq 3 ] && [ "$(grep -c 'RunConfig(stop=function) is not supported' "$WORK/callable.out")" -eq 1 ] \
  && pass "a callable stopper: $(grep -m1 'refused' "$WORK/callable.out")" \
  || { tail -10 "$WORK/callable.out" >&2; fail "a callable stopper: exit $rc"; }

cat >"$WORK/job.py" <<'PY'
import trainrt
def train(config):
    trainrt.report({"acc": 1.0})
PY
rc=0; "$TRAINRT" --run.workload="python:$WORK/job.py:train" --run.storage_path="$WORK/runs" --run.name=bad \
  --stop.criteria='acc>0.3' >"$WORK/bad.out" 2>&1 || rc=$?
[ "$rc" -eq "$TRAINRT_EXIT_CONFIG" ] && [ "$(grep -c 'stop.criteria' "$WORK/bad.out")" -eq 1 ] \
  && pass "a criterion that is not METRIC>=NUMBER: exit $rc, $(grep -m1 'stop.criteria' "$WORK/bad.out")" \
  || { cat "$WORK/bad.out" >&2; fail "a bad criterion: exit $rc"; }
finish
