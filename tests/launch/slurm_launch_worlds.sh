#!/usr/bin/env bash
# launch_probe under every way Slurm starts tasks: the launcher's view and MPI's view must agree
# under srun --mpi=pmix and --mpi=pmi2 (plain srun, inside salloc, inside an sbatch job); under
# --mpi=none MPICH has no PMI and every task is an MPI singleton, and the probe must show that
# mismatch (launcher: rank r of 2; MPI: rank 0 of 1) so trainrt's comm layer can refuse it.
# ctest: resource=slurm_cluster
# ctest: processors=1
set -euo pipefail
# shellcheck source=tests/lib/slurm.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup

PROBE=$TRAINRT_BUILD/launch_probe
[[ -x "$PROBE" ]] || fail "$PROBE not built (cmake --build $TRAINRT_BUILD --target launch_probe)"

# Checks the probe's JSON lines in FILE: N ranks, launcher LAUNCHER, both views the same world.
expect_world() {
  local file=$1 n=$2 launcher=$3 what=$4 bad
  jq -e . "$file" >/dev/null 2>&1 || fail "$what: output is not JSON lines: $(cat "$file")"
  [[ $(jq -s length "$file") == "$n" ]] || fail "$what: expected $n JSON lines, got: $(cat "$file")"
  bad=$(jq -c --argjson n "$n" --arg launcher "$launcher" '
      select(.launcher != $launcher or .launcher_size != $n or .mpi_size != $n
             or .mpi_rank != .launcher_rank or .local_rank != .launcher_rank or .local_size != $n
             or .allreduce_sum != ($n * ($n - 1) / 2))' "$file")
  [[ -z "$bad" ]] || fail "$what: ranks that disagree (want launcher=$launcher, size $n,
  mpi_rank == launcher_rank == local_rank, local_size $n, allreduce_sum $((n * (n - 1) / 2))):
$bad
all lines:
$(cat "$file")"
  jq -se --argjson n "$n" '[.[].mpi_rank] | sort == [range(0; $n)]' "$file" >/dev/null \
    || fail "$what: MPI ranks are not 0..$((n - 1)) once each: $(jq -sc '[.[].mpi_rank]' "$file")"
  [[ $(jq -r .host "$file" | sort -u | wc -l) == 1 ]] || fail "$what: more than one host"
  log "$what: $n ranks agree (launcher $launcher)"
}

# --- pmix ------------------------------------------------------------------------------------
run_ok 120 "$TEST_TMP/pmix-srun.jsonl" srun --mpi=pmix -n 4 --time=2 "$PROBE"
expect_world "$TEST_TMP/pmix-srun.jsonl" 4 pmix "srun --mpi=pmix -n 4"

cat >"$TEST_TMP/probe.sbatch" <<EOF
#!/bin/bash
#SBATCH --ntasks=4 --time=2
srun --mpi=pmix -n 4 "$PROBE"
EOF
submit --output="$TEST_TMP/pmix-sbatch.jsonl" --error="$TEST_TMP/pmix-sbatch.err" "$TEST_TMP/probe.sbatch"
wait_job "$JOB" 120
expect_job_ok "$JOB"
expect_world "$TEST_TMP/pmix-sbatch.jsonl" 4 pmix "sbatch: srun --mpi=pmix -n 4"

# --- pmi2 ------------------------------------------------------------------------------------
run_ok 120 "$TEST_TMP/pmi2-srun.jsonl" srun --mpi=pmi2 -n 4 --time=2 "$PROBE"
expect_world "$TEST_TMP/pmi2-srun.jsonl" 4 pmi "srun --mpi=pmi2 -n 4"

# shellcheck disable=SC2016
run_ok 120 "$TEST_TMP/pmi2-salloc.out" salloc -n 4 --time=2 \
  bash -c 'srun --mpi=pmi2 -n 4 "$1" >"$2"' bash "$PROBE" "$TEST_TMP/pmi2-salloc.jsonl"
expect_world "$TEST_TMP/pmi2-salloc.jsonl" 4 pmi "salloc: srun --mpi=pmi2 -n 4"

# --- none: every task an MPI singleton ---------------------------------------------------------
run_ok 120 "$TEST_TMP/none.jsonl" srun --mpi=none -n 2 --time=2 "$PROBE"
jq -e . "$TEST_TMP/none.jsonl" >/dev/null 2>&1 || fail "--mpi=none: not JSON lines: $(cat "$TEST_TMP/none.jsonl")"
[[ $(jq -s length "$TEST_TMP/none.jsonl") == 2 ]] || fail "--mpi=none: expected 2 lines: $(cat "$TEST_TMP/none.jsonl")"
jq -se '[.[].launcher_rank] | sort == [0, 1]' "$TEST_TMP/none.jsonl" >/dev/null \
  || fail "--mpi=none: the launcher did not see ranks 0 and 1: $(cat "$TEST_TMP/none.jsonl")"
bad=$(jq -c 'select(.launcher != "slurm" or .launcher_size != 2 or .local_rank != .launcher_rank
                    or .mpi_rank != 0 or .mpi_size != 1 or .allreduce_sum != 0)' "$TEST_TMP/none.jsonl")
[[ -z "$bad" ]] || fail "--mpi=none: expected launcher slurm (rank r of 2) and MPI singletons (0 of 1), got:
$bad"
log "srun --mpi=none -n 2: launcher sees 2 ranks, MPI sees singletons (the mismatch is visible)"
