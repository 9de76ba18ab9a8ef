#!/usr/bin/env bash
# A stop signal to ONE rank (USR2 to rank 1, then TERM to rank 0 in a second run): every rank
# stops at the same step boundary, the stop checkpoint commits, trainrt exits 9 with a `stop`
# event; the stop's checkpoint, between two reports, adds no result row; the rerun resumes and
# ends with bitwise the weights of an uninterrupted run, and result.jsonl holds every iteration
# exactly once, with the uninterrupted run's values.
# ctest: fixture=small_data
source "$(dirname "$0")/lib.sh"
use_full_data  # its kills and signals land at moments of training

train 2 reference "$WORK/reference.out"
[ "$rc" -eq 0 ] || { show "$WORK/reference.out"; fail "uninterrupted run exits $rc"; finish; }
base=$(digest_of "$WORK/reference.out")
pass "uninterrupted run: digest $base"

for case in USR2:1 TERM:0; do
  sig=${case%:*} rank=${case#*:} name=stop_$sig
  ( train 2 "$name" "$WORK/$name.stop.out"; echo "$rc" >"$WORK/$name.rc" ) &
  runner=$!
  wait_rows "$WORK/$name" 2 || fail "$name: no 2 result rows within 60 s"
  pid=$(rank_pid "$name" "$rank") || { fail "$name: rank $rank not found"; wait "$runner"; continue; }
  kill -"$sig" "$pid"
  wait "$runner" || true
  [ "$(cat "$WORK/$name.rc")" = 9 ] && pass "$name: exit 9 (stopped, resumable)" \
    || fail "$name: stopped run exits $(cat "$WORK/$name.rc"), expected 9"
  stop=$(events "$WORK/$name" 'select(.event == "stop")')
  [ "$(grep -c . <<<"$stop")" -eq 1 ] || { show "$WORK/$name.stop.out"; fail "$name: $(grep -c . <<<"$stop") stop events"; continue; }
  jq -e --arg s "$sig" --argjson r "$rank" '.reason == "signal" and .signal == $s and .signal_rank == $r' <<<"$stop" >/dev/null \
    && pass "$name: stop event names SIG$sig on rank $rank" || fail "$name: stop event $stop"
  jq -e '(.boundaries_by_rank | length) == 2 and (.boundaries_by_rank | unique | length) == 1 and .boundary == .boundaries_by_rank[0]' <<<"$stop" >/dev/null \
    && pass "$name: both ranks stopped at step boundary $(jq .boundary <<<"$stop")" || fail "$name: ranks disagree: $stop"
  ckpt=$(jq -r .checkpoint <<<"$stop")
  [ "$ckpt" = "$(newest_committed "$WORK/$name")" ] && [ "$ckpt" = "$(ckpt_name $(($(jq .step <<<"$stop") + 1)))" ] \
    && pass "$name: stop checkpoint $ckpt (after iteration $(jq .step <<<"$stop"), named for the next report) is the newest committed one" \
    || fail "$name: stop checkpoint '$ckpt', newest committed '$(newest_committed "$WORK/$name")'"
  grep -q 'not a Slurm job: run the same command again' "$WORK/$name.stop.out" \
    && pass "$name: says how to resume outside Slurm" || fail "$name: no resume advice in output"
  stop_rows=$(wc -l <"$WORK/$name/result.jsonl")
  train 2 "$name" "$WORK/$name.rerun.out"
  [ "$rc" -eq 0 ] || { show "$WORK/$name.rerun.out"; fail "$name: rerun exits $rc"; continue; }
  [ "$(digest_of "$WORK/$name.rerun.out")" = "$base" ] \
    && pass "$name: resumed from iteration $(resumed_iteration "$WORK/$name.rerun.out"), same digest" \
    || fail "$name: digest $(digest_of "$WORK/$name.rerun.out") != $base"
  iterations_once "$WORK/$name" "$(jq -r '._training_iteration' "$WORK/$name/result.jsonl" | tail -1)" \
    && pass "$name: result.jsonl: every iteration once ($stop_rows rows before the stop)" \
    || fail "$name: result.jsonl rows lost or repeated"
  [ "$(reported "$WORK/$name")" = "$(reported "$WORK/reference")" ] \
    && pass "$name: the resumed run reports what the uninterrupted one did ($(rows "$WORK/$name") rows, no row for the stop)" \
    || fail "$name: result.jsonl differs from the uninterrupted run's: $(reported "$WORK/$name" | head -3 | cut -c1-200)"
  [ ! -e "$WORK/$name/result.superseded.jsonl" ] || fail "$name: rows superseded after a clean stop"
  jq -e -s '[.[] | select(.event == "start")][1].reason | startswith("after stop (signal '"$sig"')")' \
    "$WORK/$name/events.jsonl" >/dev/null && pass "$name: second start names the stop" \
    || fail "$name: second start event: $(events "$WORK/$name" 'select(.event == "start")' | tail -1)"
done
finish
