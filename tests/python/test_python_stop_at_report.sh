#!/usr/bin/env bash
# A function that never polls should_stop() and never seeds (tests/python/no_poll_func.py, as a
# Ray Train user writes one) is stoppable and reproducible: two uninterrupted runs report the same
# losses and end with the same weights (run.seed seeds torch, numpy and random before the
# function); USR2 to rank 1 mid-run stops it at its next report (that report's checkpoint
# committed, exit 9, nothing reported after it); the rerun resumes from that checkpoint and every
# reported loss and the final weights equal the uninterrupted run's, each epoch reported once.
# Another run.seed initialises another model.
source "$(dirname "$0")/../checkpoint/lib.sh"
CKPT_ARGS=(--run.workload=python:tests/python/no_poll_func.py:train --train.epochs=12 --metrics.progress=off
           --failure.collective_timeout=60 --scaling.backend=gloo)
losses() { jq -s -c '[.[] | .loss]' "$WORK/$1/result.jsonl"; }
epochs() { jq -s -c '[.[] | .epoch]' "$WORK/$1/result.jsonl"; }

train 2 ref "$WORK/ref.out"
base=$(digest_of "$WORK/ref.out")
[ "$rc" -eq 0 ] && [ -n "$base" ] || { show "$WORK/ref.out" 30; fail "uninterrupted run exits $rc"; finish; }
train 2 again "$WORK/again.out"
[ "$(digest_of "$WORK/again.out")" = "$base" ] && [ "$(losses again)" = "$(losses ref)" ] \
  && pass "two runs, nothing seeded by the function: the same losses and digest $base" \
  || fail "a second run differs: digest $(digest_of "$WORK/again.out") vs $base"
train 2 seed5 "$WORK/seed5.out" --run.seed=5
[ "$(digest_of "$WORK/seed5.out")" != "$base" ] && pass "run.seed = 5: another model ($(digest_of "$WORK/seed5.out"))" \
  || fail "run.seed = 5 gave the seed-0 digest $base"

( train 2 stopped "$WORK/first.out" --train.sleep_s=0.3; echo "$rc" >"$WORK/first.rc" ) &
runner=$!
wait_rows "$WORK/stopped" 3 || fail "no 3 result rows within 60 s"
kill -USR2 "$(rank_pid stopped 1)"
wait "$runner" || true
first_rows=$(rows "$WORK/stopped")
[ "$(cat "$WORK/first.rc")" = 9 ] && [ "$first_rows" -lt 12 ] \
  && pass "USR2 without should_stop(): stopped at report $first_rows, exit 9" \
  || { show "$WORK/first.out" 30; fail "stopped run exits $(cat "$WORK/first.rc") after $first_rows rows, expected 9 before 12"; }
grep -q "Traceback" "$WORK/first.out" && fail "a traceback on the stop: $(grep -m1 -A3 Traceback "$WORK/first.out")"
stop_ckpt=$(jq -r 'select(.event == "stop") | .checkpoint // empty' "$WORK/stopped/events.jsonl" | tail -1)
[ -n "$stop_ckpt" ] && [ -d "$WORK/stopped/checkpoints/$stop_ckpt" ] \
  && pass "the stop's checkpoint $stop_ckpt is committed" \
  || fail "no committed stop checkpoint: $(jq -c 'select(.event == "stop")' "$WORK/stopped/events.jsonl")"

train 2 stopped "$WORK/rerun.out"
[ "$rc" -eq 0 ] || { show "$WORK/rerun.out" 30; fail "rerun exits $rc"; finish; }
[ "$(resumed_iteration "$WORK/rerun.out")" = "$first_rows" ] || fail "resumed from '$(resumed_iteration "$WORK/rerun.out")', expected $first_rows"
[ "$(digest_of "$WORK/rerun.out")" = "$base" ] && [ "$(losses stopped)" = "$(losses ref)" ] \
  && [ "$(epochs stopped)" = "$(epochs ref)" ] \
  && pass "resumed from iteration $first_rows: every loss, each epoch once, and the digest $base as uninterrupted" \
  || fail "after resume: digest $(digest_of "$WORK/rerun.out") (want $base), losses $(losses stopped) vs $(losses ref), epochs $(epochs stopped)"
finish
