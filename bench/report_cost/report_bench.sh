#!/usr/bin/env bash
# report() cost benchmark (bench/README.md), REPS times, interleaved:
#   1. the `reporter` test workload on RANKS ranks reports 3000 times with nothing in between
#      (6 metrics, one a tag; no checkpoints; progress off): each iteration is one full report()
#      (row, cross-rank summaries, stop agreement, result.jsonl + progress.csv + metrics.h5 with
#      its flush); the median of rank 0's _time_this_iter_s after the first 10 rows;
#   2. the baseline: one fashion_mlp epoch on the same ranks (global batch 64): train_time_s over
#      its steps per rank = the time of one training step.
# Prints one JSON line per measurement on stdout.
# Usage: bench/report_cost/report_bench.sh TRAINRT BUILD RANKS REPS STORAGE
set -euo pipefail
trainrt=$1 build=$2 ranks=$3 reps=$4 storage=$5
plugin=$build/tests/plugins/libtest_plugin_reporter.so
[[ -f $plugin ]] || { echo "report_bench: $plugin missing (cmake --build $build --target test_plugin_reporter)" >&2; exit 1; }
steps=$(( (60000 / ranks + 64 / ranks - 1) / (64 / ranks) ))
printf '[run]\nworkload = plugin:%s\n' "$plugin" >"$storage/reporter.ini"
for rep in $(seq 1 "$reps"); do
  mpiexec -n "$ranks" "$trainrt" --config "$storage/reporter.ini" --run.storage_path="$storage" --run.name="report_$rep" --train.reports=3000 --metrics.progress=off >&2
  jq -sc --argjson n "$ranks" '[.[10:][]._time_this_iter_s] | sort |
    {bench: "report", what: "report", ranks: $n, seconds: .[length / 2 | floor], p90: .[length * 0.9 | floor], rows: length}' \
    "$storage/report_$rep/result.jsonl"
  mpiexec -n "$ranks" "$trainrt" --config jobs/fashion_mlp.ini --train.epochs=1 --run.storage_path="$storage" \
    --run.name="step_$rep" --metrics.progress=off >&2
  jq -c --argjson n "$ranks" --argjson steps "$steps" 'select(.train_time_s) |
    {bench: "report", what: "fashion_step", ranks: $n, seconds: (.train_time_s / $steps), steps: $steps}' \
    "$storage/step_$rep/result.jsonl"
done
