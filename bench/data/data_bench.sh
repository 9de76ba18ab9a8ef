#!/usr/bin/env bash
# The data part of `make bench` (bench/run.sh runs it; bench/data/report.py renders it):
#  1. streaming read, cold cache, vs a plain sequential read() of the same file in 1 MiB pieces,
#     pair by pair for each shuffle (none, blocks, global; 1 rank, 1 MiB batches, prefetch 2), the
#     order alternating (odd pairs: plain first; even pairs: stream first); before every run the
#     whole page cache is dropped (`sync; echo 3 > /proc/sys/vm/drop_caches`), or, where that file
#     is not writable, the file's pages with posix_fadvise(DONTNEED) (each record says which);
#  2. peak RSS per rank: the same file streamed by 2 ranks (two stream_read_bench processes,
#     --ranks 2 --rank 0|1, at the same time), cold, each shuffle;
#  3. fashion_mlp on 2 ranks, prefetch_batches = 2: time the training thread waited for data;
#  4. samples/s over FashionMNIST's train split (60000 samples, data/fashion-mnist.h5), batch 64,
#     shuffle none and global: trainrt's stream from C++ (stream_read_bench) and from Python
#     (trainrt.get_dataset().iter_batches in a `python:` workload, bench/data/trainrt_python_loader.py)
#     against a PyTorch DataLoader over the same file through h5py (num_workers 0 and 1); 3 runs of
#     each, the order of the loaders reversed every other run.
#   bash bench/data/data_bench.sh TRAINRT BUILD OUT.jsonl SCRATCH_DIR [PAIRS]
#   BENCH_DATA_ROWS=131072   rows of the streamed file (f32 [ROWS, 1024] + i64 labels: 512 MiB)
set -euo pipefail
TRAINRT=$1 BUILD=$2 OUT=$3 SCRATCH=$4 PAIRS=${5:-10}
source "$(dirname "${BASH_SOURCE[0]}")/../lib/machine.sh"
PY=$(build_python "$BUILD")
READ="$BUILD/bench/stream_read_bench"
ROWS=${BENCH_DATA_ROWS:-131072}  # x: f32 [ROWS, 1024]: 512 MiB
FASHION=data/fashion-mnist.h5
LOADER_RUNS=3
[[ -x $READ ]] || { echo "data_bench: $READ not built" >&2; exit 1; }
[[ -f $FASHION ]] || { echo "data_bench: $FASHION missing (make data)" >&2; exit 1; }
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
file_bytes=$(stat -c %s "$SCRATCH/big.h5")

# go_cold: empties the page cache before a cold run; prints the method used. The whole cache when
# /proc/sys/vm/drop_caches can be written (root, not a read-only /proc/sys): then the bench's own
# program and the libraries whose code runs in the timed part (libtrainrt, HDF5) are read back, so
# that a run measures a cold data file, not cold code. Else only the file's pages (stream_read_bench
# --cold: fdatasync + posix_fadvise(DONTNEED), which pages mapped or locked elsewhere survive).
mapfile -t code_files < <(ldd "$READ" | awk '$3 ~ /^\// && $1 ~ /trainrt|hdf5|libsz|libaec|libz\./ {print $3}')
code_files+=("$READ")
go_cold() {
  sync
  if { echo 3 >/proc/sys/vm/drop_caches; } 2>/dev/null; then
    cat "${code_files[@]}" >/dev/null
    echo drop_caches
  else
    echo fadvise
  fi
}
# cold_run TAG_JSON ARGS...: one cold stream_read_bench run on big.h5, its line tagged.
cold_run() {
  local tags=$1; shift
  local method flags=()
  method=$(go_cold)
  [[ $method == fadvise ]] && flags=(--cold)
  "$READ" "$SCRATCH/big.h5" "$@" "${flags[@]}" |
    jq -c --argjson tags "$tags" --arg cold "$method" --argjson file_bytes "$file_bytes" \
      '. + {bench: "data", cold: $cold, file_bytes: $file_bytes} + $tags'
}

# 1. Stream vs plain, pair by pair: each pair is one plain read and one stream of the same file,
# both cold; odd pairs read plain first, even pairs stream first.
for pair in $(seq 1 "$PAIRS"); do
  if (( pair % 2 )); then order=(plain stream); else order=(stream plain); fi
  for shuffle in none blocks global; do
    for what in "${order[@]}"; do
      tags=$(jq -cn --argjson pair "$pair" --arg against "$shuffle" --arg first "${order[0]}" --arg part "cold_$what" \
        '{part: $part, pair: $pair, against: $against, first: $first}')
      if [[ $what == plain ]]; then
        cold_run "$tags" --mode plain | jq -c '. + {read_bytes: 1048576}' >>"$OUT"
      else
        cold_run "$tags" --batch 256 --prefetch 2 --shuffle "$shuffle" >>"$OUT"
      fi
    done
  done
done

# 2. Peak RSS per rank: 2 ranks stream the file at the same time (global batch 256, prefetch 2), cold.
for shuffle in none blocks global; do
  method=$(go_cold)
  flags=(); [[ $method == fadvise ]] && flags=(--cold)
  pids=()
  for rank in 0 1; do
    "$READ" "$SCRATCH/big.h5" --batch 256 --prefetch 2 --shuffle "$shuffle" --ranks 2 --rank "$rank" "${flags[@]}" \
      >"$SCRATCH/rss_rank$rank.json" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  for rank in 0 1; do
    jq -c --argjson rank "$rank" --arg cold "$method" --argjson file_bytes "$file_bytes" \
      '. + {bench: "data", part: "rss_ranks", ranks: 2, rank: $rank, cold: $cold, file_bytes: $file_bytes}' \
      "$SCRATCH/rss_rank$rank.json" >>"$OUT"
  done
