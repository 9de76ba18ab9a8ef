#!/usr/bin/env bash
# Ray Data's datasets on trainrt (docs/guides/ray-data.md), with tests/python/raydata_guide.py (Ray
# Train's "Data Loading and Preprocessing" guide: from_items + map_batches + random_shuffle, a CSV
# through read_csv, datasets= with DataConfig(datasets_to_split=["train"]), get_dataset_shard(name)
# .iter_torch_batches) after the port's sed:
#  - from a plain python3: 2 ranks, every epoch reads each of the 200 training rows once across the
#    ranks and all 64 validation rows on each rank (not split), the shuffle changes every epoch, and
#    every number equals Ray's run of the same script (tests/conformance/ray_guides.json);
#  - the guide's Transformers tab (tests/python/raydata_transformers_guide.py): the shards'
#    iter_torch_batches as transformers.Trainer's datasets through prepare_trainer, as under Ray;
#  - USR2 to rank 1 stops the run at a report; its rerun resumes and is killed (kill -9 of rank 1);
#    the second rerun resumes and every report (the shuffled order's first batch included) equals
#    the uninterrupted run's;
#  - a report after every batch, stopped inside an epoch: the rerun reads the rest of that epoch's
#    shuffled order (mid-epoch exact resume);
#  - a column of strings is refused with one line (exit data, before the function runs, once for
#    the job; the driver-side refusals: tests/python/unit/test_raydata_plans.py).
source "$(dirname "$0")/../lib/common.sh"
export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python" RAYDATA_STORAGE="$WORK/runs"
sed -e 's/\bray\.train\b/trainrt/g' -e 's/\bray\.tune\b/trainrt.tune/g' -e 's/\bray\b/trainrt/g' \
  tests/python/raydata_guide.py >"$WORK/raydata_guide.py"
grep -qE '\bray\b' "$WORK/raydata_guide.py" && fail "the sed left a ray name"

guide() {  # NAME EPOCHS OUT: the ported script from a plain python3; sets $rc
  rc=0
  RAYDATA_NAME=$1 RAYDATA_EPOCHS=$2 timeout -k 10 300 "$TRAINRT_PYTHON" "$WORK/raydata_guide.py" >"$3" 2>&1 || rc=$?
}
guide first 4 "$WORK/first.out"
line=$(sed -n 's/^RAYDATA_GUIDE //p' "$WORK/first.out")
[ "$rc" -eq 0 ] && [ -n "$line" ] || { tail -30 "$WORK/first.out" >&2; fail "the guide's script exits $rc"; finish; }
jq -e '.rows == [200,200,200,200] and .validation_rows == [64,64,64,64] and .first_batch_y_varies
       and .train_mse[3] < .train_mse[0]' <<<"$line" >/dev/null \
  && pass "python3 train.py: 200 training rows per epoch over 2 ranks, 64 validation rows on each, a new order each epoch, mse $(jq -c '[.train_mse[] | . * 1000 | round / 1000]' <<<"$line")" \
  || fail "the guide's run reported $line"
said=$("$TRAINRT_PYTHON" tests/conformance/ray_guides.py compare --reference tests/conformance/ray_guides.json \
  raydata "$line" 2>&1) && pass "the guide's run, $said" || fail "the guide's run differs from Ray's: $said"
[ -f "$WORK/runs/first/datasets.h5" ] && "$TRAINRT" data info "$WORK/runs/first/datasets.h5" >"$WORK/info.out" 2>&1 \
  && grep -q validation "$WORK/info.out" && pass "the run's datasets.h5 holds the splits train and validation" \
  || fail "no readable datasets.h5 in the run directory: $(cat "$WORK/info.out" 2>/dev/null)"

# The guide's Transformers tab: shards' iter_torch_batches as transformers.Trainer's datasets, through
# prepare_trainer; the steps, reports and checkpoint files as Ray's run of the same script.
sed -e 's/\bray\.train\b/trainrt/g' -e 's/\bray\.tune\b/trainrt.tune/g' -e 's/\bray\b/trainrt/g' \
  tests/python/raydata_transformers_guide.py >"$WORK/raydata_transformers_guide.py"
rc=0; RAYDATA_TRANSFORMERS_STORAGE="$WORK/runs" timeout -k 10 300 "$TRAINRT_PYTHON" "$WORK/raydata_transformers_guide.py" \
  >"$WORK/hf.out" 2>&1 || rc=$?
line=$(sed -n 's/^RAYDATA_TRANSFORMERS_GUIDE //p' "$WORK/hf.out")
if [ "$rc" -eq 0 ] && [ -n "$line" ]; then
  said=$("$TRAINRT_PYTHON" tests/conformance/ray_guides.py compare --reference tests/conformance/ray_guides.json \
    raydata_transformers "$line" 2>&1) && pass "Transformers over the shards (prepare_trainer), $said" \
    || fail "Transformers over the shards differs from Ray's: $said"
else
  tail -30 "$WORK/hf.out" >&2; fail "the Transformers tab's script exits $rc"
fi

