# shellcheck shell=bash
# Helpers for the checkpoint suite (sourced by tests/checkpoint/test_*.sh): short fashion_mlp
# runs with several checkpoints each, fault injection, and checks on a run directory.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
require_data

# The small dataset (6000 samples, fixture small_data), batch 64, 2 epochs of 94 steps, a
# checkpoint every 24 steps: iterations 1-3 (epoch 1, mid-epoch), 4 (end of epoch 1), 5-8 (epoch 2,
# mid-epoch), 9 (end of epoch 2); about 1 s of training on 2 ranks, 2.7 MB each. Scripts whose
# kills or signals land at a moment of training, not at a fault point, call use_full_data first:
# on the full dataset (batch 256, a checkpoint every 60 steps, the same 9 iterations; about 7 s)
# a run does not end before the moment comes.
require_small_data
CKPT_ARGS=(--config jobs/fashion_mlp.ini --data.path="$SMALL_DATA" --train.batch_size=64 --train.epochs=2
           --checkpoint.every_steps=24)
use_full_data() {
  CKPT_ARGS=(--config jobs/fashion_mlp.ini --train.batch_size=256 --train.epochs=2 --checkpoint.every_steps=60)
}
RUN_TIMEOUT=${RUN_TIMEOUT:-240}  # seconds; a run that hangs fails instead of blocking ctest

# train NP NAME OUT [ARGS...]: one run into $WORK/NAME; sets $rc (never fails the script).
# OUT gets its stdout, then its stderr (kept apart while running: mpiexec forwards the two
# streams separately, so merging them with 2>&1 can cut a line of one with a line of the other).
# TRAINRT_FAULT and other variables in the caller's environment pass through.
train() {
  local np=$1 name=$2 out=$3; shift 3
  rc=0
  timeout -k 10 "$RUN_TIMEOUT" mpiexec -n "$np" "$TRAINRT" "${CKPT_ARGS[@]}" \
    --run.storage_path="$WORK" --run.name="$name" "$@" >"$out.stdout" 2>"$out.stderr" || rc=$?
  cat "$out.stdout" "$out.stderr" >"$out"
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "--- $out (killed after ${RUN_TIMEOUT}s: hung?) ---" >&2; tail -20 "$out" >&2
  fi
}

# Prints the output file's last lines on stderr (after a failed check).
show() { echo "--- $1 (last ${2:-15} lines) ---" >&2; tail -"${2:-15}" "$1" | indent; echo "---" >&2; }
# indent: prefix lines with 4 spaces, on stderr, ending every line (stderr of a killed run may not).
indent() { awk '{ print "    " $0 }' >&2; }

digest_of() { sed -n 's/^weights_digest=\([0-9a-f]\{16\}\)$/\1/p' "$1" | tail -1; }

# The iteration named by "[trainrt 0] resuming from ... (iteration N)"; empty when none.
resumed_iteration() { sed -n 's/^\[trainrt 0\] resuming from .* (iteration \([0-9][0-9]*\))$/\1/p' "$1" | tail -1; }

ckpt_name() { printf 'checkpoint_%06d' "$1"; }

# committed RUN_DIR: committed checkpoint names, oldest first.
committed() {
  [ -d "$1/checkpoints" ] || return 0
  find "$1/checkpoints" -mindepth 1 -maxdepth 1 -type d -name 'checkpoint_*' -printf '%f\n' | sort
}
newest_committed() { committed "$1" | tail -1; }

# leftovers RUN_DIR: names of interrupted saves or deletions still in checkpoints/.
leftovers() {
  [ -d "$1/checkpoints" ] || return 0
  find "$1/checkpoints" -mindepth 1 -maxdepth 1 \( -name '.pending_*' -o -name '.deleting_*' \
    -o -name 'latest.tmp.*' \) -printf '%f\n' | sort | tr '\n' ' '
}

# verify RUN_DIR OUT: `trainrt checkpoints verify`; sets $vrc.
verify() {
  vrc=0
  "$TRAINRT" checkpoints verify "$1" >"$2" 2>&1 || vrc=$?
}

# reported RUN_DIR: result.jsonl's rows without what depends on time (_timestamp, _time*, *_s,
# restart_count, at any depth): what a resumed run must report as the uninterrupted one did.
reported() {
  jq -c 'walk(if type == "object" then with_entries(select(.key | test("^_time|_s$|^restart_count$") | not)) else . end)' \
    "$1/result.jsonl"
}

# iterations_once RUN_DIR LAST [dups_ok]: result.jsonl has a row for every iteration 1..LAST and
# none beyond, in order. A row repeated after a resume (the iteration was reported, then the run
# died before its checkpoint was committed) is a known limitation (docs/concepts.md) and
# only noted when dups_ok is given; a missing row (reported metrics lost) always fails.
iterations_once() {
  local got want unique
  got=$(jq -r '._training_iteration' "$1/result.jsonl" | tr '\n' ' ')
  want=$(seq 1 "$2" | tr '\n' ' ')
  [ "$got" = "$want" ] && return 0
  unique=$(jq -r '._training_iteration' "$1/result.jsonl" | uniq | tr '\n' ' ')
  if [ "${3:-}" = dups_ok ] && [ "$unique" = "$want" ]; then
    echo "note: result.jsonl repeats rows after the resume (known limitation): $got"
    return 0
  fi
  echo "result.jsonl iterations: $got(expected $want)" >&2
  return 1
}
