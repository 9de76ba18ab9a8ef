#!/usr/bin/env bash
# The issue's acceptance check: fashion_mlp with the same seed on 2 ranks prints the same
# weights digest under `mpiexec -n 2`, `srun -n 2 --mpi=pmix` and `srun -n 2 --mpi=pmi2`
# (one epoch of the real recipe, batch 64), and every launch reports world_size 2.
# ctest: resource=slurm_cluster
# ctest: fixture=small_data
# ctest: processors=1
set -euo pipefail
# shellcheck source=tests/lib/slurm.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup
cd "$TRAINRT_SRC"
[[ -r data/fashion-mnist.h5 ]] || fail "missing data/fashion-mnist.h5 (make data builds it)"

args=(--config jobs/fashion_mlp.ini --data.path="$SMALL_DATA" --train.epochs=1 --run.seed=11 --run.storage_path="$TEST_TMP")
declare -A digest=()
run_launcher() {  # NAME COMMAND...
  local name=$1; shift
  timeout 600 "$@" "$TRAINRT" "${args[@]}" --run.name="$name" >"$TEST_TMP/$name.out" 2>&1 \
    || fail "$name: $* exited $? ($(tail -3 "$TEST_TMP/$name.out" | tr '\n' ' '))"
  digest[$name]=$(grep -E '^weights_digest=[0-9a-f]{16}$' "$TEST_TMP/$name.out") \
    || fail "$name printed no weights_digest line"
  jq -se 'length == 1 and .[0].world_size == 2' "$TEST_TMP/$name/result.jsonl" >/dev/null \
    || fail "$name: result.jsonl is not one row with world_size 2"
  jq -r 'select(.event == "start") | .launcher' "$TEST_TMP/$name/events.jsonl" >"$TEST_TMP/$name.launcher"
  log "$name: ${digest[$name]} (launcher $(cat "$TEST_TMP/$name.launcher"))"
}
run_launcher mpiexec mpiexec -n 2
run_launcher pmix srun -n 2 --mpi=pmix
run_launcher pmi2 srun -n 2 --mpi=pmi2

[[ "$(cat "$TEST_TMP/pmix.launcher")" == pmix ]] || fail "srun --mpi=pmix did not use the PMIx launcher"
[[ "$(cat "$TEST_TMP/pmi2.launcher")" == pmi ]] || fail "srun --mpi=pmi2 did not use the PMI launcher"
[[ "${digest[mpiexec]}" == "${digest[pmix]}" && "${digest[pmix]}" == "${digest[pmi2]}" ]] \
  || fail "digests differ: mpiexec ${digest[mpiexec]}, pmix ${digest[pmix]}, pmi2 ${digest[pmi2]}"
log "all three launchers agree: ${digest[pmix]}"
