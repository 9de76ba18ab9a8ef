#!/usr/bin/env bash
# Python training functions on the GPU under Ray Train vs plain PyTorch (bench/gpu/python_gpu_bench.py:
# `--under ray` is TorchTrainer(ScalingConfig(num_workers=1, use_gpu=True)).fit() of the same loop
# trainrt runs in python_gpu_bench.sh), alternated per configuration on the same GPU.
#
#   bash bench/gpu/ray_gpu_bench.sh IDX_DIR OUT.jsonl [EPOCHS] [ROUNDS]
#
# Needs Ray importable by the machine's python3 (run_on_gpu.sh's stage raybench).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
IDX=$1 OUT=$2 EPOCHS=${3:-3} ROUNDS=${4:-1}
SCRIPT=$REPO/bench/gpu/python_gpu_bench.py
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
: >"$OUT"
under_ray() {  # MODEL DATA
  : >"$WORK/lines"
  timeout -k 10 300 python3 "$SCRIPT" --under ray --out "$WORK/lines" --model "$1" --data "$2" --data-dir "$IDX" \
    --epochs "$EPOCHS" >"$WORK/err" 2>&1 || { echo "ray $1 $2 failed:"; tail -30 "$WORK/err"; }
  cat "$WORK/lines" >>"$OUT"
}
plain() {  # MODEL DATA
  timeout -k 10 300 python3 "$SCRIPT" --model "$1" --data "$2" --data-dir "$IDX" --epochs "$EPOCHS" 2>"$WORK/err" |
    grep '^{' >>"$OUT" || { echo "pytorch $1 $2 failed:"; tail -20 "$WORK/err"; }
}
python3 -c 'import ray, ray.train.torch; print("ray", ray.__version__)' || exit 1
for round in $(seq "$ROUNDS"); do
  for model in mlp resnet18; do
    for data in resident loader; do
      echo "== round $round: $model $data"
      if (( round % 2 )); then under_ray "$model" "$data"; plain "$model" "$data"
      else plain "$model" "$data"; under_ray "$model" "$data"; fi
    done
  done
done
python3 "$REPO/bench/gpu/python_gpu_report.py" "$OUT"
