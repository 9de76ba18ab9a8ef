#!/usr/bin/env bash
# A damaged newest checkpoint (bit flip, truncation, deleted shard, deleted or garbled manifest,
# a foreign file) is caught: `trainrt checkpoints verify` exits 8 naming the file, and a restart
# warns (file and reason), resumes from the checkpoint before it and finishes with the weights of
# an uninterrupted run. A damaged older checkpoint does not stop the good newest one being used.
# Each case works on a fresh copy of one finished 2-rank run (9 checkpoints).
# ctest: fixture=small_data
source "$(dirname "$0")/lib.sh"

train 2 pristine "$WORK/pristine.out"
base=$(digest_of "$WORK/pristine.out")
if [ "$rc" -ne 0 ] || [ -z "$base" ] || [ "$(newest_committed "$WORK/pristine")" != checkpoint_000009 ]; then
  show "$WORK/pristine.out"; echo "FAIL: the reference run failed (exit $rc)" >&2; exit 1
fi
pass "reference run: 9 checkpoints, digest $base"

# fresh NAME: a copy of the reference run as $WORK/NAME; sets $dir, $ck9, $ck8.
fresh() {
  rm -rf "${WORK:?}/$1"; cp -a "$WORK/pristine" "$WORK/$1"
  dir="$WORK/$1"; ck9="$dir/checkpoints/checkpoint_000009"; ck8="$dir/checkpoints/checkpoint_000008"
}

# flip_byte FILE: inverts one bit in the middle of FILE (inside fc1.weight for rank 0's shard).
flip_byte() {
  python3 - "$1" <<'EOF'
import os, sys
path = sys.argv[1]
middle = os.path.getsize(path) // 2
with open(path, "r+b") as f:
    f.seek(middle); byte = f.read(1)[0]
    f.seek(middle); f.write(bytes([byte ^ 0x10]))
EOF
}

