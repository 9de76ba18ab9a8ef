#!/usr/bin/env bash
# The GPU refusals on real hardware (label gpu; exit 77 = skipped where no GPU is visible): two
# ranks on one GPU (NCCL needs a GPU per rank) and a rank that sees no GPU each end with one line
# naming the cause, exit 2, and no run directory.
source "$(dirname "$0")/../lib/common.sh"
require_data
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  echo "SKIP: no GPU visible (nvidia-smi -L)"; exit 77
fi
args=(--config jobs/fashion_mlp.ini --train.epochs=1 --scaling.use_gpu=true --run.storage_path="$WORK")

# refused NAME EXPECTED_TEXT NP [VAR=VALUE...]: the run must exit 2 with EXPECTED_TEXT, write nothing.
refused() {
  local name=$1 text=$2 np=$3 rc=0; shift 3
  env "$@" mpiexec -n "$np" "$TRAINRT" "${args[@]}" --run.name="$name" >"$WORK/$name.out" 2>&1 || rc=$?
  if [ "$rc" -eq 2 ] && grep -q -- "$text" "$WORK/$name.out" && [ ! -e "$WORK/$name" ]; then
    pass "$name: exit 2, '$(grep -m1 -- "$text" "$WORK/$name.out")', nothing written"
  else
    cat "$WORK/$name.out" >&2; fail "$name: exit $rc (expected 2 with '$text' and no run directory)"
  fi
}

gpus=$(nvidia-smi -L | grep -c '^GPU ')
if [ "$gpus" -eq 1 ]; then
  refused two_ranks_one_gpu "share GPU" 2
else
  refused more_ranks_than_gpus "visible GPUs" $((gpus + 1))
fi
refused no_visible_gpu "sees no CUDA device" 1 CUDA_VISIBLE_DEVICES=
finish
