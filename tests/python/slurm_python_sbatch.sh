#!/usr/bin/env bash
# A Python training function on Slurm (examples/python/fashion_mnist.py, Ray's FashionMNIST recipe
# in PyTorch): the example's sbatch file (4 tasks, srun --mpi=pmix; 8 epochs) requeued twice with
# `scontrol requeue` stops in the middle of the epoch each time, resumes, and ends with the weights
# digest of an uninterrupted `srun -n 4 --mpi=pmi2` run; result rows once each (that every launcher
# gives one digest: launch.slurm_digest_launchers). On the
# small dataset's IDX files (6000 training images: 24 steps an epoch, a stop check every 4).
# Ray's quickstart after `sed s/ray.train/trainrt/g` (tests/python/ray_quickstart.py) on the cluster:
# `srun -n 2 --mpi=pmix python3 train.py` (fit() on srun's ranks) and `sbatch -n 2 --wrap "python3 train.py"`
# (fit() in the batch script starts its 2 ranks with srun, the driver alone prints the Result).
# `scancel --batch --signal=USR2` to a batch script that execs the driver (a preemption notice to the
# batch step alone): the driver passes it on through srun, the ranks stop with a checkpoint and rank 0
# requeues the job, which resumes and completes with every epoch once and one driver Result.
# ctest: resource=slurm_cluster
# ctest: fixture=small_data
# ctest: processors=1
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup
cd "$TRAINRT_SRC"
require_small_data
small=(--train.data_dir="$SMALL_IDX" --train.epochs=8 --train.batch_size=256 --train.check_every=4)
args=(--config examples/python/fashion_mnist.ini "${small[@]}"
      --metrics.progress=off --failure.collective_timeout=120 --run.storage_path="$TEST_TMP/runs")
run_ok 300 "$TEST_TMP/pmi2.out" srun -n 4 --mpi=pmi2 "$TRAINRT" "${args[@]}" --run.name=pmi2
BASE=$(digest_in "$TEST_TMP/pmi2.out")
[[ "$BASE" =~ ^[0-9a-f]{16}$ ]] || fail "no weights digest from srun -n 4 --mpi=pmi2"
log "srun -n 4 --mpi=pmi2, uninterrupted: $BASE"

export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python" QUICKSTART_DATA="$SMALL_IDX" QUICKSTART_RUNS="$TEST_TMP/runs"
sed 's/ray\.train/trainrt/g' tests/python/ray_quickstart.py >"$TEST_TMP/train.py"
run_ok 300 "$TEST_TMP/quick_srun.out" srun -n 2 --mpi=pmix "$TRAINRT_PYTHON" "$TEST_TMP/train.py" --run.name=quick_srun
[[ "$(grep -c '^driver: .*2 checkpoints, epoch 1' "$TEST_TMP/quick_srun.out")" == 2 ]] \
  || fail "srun -n 2 python3 train.py: $(tail -3 "$TEST_TMP/quick_srun.out")"
submit -n 2 --output="$TEST_TMP/quick_sbatch.out" --wrap "$TRAINRT_PYTHON $TEST_TMP/train.py --run.name=quick_sbatch"
wait_job "$JOB" 300
expect_job_ok "$JOB"
[[ "$(grep -c '^driver: .*2 checkpoints, epoch 1' "$TEST_TMP/quick_sbatch.out")" == 1 ]] \
  && [[ "$(jq -r 'select(.event == "start") | "\(.world_size) \(.launcher)"' "$TEST_TMP/runs/quick_sbatch/events.jsonl")" == "2 "* ]] \
  || fail "sbatch --wrap 'python3 train.py': $(tail -3 "$TEST_TMP/quick_sbatch.out")"
log "the Ray quickstart: srun -n 2 python3 train.py and sbatch --wrap 'python3 train.py' (fit() starts srun) trained"

USR2_RUN=$TEST_TMP/runs/usr2_batch
submit -n 2 --requeue --open-mode=append --output="$TEST_TMP/usr2_batch.out" \
  --wrap "exec env RUNS=$TEST_TMP/runs RUN_NAME=usr2_batch SLEEP_S=0.5 $TRAINRT_PYTHON $TRAINRT_SRC/tests/python/interrupt_driver.py"
wait_rows "$USR2_RUN" 2
timeout 20 scancel --batch --signal=USR2 "$JOB" || fail "scancel --batch --signal=USR2 $JOB failed"
wait_job "$JOB" 300
expect_job_ok "$JOB"
[[ "$(count_events "$USR2_RUN" '.event == "stop" and .signal == "USR2"')" == 1 \
   && "$(count_events "$USR2_RUN" '.event == "restore"')" == 1 \
   && "$(grep -c '^driver: finished at epoch 12' "$TEST_TMP/usr2_batch.out")" == 1 ]] \
  || fail "scancel --batch --signal=USR2: $(jq -c '{event, signal}' "$USR2_RUN/events.jsonl" | tr '\n' ' ') $(tail -5 "$TEST_TMP/usr2_batch.out")"
rows_once "$USR2_RUN"
log "scancel --batch --signal=USR2 to an exec'd driver: stopped, requeued, resumed, $(rows "$USR2_RUN") rows once each"

example=$TEST_TMP/example
cp -r examples/python "$example"
OUT=$TEST_TMP/sbatch.out
RUN=$TEST_TMP/runs/sbatch
export TRAINRT PATH="$TRAINRT_SRC/slurm:$PATH"
export TRAINRT_ARGS="${small[*]} --metrics.progress=off --failure.collective_timeout=120 --run.storage_path=$TEST_TMP/runs --run.name=sbatch"
(cd "$example" && submit --output="$OUT" fashion_mnist.sbatch && echo "$JOB" >"$TEST_TMP/job")
JOB=$(cat "$TEST_TMP/job")
TEST_JOBS+=("$JOB")
# first_steps: runs so far that reached their first step (Slurm appends to $OUT: never rewrite it)
first_steps() { grep -c "first step .* after process start" "$OUT" || true; }
for restart in 0 1; do
  wait_start "$RUN" "$restart"
  deadline=$((SECONDS + 180))
  until (( $(first_steps) > restart )); do
    ((SECONDS < deadline)) || fail "run $restart of job $JOB did not reach its first step in 180 s"
    sleep 0.2
  done
  # At once: an epoch takes a fraction of a second here, and the requeue must land mid-run.
  timeout 20 scontrol requeue "$JOB" || fail "scontrol requeue $JOB failed"
  log "requeued job $JOB during restart $restart"
done
wait_job "$JOB" 400
expect_job_ok "$JOB"
[[ "$(count_events "$RUN" '.event == "stop"')" == 2 && "$(count_events "$RUN" '.event == "restore"')" == 2 ]] \
  || fail "expected two stops and two restores: $(jq -c '{event, step}' "$RUN/events.jsonl" | tr '\n' ' ')"
rows_once "$RUN"
got=$(digest_in "$OUT")
[[ "$got" == "$BASE" ]] || fail "digest after two requeues $got != uninterrupted $BASE"
log "Python job $JOB: requeued twice mid-epoch, $(rows "$RUN") rows once each, digest $got as uninterrupted"
