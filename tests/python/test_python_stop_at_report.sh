#!/usr/bin/env bash
# A function that never polls should_stop(), never seeds and saves `epoch` but not its shuffled
# loader (tests/python/no_poll_func.py, as a Ray Train user writes one) is stoppable and
# reproducible: a second run reports the same losses and ends with the same weights (run.seed
# seeds torch, numpy and random before the function; the stopped runs below are those second
# runs, their rows before the stop compared with the uninterrupted run's); USR2 to rank 1 mid-run
# stops it at its next report (that report's checkpoint committed, exit 9, nothing reported after it); the rerun resumes from that checkpoint and every
# reported loss and the final weights equal the uninterrupted run's, each epoch reported once:
# with the function's own loader.sampler.set_epoch(epoch), and without it (the loader's position
# travels in the checkpoint).
# Another run.seed initialises another model. A function that never calls get_checkpoint() is not
# said to resume: the rerun warns once that it started over, has no "resuming" line or restore
# event, and its result.jsonl holds each epoch once (the earlier rows set aside).
# A signal between should_stop() and the report (tests/python/stop_race_func.py, which saves only
# when told to stop) is agreed at the next step, whose report carries the checkpoint.
source "$(dirname "$0")/../checkpoint/lib.sh"
CKPT_ARGS=(--run.workload=python:tests/python/no_poll_func.py:train --train.epochs=12 --metrics.progress=off
           --failure.collective_timeout=60 --scaling.backend=gloo)
losses() { jq -s -c '[.[] | .loss]' "$WORK/$1/result.jsonl"; }
epochs() { jq -s -c '[.[] | .epoch]' "$WORK/$1/result.jsonl"; }

train 2 ref "$WORK/ref.out"
base=$(digest_of "$WORK/ref.out")
[ "$rc" -eq 0 ] && [ -n "$base" ] || { show "$WORK/ref.out" 30; fail "uninterrupted run exits $rc"; finish; }
train 2 seed5 "$WORK/seed5.out" --run.seed=5
[ "$(digest_of "$WORK/seed5.out")" != "$base" ] && pass "run.seed = 5: another model ($(digest_of "$WORK/seed5.out"))" \
  || fail "run.seed = 5 gave the seed-0 digest $base"

# stop_and_resume NAME [ARGS...]: USR2 to rank 1 after 3 rows, then a rerun; compares with ref.
stop_and_resume() {
  local name=$1 runner first_rows stop_ckpt; shift
  ( train 2 "$name" "$WORK/$name.first.out" --train.sleep_s=0.3 "$@"; echo "$rc" >"$WORK/$name.rc" ) &
  runner=$!
  wait_rows "$WORK/$name" 3 || fail "$name: no 3 result rows within 60 s"
  kill -USR2 "$(rank_pid "$name" 1)"
  wait "$runner" || true
  first_rows=$(rows "$WORK/$name")
  [ "$(cat "$WORK/$name.rc")" = 9 ] && [ "$first_rows" -lt 12 ] \
    && pass "$name: USR2 without should_stop(): stopped at report $first_rows, exit 9" \
    || { show "$WORK/$name.first.out" 30; fail "$name: stopped run exits $(cat "$WORK/$name.rc") after $first_rows rows, expected 9 before 12"; }
  grep -q "Traceback" "$WORK/$name.first.out" && fail "$name: a traceback on the stop: $(grep -m1 -A3 Traceback "$WORK/$name.first.out")"
  stop_ckpt=$(jq -r 'select(.event == "stop") | .checkpoint // empty' "$WORK/$name/events.jsonl" | tail -1)
  [ -n "$stop_ckpt" ] && [ -d "$WORK/$name/checkpoints/$stop_ckpt" ] \
    && pass "$name: the stop's checkpoint $stop_ckpt is committed" \
    || fail "$name: no committed stop checkpoint: $(jq -c 'select(.event == "stop")' "$WORK/$name/events.jsonl")"
  train 2 "$name" "$WORK/$name.rerun.out" "$@"
  [ "$rc" -eq 0 ] || { show "$WORK/$name.rerun.out" 30; fail "$name: rerun exits $rc"; return; }
  [ "$(resumed_iteration "$WORK/$name.rerun.out")" = "$first_rows" ] || fail "$name: resumed from '$(resumed_iteration "$WORK/$name.rerun.out")', expected $first_rows"
  [ "$(digest_of "$WORK/$name.rerun.out")" = "$base" ] && [ "$(losses "$name")" = "$(losses ref)" ] \
    && [ "$(epochs "$name")" = "$(epochs ref)" ] \
    && pass "$name: resumed from iteration $first_rows: every loss, each epoch once, and the digest $base as uninterrupted" \
    || fail "$name: after resume: digest $(digest_of "$WORK/$name.rerun.out") (want $base), losses $(losses "$name") vs $(losses ref), epochs $(epochs "$name")"
}
stop_and_resume stopped
stop_and_resume no_set_epoch --train.set_epoch=false

( train 2 ignores "$WORK/ignores.first.out" --train.sleep_s=0.3 --train.resume=false; echo "$rc" >"$WORK/ignores.rc" ) &
runner=$!
wait_rows "$WORK/ignores" 3 || fail "ignores: no 3 result rows within 60 s"
kill -USR2 "$(rank_pid ignores 0)"
wait "$runner" || true
[ "$(cat "$WORK/ignores.rc")" = 9 ] || fail "ignores: stopped run exits $(cat "$WORK/ignores.rc")"
train 2 ignores "$WORK/ignores.out" --train.resume=false
warned=$(grep -c "exists, but the workload did not take it" "$WORK/ignores.out" || true)
[ "$rc" -eq 0 ] && [ "$warned" -eq 1 ] && ! grep -q "resuming from" "$WORK/ignores.out" \
  && [ "$(count_events "$WORK/ignores" '.event == "restore"')" = 0 ] && [ "$(epochs ignores)" = "$(epochs ref)" ] \
  && [ "$(digest_of "$WORK/ignores.out")" = "$base" ] \
  && pass "a function that ignores its checkpoint: one warning ($(grep -m1 -o 'checkpoint_[0-9]* exists.*started over' "$WORK/ignores.out")), no resume claimed, epochs $(epochs ignores) once, the uninterrupted digest" \
  || { show "$WORK/ignores.out" 20; fail "ignored checkpoint: rc $rc, $warned warning(s), epochs $(epochs ignores), restore events $(count_events "$WORK/ignores" '.event == "restore"')"; }

rc=0
timeout -k 5 120 mpiexec -n 2 "$TRAINRT" --run.workload=python:tests/python/stop_race_func.py:train \
  --train.signal_step=3 --metrics.progress=off --run.storage_path="$WORK" --run.name=race >"$WORK/race.out" 2>&1 || rc=$?
race_ckpt=$(jq -r 'select(.event == "stop") | .checkpoint // empty' "$WORK/race/events.jsonl" | tail -1)
[ "$rc" = 9 ] && [ "$(rows "$WORK/race")" = 4 ] && [ "$race_ckpt" = checkpoint_000004 ] \
  && pass "USR2 between should_stop() and report() at step 3: stopped at step 4 with its checkpoint ($race_ckpt)" \
  || { show "$WORK/race.out" 20; fail "signal between should_stop() and report(): exit $rc, $(rows "$WORK/race") rows, stop checkpoint '$race_ckpt' (want 9, 4, checkpoint_000004)"; }
finish
