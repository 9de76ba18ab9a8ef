#!/usr/bin/env bash
# A rank that hangs (fault injection: rank 1 blocks forever when reporting iteration 2) must not
# burn the allocation: with [failure] collective_timeout = 3, rank 0's watchdog ends the run with
# exit 4 and one line naming the blocked collective and the step, records a `failure` event
# (reason collective_timeout), and mpiexec tears rank 1 down. Without the watchdog
# (collective_timeout = 0) the same run is still hanging after 10 s, three times the watchdog's limit (the fault is real).
# ctest: fixture=small_data
# ctest: processors=1
source "$(dirname "$0")/lib.sh"

start=$SECONDS
TRAINRT_FAULT=hang_report:1:2 train 2 hung "$WORK/hung.out" --failure.collective_timeout=3
took=$((SECONDS - start))
[ "$rc" -eq 4 ] && pass "hung rank: exit 4 after ${took}s" || { show "$WORK/hung.out"; fail "hung rank: exit $rc after ${took}s, expected 4"; }
line=$(grep 'watchdog:' "$WORK/hung.out" || true)
[ "$(grep -c . <<<"$line")" -eq 1 ] || fail "expected one watchdog line, got: $line"
grep -qE '^\[trainrt 0\] error: watchdog: blocked [0-9.]+ s in (allreduce|allgather).* at step boundary [0-9]+ \(after iteration 1\).*collective_timeout = 3 s' <<<"$line" \
  && pass "watchdog line: $line" || fail "watchdog line lacks rank/collective/step: '$line'"
events "$WORK/hung" 'select(.event == "failure")' | jq -e -s 'length == 1 and .[0].reason == "collective_timeout" and .[0].rank == 0' >/dev/null \
  && pass "one failure event (collective_timeout, rank 0)" || fail "failure events: $(events "$WORK/hung" 'select(.event == "failure")')"
grep -q 'fault injection: rank 1 hangs at hang_report (iteration 2)' "$WORK/hung.out" \
  || fail "the fault did not fire on rank 1 as planned"
[ -z "$(pgrep -f -- '--run.name=hung' || true)" ] || fail "ranks of the hung run are still alive"

# Control: the same fault without the watchdog really hangs (so the check above is meaningful).
RUN_TIMEOUT=10 TRAINRT_FAULT=hang_report:1:2 train 2 nowatch "$WORK/nowatch.out" --failure.collective_timeout=0 2>/dev/null
[ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && pass "control without watchdog: still hanging after 10 s (killed)" \
  || fail "control without watchdog: exit $rc, expected a hang"
finish
