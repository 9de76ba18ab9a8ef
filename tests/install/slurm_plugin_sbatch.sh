#!/usr/bin/env bash
# The example plugin, built out of tree against the installed trainrt (fixture install.setup), as
# a batch job on the local cluster with its own sbatch file (examples/regression/regression.sbatch,
# installed copy): trainrt and trainrt-srun come from the install's bin/ on PATH, as after
# `module load trainrt`. Requeued once mid-run with `scontrol requeue`: it stops, comes back,
# resumes from its checkpoint and ends with the same weights as an uninterrupted mpiexec run.
# ctest: fixture=trainrt_installed
# ctest: resource=slurm_cluster
# ctest: processors=1
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup

prefix=$TRAINRT_BUILD/test-install/prefix
plugin=$TRAINRT_BUILD/test-install/example/libregression.so
[[ -x $prefix/bin/trainrt && -f $plugin ]] || fail "no installed trainrt or example plugin (install.setup fixture)"
example=$TEST_TMP/regression
cp -r "$prefix/share/trainrt/examples/regression" "$example"
mkdir -p "$example/build"
cp "$plugin" "$example/build/"
args="--train.epochs=8 --train.step_delay_ms=1 --run.storage_path=$TEST_TMP/runs"

run_ok 120 "$TEST_TMP/reference.out" env -C "$example" mpiexec -n 2 "$prefix/bin/trainrt" --config regression.ini \
  --run.workload="plugin:$example/build/libregression.so" --train.epochs=8 --run.storage_path="$TEST_TMP/runs" --run.name=reference
ref=$(sed -n 's/^regression_digest=//p' "$TEST_TMP/reference.out")
[[ -n "$ref" ]] || fail "no digest from the reference run"

out=$TEST_TMP/regression.out
run_dir=$TEST_TMP/runs/regression
(
  cd "$example"
  export PATH="$prefix/bin:$PATH" TRAINRT_ARGS="$args"
  submit --output="$out" regression.sbatch
  echo "$JOB" >"$TEST_TMP/job"
)
JOB=$(cat "$TEST_TMP/job")
TEST_JOBS+=("$JOB")
wait_start "$run_dir" 0
wait_rows "$run_dir" 2
timeout 20 scontrol requeue "$JOB" || fail "scontrol requeue $JOB failed"
wait_job "$JOB" 300
expect_job_ok "$JOB"
[[ "$(count_events "$run_dir" '.event == "stop"')" == 1 && "$(count_events "$run_dir" '.event == "restore"')" == 1 ]] \
  || fail "expected one stop and one restore: $(jq -c '{event, step}' "$run_dir/events.jsonl")"
jq -e -s '.[0].workload | startswith("plugin:")' "$run_dir/events.jsonl" >/dev/null || fail "start event does not name the plugin"
got=$(sed -n 's/^regression_digest=//p' "$out" | tail -1)
[[ "$got" == "$ref" ]] || fail "digest after the requeue $got != uninterrupted $ref"
rows_once "$run_dir"
log "plugin job $JOB: requeued, resumed, digest $got as uninterrupted"
