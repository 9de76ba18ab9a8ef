#!/usr/bin/env bash
# `srun --mpi=none -n 4 trainrt`: MPICH gets no PMI, so every task comes up as an MPI singleton.
# trainrt must refuse (exit 3, one line per task naming the task and how to launch instead) and
# write nothing, rather than train four separate copies into one run directory.
# ctest: resource=slurm_cluster
# ctest: processors=1
set -euo pipefail
# shellcheck source=tests/lib/slurm.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup
cd "$TRAINRT_SRC"

set +e
timeout 120 srun --mpi=none -n 4 "$TRAINRT" --config jobs/fashion_mlp.ini --train.epochs=1 \
  --run.storage_path="$TEST_TMP/runs" >"$TEST_TMP/out" 2>"$TEST_TMP/err"
rc=$?
set -e
log "srun exited $rc; stderr: $(head -c 2000 "$TEST_TMP/err")"
[[ $rc -eq 3 ]] || fail "expected exit code 3 (launch error), got $rc"
for task in 0 1 2 3; do
  grep -q "slurm started 4 tasks (this is task $task), but MPI_Init came up as a singleton.*srun --mpi=pmix" \
    "$TEST_TMP/err" || fail "no launch error line for task $task"
done
[[ $(grep -c '^\[trainrt [0-3]\] error: launch:' "$TEST_TMP/err") -eq 4 ]] || fail "expected exactly one error line per task"
[[ ! -e "$TEST_TMP/runs" ]] || fail "singletons created $TEST_TMP/runs"
! grep -q weights_digest "$TEST_TMP/out" || fail "a singleton trained anyway"
