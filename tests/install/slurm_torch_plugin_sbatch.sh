#!/usr/bin/env bash
# The LibTorch example plugin (examples/torch_model), built out of tree against the install
# (fixture install.setup), as a batch job with its own sbatch file and trainrt from the install's
# bin/ on PATH, as after `module load trainrt`. Requeued mid-epoch with `scontrol requeue`, it
# stops, comes back, resumes and ends with the same weights as an uninterrupted mpiexec run.
# ctest: fixture=trainrt_installed
# ctest: resource=slurm_cluster
# ctest: processors=1
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup

prefix=$TRAINRT_BUILD/test-install/prefix
plugin=$TRAINRT_BUILD/test-install/torch_example/libtorch_model.so
[[ -x $prefix/bin/trainrt && -f $plugin ]] || fail "no installed trainrt or LibTorch example plugin (install.setup fixture)"
[[ -r $TRAINRT_SRC/data/fashion-mnist.h5 ]] || fail "missing data/fashion-mnist.h5 (make data builds it)"
example=$TEST_TMP/torch_model
cp -r "$prefix/share/trainrt/examples/torch_model" "$example"
mkdir -p "$example/build"
cp "$plugin" "$example/build/"
ln -s "$TRAINRT_SRC/data/fashion-mnist.h5" "$example/fashion-mnist.h5"
common="--train.epochs=1 --train.batch_size=256 --train.report_every=20 --metrics.progress=off"

# shellcheck disable=SC2086
run_ok 300 "$TEST_TMP/reference.out" env -C "$example" mpiexec -n 2 "$prefix/bin/trainrt" --config torch_model.ini \
  --run.workload="plugin:$example/build/libtorch_model.so" $common --run.storage_path="$TEST_TMP/runs" --run.name=reference
ref=$(sed -n 's/^torch_model_digest=//p' "$TEST_TMP/reference.out")
[[ -n "$ref" ]] || fail "no digest from the reference run"

out=$TEST_TMP/torch_model.out
run_dir=$TEST_TMP/runs/torch_model
(
  cd "$example"
  export PATH="$prefix/bin:$PATH" TRAINRT_ARGS="$common --run.storage_path=$TEST_TMP/runs"
  submit --output="$out" torch_model.sbatch
  echo "$JOB" >"$TEST_TMP/job"
)
JOB=$(cat "$TEST_TMP/job")
TEST_JOBS+=("$JOB")
wait_start "$run_dir" 0
wait_rows "$run_dir" 2 300
timeout 20 scontrol requeue "$JOB" || fail "scontrol requeue $JOB failed"
wait_job "$JOB" 600
expect_job_ok "$JOB"
[[ "$(count_events "$run_dir" '.event == "stop"')" == 1 && "$(count_events "$run_dir" '.event == "restore"')" == 1 ]] \
  || fail "expected one stop and one restore: $(jq -c '{event, step}' "$run_dir/events.jsonl")"
got=$(sed -n 's/^torch_model_digest=//p' "$out" | tail -1)
[[ "$got" == "$ref" ]] || fail "digest after the requeue $got != uninterrupted $ref"
log "LibTorch plugin job $JOB: requeued mid-epoch, resumed, digest $got as uninterrupted"
