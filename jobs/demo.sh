#!/usr/bin/env bash
# `make demo`: a short 2-rank fashion_mlp training under mpiexec (make demo has built trainrt
# and imported FashionMNIST first). DEMO_EPOCHS and DEMO_RANKS override the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
epochs=${DEMO_EPOCHS:-3}
ranks=${DEMO_RANKS:-2}
name="demo-$(date +%Y%m%d-%H%M%S)"
echo "== trainrt demo: fashion_mlp, $ranks ranks (mpiexec), $epochs epochs -> runs/$name"
mpiexec -n "$ranks" "$BUILD/trainrt" --config jobs/fashion_mlp.ini \
  --train.epochs="$epochs" --run.name="$name" --metrics.progress_interval=1
echo "== trainrt results runs/$name   (also: --json, --csv; trainrt plot runs/$name -o run.png)"
"$BUILD/trainrt" results "runs/$name"
