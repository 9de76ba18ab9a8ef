#!/usr/bin/env bash
# Same seed, same world size: bitwise-identical final weights and metrics (weights digest and
# result rows equal), and a different seed gives different weights.
source "$(dirname "$0")/../lib/common.sh"
require_data
run() {  # run NAME SEED
  mpiexec -n 2 "$TRAINRT" --config jobs/fashion_mlp.ini --train.epochs=1 --run.seed=$2 \
    --run.storage_path="$WORK" --run.name=$1 >"$WORK/$1.out"
  grep -E '^weights_digest=[0-9a-f]{16}$' "$WORK/$1.out"
}
a=$(run a 7); b=$(run b 7); c=$(run c 8)
[ "$a" = "$b" ] && pass "same seed, same digest: $a" || fail "same seed gave $a and $b"
[ "$a" != "$c" ] && pass "other seed, other digest: $c" || fail "seeds 7 and 8 gave the same digest"
# Timings differ between runs (also their cross-rank summaries); everything else must not.
strip() {
  jq -c 'del(._timestamp, ._time_this_iter_s, ._time_total_s, .train_time_s, .eval_time_s, .epoch_time_s, .samples_per_s, .data_wait_s)
         | del(._ranks._time_this_iter_s, ._ranks._time_compute_s, ._ranks.train_time_s, ._ranks.eval_time_s,
               ._ranks.epoch_time_s, ._ranks.samples_per_s, ._ranks.data_wait_s)' "$1"
}
[ "$(strip "$WORK/a/result.jsonl")" = "$(strip "$WORK/b/result.jsonl")" ] \
  && jq -e '._ranks.loss.max_rank >= 0 and ._ranks.test_accuracy.min <= ._ranks.test_accuracy.max' "$WORK/a/result.jsonl" >/dev/null \
  && pass "same metrics rows, cross-rank summaries of loss and accuracy included" || fail "metrics differ between identical runs"
finish
