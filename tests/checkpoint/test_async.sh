#!/usr/bin/env bash
# checkpoint.async = true: the same final weights as synchronous saves and every checkpoint
# committed; a rank killed while its background writer is saving (after_data) leaves the previous
# checkpoint valid and a restart resumes from it exactly; so does a kill while the last save is
# being committed at the end of the run (before_rename of the final iteration).
# checkpoint.snapshot = background (1 rank, where fashion_mlp's fc1 and fc2 weights are large
# enough to be copied on the save's thread): the same digest as synchronous saves, every save's
# event recorded, and a kill while a save is written resumes exactly; without async: exit 2.
# ctest: fixture=small_data
source "$(dirname "$0")/lib.sh"

train 2 sync "$WORK/sync.out"
base=$(digest_of "$WORK/sync.out")
[ "$rc" -eq 0 ] && [ -n "$base" ] || { show "$WORK/sync.out"; echo "FAIL: synchronous run exits $rc" >&2; exit 1; }
pass "synchronous saves: digest $base"

train 2 async "$WORK/async.out" --checkpoint.async=true
if [ "$rc" -ne 0 ]; then
  show "$WORK/async.out"; fail "async run exits $rc"
else
  [ "$(digest_of "$WORK/async.out")" = "$base" ] && pass "async saves: same digest $base" \
    || fail "async saves: digest '$(digest_of "$WORK/async.out")', synchronous gave $base"
  n=$(committed "$WORK/async" | wc -l)
  [ "$n" -eq 9 ] && [ "$(newest_committed "$WORK/async")" = checkpoint_000009 ] \
    && pass "async: 9 checkpoints committed, the last one at the end of the run" \
    || fail "async: $n committed ($(committed "$WORK/async" | tr '\n' ' ')), expected checkpoint_000001..9"
  verify "$WORK/async" "$WORK/async.verify.out"
  [ "$vrc" -eq 0 ] && pass "async: every checkpoint verifies" || { show "$WORK/async.verify.out"; fail "async: verify exits $vrc"; }
  [ -z "$(leftovers "$WORK/async")" ] || fail "async: left behind: $(leftovers "$WORK/async")"
  iterations_once "$WORK/async" 9 && pass "async: result.jsonl has iterations 1..9" \
    || fail "async: result.jsonl does not hold iterations 1..9 once each"
  # async saves are marked as such in events.jsonl
  na=$(jq -c 'select(.event == "checkpoint" and .async == true)' "$WORK/async/events.jsonl" | wc -l)
  [ "$na" -ge 9 ] || fail "async: $na checkpoint events with async=true in events.jsonl, expected 9"
fi

# async_kill PHASE RANK ITERATION RESUME
async_kill() {
  local phase=$1 rank=$2 iter=$3 resume=$4 name="kill_$1" what="async $1:$2:$3"
  local dir="$WORK/kill_$1"
  TRAINRT_FAULT="$phase:$rank:$iter" train 2 "$name" "$WORK/$name.crash.out" --checkpoint.async=true
  if [ "$rc" -eq 0 ] || ! grep -q "fault injection: rank $rank dies at $phase (iteration $iter)" "$WORK/$name.crash.out"; then
    show "$WORK/$name.crash.out"; fail "$what: exit $rc, the fault did not kill the run"; return
  fi
  pass "$what: killed (exit $rc)"
  verify "$dir" "$WORK/$name.verify.out"
  [ "$vrc" -eq 0 ] && pass "$what: committed checkpoints verify" \
    || { show "$WORK/$name.verify.out"; fail "$what: after the kill, verify exits $vrc"; }
  [ "$(newest_committed "$dir")" = "$(ckpt_name "$resume")" ] \
    && pass "$what: newest committed is $(ckpt_name "$resume")" \
    || fail "$what: newest committed is '$(newest_committed "$dir")', expected $(ckpt_name "$resume")"

  train 2 "$name" "$WORK/$name.restart.out" --checkpoint.async=true
  [ "$rc" -eq 0 ] || { show "$WORK/$name.restart.out"; fail "$what: restart exits $rc"; return; }
  local from; from=$(resumed_iteration "$WORK/$name.restart.out")
  [ "$from" = "$resume" ] && pass "$what: restart resumes from iteration $resume" \
    || fail "$what: restart resumed from iteration '${from}', expected $resume"
  [ "$(digest_of "$WORK/$name.restart.out")" = "$base" ] && pass "$what: digest equals the uninterrupted run's" \
    || fail "$what: digest '$(digest_of "$WORK/$name.restart.out")', uninterrupted run gave $base"
  [ -z "$(leftovers "$dir")" ] && pass "$what: no leftover after the restart" \
    || fail "$what: left behind after the restart: $(leftovers "$dir")"
  verify "$dir" "$WORK/$name.verify.out"
  [ "$vrc" -eq 0 ] || { show "$WORK/$name.verify.out"; fail "$what: after the restart, verify exits $vrc"; }
  iterations_once "$dir" 9 dups_ok && pass "$what: result.jsonl has a row for each of iterations 1..9" \
    || fail "$what: result.jsonl lacks an iteration or has one beyond 9"
}

