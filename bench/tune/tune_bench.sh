#!/usr/bin/env bash
# The sweep benchmark (bench/run.sh, part "tune"), under mpiexec on this machine: an ASHA sweep of
# fashion_mlp on DATA (1 rank per trial, 2 at once, rungs at epochs 1, 3, 9), then
# random search (FIFO) given the same budget: as many full-length (9-epoch) trials as ASHA's
# epochs allow, same seed and space. bench/tune/report.py reads both sweep directories.
#   bash bench/tune/tune_bench.sh TRAINRT DATA WORKDIR OUT.json [TRIALS]
set -euo pipefail
TRAINRT=$1 DATA=$2 WORK=$3 OUT=$4 TRIALS=${5:-32}
source "$(dirname "${BASH_SOURCE[0]}")/../lib/machine.sh"
PY=$(build_python "$(dirname "$TRAINRT")")
rm -rf "${WORK:?}/asha" "${WORK:?}/random"
mkdir -p "$WORK"
common=(--data.path="$DATA" --run.storage_path="$WORK" --ranks 2 --tune.ranks_per_trial=1 --tune.max_concurrent_trials=2)
start=$("$PY" -c 'import time; print(time.time())')
"$TRAINRT" tune --config jobs/fashion_mlp_sweep.ini "${common[@]}" --run.name=asha --tune.num_samples="$TRIALS" >&2
asha_end=$("$PY" -c 'import time; print(time.time())')
epochs=$(cat "$WORK"/asha/trial_*/result.jsonl | grep -c '"epoch"')
budget=$(( (epochs + 8) / 9 ))
"$TRAINRT" tune --config jobs/fashion_mlp_sweep.ini "${common[@]}" --run.name=random --tune.num_samples="$budget" \
  --tune.scheduler=fifo --train.epochs=9 >&2
random_end=$("$PY" -c 'import time; print(time.time())')
"$PY" bench/tune/report.py measure "$WORK/asha" "$WORK/random" "$start" "$asha_end" "$random_end" >"$OUT"
