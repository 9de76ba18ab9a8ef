#!/usr/bin/env bash
# The GPU benchmarks, side by side in one run on one GPU (bench/gpu/README.md); used by
# bench/gpu/run_on_gpu.sh on a GPU machine and by bench/run.sh (make bench) where a GPU is visible.
#
#   bash bench/gpu/bench_gpu.sh BUILD IDX_DIR OUT.jsonl [EPOCHS]
#
#  1. trainrt fashion_mlp on the GPU, 1 rank, EPOCHS epochs: data resident on the GPU, then
#     streamed from the host (train.gpu_resident_data = false)
#  2. PyTorch on the same GPU, the same recipe (bench/gpu/pytorch_fashion_gpu.py): data resident,
#     then Ray's DataLoader (skipped, with a line saying so, when python3's torch has no CUDA)
#  3. trainrt's blocking NCCL allreduce vs plain ncclAllReduce (tests/gpu/nccl_check bench)
#  4. where a step's time goes (bench/gpu/gpu_step_bench: GEMMs alone, the graph nodes' floor)
# JSON lines go to OUT.jsonl; progress and a summary to stdout.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:?BUILD}; IDX_DIR=${2:?IDX_DIR}; JSONL=${3:?OUT.jsonl}; EPOCHS=${4:-3}
TRAINRT=$BUILD/trainrt
init=tests/data/torch_init_seed0.h5
storage=$(mktemp -d "${TMPDIR:-/tmp}/trainrt-gpu-bench.XXXXXX")
trap 'rm -rf "$storage"' EXIT
say() { printf '== %s\n' "$*"; }
: >"$JSONL"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1 |
  python3 -c 'import json,sys; n,d=sys.stdin.read().strip().split(", "); print(json.dumps({"what":"device","name":n,"driver":d}))' >>"$JSONL"

for mode in resident stream; do
  say "trainrt fashion_mlp on the GPU, data $mode"
  mpiexec -n 1 "$TRAINRT" --config jobs/fashion_mlp.ini --train.epochs="$EPOCHS" --scaling.use_gpu=true \
    --train.init_weights="$init" --run.storage_path="$storage" --run.name="gpu_$mode" --metrics.progress=off \
    --train.gpu_resident_data="$([[ $mode == resident ]] && echo true || echo false)" | tail -2
  python3 - "$storage/gpu_$mode/result.jsonl" "$mode" >>"$JSONL" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    row = json.loads(line)
    print(json.dumps({"impl": "trainrt", "mode": sys.argv[2], **{k: row[k] for k in
          ("epoch", "loss", "test_accuracy", "train_time_s", "eval_time_s", "epoch_time_s")}}))
PY
done

if python3 -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  for mode in resident loader; do
    say "PyTorch $(python3 -c 'import torch; print(torch.__version__)') on the GPU, $mode"
    python3 bench/gpu/pytorch_fashion_gpu.py --mode "$mode" --epochs "$EPOCHS" --data "$IDX_DIR" --init "$init" |
      tee -a "$JSONL"
  done
else
  say "PyTorch: skipped, python3's torch has no CUDA here"
  echo '{"what":"note","text":"PyTorch not run: python3 has no CUDA-enabled torch"}' >>"$JSONL"
fi

say "NCCL allreduce: trainrt's communicator vs plain ncclAllReduce"
mpiexec -n 1 "$BUILD/tests/nccl_check" bench | grep '^{' | tee -a "$JSONL"
say "one fashion_mlp step: GEMMs alone, graph nodes alone, the whole step"
mpiexec -n 1 "$BUILD/bench/gpu_step_bench" | grep '^{' | tee -a "$JSONL"
say "summary"
python3 bench/gpu/report.py "$JSONL" --summary