done
rm -f "$SCRATCH/big.h5" "$SCRATCH"/rss_rank*.json

# 3. fashion_mlp's data wait (2 ranks, 3 epochs, the default prefetch of 2).
mpiexec -n 2 "$TRAINRT" --config jobs/fashion_mlp.ini --train.epochs=3 --data.prefetch_batches=2 \
  --metrics.progress=off --run.storage_path="$SCRATCH" --run.name=data_wait >&2
jq -c '{bench: "data", part: "fashion_wait", epoch, train_time_s, data_wait_s, steps: 938}' \
  "$SCRATCH/data_wait/result.jsonl" >>"$OUT"

# 4. Samples/s on FashionMNIST's train split: trainrt from C++ and from Python against PyTorch's
# DataLoader + h5py, batch 64, the page cache warm (every run reads the same 47 MB file).
python_built=0
compgen -G "$BUILD/lib/trainrt/python/trainrt/_trainrt.*.so" >/dev/null && python_built=1
(( python_built )) || echo "data_bench: trainrt's Python component is not built: no trainrt Python loader figure" >&2
tag() { jq -c --argjson run "$1" --arg part "$2" --argjson position "$3" \
  '. + {bench: "data", part: $part, run: $run, position: $position, split: "train"}'; }
loader() {  # loader RUN SHUFFLE NAME POSITION
  local run=$1 shuffle=$2 name=$3 position=$4 flag=()
  [[ $shuffle == global ]] && flag=(--shuffle)
  case $name in
    pytorch0|pytorch1)
      "$PY" bench/data/pytorch_loader.py "$FASHION" --split train --batch 64 "${flag[@]}" --workers "${name#pytorch}" |
        tag "$run" loader_pytorch "$position" >>"$OUT" ;;
    trainrt_cpp)
      "$READ" "$FASHION" --split train --batch 64 --shuffle "$shuffle" --prefetch 2 |
        tag "$run" loader_trainrt "$position" >>"$OUT" ;;
    trainrt_python)
      local json="$SCRATCH/python_loader.json"
      rm -f "$json"
      "$TRAINRT" --run.workload=python:bench/data/trainrt_python_loader.py:epoch --data.path="$FASHION" \
        --train.batch=64 --train.shuffle="$shuffle" --train.out="$json" --metrics.progress=off \
        --run.storage_path="$SCRATCH/python_runs" --run.name="loader_${shuffle}_$run" >&2
      tag "$run" loader_trainrt_python "$position" <"$json" >>"$OUT" ;;
  esac
}
loaders=(pytorch0 pytorch1 trainrt_cpp)
(( python_built )) && loaders+=(trainrt_python)
for run in $(seq 1 "$LOADER_RUNS"); do
  order=("${loaders[@]}")
  if (( run % 2 == 0 )); then order=(); for ((i = ${#loaders[@]} - 1; i >= 0; i--)); do order+=("${loaders[i]}"); done; fi
  for shuffle in none global; do
    position=0
    for name in "${order[@]}"; do
      loader "$run" "$shuffle" "$name" "$position"
      position=$((position + 1))
    done
  done
done
rm -rf "$SCRATCH/python_runs" "$SCRATCH/python_loader.json"

# 5. Ray Data's read_csv into two epochs of batches (bench/data/raydata_bench.py): trainrt (the CSV
#    landed in a dataset file as a Trainer's datasets= does, then its streaming reader) against
#    pandas and pyarrow reading the same file into memory and Ray Data streaming it; RUNS rounds, the
#    order reversed every other round.
RAY_PY=${TRAINRT_RAY_VENV:-/opt/trainrt-deps/ray-venv}/bin/python
"$PY" bench/data/raydata_bench.py make "$SCRATCH/raydata.csv" "${BENCH_RAYDATA_ROWS:-500000}"
approaches=(pandas pyarrow trainrt)
[[ -x $RAY_PY ]] && approaches+=(ray)
for run in $(seq 1 "$LOADER_RUNS"); do
  order=("${approaches[@]}")
  if (( run % 2 == 0 )); then order=(); for ((i = ${#approaches[@]} - 1; i >= 0; i--)); do order+=("${approaches[i]}"); done; fi
  for name in "${order[@]}"; do
    if [[ $name == ray ]]; then
      (cd "$SCRATCH" && HOME=$SCRATCH RAY_ADDRESS=local "$RAY_PY" "$OLDPWD/bench/data/raydata_bench.py" run ray \
        "$SCRATCH/raydata.csv" "$SCRATCH" 2>/dev/null | tail -1)
    else
      PYTHONPATH="$BUILD/lib/trainrt/python" "$PY" bench/data/raydata_bench.py run "$name" "$SCRATCH/raydata.csv" "$SCRATCH"
    fi | jq -c --argjson run "$run" '. + {run: $run}' >>"$OUT"
  done
done
rm -f "$SCRATCH/raydata.csv" "$SCRATCH/datasets.h5"
