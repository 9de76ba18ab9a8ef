#!/usr/bin/env bash
# Multi-level checkpoints under mpiexec -n 2 (checkpoint.levels = local,pfs; local_dir per host,
# pfs_every = 4): the 9 checkpoints of a run go to node-local storage, every 4th and the last also
# to the run directory. A rank killed at iteration 7 leaves local checkpoints 5 and 6, the run
# directory only 4; the rerun resumes from local 6 (restore event: level local, the checkpoint
# read from the local directory) and ends with the uninterrupted run's digest and its last
# checkpoint in the run directory. A damaged local file (rank 1's, both local checkpoints) is
# detected by its checksum, named in a warning, and the next level used: the run directory's 4,
# the same digest. A local level lost with its node (rank 1's directory gone) falls back to the
# run directory alike. A local checkpoint whose manifest disagrees with a rank's file (checksums
# intact) is found by that rank's schema check and the older local one used. async = true with
# local levels: one line, exit 2.
# ctest: fixture=small_data
source "$(dirname "$0")/lib.sh"
# levels NAME: the options of run NAME with the local level (its own local_dir, a directory per host).
levels() { LEVELS=(--checkpoint.levels=local,pfs --checkpoint.local_dir="$WORK/local-$1/%h" --checkpoint.pfs_every=4 --metrics.progress=off); }
local_root() { find "$WORK/local-$1" -mindepth 2 -maxdepth 2 -name 'trainrt-*' 2>/dev/null | head -1; }
restore_event() { jq -c 'select(.event == "restore") | {iteration, level, checkpoint}' "$WORK/$1/events.jsonl" | tail -1; }

train 2 ref "$WORK/ref.out" --metrics.progress=off
ref=$(digest_of "$WORK/ref.out")
[ "$rc" -eq 0 ] && [ -n "$ref" ] || { show "$WORK/ref.out"; fail "reference run: exit $rc"; finish; }

# crash NAME: a run with the local level whose rank 1 is killed when it reports iteration 7.
crash() {
  levels "$1"
  TRAINRT_FAULT=report:1:7 train 2 "$1" "$WORK/$1.crash.out" "${LEVELS[@]}"
  [ "$rc" -ne 0 ] && [ "$(committed "$WORK/$1" | tr '\n' ' ')" = "checkpoint_000004 " ] \
    || { show "$WORK/$1.crash.out"; fail "$1: exit $rc, run directory holds '$(committed "$WORK/$1" | tr '\n' ' ')', want checkpoint 4 only"; }
}

crash resumed
root=$(local_root resumed)
[ -n "$root" ] && [ -f "$root/rank_00000/checkpoint_000006/rank_00000.h5" ] && [ -f "$root/rank_00001/checkpoint_000005/manifest.json" ] \
  && [ ! -e "$root/rank_00000/checkpoint_000004" ] \
  && pass "local level: checkpoints 5 and 6 in $root (the two newest per rank), the run directory only 4" \
  || fail "local level contents: $(find "$WORK/local-resumed" -name manifest.json | sed "s|$WORK/||" | tr '\n' ' ')"
train 2 resumed "$WORK/resumed.out" "${LEVELS[@]}"
event=$(restore_event resumed)
[ "$rc" -eq 0 ] && [ "$(digest_of "$WORK/resumed.out")" = "$ref" ] && [ "$(jq -r .level <<<"$event")" = local ] \
  && [ "$(jq -r .iteration <<<"$event")" = 6 ] && [[ "$(jq -r .checkpoint <<<"$event")" == "$root/"* ]] \
  && [ "$(newest_committed "$WORK/resumed")" = checkpoint_000009 ] \
  && pass "resumed from the local level (not the run directory's older 4): $event; digest $ref as uninterrupted; checkpoint 9 copied to the run directory at the end" \
  || { show "$WORK/resumed.out"; fail "local resume: exit $rc, $event, digest $(digest_of "$WORK/resumed.out") vs $ref, newest $(newest_committed "$WORK/resumed")"; }
