#!/usr/bin/env bash
# The same sweep two ways on the local 3-node cluster (issue 29): TRIALS trials of fashion_mlp (the
# full FashionMNIST set, random search over train.lr and train.batch_size, EPOCHS epochs each, 2
# ranks per trial, FIFO) as
#   - `trainrt tune` in one allocation of 3 nodes x 2 tasks: 3 trials at once, each a step on a node
#     of its own;
#   - a Slurm job array of TRIALS jobs of 1 node x 2 tasks (`sbatch --array=0-N%3`: 3 at once, the
#     sweep's resources), each task one trial (`srun --mpi=pmix trainrt` with the values the sweep
#     drew);
# alternated REPEAT times, each timed from its submission to the last trial's finish record. Writes
# one JSON object: each pair's wall times and their ratio, and how long trials waited to start.
#
#   bash bench/tune/job_array_bench.sh [OUT.json]      # root; `make bench-tune-array`
#
# Environment: ARRAY_TRIALS (16), ARRAY_EPOCHS (2), ARRAY_REPEAT (2), BUILD (build). Starts the
# local cluster when it is not up, and stops it again then. The cluster here schedules at once
# (no other users): a real queue's wait comes on top of every array job's start, never the sweep's.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
OUT=${1:-bench/results/tune/job_array.json}
TRIALS=${ARRAY_TRIALS:-16}
EPOCHS=${ARRAY_EPOCHS:-2}
REPEAT=${ARRAY_REPEAT:-2}
BUILD=${BUILD:-build}
TRAINRT=$repo/$BUILD/trainrt
DATA=$repo/data/fashion-mnist.h5
say() { printf 'job_array_bench %s: %s\n' "$(date +%T)" "$*" >&2; }
die() { say "$*"; exit 1; }

[[ -x $TRAINRT ]] || die "no $TRAINRT: build first (make build, or BUILD=...)"
[[ -r $DATA ]] || die "no $DATA: make data"
# shellcheck source=bench/lib/local_cluster.sh
source "$repo/bench/lib/local_cluster.sh"
bench_cluster_up
WORK=$(mktemp -d /tmp/trainrt-array.XXXXXX)
chmod 0755 "$WORK"
JOBS=()
cleanup() {
  for job in "${JOBS[@]}"; do scancel "$job" 2>/dev/null || true; done
  bench_cluster_down
}
trap cleanup EXIT
COMMON="--data.path=$DATA --train.epochs=$EPOCHS --metrics.progress=off"
cat >"$WORK/sweep.ini" <<INI
[tune]
base = $repo/jobs/fashion_mlp.ini
metric = test_accuracy
mode = max
num_samples = $TRIALS
ranks_per_trial = 2
search = random
scheduler = fifo
[space]
train.lr = loguniform(1e-3, 1e-1)
train.batch_size = choice(64, 128, 256)
INI

