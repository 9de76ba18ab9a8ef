#!/usr/bin/env bash
# The checkpoint fault tests on the node-local level (checkpoint.levels = local,pfs, local_dir per
# host, pfs_every = 4; 2 ranks, 9 iterations: local checkpoints 1..9, the run directory gets 4, 8
# and 9). Every phase of a local save, of the copy to the run directory and of its publication:
# a rank SIGKILLed there (TRAINRT_FAULT) leaves a checkpoint to resume from; the rerun resumes
# from the newest complete one on the level it names, leaves nothing half-written in the run
# directory, and ends with the uninterrupted run's digest and its last checkpoint copied there.
# A full local level (ENOSPC: local_dir on a small tmpfs): exit 8 with one line naming the lack of
# space, nothing pending left on the level, and a rerun with more space resumes from it. Bit flips
# in local files: test_levels.sh. Partner copies (several nodes): slurm_partner_restore.sh.
# ctest: fixture=small_data
source "$(dirname "$0")/lib.sh"

levels() { LEVELS=(--checkpoint.levels=local,pfs --checkpoint.local_dir="$1/%h" --checkpoint.pfs_every=4 --metrics.progress=off); }
restore_event() { jq -c 'select(.event == "restore") | {iteration, level}' "$WORK/$1/events.jsonl" | tail -1; }
# The iteration of "[trainrt 0] resuming from ... (iteration N, local level)"; empty when none.
local_resume() { sed -n 's/^\[trainrt 0\] resuming from .* (iteration \([0-9][0-9]*\), local level)$/\1/p' "$1" | tail -1; }

train 2 ref "$WORK/ref.out" --metrics.progress=off
ref=$(digest_of "$WORK/ref.out")
[ "$rc" -eq 0 ] && [ -n "$ref" ] || { show "$WORK/ref.out"; fail "reference run: exit $rc"; finish; }
pass "uninterrupted run: digest $ref"

# after_restart NAME WHAT LEVEL RESUMES...: rerun NAME without a fault; it must resume from one of
# the iterations RESUMES on level LEVEL, then end as the uninterrupted run.
after_restart() {
  local name=$1 what=$2 level=$3; shift 3
  local run_dir="$WORK/$name" again="$WORK/$name.restart.out"
  train 2 "$name" "$again" "${LEVELS[@]}"
  [ "$rc" -eq 0 ] || { show "$again" 25; fail "$what: restart exits $rc"; return; }
  local event from
  event=$(restore_event "$name")
  from=$(local_resume "$again")
  [[ " $* " == *" $from "* ]] && [ "$(jq -r .level <<<"$event")" = "$level" ] \
    && pass "$what: the restart resumes from iteration $from on level $level" \
    || { show "$again"; fail "$what: restart resumed from '$from' ($event), expected one of [$*] on level $level"; }
  local left; left=$(leftovers "$run_dir")
  [ -z "$left" ] || fail "$what: left behind in the run directory after the restart: $left"
  [ -z "$(find "$WORK/local-$name" -name '.pending_*' 2>/dev/null)" ] \
    || fail "$what: pending local saves left: $(find "$WORK/local-$name" -name '.pending_*' | sed "s|$WORK/||")"
  local digest; digest=$(digest_of "$again")
  [ "$digest" = "$ref" ] && pass "$what: digest $digest equals the uninterrupted run's" \
    || fail "$what: digest '$digest' after resume, uninterrupted run gave $ref"
  verify "$run_dir" "$WORK/$name.verify"
  [ "$vrc" -eq 0 ] && [ "$(newest_committed "$run_dir")" = checkpoint_000009 ] \
    || { show "$WORK/$name.verify"; fail "$what: run directory after the restart: verify exits $vrc, newest $(newest_committed "$run_dir")"; }
  iterations_once "$run_dir" 9 dups_ok || fail "$what: result.jsonl lost an iteration"
}

