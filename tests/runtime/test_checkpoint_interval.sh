#!/usr/bin/env bash
# [checkpoint] interval on fashion_mlp (2 ranks, the small set, batch 16 so that an epoch lasts
# about a second): auto checkpoints at the first step boundary to measure the cost C, then logs
# and keeps Young/Daly's interval sqrt(2 x C x failure.mtbf), C being the stall the checkpoint
# events record (within 10 %); checkpoints mid-epoch are at least that far apart. A rerun knows C
# from the run's record at once; with failure.mtbf = 0 it learns the MTBF from the record's
# failures. A fixed interval spaces checkpoints by it, in fashion_mlp and in
# a Python function that asks trainrt.checkpoint_due(); 0 (the default) takes the epochs'
# checkpoints only. Bad values: exit 2, one line.
# ctest: fixture=small_data
source "$(dirname "$0")/../lib/common.sh"
require_small_data

# run NAME OUT ARGS...: fashion_mlp on 2 ranks; sets $rc.
run() {
  local name=$1 out=$2; shift 2
  rc=0
  timeout -k 5 300 mpiexec -n 2 "$TRAINRT" --config jobs/fashion_mlp.ini --data.path="$SMALL_DATA" \
    --train.batch_size=16 --run.storage_path="$WORK" --run.name="$name" "$@" >"$out" 2>&1 || rc=$?
}
# checkpoints NAME: one line per checkpoint event, "iteration time_s stall_s".
checkpoints() {
  jq -r 'select(.event == "checkpoint") | "\(.iteration) \(.time | sub("\\.(?<ms>[0-9]+)Z$"; "Z") | fromdate)\(.time | capture("\\.(?<ms>[0-9]+)Z$").ms | "." + .) \(.stall_s)"' \
    "$WORK/$1/events.jsonl"
}
# mid_epoch NAME: iterations of the rows reported inside an epoch (running_loss: the checkpoints
# the interval took; an epoch's own row has the test metrics instead).
mid_epoch() { jq -r 'select(has("running_loss")) | ._training_iteration' "$WORK/$1/result.jsonl"; }
show() { echo "--- $1:" >&2; tail -n 30 "$1" >&2; }

# --- auto --------------------------------------------------------------------------------------
MTBF=0.5
run auto "$WORK/auto.out" --train.epochs=2 --checkpoint.interval=auto --failure.mtbf=$MTBF
[ "$rc" -eq 0 ] || { show "$WORK/auto.out"; fail "auto: exit $rc"; }
grep -q "checkpoint.interval auto: MTBF $MTBF s (failure.mtbf); no checkpoint cost known yet" "$WORK/auto.out" \
  && pass "auto: no cost known at the start: the first step boundary measures it" || { show "$WORK/auto.out"; fail "auto: first line"; }
first_step=$(jq -s '.[0].step' "$WORK/auto/result.jsonl")
[ "$first_step" = 1 ] && pass "auto: the first checkpoint at step 1" || fail "auto: first checkpoint at step $first_step"
line=$(grep -m1 "checkpoint.interval auto: a checkpoint every" "$WORK/auto.out") || { show "$WORK/auto.out"; fail "auto: no interval line"; }
every=$(sed -E 's/.*a checkpoint every ([0-9.e+-]+) s.*/\1/' <<<"$line")
cost=$(sed -E 's/.*C ([0-9.e+-]+) s.*/\1/' <<<"$line")
stall=$(checkpoints auto | awk 'NR == 1 {print $3}')
awk -v e="$every" -v c="$stall" -v m="$MTBF" 'BEGIN { want = sqrt(2 * c * m); exit !(e >= 0.9 * want && e <= 1.1 * want) }' \
  && awk -v c="$cost" -v s="$stall" 'BEGIN { exit !(c >= 0.99 * s && c <= 1.01 * s) }' \
  && pass "auto: every $every s = sqrt(2 x C x $MTBF s) within 10 %, C = the first checkpoint's recorded stall $stall s" \
  || fail "auto: $line; the first checkpoint's stall $stall s"
