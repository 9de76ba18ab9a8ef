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
CLIENTS=(a b c)

# train_clients NAME OUT CLIENT0 CLIENT1 [ARGS...]: a 2-rank run into the volume, rank 0 through
# client CLIENT0 and rank 1 through CLIENT1 (each in its own mount namespace, the client bound on
# $WORK/view); sets $rc. The run directory is $WORK/client_X/runs/NAME from any client.
train_clients() {
  local name=$1 out=$2 c0=$3 c1=$4; shift 4
  local args=("${CKPT_ARGS[@]}" --run.storage_path="$WORK/view/runs" --run.name="$name" "$@")
  local in_mount="$TRAINRT_SRC/tools/in_mount.sh"
  rc=0
  timeout -k 10 "$RUN_TIMEOUT" mpiexec \
    -n 1 "$in_mount" "$WORK/client_$c0" "$WORK/view" "$TRAINRT" "${args[@]}" : \
    -n 1 "$in_mount" "$WORK/client_$c1" "$WORK/view" "$TRAINRT" "${args[@]}" \
    >"$out.stdout" 2>"$out.stderr" || rc=$?
  cat "$out.stdout" "$out.stderr" >"$out"
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

layout_case() {
  local layout=$1 base
  train 2 "local_$layout" "$WORK/local_$layout.out" --checkpoint.layout="$layout"
  base=$(digest_of "$WORK/local_$layout.out")
  [ "$rc" -eq 0 ] && [ -n "$base" ] || { show "$WORK/local_$layout.out"; fail "$layout: local run exits $rc"; return; }

  train_clients "whole_$layout" "$WORK/whole_$layout.out" a b --checkpoint.layout="$layout"
  local digest; digest=$(digest_of "$WORK/whole_$layout.out")
  if [ "$rc" -eq 0 ] && [ "$digest" = "$base" ]; then
    pass "$layout: uninterrupted through clients a, b: digest $digest, as on the local disk"
  else
    show "$WORK/whole_$layout.out"; fail "$layout: uninterrupted run exits $rc, digest '$digest' (local: $base)"
  fi
  verify_everywhere "whole_$layout" "$layout"

  # Three attempts, rank 0 through a, then b, then a again (a job requeued back onto a node that
  # still caches the run's files from its first allocation, while b has since appended to them).
  local first="$WORK/first_$layout.out" second="$WORK/second_$layout.out" third="$WORK/third_$layout.out" from
  TRAINRT_FAULT=report:1:4 train_clients "killed_$layout" "$first" a b --checkpoint.layout="$layout"
  [ "$rc" -ne 0 ] || fail "$layout: the run with rank 1 killed at iteration 4 exits 0"
  TRAINRT_FAULT=report:1:7 train_clients "killed_$layout" "$second" b a --checkpoint.layout="$layout"
  from=$(resumed_iteration "$second")
  [ "$rc" -ne 0 ] && [ "$from" = 3 ] || { show "$second" 25; fail "$layout: second attempt exits $rc, from '$from' (expected 3)"; }
  train_clients "killed_$layout" "$third" a b --checkpoint.layout="$layout"
  from=$(resumed_iteration "$third")
  digest=$(digest_of "$third")
  if [ "$rc" -eq 0 ] && [ "$from" = 6 ] && [ "$digest" = "$base" ] && ! grep -qi 'warning.*checkpoint' "$second" "$third"; then
    pass "$layout: killed at 4 and 7, resumed from 3 through the other clients and from 6 through the first ones, digest $digest"
  else
    show "$third" 25; fail "$layout: third attempt exits $rc, from '$from' (expected 6), digest '$digest' (expected $base)"
  fi
  same_reports "whole_$layout" "killed_$layout" "$layout"
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
