#!/usr/bin/env bash
# Ctrl-C is a stop, not a failure: `python3 driver.py` (TorchTrainer.fit() starts 2 ranks through
# mpiexec, tests/python/interrupt_driver.py) gets SIGINT in its process group, as a terminal's
# Ctrl-C does; mpiexec hands it to every rank, the function (which never polls) stops at its next
# report with that report's checkpoint committed, and every process ends with exit 130: a stop
# record naming INT, no failure record, no requeue, no traceback. `trainrt results` says 130. The
# same command again resumes from the checkpoint and finishes, every epoch reported once. Two
# Ctrl-C in a row end the ranks at once, and the driver with 130. A stop signal sent to the driver
# alone (USR2, as `scancel --batch` sends it to a batch script that execs python3) is passed on to
# the ranks: they stop with a checkpoint (a stop record naming USR2), and the driver outlives it
# and exits with the stop's code, no traceback.
source "$(dirname "$0")/../lib/common.sh"
export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python" RUNS="$WORK/runs" RUN_NAME=ctrl_c
run_dir=$RUNS/$RUN_NAME

SLEEP_S=0.3 setsid "$TRAINRT_PYTHON" tests/python/interrupt_driver.py >"$WORK/first.out" 2>&1 &
driver=$!
deadline=$((SECONDS + 120))
until [ "$(rows "$run_dir")" -ge 3 ] || ((SECONDS > deadline)); do sleep 0.1; done
[ "$(rows "$run_dir")" -ge 3 ] || fail "no 3 result rows within 120 s"
kill -INT -- "-$driver"  # the driver's whole process group, as a terminal does
rc=0; wait "$driver" || rc=$?
[ "$rc" -eq "$TRAINRT_EXIT_INTERRUPTED" ] && pass "Ctrl-C: the driver exits $rc" \
  || { tail -20 "$WORK/first.out" >&2; fail "Ctrl-C: the driver exits $rc, expected $TRAINRT_EXIT_INTERRUPTED"; }
stopped_at=$(rows "$run_dir")
[ "$(count_events "$run_dir" '.event == "stop" and .signal == "INT" and (.checkpoint | type) == "string"')" -eq 1 ] \
  && [ "$(count_events "$run_dir" '.event == "failure" or .event == "requeue"')" -eq 0 ] && [ "$stopped_at" -lt 12 ] \
  && pass "one stop record (INT) with its checkpoint at row $stopped_at; no failure, no requeue" \
  || fail "records after Ctrl-C: $(jq -c 'select(.event != "start")' "$run_dir/events.jsonl")"
! grep -q "Traceback" "$WORK/first.out" && grep -q "interrupted (Ctrl-C)" "$WORK/first.out" \
  && pass "no traceback; $(grep -m1 -o 'interrupted (Ctrl-C).*' "$WORK/first.out")" \
  || { cat "$WORK/first.out" >&2; fail "Ctrl-C output"; }
code=0; "$TRAINRT" results "$run_dir" >"$WORK/results.out" 2>&1 || code=$?
grep -q "130" "$WORK/results.out" && pass "trainrt results: $(grep -m1 130 "$WORK/results.out" | cut -c1-100)" \
  || { cat "$WORK/results.out" >&2; fail "trainrt results does not say 130"; }

rc=0; timeout -k 10 300 "$TRAINRT_PYTHON" tests/python/interrupt_driver.py >"$WORK/again.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && grep -q "^driver: finished at epoch 12" "$WORK/again.out" \
  && [ "$(jq -s -c '[.[] | .epoch]' "$run_dir/result.jsonl")" = "[1,2,3,4,5,6,7,8,9,10,11,12]" ] \
  && [ "$(count_events "$run_dir" '.event == "restore"')" -eq 1 ] \
  && pass "rerun: resumed and finished, epochs 1..12 once each" \
  || { tail -20 "$WORK/again.out" >&2; fail "rerun: exit $rc, epochs $(jq -s -c '[.[] | .epoch]' "$run_dir/result.jsonl")"; }

# A second Ctrl-C ends the ranks at once: exit 130 again, no traceback from the driver.
RUN_NAME=twice SLEEP_S=0.3 setsid "$TRAINRT_PYTHON" tests/python/interrupt_driver.py >"$WORK/twice.out" 2>&1 &
driver=$!
deadline=$((SECONDS + 120))
until [ "$(rows "$RUNS/twice")" -ge 2 ] || ((SECONDS > deadline)); do sleep 0.1; done
kill -INT -- "-$driver"; sleep 0.1; kill -INT -- "-$driver"
rc=0; wait "$driver" || rc=$?
[ "$rc" -eq "$TRAINRT_EXIT_INTERRUPTED" ] && ! grep -q "Traceback" "$WORK/twice.out" \
  && pass "two Ctrl-C: the driver exits $rc at once, no traceback" \
  || { tail -20 "$WORK/twice.out" >&2; fail "two Ctrl-C: the driver exits $rc"; }

RUN_NAME=usr2 SLEEP_S=0.3 setsid "$TRAINRT_PYTHON" tests/python/interrupt_driver.py >"$WORK/usr2.out" 2>&1 &
driver=$!
deadline=$((SECONDS + 120))
until [ "$(rows "$RUNS/usr2")" -ge 2 ] || ((SECONDS > deadline)); do sleep 0.1; done
kill -USR2 "$driver"  # the driver alone
rc=0; wait "$driver" || rc=$?
[ "$rc" -eq "$TRAINRT_EXIT_STOPPED" ] && ! grep -q "Traceback" "$WORK/usr2.out" \
  && [ "$(count_events "$RUNS/usr2" '.event == "stop" and .signal == "USR2" and (.checkpoint | type) == "string"')" -eq 1 ] \
  && pass "USR2 to the driver alone: passed on to the ranks (a stop record with its checkpoint), the driver exits $rc" \
  || { tail -20 "$WORK/usr2.out" >&2; fail "USR2 to the driver: exit $rc, records $(jq -c 'select(.event != "start")' "$RUNS/usr2/events.jsonl" 2>/dev/null)"; }
finish