report_rows() { jq -s -c '[.[] | [.epoch, .y_sum, .train_mse, .validation_mse, .weight, .bias, .first_batch_y]]' \
  "$WORK/runs/$1/result.jsonl"; }
rank_of() {  # NAME RANK: pid of that rank of the spawned run NAME (fit()'s children carry PMI_RANK)
  local pid deadline=$((SECONDS + 30))
  while ((SECONDS < deadline)); do
    for pid in $(pgrep -f -- "$WORK/raydata_guide.py" || true); do
      tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "PMI_RANK=$2" \
        && tr '\0' '\n' <"/proc/$pid/environ" | grep -qx "RAYDATA_NAME=$1" && { echo "$pid"; return 0; }
    done
    sleep 0.05
  done
  return 1
}
interrupt() {  # NAME SIGNAL AFTER_ROWS OUT: run NAME, SIGNAL to rank 1 once AFTER_ROWS rows are in; sets $rc
  ( export RAYDATA_PAUSE_S=0.5; guide "$1" 6 "$4"; echo "$rc" >"$WORK/$1.rc" ) &
  local runner=$!
  rows_reached "$WORK/runs/$1" "$3" 120 || fail "$1: no $3 result rows within 120 s"
  kill "-$2" "$(rank_of "$1" 1)"
  wait "$runner" || true
  rc=$(cat "$WORK/$1.rc")
}
RAYDATA_PAUSE_S=0 guide ref 6 "$WORK/ref.out"
[ "$rc" -eq 0 ] || { tail -20 "$WORK/ref.out" >&2; fail "the uninterrupted 6-epoch run exits $rc"; finish; }
interrupt chain USR2 2 "$WORK/chain.stop.out"
stopped=$(rows "$WORK/runs/chain")
[ "$rc" = "$TRAINRT_EXIT_STOPPED" ] && [ "$stopped" -lt 6 ] \
  && pass "SIGUSR2 to rank 1 stopped the run at report $stopped, exit $rc" \
  || { tail -20 "$WORK/chain.stop.out" >&2; fail "the stopped run exits $rc after $stopped reports"; }
interrupt chain KILL $((stopped + 1)) "$WORK/chain.kill.out"
killed=$(rows "$WORK/runs/chain")
[ "$rc" != 0 ] && [ "$killed" -lt 6 ] && grep -q 'resuming from' "$WORK/chain.kill.out" \
  && pass "its rerun resumed and was killed (kill -9 of rank 1) after report $killed, exit $rc" \
  || { tail -20 "$WORK/chain.kill.out" >&2; fail "the rerun to be killed exits $rc after $killed reports"; }
guide chain 6 "$WORK/chain.last.out"
[ "$rc" -eq 0 ] && grep -q 'resuming from' "$WORK/chain.last.out" && [ "$(report_rows chain)" = "$(report_rows ref)" ] \
  && pass "the second rerun resumed; every report (epoch, y sum, mse, weights, the shuffled first batch) equals the uninterrupted run's" \
  || { tail -20 "$WORK/chain.last.out" >&2; fail "after the resumes (exit $rc): $(report_rows chain) vs $(report_rows ref)"; }

cat >"$WORK/shard_api.py" <<'PY'
import json, os
import numpy as np
import trainrt
from trainrt.torch import TorchTrainer

def func():
    shard, whole = trainrt.get_dataset_shard("train"), trainrt.get_context().get_dataset_shard("valid")
    frame = shard.materialize().to_pandas()
    counts = np.array([len(frame), sum(1 for _ in shard.iter_rows()),
                       sum(len(b) for b in shard.iter_batches(batch_size=3, batch_format="pandas")),
                       sum(len(b["id"]) for b in shard.iter_batches(batch_size=4, local_shuffle_buffer_size=8)),
                       sum(1 for _ in whole.iter_rows())], dtype=np.int64)
    trainrt.allreduce(counts, "sum")
    flags = next(iter(whole.iter_batches(batch_size=5)))["flag"]
    trainrt.report({"counts": json.dumps(counts.tolist()), "flag_dtype": str(flags.dtype)})

ds = trainrt.data.range(10).map(lambda r: {"id": r["id"], "flag": r["id"] % 2 == 0})
result = TorchTrainer(func, datasets={"train": ds, "valid": ds}, scaling_config=trainrt.ScalingConfig(num_workers=2),
                      dataset_config=trainrt.DataConfig(datasets_to_split=["train"]),
                      run_config=trainrt.RunConfig(name="shard_api", storage_path=os.environ["RAYDATA_STORAGE"])).fit()
print("SHARD_API " + json.dumps(result.metrics))
PY
rc=0; timeout -k 10 120 "$TRAINRT_PYTHON" "$WORK/shard_api.py" >"$WORK/shard_api.out" 2>&1 || rc=$?
line=$(sed -n 's/^SHARD_API //p' "$WORK/shard_api.out")
[ "$rc" -eq 0 ] && jq -e '(.counts | fromjson) == [10, 10, 10, 10, 20] and .flag_dtype == "bool"' <<<"$line" >/dev/null \
  && pass "a shard's materialize().to_pandas(), iter_rows, pandas batches and a local shuffle each read the split's 10 rows once over 2 ranks; an unsplit dataset gives each rank all 10; a bool column comes back bool" \
  || { tail -20 "$WORK/shard_api.out" >&2; fail "the shard API run (exit $rc) reported $line"; }

