#!/usr/bin/env bash
# LibTorch workloads train any world size (GlobalBatchLoader: a rank's part of each global batch,
# its summed loss divided by BatchPart's mean_over): torch_fashion_mlp with batch 64 on 3 ranks
# (parts of 22/21/21) and with batch 2999 on 3 ranks (on the small dataset's 6000 samples the
# epoch's last global batch holds 2: one rank's part is empty and still joins the gradient
# allreduce) each give the epoch loss of 1 rank with the same batch within 1e-5 relative, test
# accuracy within 1 sample of 1000.
# ctest: fixture=small_data
source "$(dirname "$0")/../lib/common.sh"
require_small_data
train() {  # NAME RANKS BATCH; exit status in $rc
  rc=0
  mpiexec -n "$2" "$TRAINRT" --config jobs/fashion_mlp.ini --data.path="$SMALL_DATA" --run.workload=torch_fashion_mlp --train.epochs=1 \
    --train.batch_size="$3" --train.init_weights=tests/data/torch_init_seed0.h5 --metrics.progress=off \
    --run.storage_path="$WORK" --run.name="$1" >"$WORK/$1.out" 2>&1 || rc=$?
}
field() { jq -r "select(.epoch == 1 and has(\"test_accuracy\")) | .$2" "$WORK/$1/result.jsonl" | tail -1; }
close() {  # A B WHAT: |A - B| <= 1e-5 |B|
  awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; exit !(d <= 1e-5 * m) }' \
    && pass "$3: $1 vs $2" || fail "$3: $1 vs $2 (beyond 1e-5 relative)"
}
near() {  # A B WHAT: within 1 test sample of 1000
  awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.001) }' \
    && pass "$3: $1 vs $2" || fail "$3: $1 vs $2 (more than 1 of 1000 apart)"
}
for batch in 64 2999; do
  train "one_$batch" 1 "$batch"
  [ "$rc" -eq 0 ] || { cat "$WORK/one_$batch.out"; fail "batch $batch on 1 rank: exit $rc"; continue; }
  train "three_$batch" 3 "$batch"
  [ "$rc" -eq 0 ] && pass "batch $batch trains on 3 ranks" || { cat "$WORK/three_$batch.out"; fail "batch $batch on 3 ranks: exit $rc"; continue; }
  close "$(field "three_$batch" loss)" "$(field "one_$batch" loss)" "batch $batch: epoch loss, 3 ranks vs 1"
  near "$(field "three_$batch" test_accuracy)" "$(field "one_$batch" test_accuracy)" "batch $batch: test accuracy, 3 ranks vs 1"
done
finish