# level_kill PHASE RANK ITERATION LEVEL RESUMES...: rank RANK dies at PHASE of the save (or copy)
# of ITERATION; the rerun resumes from one of RESUMES on LEVEL.
level_kill() {
  local phase=$1 rank=$2 iter=$3; shift 3
  local name="kill_${phase}" what="local level, $phase:$rank:$iter"
  levels "$WORK/local-$name"
  TRAINRT_FAULT="$phase:$rank:$iter" train 2 "$name" "$WORK/$name.crash.out" "${LEVELS[@]}"
  if [ "$rc" -eq 0 ] || ! grep -q "fault injection: rank $rank dies at $phase (iteration $iter)" "$WORK/$name.crash.out"; then
    show "$WORK/$name.crash.out"; fail "$what: exit $rc, the fault did not fire"; return
  fi
  verify "$WORK/$name" "$WORK/$name.crash.verify"
  [ "$vrc" -eq 0 ] || { show "$WORK/$name.crash.verify"; fail "$what: after the crash, the run directory's checkpoints do not verify"; }
  after_restart "$name" "$what" "$@"
}

level_kill before_data            1 6 local 5
long_only() { [ "${TRAINRT_TEST_LONG:-0}" = 1 ] && return 1; echo "skipped outside make test-long: $*"; }
long_only "mid_data" || level_kill mid_data 1 6 local 5
level_kill after_data             0 3 local 2
level_kill local_before_manifest  1 6 local 5
level_kill local_before_rename    0 6 local 5
# rank 0 committed 7 and is removing 5; rank 1 may have committed 7 too before it was ended
level_kill local_retention        0 7 local 6 7
# the copy of 8 to the run directory dies: 8 is complete on the local level
level_kill during_flush           1 8 local 8
# the run directory's publication of 4 (at the start of save 5): the local level has 3 and 4
level_kill before_rename          0 4 local 4
level_kill before_manifest        0 8 local 8

# ---- ENOSPC on the local level: local_dir on a tmpfs that holds two local checkpoints of the two
# ranks, not a third (the kept two and the one being written)
FS="$WORK/localfs"
mkdir -p "$FS"
trap 'umount "$FS" 2>/dev/null || true; rm -rf "$WORK"' EXIT
file_kb=$(( $(stat -c %s "$(find "$WORK/kill_before_data" -name rank_00000.h5 | head -1)") / 1024 ))
mount -t tmpfs -o "size=$(( file_kb * 4 + file_kb / 2 + 64 ))k" tmpfs "$FS" \
  || { fail "cannot mount a tmpfs on $FS (root needed)"; finish; }
levels "$FS"
train 2 full "$WORK/full.out" "${LEVELS[@]}"
lines=$(grep -c . "$WORK/full.out.stderr" || true)
[ "$rc" -eq "$TRAINRT_EXIT_CHECKPOINT" ] && [ "$lines" -eq 1 ] && grep -qi "no space left" "$WORK/full.out.stderr" \
  && pass "local level full: exit $rc, one line: $(cut -c1-160 "$WORK/full.out.stderr")" \
  || { show "$WORK/full.out"; fail "local level full: exit $rc (want $TRAINRT_EXIT_CHECKPOINT), $lines stderr line(s), want one saying there is no space"; }
pending=$(find "$FS" -name '.pending_*' | sed "s|$FS/||")
[ -z "$pending" ] && pass "local level full: no pending save left on the level" || fail "local level full: left on the level: $pending"
[ -z "$(leftovers "$WORK/full")" ] || fail "local level full: left in the run directory: $(leftovers "$WORK/full")"
mount -o remount,size=64m "$FS" || fail "cannot grow the tmpfs on $FS"
saved=$(find "$FS" -name manifest.json -path '*rank_00000*' | sed -n 's|.*/checkpoint_0*\([0-9]*\)/manifest.json|\1|p' | sort -n | tail -1)
train 2 full "$WORK/full.again.out" "${LEVELS[@]}"
[ "$rc" -eq 0 ] && [ -n "$saved" ] && [ "$(local_resume "$WORK/full.again.out")" = "$saved" ] \
  && [ "$(digest_of "$WORK/full.again.out")" = "$ref" ] \
  && pass "more space: resumed from the local level's checkpoint $saved, digest as uninterrupted" \
  || { show "$WORK/full.again.out"; fail "after the space was grown: exit $rc, resumed from '$(local_resume "$WORK/full.again.out")' (newest local $saved), digest $(digest_of "$WORK/full.again.out") vs $ref"; }
umount "$FS"
finish
