#!/usr/bin/env bash
# A full filesystem (ENOSPC) during a checkpoint save: exit code 8 with one clear error line that
# says there is no space, the earlier checkpoints still verify, nothing half-written is left
# behind, and rerunning with more space resumes and ends with the weights of an uninterrupted run.
# storage_path is a small tmpfs (needs root for mount). Two places the space runs out:
#   A. rank 0's shard of a later checkpoint (12 MiB: four 2.7 MB checkpoints fit, the fifth not)
#   D. the shared layout's data.h5 (MPI-IO) of a later checkpoint (12 MiB: two 4 MB checkpoints fit)
# ctest: fixture=small_data
source "$(dirname "$0")/lib.sh"

FS="$WORK/fs"
mkdir -p "$FS"
trap 'umount "$FS" 2>/dev/null; rm -rf "$WORK"' EXIT
PAGE=$(getconf PAGESIZE)

# fresh_fs SIZE: a new empty tmpfs of SIZE (mount syntax: 12m, 2640k) on $FS.
fresh_fs() {
  if mountpoint -q "$FS"; then umount "$FS"; fi
  mount -t tmpfs -o "size=$1" tmpfs "$FS" || { echo "FAIL: cannot mount a tmpfs on $FS (root needed)" >&2; exit 1; }
}
resize_fs() { mount -o "remount,size=$1" "$FS" || { echo "FAIL: cannot resize the tmpfs on $FS" >&2; exit 1; }; }
used_pages() { df -B "$PAGE" --output=used "$FS" | tail -1 | tr -d ' '; }

# run_on_fs NAME OUT [ARGS...]: like train, with storage_path on the tmpfs.
run_on_fs() {
  local name=$1 out=$2; shift 2
  rc=0
  timeout -k 10 "$RUN_TIMEOUT" mpiexec -n 2 "$TRAINRT" "${CKPT_ARGS[@]}" --run.storage_path="$FS" \
    --run.name="$name" "$@" >"$out.stdout" 2>"$out.stderr" || rc=$?
  cat "$out.stdout" "$out.stderr" >"$out"
}

# error_lines ERR: the error lines on stderr ("[trainrt R] error: ...", not warnings or notes).
error_lines() { grep '^\[trainrt [0-9]*\] error: ' "$1" || true; }

# clear_enospc WHAT OUT FILE_REGEX: exit 8, one distinct error message (each rank may print it
# once, as "[trainrt R] error: ..."), on whole lines, saying "No space left on device" and naming
# the file being written.
clear_enospc() {
  local what=$1 out=$2 file=$3 err="$2.stderr"
  [ "$rc" -eq 8 ] && pass "$what: exit 8" || { show "$out"; fail "$what: exit $rc, expected 8"; }
  local lines; lines=$(error_lines "$err")
  if grep -q '.\[trainrt [0-9]*\] ' "$err"; then
    fail "$what: two messages on one line (the ranks' stderr writes interleave):"
    grep '.\[trainrt [0-9]*\] ' "$err" | head -2 | indent
  fi
  local distinct; distinct=$(printf '%s\n' "$lines" | sed -E 's/^\[trainrt [0-9]+\] error: //' | sed '/^$/d' | sort -u | wc -l)
  [ "$distinct" -eq 1 ] && pass "$what: one error message" \
    || { fail "$what: $distinct distinct error messages, expected 1:"; printf '%s\n' "$lines" | indent; }
  if printf '%s\n' "$lines" | grep -E "$file" | grep -Eq 'No space left on device|ENOSPC'; then
    pass "$what: the error says no space: $(printf '%s\n' "$lines" | head -1)"
  else
    fail "$what: no error line says 'No space left on device' naming /$file/; stderr was:"
    indent <"$err"
  fi
}

# intact NAME WHAT NEWEST: after the failure, what is committed verifies, the newest is NEWEST
# (or none), and nothing half-written is left.
intact() {
  local dir="$FS/$1" what=$2 newest=$3
  local left; left=$(leftovers "$dir")
  [ -z "$left" ] && pass "$what: nothing half-written left behind" || fail "$what: left behind: $left"
  local got; got=$(newest_committed "$dir")
  [ "$got" = "$newest" ] && pass "$what: newest committed is '${newest:-none}'" \
    || fail "$what: newest committed is '${got:-none}', expected '${newest:-none}'"
  verify "$dir" "$WORK/$1.verify.out"
  [ "$vrc" -eq 0 ] && pass "$what: committed checkpoints verify" \
    || { show "$WORK/$1.verify.out"; fail "$what: checkpoints verify exits $vrc"; }
}

# resumes NAME WHAT RESUME [ARGS...]: with more space, a rerun resumes from iteration RESUME (none: from
# scratch) and finishes with the uninterrupted run's digest.
resumes() {
  local name=$1 what=$2 resume=$3 out="$WORK/$1.rerun.out"; shift 3
  resize_fs 64m
  run_on_fs "$name" "$out" "$@"
  [ "$rc" -eq 0 ] || { show "$out"; fail "$what: rerun with more space exits $rc"; return; }
  local from; from=$(resumed_iteration "$out")
  [ "$from" = "$resume" ] && pass "$what: rerun resumes from iteration ${resume:-none (from scratch)}" \
    || fail "$what: rerun resumed from iteration '${from}', expected '${resume}'"
  [ "$(digest_of "$out")" = "$base" ] && pass "$what: rerun ends with digest $base" \
    || fail "$what: rerun digest '$(digest_of "$out")', uninterrupted run gave $base"
  local left; left=$(leftovers "$FS/$name")
  [ -z "$left" ] || fail "$what: left behind after the rerun: $left"
  verify "$FS/$name" "$WORK/$name.verify.out"
  [ "$vrc" -eq 0 ] || { show "$WORK/$name.verify.out"; fail "$what: after the rerun, verify exits $vrc"; }
  iterations_once "$FS/$name" 9 || fail "$what: result.jsonl does not hold iterations 1..9 once each"
}

train 2 reference "$WORK/reference.out"
base=$(digest_of "$WORK/reference.out")
[ "$rc" -eq 0 ] && [ -n "$base" ] || { show "$WORK/reference.out"; echo "FAIL: reference run exits $rc" >&2; exit 1; }
pass "uninterrupted run: digest $base"

# ---- A. a shard of the fifth checkpoint does not fit
fresh_fs 12m
run_on_fs full "$WORK/full.out"
clear_enospc "A (shard)" "$WORK/full.out" 'checkpoint_000005|rank_00000\.h5'
intact full "A (shard)" checkpoint_000004
iterations_once "$FS/full" 4 && pass "A (shard): result.jsonl has iterations 1..4" \
  || fail "A (shard): result.jsonl does not hold iterations 1..4 once each"
jq -e 'select(.event == "failure" and .exit_code == 8)' "$FS/full/events.jsonl" >/dev/null \
  && pass "A (shard): failure event in events.jsonl" || fail "A (shard): no failure event with exit_code 8"
resumes full "A (shard)" 4

# ---- D. shared layout: data.h5 of the third checkpoint does not fit
fresh_fs 12m
run_on_fs shared "$WORK/shared.out" --checkpoint.layout=shared
clear_enospc "D (shared)" "$WORK/shared.out" 'checkpoint_000003|data\.h5'
intact shared "D (shared)" checkpoint_000002
resumes shared "D (shared)" 2 --checkpoint.layout=shared
finish
