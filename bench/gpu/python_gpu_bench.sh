#!/usr/bin/env bash
# Python training functions on the GPU, trainrt vs plain PyTorch (bench/gpu/python_gpu_bench.py),
# alternated per configuration on the same GPU: models mlp and resnet18, data loader and resident
# (in round 1 also the plain loop in trainrt's embedded interpreter, no trainrt call); first, a
# checkpoint's stall vs its device-to-host copy (resnet18, checkpoint.async, snapshot background).
#
#   bash bench/gpu/python_gpu_bench.sh BUILD IDX_DIR OUT.jsonl [EPOCHS] [ROUNDS]
#
# Needs a trainrt whose Python component was built for the machine's Python
# (bench/gpu/build_python_on_gpu.sh) and that Python's CUDA PyTorch and torchvision.
# PYBENCH_SIDE=ray: Ray Train (`python_gpu_bench.py --under ray`: TorchTrainer(ScalingConfig(
# num_workers=1, use_gpu=True)).fit()) in trainrt's place, alternated with PyTorch the same way; no
# checkpoint stall, no embedded loop, no BUILD (any word); Ray must import in the machine's python3.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$1 IDX=$2 OUT=$3 EPOCHS=${4:-4} ROUNDS=${5:-1}
SCRIPT=$REPO/bench/gpu/python_gpu_bench.py
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export VIRTUAL_ENV=${VIRTUAL_ENV:-$(python3 -c 'import sys; print(sys.prefix)')}
: >"$OUT"
SIDE=${PYBENCH_SIDE:-trainrt}
through_trainrt() {  # MODEL DATA [ARGS...]
  local model=$1 data=$2; shift 2
  timeout -k 10 300 mpiexec -n 1 "$BUILD/trainrt" --run.workload=python:"$SCRIPT":trainrt_func --scaling.use_gpu=true \
    --train.model="$model" --train.data="$data" --train.data_dir="$IDX" --train.epochs="$EPOCHS" \
    --run.storage_path="$WORK" --run.name="$model-$data-$RANDOM" --metrics.progress=off "$@" 2>"$WORK/err" |
    grep '^{' >>"$OUT" || { echo "trainrt $model $data failed:"; tail -20 "$WORK/err"; }
}
embedded() {  # MODEL DATA: the plain loop in trainrt's interpreter, no trainrt call
  timeout -k 10 300 mpiexec -n 1 "$BUILD/trainrt" --run.workload=python:"$SCRIPT":plain_func \
    --train.model="$1" --train.data="$2" --train.data_dir="$IDX" --train.epochs="$EPOCHS" \
    --run.storage_path="$WORK" --run.name="embedded-$1-$2" --metrics.progress=off 2>"$WORK/err" |
    grep '^{' >>"$OUT" || { echo "embedded $1 $2 failed:"; tail -20 "$WORK/err"; }
}
under_ray() {  # MODEL DATA: the worker appends its lines to a file (its stdout reaches the driver prefixed)
  : >"$WORK/lines"
  timeout -k 10 300 python3 "$SCRIPT" --under ray --out "$WORK/lines" --model "$1" --data "$2" --data-dir "$IDX" \
    --epochs "$EPOCHS" >"$WORK/err" 2>&1 || { echo "ray $1 $2 failed:"; tail -30 "$WORK/err"; }
  cat "$WORK/lines" >>"$OUT"
}
side() { if [[ $SIDE == ray ]]; then under_ray "$1" "$2"; else through_trainrt "$1" "$2"; fi; }
plain() {  # MODEL DATA
  timeout -k 10 300 python3 "$SCRIPT" --model "$1" --data "$2" --data-dir "$IDX" --epochs "$EPOCHS" 2>"$WORK/err" |
    grep '^{' >>"$OUT" || { echo "pytorch $1 $2 failed:"; tail -20 "$WORK/err"; }
}
if [[ $SIDE == ray ]]; then
  python3 -c 'import ray, ray.train.torch; print("ray", ray.__version__)' || exit 1
else
  echo "== checkpoint stall (resnet18), first: the rounds below may run out of a lease"
  through_trainrt resnet18 resident --train.epochs=1 --train.checkpoints=8 --checkpoint.async=true \
    --checkpoint.snapshot=background
fi
for round in $(seq "$ROUNDS"); do
  for model in mlp resnet18; do
    for data in resident loader; do
      echo "== round $round: $model $data"
      if (( round % 2 )); then side "$model" "$data"; plain "$model" "$data"
      else plain "$model" "$data"; side "$model" "$data"; fi
      (( round > 1 )) || [[ $SIDE == ray ]] || embedded "$model" "$data"
    done
  done
done
python3 "$REPO/bench/gpu/python_gpu_report.py" "$OUT"
