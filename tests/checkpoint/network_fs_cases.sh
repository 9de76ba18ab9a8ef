# shellcheck shell=bash
# The cases of a checkpoint run on a network filesystem mounted by 3 clients a, b, c at
# $WORK/client_a, _b, _c (test_glusterfs.sh, test_cephfs.sh), 2 ranks each seeing the run
# directory through a client of its own, as ranks on two nodes would (a private mount namespace per
# rank binds its client on one common path, tools/in_mount.sh). For each layout (layout_case):
# an uninterrupted run through clients a and b ends with the weights of the same run on the local
# disk, and every checkpoint verifies through each client (c never wrote it, a and b hold pages
# from writing it); a run killed when reporting iteration 4 resumes with the clients swapped (each
# rank reads what the other client wrote) from checkpoint 3, is killed at 7, and resumes through
# the first clients again (which cache what they wrote before the others appended) from 6, no
# checkpoint reported bad; it ends with the uninterrupted weights, and its result.jsonl and
# metrics.h5 report the uninterrupted run's values. Sourced after tests/checkpoint/lib.sh.
#
# A FUSE client can itself hang: a run of this test once stopped for good after its sixth
# checkpoint under a loaded `make test`, on ceph-fuse 16.2 (whose multi-client cap revocations
# have known hangs). A run still going after NETFS_RUN_TIMEOUT s (they take seconds) has the
# kernel stacks of its threads written next to its output, and is killed. When a thread of it
# waited on a FUSE request, the filesystem's client stalled, not trainrt: the case is played once
# more under new run names, saying so. A second stall, or a run that hung anywhere else (an MPI
# wait with no FUSE request below it), fails.
CLIENTS=(a b c)
NETFS_RUN_TIMEOUT=${NETFS_RUN_TIMEOUT:-90}
fuse_stalled=0  # set by train_clients: the last run was killed while waiting on a FUSE request

# run_watched OUT CMD...: CMD with its stdout and stderr in OUT.stdout and OUT.stderr; sets rc.
# Past NETFS_RUN_TIMEOUT s, the kernel stacks of the threads of CMD and its descendants go to
# OUT.stacks, they are killed (rc 137), and fuse_stalled says whether one waited on a FUSE request.
run_watched() {
  local out=$1; shift
  "$@" >"$out.stdout" 2>"$out.stderr" &
  local top=$! deadline=$((SECONDS + NETFS_RUN_TIMEOUT))
  while kill -0 "$top" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.5; done
  fuse_stalled=0
  if kill -0 "$top" 2>/dev/null; then
    local pids; pids="$top $(descendants "$top")"
    for pid in $pids; do
      for task in /proc/"$pid"/task/*; do
        echo "== $pid $(cat "$task/comm" 2>/dev/null) (thread ${task##*/})"; cat "$task/stack" 2>/dev/null
      done
    done >"$out.stacks"
    grep -q 'fuse_' "$out.stacks" && fuse_stalled=1
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
  fi
  rc=0; wait "$top" || rc=$?
}

descendants() {
  local child
  for child in $(pgrep -P "$1"); do echo "$child"; descendants "$child"; done
}

# train_clients NAME OUT CLIENT0 CLIENT1 [ARGS...]: a 2-rank run into the volume, rank 0 through
# client CLIENT0 and rank 1 through CLIENT1 (each in its own mount namespace, the client bound on
# $WORK/view); sets $rc. The run directory is $WORK/client_X/runs/NAME from any client.
train_clients() {
  local name=$1 out=$2 c0=$3 c1=$4; shift 4
  local args=("${CKPT_ARGS[@]}" --run.storage_path="$WORK/view/runs" --run.name="$name" "$@")
  local in_mount="$TRAINRT_SRC/tools/in_mount.sh"
  run_watched "$out" mpiexec \
    -n 1 "$in_mount" "$WORK/client_$c0" "$WORK/view" "$TRAINRT" "${args[@]}" : \
    -n 1 "$in_mount" "$WORK/client_$c1" "$WORK/view" "$TRAINRT" "${args[@]}"
  cat "$out.stdout" "$out.stderr" >"$out"
  [ ! -f "$out.stacks" ] || { echo "--- $out: killed after ${NETFS_RUN_TIMEOUT}s; its threads:" >&2; indent <"$out.stacks"; }
}

# stalled WHAT: whether the last run stalled in the FUSE client (then the case stops, to be
# played again: layout_case).
stalled() {
  [ "$fuse_stalled" = 1 ] || return 1
  echo "note: $1: the run stalled inside the filesystem's FUSE client (kernel stacks above)" >&2
}

# verify_everywhere RUN WHAT: `trainrt checkpoints verify` of the run through each client.
verify_everywhere() {
  local run=$1 what=$2
  for c in "${CLIENTS[@]}"; do
    local out="$WORK/verify_${run}_$c.out" code=0
    "$TRAINRT" checkpoints verify "$WORK/client_$c/runs/$run" >"$out" 2>&1 || code=$?
    local good; good=$(grep -c '^ok ' "$out" || true)
    if [ "$code" -eq 0 ] && [ "$good" -ge 9 ] && ! grep -q '^BAD' "$out"; then
      pass "$what: all $good checkpoints verify through client $c"
    else
      show "$out"; fail "$what: verify through client $c exits $code, $good ok"
    fi
  done
}

