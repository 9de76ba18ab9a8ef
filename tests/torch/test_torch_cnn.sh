#!/usr/bin/env bash
# torch_fashion_cnn, a real convolutional net in LibTorch trained data-parallel by trainrt, reaches
# a test accuracy of at least 0.85 on FashionMNIST within 1 epoch on 2 ranks (batch 64, Adam).
source "$(dirname "$0")/../lib/common.sh"
require_data
mpiexec -n 2 "$TRAINRT" --config jobs/fashion_mlp.ini --run.workload=torch_fashion_cnn --train.epochs=1 \
  --metrics.progress=off --run.storage_path="$WORK" --run.name=cnn >"$WORK/cnn.out" 2>&1 \
  || { tail "$WORK/cnn.out"; fail "torch_fashion_cnn run"; finish; }
accuracy=$(jq -s '.[-1].test_accuracy' "$WORK/cnn/result.jsonl")
jq -e -s 'length == 1 and .[-1].test_accuracy >= 0.85' "$WORK/cnn/result.jsonl" >/dev/null \
  && pass "torch_fashion_cnn: test accuracy $accuracy after 1 epoch (>= 0.85); epoch times $(jq -s -c '[.[] | ._time_this_iter_s | floor]' "$WORK/cnn/result.jsonl") s" \
  || fail "torch_fashion_cnn: test accuracy $accuracy after 1 epoch, expected >= 0.85"
finish
