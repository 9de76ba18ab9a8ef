#!/usr/bin/env bash
# A rank killed (SIGKILL) at a random moment of training, not during a save: the job ends, a
# restart resumes from the newest committed checkpoint and finishes with bitwise the same weights
# as an uninterrupted run; result.jsonl then holds every iteration once. Three random moments.
source "$(dirname "$0")/lib.sh"

train 2 reference "$WORK/reference.out"
[ "$rc" -eq 0 ] || { show "$WORK/reference.out"; fail "uninterrupted run exits $rc"; finish; }
base=$(digest_of "$WORK/reference.out")
pass "uninterrupted run: digest $base"

for attempt in 1 2 3; do
  name=kill$attempt
  delay=$(awk -v seed="$RANDOM" 'BEGIN { srand(seed); printf "%.1f", 0.8 + rand() * 2.2 }')
  ( train 2 "$name" "$WORK/$name.crash.out" ) &
  runner=$!
  sleep "$delay"
  victim=$( { pgrep -f -- "--run.name=$name" || true; } | while read -r pid; do
             if [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = trainrt ]; then echo "$pid"; fi; done | tail -1)
  if [ -z "$victim" ]; then
    wait "$runner" || true
    fail "attempt $attempt: no trainrt rank found to kill after ${delay}s (run already over?)"
    continue
  fi
  kill -9 "$victim"
  wait "$runner" || true
  train 2 "$name" "$WORK/$name.rerun.out"
  [ "$rc" -eq 0 ] || { show "$WORK/$name.rerun.out"; fail "attempt $attempt: restart exits $rc"; continue; }
  from=$(resumed_iteration "$WORK/$name.rerun.out")
  [ "$(digest_of "$WORK/$name.rerun.out")" = "$base" ] \
    && pass "attempt $attempt: killed after ${delay}s, resumed from iteration ${from:-none}, same digest" \
    || fail "attempt $attempt: killed after ${delay}s, resumed from ${from:-none}: digest $(digest_of "$WORK/$name.rerun.out") != $base"
  [ -z "$(leftovers "$WORK/$name")" ] || fail "attempt $attempt: leftovers $(leftovers "$WORK/$name")"
  iterations_once "$WORK/$name" 9 || fail "attempt $attempt: result.jsonl does not hold iterations 1..9 once each"
done
finish
