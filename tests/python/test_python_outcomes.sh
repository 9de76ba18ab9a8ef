#!/usr/bin/env bash
# What a Ray user is told about a run's end, from a plain `python3 train.py` (fit() starts 2 ranks):
#  - a function that raises after 3 reports: fit() raises TrainingFailedError naming the run
#    directory, "after 3 reports" and the error (not "before the run started"), and
#    Result.from_path(that directory).error is a TrainingFailedError with the workload exit code;
#  - a finished run started again under its name: one line (not one per rank) says it finished
#    before, that this run resumes it, and how to start a new one; a finished Result has no error;
#  - RunConfig(failure_config=FailureConfig(max_failures=1)) and a rank that crashes once: fit()
#    runs the ranks under `trainrt supervise`, which relaunches them (a relaunch record), and fit()
#    returns the Result of the run that finished; without a FailureConfig (the first case) nothing
#    is retried, as Ray's default of 0.
# ctest: processors=1
source "$(dirname "$0")/../lib/common.sh"
export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python" OUTCOME_RUNS="$WORK/runs"
eval "$("$TRAINRT" --exit-codes)"

rc=0; OUTCOME_MODE=fail timeout -k 10 300 "$TRAINRT_PYTHON" tests/python/outcome_driver.py >"$WORK/fail.out" 2>&1 || rc=$?
raised=$(grep -m1 'driver: raised:' "$WORK/fail.out")
[ "$rc" -eq 0 ] && [[ $raised == *"exit code $TRAINRT_EXIT_WORKLOAD"* ]] && [[ $raised == *"after 3 reports"* ]] \
  && [[ $raised == *"boom after step 3"* ]] && [[ $raised == *"run directory $WORK/runs/fail"* ]] \
  && pass "fit() raised: ${raised#driver: raised: }" || { tail -20 "$WORK/fail.out" >&2; fail "the failure's message: '$raised'"; }
grep -q "driver: Result.from_path error: TrainingFailedError exit_code $TRAINRT_EXIT_WORKLOAD" "$WORK/fail.out" \
  && pass "Result.from_path(run dir).error: TrainingFailedError, exit code $TRAINRT_EXIT_WORKLOAD" \
  || fail "Result.from_path's error: $(grep 'from_path' "$WORK/fail.out")"

for round in first again; do
  rc=0; OUTCOME_MODE=finish timeout -k 10 300 "$TRAINRT_PYTHON" tests/python/outcome_driver.py >"$WORK/$round.out" 2>&1 || rc=$?
  [ "$rc" -eq 0 ] && grep -q "driver: fit returned, error None" "$WORK/$round.out" \
    || { tail -20 "$WORK/$round.out" >&2; fail "the finishing run ($round) exits $rc"; }
done
[ "$(grep -c 'finished before' "$WORK/first.out")" -eq 0 ] && [ "$(grep -c 'finished before (2 reports)' "$WORK/again.out")" -eq 1 ] \
  && grep 'finished before' "$WORK/again.out" | grep -q 'give another run.name (Ray: RunConfig(name=...)) to start a new run' \
  && pass "rerun of a finished run: $(grep -m1 'finished before' "$WORK/again.out")" \
  || { tail -10 "$WORK/again.out" >&2; fail "a rerun of the finished run said $(grep -c 'finished before' "$WORK/again.out") time(s) that it finished before"; }

rc=0; OUTCOME_MODE=crash_once timeout -k 10 300 "$TRAINRT_PYTHON" tests/python/outcome_driver.py >"$WORK/crash.out" 2>&1 || rc=$?
relaunches=$(jq -r 'select(.event == "relaunch")' "$WORK/runs/crash_once/events.jsonl" 2>/dev/null | grep -c '"event"')
[ "$rc" -eq 0 ] && grep -q "driver: fit returned, error None, metrics {'step': 3" "$WORK/crash.out" && [ "$relaunches" -eq 1 ] \
  && pass "FailureConfig(max_failures=1): one relaunch, then fit() returned step 3's Result" \
  || { tail -20 "$WORK/crash.out" >&2; fail "FailureConfig(max_failures=1) with a crash: exit $rc, $relaunches relaunch record(s)"; }
[ "$(jq -r 'select(.event == "relaunch")' "$WORK/runs/fail/events.jsonl" | grep -c '"event"')" -eq 0 ] \
  && pass "no FailureConfig: the failed run was not relaunched" || fail "the run without a FailureConfig was relaunched"
finish
