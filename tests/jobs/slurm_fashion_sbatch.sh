#!/usr/bin/env bash
# jobs/fashion_mlp.sbatch as a user submits it, shortened through its TRAINRT_ARGS hook, once with
# srun --mpi=pmix and once with --mpi=pmi2: each job COMPLETED with exit code 0:0, wrote its
# result.jsonl with one row per epoch, and both trained bitwise-identical weights (same
# weights_digest line).
#
# TRAINRT_TEST_FASHION_ARGS overrides the shortening (default: one epoch, batch size 256);
# TRAINRT_TEST_JOB_TIMEOUT bounds each job in seconds (default 400; ctest gives the test 900).
# ctest: resource=slurm_cluster
# ctest: fixture=small_data
# ctest: processors=1
set -euo pipefail
# shellcheck source=tests/lib/slurm.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup

[[ -x "$TRAINRT" ]] || fail "trainrt binary '$TRAINRT' not found or not executable"
[[ -r "$TRAINRT_SRC/jobs/fashion_mlp.sbatch" ]] || fail "missing $TRAINRT_SRC/jobs/fashion_mlp.sbatch"
[[ -r "$TRAINRT_SRC/jobs/fashion_mlp.ini" ]] || fail "missing $TRAINRT_SRC/jobs/fashion_mlp.ini"
[[ -r "$TRAINRT_SRC/data/fashion-mnist.h5" ]] \
  || fail "missing $TRAINRT_SRC/data/fashion-mnist.h5 (make data builds it)"

short_args=${TRAINRT_TEST_FASHION_ARGS:---train.epochs=1 --train.batch_size=256 --data.path=$SMALL_DATA}
job_timeout=${TRAINRT_TEST_JOB_TIMEOUT:-400}
epochs=$(sed -n 's/.*--train\.epochs=\([0-9]\+\).*/\1/p' <<<"$short_args")
[[ -n "$epochs" ]] || fail "TRAINRT_TEST_FASHION_ARGS must set --train.epochs=N (got '$short_args')"

declare -A digest=()
for mpi in pmix pmi2; do
  out=$TEST_TMP/fashion-$mpi-%j.out
  # The job inherits this environment (sbatch's default --export=ALL): the sbatch file reads
  # TRAINRT, TRAINRT_SRUN_MPI and TRAINRT_ARGS from it. Submitted from the source dir, where
  # jobs/fashion_mlp.ini and data/ are found.
  (
    cd "$TRAINRT_SRC"
    export TRAINRT TRAINRT_SRUN_MPI=$mpi
    export TRAINRT_ARGS="$short_args --run.storage_path=$TEST_TMP/runs --run.name=$mpi"
    submit --output="$out" jobs/fashion_mlp.sbatch
    echo "$JOB" >"$TEST_TMP/job-$mpi"
  )
  JOB=$(cat "$TEST_TMP/job-$mpi")
  TEST_JOBS+=("$JOB")
  out=${out//%j/$JOB}
  wait_job "$JOB" "$job_timeout"
  expect_job_ok "$JOB"
  log "--mpi=$mpi: job $JOB COMPLETED 0:0 (RunTime $(job_field "$JOB" RunTime))"

  [[ -r "$out" ]] || fail "job $JOB left no output file $out"
  grep -q "srun --mpi=$mpi " "$out" || fail "job $JOB did not run srun --mpi=$mpi (see $out)"
  grep -q 'srun exited with status 0' "$out" || fail "job $JOB: srun did not exit 0 (see $out)"
  lines=$(grep -c '^weights_digest=' "$out" || true)
  [[ "$lines" == 1 ]] || fail "job $JOB printed $lines weights_digest lines, expected 1 (rank 0 only)"
  digest[$mpi]=$(grep '^weights_digest=' "$out")
  [[ "${digest[$mpi]}" =~ ^weights_digest=[0-9a-f]{16}$ ]] || fail "job $JOB: malformed '${digest[$mpi]}'"

  result=$TEST_TMP/runs/$mpi/result.jsonl
  [[ -s "$result" ]] || fail "job $JOB wrote no $result"
  jq -e . "$result" >/dev/null || fail "$result is not JSON lines"
  jq -se --argjson e "$epochs" '[.[] | select(has("epoch")) | .epoch] == [range(1; $e + 1)]' "$result" \
    >/dev/null || fail "$result: epoch rows are $(jq -sc '[.[].epoch]' "$result"), expected 1..$epochs"
  jq -se 'all(.[]; (.loss | type) == "number" and .world_size == 4)' "$result" >/dev/null \
    || fail "$result: rows lack a numeric loss or world_size 4: $(cat "$result")"
  log "--mpi=$mpi: ${digest[$mpi]}, $epochs epoch row(s) in $result"
done

[[ "${digest[pmix]}" == "${digest[pmi2]}" ]] \
  || fail "pmix and pmi2 trained different weights: ${digest[pmix]} vs ${digest[pmi2]}"
log "pmix and pmi2 agree: ${digest[pmix]}"
