#!/usr/bin/env bash
# The job of test_user_environments.sh under sbatch on the local cluster (2 tasks, srun --mpi=pmix,
# trainrt from the install): in trainrt's own environment (A) and in a user's environment of another
# CPython and torch with its own build of trainrt's package (B, activated: VIRTUAL_ENV), each with
# scaling.backend = trainrt; and B's interpreter itself as the ranks (`srun python3 job.py`).
# ctest: resource=slurm_cluster
# ctest: fixture=user_environment
# ctest: fixture=trainrt_installed
# ctest: processors=1
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup
ENVA=$(dirname "$(dirname "$TRAINRT_PYTHON")")
ENVB=${TRAINRT_USER_ENV:-/opt/trainrt-deps/user-py312}
PREFIX=$TRAINRT_BUILD/test-install/prefix
sed -n '/^import sys$/,$p' "$TRAINRT_SRC/tests/python/test_user_environments.sh" | sed '/^PY$/,$d' >"$TEST_TMP/job.py"
grep -q 'dist.all_reduce' "$TEST_TMP/job.py" || fail "could not take the job from test_user_environments.sh"
RUN="--scaling.backend=trainrt --run.storage_path=$TEST_TMP/runs --metrics.progress=off"
versions() { "$1/bin/python3" -c 'import sys, torch; print(f"{sys.version_info.major}.{sys.version_info.minor}", torch.__version__.split("+")[0])'; }
check() {
  local row want
  row=$(jq -r '"\(.python) \(.torch) \(.backend) \(.sum) \(.prefix)"' "$TEST_TMP/runs/$1/result.jsonl" 2>/dev/null || true)
  want="$(versions "$2") trainrt 3 $2"
  [[ "$row" == "$want" ]] || { job_diagnostics "$JOB"; fail "$1: '$row', wanted '$want'"; }
  log "$1: $row"
}
cat >"$TEST_TMP/own.sbatch" <<SB
#!/bin/bash
srun --mpi=pmix $PREFIX/bin/trainrt --run.workload=python:$TEST_TMP/job.py:train $RUN --run.name=\$1
SB
submit -n 2 --output="$TEST_TMP/own.out" --export=ALL,TRAINRT_PYTHON=,VIRTUAL_ENV= "$TEST_TMP/own.sbatch" own
wait_job "$JOB" 300; expect_job_ok "$JOB"; check own "$ENVA"
submit -n 2 --output="$TEST_TMP/venv.out" --export=ALL,TRAINRT_PYTHON=,VIRTUAL_ENV="$ENVB" "$TEST_TMP/own.sbatch" venv
wait_job "$JOB" 300; expect_job_ok "$JOB"; check venv "$ENVB"
submit -n 2 --output="$TEST_TMP/script.out" --export=ALL,TRAINRT_PYTHON=,VIRTUAL_ENV=,PYTHONPATH="$PREFIX/lib/trainrt/python" \
  --wrap "srun --mpi=pmix $ENVB/bin/python3 $TEST_TMP/job.py $RUN --run.name=script"
wait_job "$JOB" 300; expect_job_ok "$JOB"; check script "$ENVB"
log "sbatch: environment A ($(versions "$ENVA")) and B ($(versions "$ENVB")), trainrt backend"