train 1 sync1 "$WORK/sync1.out"
base1=$(digest_of "$WORK/sync1.out")
[ "$rc" -eq 0 ] && [ -n "$base1" ] || { show "$WORK/sync1.out"; fail "synchronous run on 1 rank exits $rc"; }
BACKGROUND=(--checkpoint.async=true --checkpoint.snapshot=background)
# reported RUN_DIR: each iteration's training numbers, once each (a row repeated by the resume too).
reported() { jq -c '[._training_iteration, ({running_loss, loss, test_loss, test_accuracy} | with_entries(select(.value != null)))]' "$1/result.jsonl" | sort -u; }
train 1 background "$WORK/background.out" "${BACKGROUND[@]}"
ne=$(count_events "$WORK/background" '.event == "checkpoint" and .async == true')
[ "$rc" -eq 0 ] && [ "$(digest_of "$WORK/background.out")" = "$base1" ] && [ "$(committed "$WORK/background" | wc -l)" -eq 9 ] \
  && [ "$ne" -eq 9 ] && pass "background snapshots (1 rank): digest $base1 as synchronous saves, 9 committed, 9 checkpoint events" \
  || { show "$WORK/background.out"; fail "background snapshots: exit $rc, digest '$(digest_of "$WORK/background.out")' vs $base1, $(committed "$WORK/background" | wc -l) committed, $ne events"; }
verify "$WORK/background" "$WORK/background.verify.out"
[ "$vrc" -eq 0 ] || { show "$WORK/background.verify.out"; fail "background snapshots: verify exits $vrc"; }
TRAINRT_FAULT=after_data:0:6 train 1 background_kill "$WORK/background_kill.crash.out" "${BACKGROUND[@]}"
train 1 background_kill "$WORK/background_kill.out" "${BACKGROUND[@]}"
[ "$rc" -eq 0 ] && [ "$(resumed_iteration "$WORK/background_kill.out")" = 5 ] && [ "$(digest_of "$WORK/background_kill.out")" = "$base1" ] \
  && [ "$(reported "$WORK/background_kill")" = "$(reported "$WORK/sync1")" ] && [ "$(reported "$WORK/sync1" | grep -c test_accuracy)" -eq 2 ] \
  && pass "background snapshots: killed while save 6 was written, resumed from 5 with the same digest and every reported loss" \
  || { show "$WORK/background_kill.out"; fail "background kill: exit $rc, resumed from '$(resumed_iteration "$WORK/background_kill.out")', digest '$(digest_of "$WORK/background_kill.out")' vs $base1"; }
train 1 no_async "$WORK/no_async.out" --checkpoint.snapshot=background
[ "$rc" -eq "$TRAINRT_EXIT_CONFIG" ] && [ "$(grep -c . "$WORK/no_async.out.stderr")" -eq 1 ] && grep -q "checkpoint.async = true" "$WORK/no_async.out" \
  && pass "snapshot = background without async: exit 2, $(cat "$WORK/no_async.out.stderr")" \
  || { show "$WORK/no_async.out"; fail "snapshot = background without async: exit $rc"; }

# save 6 is written in the background while training goes on; its thread on rank 0 commits save 5
# before writing save 6's data, so a death of rank 0 there leaves 5 committed and the restart
# resumes from 5. (Another rank dying while rank 0 commits 5 may leave 4: still a valid resume.)
async_kill after_data 0 6 5
# the last save (9) is committed by finish() at the end of the run; killed before its rename.
async_kill before_rename 0 9 8
finish
