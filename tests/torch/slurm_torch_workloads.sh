#!/usr/bin/env bash
# LibTorch workloads on the real cluster: torch_fashion_mlp with the same seed prints the same
# weights digest under `mpiexec -n 2`, `srun --mpi=pmix` and `srun --mpi=pmi2`; a 4-task sbatch job
# of torch_fashion_cnn, requeued twice while it trains, finishes bitwise identical to an
# uninterrupted 4-rank run.
# ctest: resource=slurm_cluster
# ctest: fixture=small_data
# ctest: processors=1
set -euo pipefail
# shellcheck source=tests/lib/slurm.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/slurm.sh"
slurm_setup
cd "$TRAINRT_SRC"
[[ -r data/fashion-mnist.h5 ]] || fail "missing data/fashion-mnist.h5 (make data builds it)"

mlp=(--config jobs/fashion_mlp.ini --data.path="$SMALL_DATA" --run.workload=torch_fashion_mlp --train.epochs=1 --train.batch_size=256
     --run.seed=5 --metrics.progress=off --run.storage_path="$TEST_TMP/runs")
declare -A digest=()
for launch in "mpiexec -n 2" "srun -n 2 --mpi=pmix" "srun -n 2 --mpi=pmi2"; do
  name=$(tr -c 'a-z0-9' '_' <<<"$launch")
  # shellcheck disable=SC2086
  run_ok 300 "$TEST_TMP/$name.out" $launch "$TRAINRT" "${mlp[@]}" --run.name="$name"
  digest[$name]=$(digest_in "$TEST_TMP/$name.out")
  [[ "${digest[$name]}" =~ ^[0-9a-f]{16}$ ]] || fail "$launch printed no digest"
  log "$launch: ${digest[$name]}"
done
[[ $(printf '%s\n' "${digest[@]}" | sort -u | wc -l) == 1 ]] || fail "launchers disagree: ${digest[*]}"

# The small dataset: 24 steps of batch 256 per epoch, a checkpoint (and a row) every 3.
cnn="--data.path=$SMALL_DATA --run.workload=torch_fashion_cnn --train.epochs=2 --train.batch_size=256 --checkpoint.every_steps=3 --metrics.progress=off"
# shellcheck disable=SC2086
run_ok 600 "$TEST_TMP/cnn_reference.out" mpiexec -n 4 "$TRAINRT" --config jobs/fashion_mlp.ini $cnn \
  --run.storage_path="$TEST_TMP/runs" --run.name=cnn_reference
BASE=$(digest_in "$TEST_TMP/cnn_reference.out")
submit_fashion cnn jobs/fashion_mlp.sbatch "$cnn" --ntasks=4
for restart in 0 1; do
  wait_start "$RUN" "$restart"
  before=$(rows "$RUN")
  wait_rows "$RUN" $((before + 2)) 300
  timeout 20 scontrol requeue "$JOB" || fail "scontrol requeue $JOB failed"
  log "requeued the CNN job $JOB during restart $restart at row $(rows "$RUN")"
done
wait_job "$JOB" 600
expect_job_ok "$JOB"
[[ "$(job_field "$JOB" Restarts)" == 2 ]] || fail "job $JOB Restarts=$(job_field "$JOB" Restarts), expected 2"
[[ "$(count_events "$RUN" '.event == "restore"')" == 2 ]] || fail "expected 2 restore events"
jq -e -s '[.[] | select(.event == "start") | .world_size] | all(. == 4)' "$RUN/events.jsonl" >/dev/null \
  || fail "not every attempt ran on 4 ranks"
got=$(digest_in "$OUT")
[[ "$got" == "$BASE" ]] || fail "CNN digest after two requeues $got != uninterrupted $BASE"
log "torch_fashion_cnn on 4 tasks, requeued twice: same digest $got as uninterrupted"