# damaged CASE FILE REASON_REGEX: $dir's newest checkpoint was damaged in FILE (a path in it).
damaged() {
  local what=$1 file=$2 reason=$3 name=${dir##*/}
  local vout="$WORK/$name.verify.out" again="$WORK/$name.restart.out"
  verify "$dir" "$vout"
  [ "$vrc" -eq 8 ] && pass "$what: verify exits 8" || { show "$vout"; fail "$what: verify exits $vrc, expected 8"; }
  if grep -E "^BAD +$ck9: .*$file" "$vout" | grep -Eqi "$reason"; then
    pass "$what: verify names $file ($(grep -E "^BAD +$ck9" "$vout" | sed 's/.*: //'))"
  else
    show "$vout"; fail "$what: verify has no BAD line for $ck9 naming $file and /$reason/"
  fi

  train 2 "$name" "$again"
  if grep -E "warning.*checkpoint_000009.*$file" "$again" | grep -Eqi "$reason"; then
    pass "$what: restart warns: $(grep -E "warning.*checkpoint_000009" "$again" | head -1)"
  else
    show "$again"; fail "$what: restart printed no warning naming $file and /$reason/"
  fi
  local from; from=$(resumed_iteration "$again")
  [ "$from" = 8 ] && pass "$what: restart resumes from iteration 8" \
    || fail "$what: restart resumed from iteration '${from}', expected 8"
  if [ "$rc" -ne 0 ]; then
    show "$again"; fail "$what: restart exits $rc instead of finishing"; return
  fi
  local digest; digest=$(digest_of "$again")
  [ "$digest" = "$base" ] && pass "$what: finishes with digest $digest" \
    || fail "$what: digest '$digest', the uninterrupted run gave $base"
  local left; left=$(leftovers "$dir")
  [ -z "$left" ] || fail "$what: left behind after the restart: $left"
  verify "$dir" "$vout"
  [ "$vrc" -eq 0 ] && pass "$what: after the restart the newest checkpoint verifies" \
    || { show "$vout"; fail "$what: after the restart, verify exits $vrc"; }
}

fresh bitflip
flip_byte "$ck9/rank_00000.h5"
damaged "bit flip in rank_00000.h5" "$ck9/rank_00000.h5" "checksum|corrupt"

fresh truncated
truncate -s $(( $(stat -c %s "$ck9/rank_00000.h5") / 2 )) "$ck9/rank_00000.h5"
damaged "rank_00000.h5 truncated to half" "$ck9/rank_00000.h5" "size"

fresh shard_deleted
rm "$ck9/rank_00001.h5"
damaged "rank_00001.h5 deleted" "$ck9/rank_00001.h5" "missing"

fresh manifest_deleted
rm "$ck9/manifest.json"
damaged "manifest.json deleted" "$ck9/manifest.json" "missing"

fresh manifest_garbled
head -c 200 "$WORK/pristine/checkpoints/checkpoint_000009/manifest.json" >"$ck9/manifest.json"
damaged "manifest.json cut short" "$ck9/manifest.json" "JSON|invalid|parse"

fresh foreign
echo "not a checkpoint file" >"$ck9/notes.txt"
damaged "foreign file notes.txt" "$ck9/notes.txt" "not list|unexpected|unknown|foreign"

# The newest two damaged: two warnings, resumes from iteration 7.
fresh two_bad
flip_byte "$ck9/rank_00000.h5"
rm "$ck8/rank_00001.h5"
train 2 two_bad "$WORK/two_bad.restart.out"
n=$(grep -Ec "warning.*checkpoint_00000[89]" "$WORK/two_bad.restart.out" || true)
[ "$n" -eq 2 ] && pass "newest two damaged: two warnings" || fail "newest two damaged: $n warnings, expected 2"
from=$(resumed_iteration "$WORK/two_bad.restart.out")
[ "$from" = 7 ] && pass "newest two damaged: resumes from iteration 7" \
  || fail "newest two damaged: resumed from iteration '${from}', expected 7"
[ "$rc" -eq 0 ] && [ "$(digest_of "$WORK/two_bad.restart.out")" = "$base" ] \
  && pass "newest two damaged: finishes with digest $base" \
  || { show "$WORK/two_bad.restart.out"; fail "newest two damaged: restart exits $rc, digest '$(digest_of "$WORK/two_bad.restart.out")'"; }

# A damaged latest-but-one with a good newest: verify passes (newest good, the bad one is listed),
# and the restart takes the newest without a warning.
fresh older_bad
flip_byte "$ck8/rank_00000.h5"
verify "$dir" "$WORK/older_bad.verify.out"
[ "$vrc" -eq 0 ] && pass "damaged latest-but-one: verify exits 0" \
  || { show "$WORK/older_bad.verify.out"; fail "damaged latest-but-one: verify exits $vrc, expected 0"; }
grep -Eq "^BAD +$ck8: .*rank_00000.h5" "$WORK/older_bad.verify.out" \
  && pass "damaged latest-but-one: verify lists it as BAD" \
  || fail "damaged latest-but-one: verify does not report $ck8/rank_00000.h5"
grep -Eq "^ok +$ck9\$" "$WORK/older_bad.verify.out" || fail "damaged latest-but-one: verify does not say ok for $ck9"
train 2 older_bad "$WORK/older_bad.restart.out"
from=$(resumed_iteration "$WORK/older_bad.restart.out")
[ "$from" = 9 ] && pass "damaged latest-but-one: restart resumes from the newest (iteration 9)" \
  || fail "damaged latest-but-one: resumed from iteration '${from}', expected 9"
! grep -q "warning.*checkpoint_000009" "$WORK/older_bad.restart.out" \
  || fail "damaged latest-but-one: a warning about the good newest checkpoint"
[ "$rc" -eq 0 ] && [ "$(digest_of "$WORK/older_bad.restart.out")" = "$base" ] \
  && pass "damaged latest-but-one: restart exits 0 with digest $base" \
  || { show "$WORK/older_bad.restart.out"; fail "damaged latest-but-one: restart exits $rc, digest '$(digest_of "$WORK/older_bad.restart.out")'"; }
finish