# Each mid-epoch checkpoint after the first is at least 90 % of the interval auto had then (from
# the record: sqrt(2 x the largest stall of the 3 checkpoints before it x MTBF)) after the one
# before it (event times are to the millisecond).
mids=$(mid_epoch auto | tr '\n' ' ')
[ "$(wc -w <<<"$mids")" -ge 3 ] || fail "auto: only these mid-epoch checkpoints: $mids"
checkpoints auto | awk -v mids=" $mids " -v m="$MTBF" '
  NR > 1 && index(mids, " " $1 " ") {
    c = 0; for (i = NR - 3; i < NR; i++) if (i >= 1 && stall[i] > c) c = stall[i]
    want = sqrt(2 * c * m); if ($2 - previous < 0.9 * want - 0.002) bad = bad " " $1 "(" $2 - previous " < " want ")" }
  { previous = $2; stall[NR] = $3 } END { if (bad != "") { print "too close:" bad; exit 1 } }' \
  && pass "auto: $(wc -w <<<"$mids") mid-epoch checkpoints, each >= 0.9 x sqrt(2 x C x MTBF) after the one before" \
  || { checkpoints auto; fail "auto: mid-epoch checkpoints closer than the interval"; }

# A rerun with more epochs resumes and knows C from the record at once.
run auto "$WORK/auto2.out" --train.epochs=3 --checkpoint.interval=auto --failure.mtbf=$MTBF
[ "$rc" -eq 0 ] && ! grep -q "no checkpoint cost known yet" "$WORK/auto2.out" \
  && grep -q "checkpoint.interval auto: a checkpoint every" "$WORK/auto2.out" \
  && pass "auto, resumed: the interval from the record's checkpoint costs at the first boundary" \
  || { show "$WORK/auto2.out"; fail "auto rerun: exit $rc"; }

# failure.mtbf = 0 learns from the run's record: a crash (rank 0 at its 3rd report) recorded, the
# rerun's MTBF is (T + 30 days / 1 node) / 2, T the attempts' seconds, named in its interval line.
TRAINRT_FAULT=report:0:3 run learn "$WORK/learn1.out" --train.epochs=2 --checkpoint.interval=auto
[ "$rc" -ne 0 ] || { show "$WORK/learn1.out"; fail "learn: the injected crash did not fail the run"; }
run learn "$WORK/learn2.out" --train.epochs=2 --checkpoint.interval=auto
line=$(grep -m1 "checkpoint.interval auto: a checkpoint every" "$WORK/learn2.out") || true
mtbf=$(sed -E 's/.*MTBF ([0-9.e+-]+) s.*/\1/' <<<"$line")
[ "$rc" -eq 0 ] && grep -q "the run's record: 1 failure(s) in" <<<"$line" \
  && awk -v m="$mtbf" 'BEGIN { half = 30 * 86400 / 2; exit !(m >= half && m < half + 600) }' \
  && pass "mtbf 0 after a crash: MTBF $mtbf s from the run's record (1 failure, the default as one more)" \
  || { show "$WORK/learn2.out"; fail "learned MTBF: exit $rc, line '$line'"; }

# --- fixed, and off ----------------------------------------------------------------------------
run fixed "$WORK/fixed.out" --train.epochs=1 --checkpoint.interval=0.25
[ "$rc" -eq 0 ] || { show "$WORK/fixed.out"; fail "fixed: exit $rc"; }
mids=$(mid_epoch fixed | tr '\n' ' ')
[ "$(wc -w <<<"$mids")" -ge 1 ] && checkpoints fixed | awk 'NR > 1 && $2 - previous < 0.25 - 0.002 && NR < count { bad = 1 }
  { previous = $2 } END { exit bad }' count="$(checkpoints fixed | wc -l)" \
  && pass "interval 0.25: $(wc -w <<<"$mids") mid-epoch checkpoint(s), none sooner than 0.25 s after the last" \
  || { checkpoints fixed; fail "fixed interval: mid-epoch $mids"; }
run off "$WORK/off.out" --train.epochs=2
[ "$rc" -eq 0 ] && [ "$(checkpoints off | wc -l)" -eq 2 ] && ! grep -q "checkpoint.interval" "$WORK/off.out" \
  && pass "interval 0 (default): the 2 epochs' checkpoints only, nothing logged" || { checkpoints off; fail "off"; }