# layout_case LAYOUT: the cases for one checkpoint layout, played a second time, under new run
# names, when a run stalled in the FUSE client the first time.
layout_case() {
  layout_case_once "$1" "$1" && return
  echo "note: $1: the case is played again under new run names" >&2
  layout_case_once "$1" "$1_again" || fail "$1: a run stalled in the FUSE client again"
}

# layout_case_once LAYOUT TAG: the cases, in runs named after TAG; returns 1 when a run stalled in
# the FUSE client (the checks of that run and after it are not made).
layout_case_once() {
  local layout=$1 tag=$2 base
  local opt=--checkpoint.layout="$layout"
  train 2 "local_$tag" "$WORK/local_$tag.out" "$opt"
  base=$(digest_of "$WORK/local_$tag.out")
  [ "$rc" -eq 0 ] && [ -n "$base" ] || { show "$WORK/local_$tag.out"; fail "$layout: local run exits $rc"; return 0; }

  train_clients "whole_$tag" "$WORK/whole_$tag.out" a b "$opt"
  stalled "$layout: uninterrupted run" && return 1
  local digest; digest=$(digest_of "$WORK/whole_$tag.out")
  if [ "$rc" -eq 0 ] && [ "$digest" = "$base" ]; then
    pass "$layout: uninterrupted through clients a, b: digest $digest, as on the local disk"
  else
    show "$WORK/whole_$tag.out"; fail "$layout: uninterrupted run exits $rc, digest '$digest' (local: $base)"
  fi
  verify_everywhere "whole_$tag" "$layout"

  # Three attempts, rank 0 through a, then b, then a again (a job requeued back onto a node that
  # still caches the run's files from its first allocation, while b has since appended to them).
  local first="$WORK/first_$tag.out" second="$WORK/second_$tag.out" third="$WORK/third_$tag.out" from
  TRAINRT_FAULT=report:1:4 train_clients "killed_$tag" "$first" a b "$opt"
  stalled "$layout: first attempt" && return 1
  [ "$rc" -ne 0 ] || fail "$layout: the run with rank 1 killed at iteration 4 exits 0"
  TRAINRT_FAULT=report:1:7 train_clients "killed_$tag" "$second" b a "$opt"
  stalled "$layout: second attempt" && return 1
  from=$(resumed_iteration "$second")
  [ "$rc" -ne 0 ] && [ "$from" = 3 ] || { show "$second" 25; fail "$layout: second attempt exits $rc, from '$from' (expected 3)"; }
  train_clients "killed_$tag" "$third" a b "$opt"
  stalled "$layout: third attempt" && return 1
  from=$(resumed_iteration "$third")
  digest=$(digest_of "$third")
  if [ "$rc" -eq 0 ] && [ "$from" = 6 ] && [ "$digest" = "$base" ] && ! grep -qi 'warning.*checkpoint' "$second" "$third"; then
    pass "$layout: killed at 4 and 7, resumed from 3 through the other clients and from 6 through the first ones, digest $digest"
  else
    show "$third" 25; fail "$layout: third attempt exits $rc, from '$from' (expected 6), digest '$digest' (expected $base)"
  fi
  same_reports "whole_$tag" "killed_$tag" "$layout"
}

# same_reports RUN_A RUN_B WHAT: result.jsonl and metrics.h5 of the two runs (read through client
# c) hold the same iterations with the same reported values (times aside), each once.
same_reports() {
  local a="$WORK/client_c/runs/$1" b="$WORK/client_c/runs/$2" what=$3
  local values='{_training_iteration, epoch, step, running_loss, loss, test_loss, test_accuracy}'
  if [ -s "$a/result.jsonl" ] && [ "$(jq -c "$values" "$a/result.jsonl")" = "$(jq -c "$values" "$b/result.jsonl")" ]; then
    pass "$what: result.jsonl of the resumed run reports what the uninterrupted one did ($(rows "$b") rows)"
  else
    fail "$what: result.jsonl differs from the uninterrupted run's"
  fi
  if "$TRAINRT_PYTHON" - "$a/metrics.h5" "$b/metrics.h5" <<'PY'; then
import sys, h5py, numpy as np
tables = [h5py.File(path, "r")["metrics"] for path in sys.argv[1:]]
timing = ("_timestamp", "restart_count", "samples_per_s", "data_wait_s")  # and every *_time* column
names = [n for n in tables[0].dtype.names
         if not (n.split("/")[0] in timing or n.startswith("_time") or n.split("/")[0].endswith("_time_s"))]
for name in names:
    x, y = tables[0][name], tables[1][name]
    assert len(x) == len(y) and np.array_equal(x, y, equal_nan=True), name
PY
    pass "$what: metrics.h5 of the resumed run holds the uninterrupted one's rows"
  else
    fail "$what: metrics.h5 differs from the uninterrupted run's"
  fi
}
