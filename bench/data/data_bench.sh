#!/usr/bin/env bash
# The data part of `make bench` (bench/run.sh runs it; bench/data/report.py renders it):
#  1. streaming read, cold cache, vs a plain sequential read() of the same file, pair by pair
#     (shuffle none, blocks, global; 1 rank, 1 MiB batches, prefetch 2), with each run's peak RSS;
#  2. fashion_mlp on 2 ranks, prefetch_batches = 2: time the training thread waited for data;
#  3. samples/s of the stream against a PyTorch DataLoader over the same HDF5 file through h5py
#     (same split, batch 64, shuffle none and global, num_workers 0 and 1).
#   bash bench/data/data_bench.sh TRAINRT BUILD OUT.jsonl SCRATCH_DIR [PAIRS]
set -euo pipefail
TRAINRT=$1 BUILD=$2 OUT=$3 SCRATCH=$4 PAIRS=${5:-5}
PY=/usr/bin/python3
READ="$BUILD/bench/stream_read_bench"
ROWS=${BENCH_DATA_ROWS:-131072}  # x: f32 [ROWS, 1024]: 512 MiB
[[ -x $READ ]] || { echo "data_bench: $READ not built" >&2; exit 1; }
mkdir -p "$SCRATCH"
: >"$OUT"

"$PY" - "$SCRATCH" "$ROWS" <<'PY'
import sys, numpy as np
work, rows = sys.argv[1], int(sys.argv[2])
np.save(f"{work}/x.npy", np.random.default_rng(0).random((rows, 1024), dtype=np.float32))
np.save(f"{work}/y.npy", (np.arange(rows) % 10).astype(np.int64))
PY
"$TRAINRT" data import npy "$SCRATCH/x.npy" "$SCRATCH/y.npy" --out "$SCRATCH/big.h5" >&2
rm -f "$SCRATCH/x.npy" "$SCRATCH/y.npy"

tag() { jq -c --argjson pair "$1" --arg part "$2" '. + {bench: "data", part: $part, pair: $pair}'; }
for pair in $(seq 1 "$PAIRS"); do
  "$READ" "$SCRATCH/big.h5" --mode plain --cold | tag "$pair" cold_plain >>"$OUT"
  for shuffle in none blocks global; do
    "$READ" "$SCRATCH/big.h5" --batch 256 --prefetch 2 --shuffle "$shuffle" --cold | tag "$pair" cold_stream >>"$OUT"
  done
done
rm -f "$SCRATCH/big.h5"

# fashion_mlp's data wait (2 ranks, 3 epochs, the default prefetch of 2).
mpiexec -n 2 "$TRAINRT" --config jobs/fashion_mlp.ini --train.epochs=3 --data.prefetch_batches=2 \
  --metrics.progress=off --run.storage_path="$SCRATCH" --run.name=data_wait >&2
jq -c '{bench: "data", part: "fashion_wait", epoch, train_time_s, data_wait_s, steps: 938}' \
  "$SCRATCH/data_wait/result.jsonl" >>"$OUT"

# The stream vs PyTorch's DataLoader + h5py, alternated, on FashionMNIST's test split.
for pair in $(seq 1 3); do
  for shuffle in none global; do
    flag=(); [[ $shuffle == global ]] && flag=(--shuffle)
    for workers in 0 1; do
      "$PY" bench/data/pytorch_loader.py data/fashion-mnist.h5 --split test --batch 64 "${flag[@]}" --workers "$workers" \
        | tag "$pair" loader_pytorch >>"$OUT"
    done
    "$READ" data/fashion-mnist.h5 --split test --batch 64 --shuffle "$shuffle" --prefetch 2 | tag "$pair" loader_trainrt >>"$OUT"
  done
done