# A Python function that asks trainrt.checkpoint_due() (tests/python/interval_func.py): 60 steps
# of 20 ms with interval 0.3 s: about every 15th step, each at least 0.3 s after the last.
if [ -f "$TRAINRT_BUILD/lib/trainrt/python/trainrt/__init__.py" ]; then
  rc=0
  timeout -k 5 300 mpiexec -n 2 "$TRAINRT" --run.workload=python:tests/python/interval_func.py:train \
    --train.steps=60 --checkpoint.interval=0.3 --metrics.progress=off --run.storage_path="$WORK" --run.name=py \
    >"$WORK/py.out" 2>&1 || rc=$?
  n=$(checkpoints py | wc -l)
  [ "$rc" -eq 0 ] && [ "$n" -ge 2 ] && [ "$n" -le 5 ] \
    && checkpoints py | awk 'NR > 1 && $2 - previous < 0.3 - 0.002 { bad = 1 } { previous = $2 } END { exit bad }' \
    && pass "Python checkpoint_due(): $n checkpoints in 60 x 20 ms steps, each >= 0.3 s after the last" \
    || { show "$WORK/py.out"; checkpoints py; fail "Python checkpoint_due: exit $rc, $n checkpoints"; }
else
  fail "the Python component is not built: trainrt.checkpoint_due() untested"
fi

# The XGBoost callback follows the interval too: breast_cancer, 1000 rounds on 2 ranks (a few ms
# each), no checkpoint by round count (checkpoint_every_rounds = 0), interval 0.1 s: checkpoints on
# the way, each at least 0.1 s after the last (the one at the last round excepted).
if "$TRAINRT_PYTHON" -c "import xgboost" 2>/dev/null && [ -f "$TRAINRT_BUILD/lib/trainrt/python/trainrt/xgboost.py" ]; then
  "$TRAINRT" data import csv /usr/lib/python3/dist-packages/sklearn/datasets/data/breast_cancer.csv --skip-rows 1 \
    --no-header --label -1 --split train=0.8,test=0.2 --out "$WORK/bc.h5" >/dev/null
  rc=0
  timeout -k 5 300 mpiexec -n 2 "$TRAINRT" --run.workload=xgboost --data.path="$WORK/bc.h5" \
    --train.num_boost_round=1000 --train.checkpoint_every_rounds=0 --train.params.objective=binary:logistic \
    --train.params.max_depth=6 --train.params.tree_method=hist --checkpoint.interval=0.1 --metrics.progress=off \
    --run.storage_path="$WORK" --run.name=xgb >"$WORK/xgb.out" 2>&1 || rc=$?
  n=$(checkpoints xgb | wc -l)
  [ "$rc" -eq 0 ] && [ "$n" -ge 3 ] \
    && checkpoints xgb | awk 'NR > 1 && NR < count && $2 - previous < 0.1 - 0.002 { bad = 1 } { previous = $2 } END { exit bad }' \
       count="$n" \
    && pass "XGBoost callback: $n checkpoints in 1000 rounds with interval 0.1 s, each >= 0.1 s after the last" \
    || { show "$WORK/xgb.out"; checkpoints xgb; fail "XGBoost callback and checkpoint.interval: exit $rc, $n checkpoints"; }
else
  fail "python3-xgboost or the Python component is missing: the XGBoost callback's interval untested"
fi

# --- bad values --------------------------------------------------------------------------------
for bad in -1 soon; do
  run bad "$WORK/bad.out" --train.epochs=1 --checkpoint.interval=$bad
  [ "$rc" -eq 2 ] && [ "$(grep -c 'error' "$WORK/bad.out")" -eq 1 ] && grep -q "checkpoint.interval" "$WORK/bad.out" \
    && [ ! -e "$WORK/bad/checkpoints" ] && pass "interval $bad: exit 2, $(grep error "$WORK/bad.out")" \
    || { show "$WORK/bad.out"; fail "interval $bad: exit $rc"; }
done
finish