# Mid-epoch: a report (with its checkpoint) after every batch; USR2 to rank 1 stops the run inside
# an epoch, and the rerun goes on from the next batch of that epoch, in the epoch's shuffled order.
cat >"$WORK/mid_epoch.py" <<'PY'
import os, time
import trainrt
from trainrt.torch import TorchTrainer

def func():
    checkpoint = trainrt.get_checkpoint()  # puts the shard's position back
    done = checkpoint["batches"] if checkpoint else 0
    shard = trainrt.get_dataset_shard("train")
    while done < 15:
        for batch in shard.iter_batches(batch_size=4):
            done += 1
            trainrt.report({"batch": done, "ids": ",".join(map(str, batch["id"].tolist()))},
                           checkpoint=trainrt.Checkpoint({"batches": done}))
            time.sleep(float(os.environ.get("PAUSE_S", "0")))
            if done == 15:
                break

TorchTrainer(func, datasets={"train": trainrt.data.range(40).random_shuffle()},
             scaling_config=trainrt.ScalingConfig(num_workers=2),
             run_config=trainrt.RunConfig(name=os.environ["MID_NAME"], storage_path=os.environ["RAYDATA_STORAGE"])).fit()
PY
mid_rows() { jq -s -c '[.[] | [.batch, .ids]]' "$WORK/runs/$1/result.jsonl"; }
rc=0; MID_NAME=mid_ref timeout -k 10 120 "$TRAINRT_PYTHON" "$WORK/mid_epoch.py" >"$WORK/mid_ref.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || { tail -20 "$WORK/mid_ref.out" >&2; fail "the mid-epoch reference run exits $rc"; }
( rc=0; MID_NAME=mid PAUSE_S=0.3 timeout -k 10 120 "$TRAINRT_PYTHON" "$WORK/mid_epoch.py" >"$WORK/mid.out" 2>&1 || rc=$?
  echo "$rc" >"$WORK/mid.rc" ) &
runner=$!
rows_reached "$WORK/runs/mid" 7 60 || fail "mid: no 7 rows within 60 s"
pid=""; for candidate in $(pgrep -f -- "$WORK/mid_epoch.py" || true); do
  tr '\0' '\n' <"/proc/$candidate/environ" 2>/dev/null | grep -qx "PMI_RANK=1" && pid=$candidate; done
[ -n "$pid" ] && kill -USR2 "$pid"
wait "$runner" || true
stopped=$(rows "$WORK/runs/mid")
rc=0; MID_NAME=mid timeout -k 10 120 "$TRAINRT_PYTHON" "$WORK/mid_epoch.py" >"$WORK/mid.rerun.out" 2>&1 || rc=$?
[ "$(cat "$WORK/mid.rc")" = "$TRAINRT_EXIT_STOPPED" ] && [ $((stopped % 5)) -ne 0 ] && [ "$rc" -eq 0 ] \
  && [ "$(mid_rows mid)" = "$(mid_rows mid_ref)" ] \
  && pass "stopped inside an epoch (after batch $stopped: batch $((stopped % 5)) of epoch $((stopped / 5 + 1)), 5 a rank's epoch), the rerun went on from the next batch: all 15 batches' rows as the uninterrupted run's" \
  || { tail -5 "$WORK/mid.out" "$WORK/mid.rerun.out" >&2; fail "mid-epoch resume (stopped at $stopped, exit $(cat "$WORK/mid.rc"), rerun $rc): $(mid_rows mid) vs $(mid_rows mid_ref)"; }

cat >"$WORK/strings.py" <<'PY'
import os, trainrt
from trainrt.torch import TorchTrainer
ds = trainrt.data.from_items([{"text": "a b", "label": 1}, {"text": "c", "label": 0}])
TorchTrainer(lambda: None, datasets={"train": ds}, scaling_config=trainrt.ScalingConfig(num_workers=2),
             run_config=trainrt.RunConfig(name="strings", storage_path=os.environ["RAYDATA_STORAGE"])).fit()
PY
rc=0; timeout -k 10 120 "$TRAINRT_PYTHON" "$WORK/strings.py" >"$WORK/strings.out" 2>&1 || rc=$?
grep -q "TrainingFailedError: training failed with exit code $TRAINRT_EXIT_DATA (after 0 reports: datasets= could not be written" "$WORK/strings.out" \
  && [ "$(grep -c "^\[trainrt [0-9]*\] error: datasets=.*column 'text' holds strings" "$WORK/strings.out")" -eq 1 ] \
  && ! grep -q "the Python training function raised" "$WORK/strings.out" \
  && pass "a column of strings: before the function ran, exit $TRAINRT_EXIT_DATA, one line for the job and no traceback: $(grep -m1 "column 'text'" "$WORK/strings.out" | cut -c1-150)" \
  || { cat "$WORK/strings.out" >&2; fail "a column of strings: exit $rc"; }

finish
