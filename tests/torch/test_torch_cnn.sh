#!/usr/bin/env bash
# torch_fashion_cnn, a real convolutional net in LibTorch trained data-parallel by trainrt, learns:
# on the small FashionMNIST set (6000 training, 1000 test images) 2 epochs on 2 ranks (batch 64,
# Adam) reach a test accuracy of at least 0.80 (0.833 here; chance is 0.10), better than after
# the first epoch.
# ctest: fixture=small_data
source "$(dirname "$0")/../lib/common.sh"
require_small_data
mpiexec -n 2 "$TRAINRT" --config jobs/fashion_mlp.ini --data.path="$SMALL_DATA" --run.workload=torch_fashion_cnn \
  --train.epochs=2 --metrics.progress=off --run.storage_path="$WORK" --run.name=cnn >"$WORK/cnn.out" 2>&1 \
  || { tail "$WORK/cnn.out"; fail "torch_fashion_cnn run"; finish; }
accuracy=$(jq -s -c '[.[].test_accuracy]' "$WORK/cnn/result.jsonl")
jq -e -s 'length == 2 and .[1].test_accuracy >= 0.80 and .[1].test_accuracy > .[0].test_accuracy' \
  "$WORK/cnn/result.jsonl" >/dev/null \
  && pass "torch_fashion_cnn: test accuracy by epoch $accuracy (>= 0.80, rising); epoch times $(jq -s -c '[.[] | ._time_this_iter_s | floor]' "$WORK/cnn/result.jsonl") s" \
  || fail "torch_fashion_cnn: test accuracy by epoch $accuracy, expected >= 0.80 after 2 epochs and rising"
finish