verify "$WORK/resumed" "$WORK/resumed.verify"
[ "$vrc" -eq 0 ] && pass "the run directory's copies verify: $(grep -c '^ok' "$WORK/resumed.verify") checkpoints" \
  || { cat "$WORK/resumed.verify" >&2; fail "verify after the copies: exit $vrc"; }

crash damaged
root=$(local_root damaged)
for n in 5 6; do
  printf 'garbage' | dd of="$root/rank_00001/checkpoint_00000$n/rank_00001.h5" bs=1 seek=4096 conv=notrunc status=none
done
train 2 damaged "$WORK/damaged.out" "${LEVELS[@]}"
event=$(restore_event damaged)
[ "$rc" -eq 0 ] && [ "$(digest_of "$WORK/damaged.out")" = "$ref" ] && [ "$(jq -r .level <<<"$event")" = pfs ] \
  && [ "$(jq -r .iteration <<<"$event")" = 4 ] && grep -q "rank_00001.h5 has checksum .* (damaged): not used" "$WORK/damaged.out" \
  && pass "damaged local files: $(grep -m1 -o 'local checkpoint .*checkpoint_00000[56]: rank_00001.h5 has checksum.*' "$WORK/damaged.out" | cut -c1-60)...; resumed from the run directory's 4, the same digest" \
  || { show "$WORK/damaged.out"; fail "damaged local level: exit $rc, $event"; }

crash torn
root=$(local_root torn)
# Checkpoint 6's manifest (every rank directory's copy) places a part of rank 1's file in a dataset
# that file does not hold: the checksums pass, rank 1's schema check of its own file finds it.
doctor='(first(.tensors | to_entries[] | select(any(.value.parts[]; .file == "rank_00001.h5"))) | .key) as $t
  | .tensors[$t].parts |= map(if .file == "rank_00001.h5" then .dataset = "/tensors/absent" else . end)'
for m in "$root"/rank_*/checkpoint_000006/manifest.json; do jq "$doctor" "$m" > "$m.new" && mv "$m.new" "$m"; done
train 2 torn "$WORK/torn.out" "${LEVELS[@]}"
event=$(restore_event torn)
[ "$rc" -eq 0 ] && [ "$(digest_of "$WORK/torn.out")" = "$ref" ] && [ "$(jq -r .level <<<"$event")" = local ] \
  && [ "$(jq -r .iteration <<<"$event")" = 5 ] \
  && grep -q "local checkpoint checkpoint_000006 is not used: schema: .*rank_00001.h5:/tensors/absent: dataset missing" "$WORK/torn.out" \
  && pass "a local checkpoint whose manifest disagrees with rank 1's file: $(grep -m1 -o 'local checkpoint checkpoint_000006 is not used: schema: .*' "$WORK/torn.out" | sed "s|$WORK/||" | cut -c1-120); resumed from local 5, the same digest" \
  || { show "$WORK/torn.out"; fail "torn local checkpoint: exit $rc, $event"; }

crash lost
root=$(local_root lost)
rm -rf "$root/rank_00001"
train 2 lost "$WORK/lost.out" "${LEVELS[@]}"
event=$(restore_event lost)
[ "$rc" -eq 0 ] && [ "$(digest_of "$WORK/lost.out")" = "$ref" ] && [ "$(jq -r .level <<<"$event")" = pfs ] \
  && [ "$(jq -r .iteration <<<"$event")" = 4 ] \
  && pass "rank 1's local level lost (no partner copies): resumed from the run directory's 4, the same digest" \
  || { show "$WORK/lost.out"; fail "lost local level: exit $rc, $event"; }

levels bad
train 2 bad "$WORK/bad.out" "${LEVELS[@]}" --checkpoint.async=true
[ "$rc" -eq "$TRAINRT_EXIT_CONFIG" ] && [ "$(grep -c . "$WORK/bad.out.stderr")" -eq 1 ] && grep -q "checkpoint.levels" "$WORK/bad.out" \
  && [ ! -e "$WORK/bad" ] && pass "local levels with async: exit 2, $(cat "$WORK/bad.out.stderr")" \
  || { show "$WORK/bad.out"; fail "local levels with async: exit $rc"; }
finish
