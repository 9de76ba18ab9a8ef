#!/usr/bin/env bash
# Any world size trains the same global batch (trainrt::batch_part): batch 64 on 3 ranks (local
# batches 22/21/21, gradients weighted by sample count) is the same mathematics as one rank with
# batch 64 — epoch loss agrees within 1e-5, test accuracy within a sample (on the small dataset);
# and a run stopped (USR2) in the middle of an epoch on 4 ranks resumes on 3 and ends where the
# uninterrupted 4-rank run ends (on the full dataset: the signal lands mid-epoch).
# Both would differ clearly if a rank's samples or its weight were wrong: one sample's gradient
# among 64 moves the epoch loss by far more than the 1e-5 tolerance.
# ctest: fixture=small_data
source "$(dirname "$0")/../lib/common.sh"
require_data
require_small_data
# train NAME RANKS [ARGS...]: one epoch of batch 64 from the same init weights; exit status in $rc.
train() {
  local name=$1 ranks=$2
  shift 2
  rc=0
  mpiexec -n "$ranks" "$TRAINRT" --config jobs/fashion_mlp.ini --train.epochs=1 --train.batch_size=64 \
    --train.init_weights=tests/data/torch_init_seed0.h5 --metrics.progress=off \
    --run.storage_path="$WORK" --run.name="$name" "$@" >"$WORK/$name.out" 2>&1 || rc=$?
}
field() { jq -r "select(.epoch == 1 and has(\"test_accuracy\")) | .$2" "$WORK/$1/result.jsonl" | tail -1; }
# close A B WHAT: |A - B| <= 1e-5 * |B|
close() {
  awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; exit !(d <= 1e-5 * m) }' \
    && pass "$3: $1 vs $2" || fail "$3: $1 vs $2 (beyond 1e-5 relative)"
}
# near A B WHAT [TOLERANCE]: accuracies within 5 test samples of 10000 (rounding may flip a
# near-tie); the small dataset's 1000 test samples: TOLERANCE 0.001, one sample.
near() {
  awk -v a="$1" -v b="$2" -v t="${4:-0.0005}" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }' \
    && pass "$3: $1 vs $2" || fail "$3: $1 vs $2 (more than ${4:-0.0005} apart)"
}

train one 1 --data.path="$SMALL_DATA"
[ "$rc" -eq 0 ] || { cat "$WORK/one.out"; fail "1 rank: exit $rc"; finish; }
train three 3 --data.path="$SMALL_DATA"
[ "$rc" -eq 0 ] && pass "batch 64 trains on 3 ranks" || { cat "$WORK/three.out"; fail "3 ranks: exit $rc"; finish; }
close "$(field three loss)" "$(field one loss)" "epoch loss, 3 ranks vs 1"
near "$(field three test_accuracy)" "$(field one test_accuracy)" "test accuracy, 3 ranks vs 1" 0.001
[ "$(jq -r .world_size "$WORK/three/result.jsonl")" = 3 ] || fail "the 3-rank row says world_size $(jq -r .world_size "$WORK/three/result.jsonl")"

# 4 ranks uninterrupted vs 4 ranks stopped mid-epoch and resumed on 3.
train four 4 --checkpoint.every_steps=200
[ "$rc" -eq 0 ] || { cat "$WORK/four.out"; fail "4 ranks: exit $rc"; finish; }
( train moved 4 --checkpoint.every_steps=200; echo "$rc" >"$WORK/moved.rc" ) &
runner=$!
wait_rows "$WORK/moved" 2 || fail "moved: no 2 result rows within 60 s"
pid=$(rank_pid moved 1) || fail "moved: rank 1 not found"
kill -USR2 "$pid"
wait "$runner" || true
[ "$(cat "$WORK/moved.rc")" = 9 ] && pass "4 ranks stopped mid-epoch (exit 9)" || fail "stop on 4 ranks: exit $(cat "$WORK/moved.rc")"
stopped_at=$(jq -r 'select(.event == "stop") | .step' "$WORK/moved/events.jsonl")
train moved 3 --checkpoint.every_steps=200
[ "$rc" -eq 0 ] && pass "the 4-rank stop checkpoint (iteration $stopped_at, a checkpoint every 200 of the 938 steps) resumes on 3 ranks" \
  || { cat "$WORK/moved.out"; fail "resume on 3 ranks: exit $rc"; finish; }
jq -e -s '[.[] | select(.event == "start") | .world_size] == [4, 3]' "$WORK/moved/events.jsonl" >/dev/null \
  || fail "start events' world sizes: $(jq -c -s '[.[] | select(.event == "start") | .world_size]' "$WORK/moved/events.jsonl")"
close "$(field moved loss)" "$(field four loss)" "epoch loss, 4 ranks then 3 vs 4 uninterrupted"
near "$(field moved test_accuracy)" "$(field four test_accuracy)" "test accuracy, 4 ranks then 3 vs 4 uninterrupted"
finish
