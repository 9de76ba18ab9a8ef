#!/usr/bin/env bash
# A rank killed (SIGKILL) at a random moment of training, not during a save: the job ends, a
# restart resumes from the newest committed checkpoint and finishes with bitwise the same weights
# as an uninterrupted run; result.jsonl then holds every iteration once. One random moment in
# `make test`, three in `make test-long` (TRAINRT_TEST_LONG=1).
# ctest: fixture=small_data
source "$(dirname "$0")/lib.sh"
use_full_data  # its kills and signals land at moments of training

train 2 reference "$WORK/reference.out"
[ "$rc" -eq 0 ] || { show "$WORK/reference.out"; fail "uninterrupted run exits $rc"; finish; }
base=$(digest_of "$WORK/reference.out")
pass "uninterrupted run: digest $base"

# The moment is drawn in training progress, not wall-clock time (a faster build must not finish
# before the kill): after a random number of result rows (0-6 of 9), plus a random 0-0.2 s.
attempts=1
[ "${TRAINRT_TEST_LONG:-0}" = 1 ] && attempts=3
for attempt in $(seq 1 "$attempts"); do
  name=kill$attempt
  rows_before=$(( RANDOM % 7 ))
  extra=$(awk -v seed="$RANDOM" 'BEGIN { srand(seed); printf "%.2f", rand() * 0.2 }')
  ( train 2 "$name" "$WORK/$name.crash.out" ) &
  runner=$!
  victim=
  for _ in $(seq 1 1200); do   # up to 60 s for the run to reach the moment
    if [ "$(rows "$WORK/$name")" -ge "$rows_before" ]; then
      victim=$( { pgrep -f -- "--run.name=$name" || true; } | while read -r pid; do
                 if [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = trainrt ]; then echo "$pid"; fi; done | tail -1)
      [ -n "$victim" ] && break
    fi
    kill -0 "$runner" 2>/dev/null || break
    sleep 0.05
  done
  [ -z "$victim" ] || sleep "$extra"
  delay="$rows_before rows + ${extra}s"
  if [ -z "$victim" ] || ! kill -0 "$victim" 2>/dev/null; then
    wait "$runner" || true
    fail "attempt $attempt: no trainrt rank left to kill at $delay (run already over?)"
    continue
  fi
  kill -9 "$victim"
  wait "$runner" || true
  train 2 "$name" "$WORK/$name.rerun.out"
  [ "$rc" -eq 0 ] || { show "$WORK/$name.rerun.out"; fail "attempt $attempt: restart exits $rc"; continue; }
  from=$(resumed_iteration "$WORK/$name.rerun.out")
  [ "$(digest_of "$WORK/$name.rerun.out")" = "$base" ] \
    && pass "attempt $attempt: killed at $delay, resumed from iteration ${from:-none}, same digest" \
    || fail "attempt $attempt: killed at $delay, resumed from ${from:-none}: digest $(digest_of "$WORK/$name.rerun.out") != $base"
  [ -z "$(leftovers "$WORK/$name")" ] || fail "attempt $attempt: leftovers $(leftovers "$WORK/$name")"
  iterations_once "$WORK/$name" 9 || fail "attempt $attempt: result.jsonl does not hold iterations 1..9 once each"
done
finish
