#!/usr/bin/env bash
# [failure] max_failures across restarts without the Slurm wrapper: a run whose rank 0 is killed
# (SIGKILL, fault injection at iteration 3's report) leaves no record; the next start records
# that attempt as a failure. With max_failures = 1 the second such crash makes the third start
# give up: exit 10, one clear line, a final `failure` record, no training. A final record starts
# a new series: the next start (no fault) resumes and finishes with the uninterrupted weights.
# ctest: fixture=small_data
source "$(dirname "$0")/lib.sh"

train 2 reference "$WORK/reference.out"
base=$(digest_of "$WORK/reference.out")
[ "$rc" -eq 0 ] && [ -n "$base" ] || { show "$WORK/reference.out"; fail "uninterrupted run exits $rc"; finish; }

for attempt in 1 2; do
  TRAINRT_FAULT=report:0:3 train 2 budget "$WORK/crash$attempt.out" --failure.max_failures=1
  [ "$rc" -ne 0 ] || fail "crash $attempt: run exits 0 despite the fault"
  grep -q 'fault injection: rank 0 dies at report (iteration 3)' "$WORK/crash$attempt.out" \
    || { show "$WORK/crash$attempt.out"; fail "crash $attempt: the fault did not fire"; }
done
n=$(events "$WORK/budget" 'select(.event == "failure" and .reason == "unrecorded_end")' | grep -c . || true)
[ "$n" -eq 1 ] && pass "the second start recorded the first crash as a failure" || fail "$n unrecorded_end failures after two crashes"

train 2 budget "$WORK/giveup.out" --failure.max_failures=1
[ "$rc" -eq 10 ] && pass "third start gives up with exit 10" || { show "$WORK/giveup.out"; fail "third start exits $rc, expected 10"; }
grep -E '^\[trainrt 0\] error: failure: giving up: 2 failure\(s\), more than \[failure\] max_failures = 1' "$WORK/giveup.out" >/dev/null \
  && pass "one clear line: $(grep 'giving up' "$WORK/giveup.out" | head -1)" || fail "no give-up line: $(cat "$WORK/giveup.out")"
[ "$(grep -c 'giving up' "$WORK/giveup.out")" -eq 1 ] || fail "give-up message printed more than once"
events "$WORK/budget" 'select(.event == "failure" and .final == true)' | jq -e -s 'length == 1 and .[0].failures == 2' >/dev/null \
  && pass "final failure record in events.jsonl" || fail "final records: $(events "$WORK/budget" 'select(.final == true)')"
grep -q '^\[trainrt 0\] iter' "$WORK/giveup.out" && fail "the run that gave up trained anyway"

train 2 budget "$WORK/resume.out" --failure.max_failures=1
[ "$rc" -eq 0 ] && [ "$(digest_of "$WORK/resume.out")" = "$base" ] \
  && pass "after the final record, a new start resumes from iteration $(resumed_iteration "$WORK/resume.out") and matches the uninterrupted digest" \
  || { show "$WORK/resume.out"; fail "resume after give-up: exit $rc, digest $(digest_of "$WORK/resume.out") vs $base"; }
iterations_once "$WORK/budget" 9 dups_ok || fail "result.jsonl lost rows"
finish