now() { date +%s.%N; }
# wait_gone JOB...: until none of the jobs is in the queue.
wait_gone() {
  while [[ -n "$(squeue -h -j "$(IFS=,; echo "$*")" -o %i 2>/dev/null)" ]]; do sleep 0.5; done
}
finish_ms() {  # DIR: the latest finish record of DIR/*/events.jsonl, seconds since the epoch
  cat "$1"/*/events.jsonl | jq -r 'select(.event == "finish") | .time' | sort | tail -1 | xargs -I{} date -d {} +%s.%N
}
# timing DIR T0 NAME: writes $WORK/NAME.timing: wall (T0 -> the last finish), first (T0 -> the first
# trial's start record) and busy (the trials' start -> finish records, added up), in seconds.
timing() {
  local first last busy
  first=$(cat "$1"/*/events.jsonl | jq -r 'select(.event == "start") | .time' | sort | head -1 | xargs -I{} date -d {} +%s.%N)
  last=$(finish_ms "$1")
  busy=0
  for events in "$1"/*/events.jsonl; do
    busy=$(jq -r 'select(.event == "start" or .event == "finish") | .time' "$events" | xargs -I{} date -d {} +%s.%N |
      awk -v b="$busy" 'NR == 1 {s = $1} {e = $1} END {print b + e - s}')
  done
  awk -v t0="$2" -v f="$first" -v l="$last" -v b="$busy" 'BEGIN {printf "{\"wall_s\": %.3f, \"first_start_s\": %.3f, \"busy_s\": %.3f}\n", l - t0, f - t0, b}' \
    >"$WORK/$3.timing"
}

# sweep I: trainrt tune in one allocation; its timing in $WORK/tune_I.timing.
sweep() {
  local dir=$WORK/tune_$1 t0 job
  t0=$(now)
  job=$(sbatch --parsable -p multi -N 3 --ntasks-per-node=2 --output="$WORK/tune_$1.out" \
    --wrap "$TRAINRT tune --config $WORK/sweep.ini $COMMON --run.storage_path=$WORK --run.name=tune_$1")
  JOBS+=("$job")
  wait_gone "$job"
  [[ "$(jq -r '[.trials[].status] | unique | join(",")' "$dir/sweep.json")" == TERMINATED ]] \
    || die "sweep $1: $(jq -c '[.trials[].status]' "$dir/sweep.json"); $(tail -3 "$WORK/tune_$1.out")"
  timing "$dir" "$t0" "tune_$1"
}

# array I: the same trials as a job array; its timing in $WORK/array_I.timing.
array() {
  local dir=$WORK/array_$1 t0 job
  mkdir -p "$dir"
  t0=$(now)
  job=$(sbatch --parsable -p multi -N 1 -n 2 --array=0-$((TRIALS - 1))%3 --output="$WORK/array_$1_%a.out" \
    --wrap "args=\$(sed -n \"\$((SLURM_ARRAY_TASK_ID + 1))p\" $WORK/trial_args); \
exec srun --mpi=pmix $TRAINRT --config $repo/jobs/fashion_mlp.ini $COMMON \$args \
--run.storage_path=$dir --run.name=trial_\$(printf %04d \$SLURM_ARRAY_TASK_ID)")
  JOBS+=("$job")
  wait_gone "$job"
  local done_trials
  done_trials=$(cat "$dir"/*/events.jsonl | jq -s 'map(select(.event == "finish")) | length')
  ((done_trials == TRIALS)) || die "array $1: $done_trials of $TRIALS trials finished ($(tail -3 "$WORK"/array_"$1"_0.out))"
  timing "$dir" "$t0" "array_$1"
}

pairs=()
for i in $(seq 1 "$REPEAT"); do
  say "pair $i: trainrt tune ($TRIALS trials, 3 at once)"
  sweep "$i"
  if [[ $i == 1 ]]; then  # the array runs the values the sweep drew
    jq -r '.trials[] | .values | to_entries | map("--\(.key)=\(.value)") | join(" ")' "$WORK/tune_1/sweep.json" >"$WORK/trial_args"
  fi
  say "pair $i: job array ($TRIALS jobs)"
  array "$i"
  say "pair $i: tune $(cat "$WORK/tune_$i.timing"), array $(cat "$WORK/array_$i.timing")"
  pairs+=("{\"tune\": $(cat "$WORK/tune_$i.timing"), \"array\": $(cat "$WORK/array_$i.timing")}")
done
mkdir -p "$(dirname "$OUT")"
jq -n --argjson trials "$TRIALS" --argjson epochs "$EPOCHS" --argjson pairs "[$(IFS=,; echo "${pairs[*]}")]" \
  --arg when "$(date -u +%FT%TZ)" --arg cpu "$(lscpu | sed -n 's/^Model name: *//p' | head -1)" \
  '{trials: $trials, epochs: $epochs, ranks_per_trial: 2, at_once: 3,
    pairs: ($pairs | map(. + {ratio: (.tune.wall_s / .array.wall_s)})), when: $when, cpu: $cpu}' >"$OUT"
cat "$OUT"
