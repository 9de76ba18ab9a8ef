#!/usr/bin/env bash
# Experiment tracking (docs/guides/tracking.md). A Python function's run with [tracking]
# mlflow_uri and tensorboard_dir, stopped by USR2 and rerun to its end (what a requeue does), has
# one MLflow run (FINISHED, the run's config as parameters, its latest checkpoint's path as a tag)
# holding each reported loss once at its iteration, equal to result.jsonl's, and TensorBoard event
# files whose `loss` scalars (read by TensorBoard's own event reader) are the same. `trainrt
# results --export` sends a finished run to another store once (a second export sends nothing)
# and a sweep's trials as runs of one experiment. Ray's guide pattern (rank 0 logs to MLflow
# inside the function; W&B offline) works, and so do Ray Tune's MLflowLoggerCallback and setup_mlflow
# (tests/cli/mlflow_tune_guide.py after the port) and WandbLoggerCallback and setup_wandb
# (tests/cli/wandb_tune_guide.py, offline) and CometLoggerCallback (tests/cli/comet_tune_guide.py,
# offline). An unknown tracker is one line and exit 2; an
# export that fails when the run ends is a warning and leaves the run's exit code alone.
# ctest: fixture=small_data
source "$(dirname "$0")/../checkpoint/lib.sh"
CKPT_ARGS=(--run.workload=python:tests/python/no_poll_func.py:train --train.epochs=6 --metrics.progress=off
           --failure.collective_timeout=60 --scaling.backend=gloo)
track=(--tracking.mlflow_uri="sqlite:///$WORK/mlflow.db" --tracking.tensorboard_dir="$WORK/tb")

( train 2 tracked "$WORK/tracked.first.out" --train.sleep_s=0.3 "${track[@]}"; echo "$rc" >"$WORK/first.rc" ) &
runner=$!
wait_rows "$WORK/tracked" 2 || fail "no 2 result rows within 60 s"
kill -USR2 "$(rank_pid tracked 1)"
wait "$runner" || true
[ "$(cat "$WORK/first.rc")" = 9 ] && grep -q "tracking: [0-9]* rows to mlflow" "$WORK/tracked.first.out" \
  && pass "stopped at row $(rows "$WORK/tracked"): $(grep -m1 -o 'tracking: [0-9]* rows to mlflow.*' "$WORK/tracked.first.out")" \
  || { show "$WORK/tracked.first.out" 20; fail "the stopped run: exit $(cat "$WORK/first.rc"), no export line"; }
train 2 tracked "$WORK/tracked.out" "${track[@]}"
[ "$rc" -eq 0 ] || { show "$WORK/tracked.out" 20; fail "the rerun exits $rc"; }
"$TRAINRT_PYTHON" - "$WORK" <<'PY' && pass "MLflow and TensorBoard: each of the run's losses once, at its iteration, after a stop and a rerun" || fail "the tracked run"
import json, sys
from mlflow.tracking import MlflowClient
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
work = sys.argv[1]
want = [(r["_training_iteration"], r["loss"]) for r in map(json.loads, open(f"{work}/tracked/result.jsonl"))]
assert [s for s, _ in want] == list(range(1, 7)), want
client = MlflowClient(tracking_uri=f"sqlite:///{work}/mlflow.db")
runs = client.search_runs([client.get_experiment_by_name("tracked").experiment_id])
assert len(runs) == 1, [r.info.run_id for r in runs]
run = runs[0]
got = sorted((m.step, m.value) for m in client.get_metric_history(run.info.run_id, "loss"))
assert got == want, (got, want)
assert run.info.status == "FINISHED", run.info.status
assert run.data.params["train.epochs"] == "6" and run.data.params["run.name"] == "tracked", run.data.params
assert run.data.tags["trainrt.checkpoint.latest"] == f"{work}/tracked/checkpoints/checkpoint_000006", run.data.tags
accumulator = EventAccumulator(f"{work}/tb/tracked")
accumulator.Reload()
board = [(e.step, e.value) for e in accumulator.Scalars("loss")]
assert [s for s, _ in board] == [s for s, _ in want], board
assert all(abs(a - b) <= 1e-6 * abs(b) for (_, a), (_, b) in zip(board, want)), (board, want)  # float32 there
print(f"MLflow run {run.info.run_id}: {len(got)} losses; TensorBoard: {len(board)}")
PY

out="" again=""
out=$("$TRAINRT" results "$WORK/tracked" --export "mlflow=sqlite:///$WORK/other.db" --experiment exported 2>&1) \
  && [[ "$out" == *": 6 rows to mlflow sqlite:///$WORK/other.db"*"up to iteration 6" ]] \
  && again=$("$TRAINRT" results "$WORK/tracked" --export "mlflow=sqlite:///$WORK/other.db" --experiment exported 2>&1) \
  && [[ "$again" == *": 0 rows to mlflow"* ]] \
  && pass "trainrt results --export: $out; again: 0 rows" || fail "results --export: '$out' then '$again'"

rc=0; err=$("$TRAINRT" results "$WORK/tracked" --export wandb=x 2>&1) || rc=$?
[ "$rc" -eq 2 ] && [ "$(grep -c . <<<"$err")" -eq 1 ] && [[ "$err" == *"unknown tracker 'wandb'"* ]] \
  && pass "an unknown tracker: exit 2, $err" || fail "--export wandb=x: exit $rc, $err"

# A destination that cannot be written: the run ends as it would, with a warning naming the retry.
train 2 unwritable "$WORK/unwritable.out" --train.epochs=1 --tracking.mlflow_uri="sqlite:////proc/no/mlflow.db"
[ "$rc" -eq 0 ] && [ "$(grep -c 'tracking: the export' "$WORK/unwritable.out")" -eq 1 ] \
  && grep -q "tracking: the export to mlflow sqlite:////proc/no/mlflow.db failed: .*--export mlflow=sqlite:////proc/no/mlflow.db\` sends" "$WORK/unwritable.out" \
  && pass "an export that fails at the run's end: exit 0 and $(grep -c 'tracking: the export' "$WORK/unwritable.out") warning" \
  || { show "$WORK/unwritable.out" 10; fail "a failing export: exit $rc"; }

# Ray's guide: rank 0 logs to MLflow itself, to a file store as the guide does (MLflow 3 wants
# MLFLOW_ALLOW_FILE_STORE=true for one).
rc=0
MLFLOW_ALLOW_FILE_STORE=true timeout -k 10 120 mpiexec -n 2 "$TRAINRT" --run.workload=python:tests/cli/tracking_guide.py:train_func \
  --train.tracking_uri="file:$WORK/guide_mlruns" --train.epochs=3 --metrics.progress=off \
  --run.storage_path="$WORK" --run.name=guide >"$WORK/guide.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && "$TRAINRT_PYTHON" - "$WORK" <<'PY' && pass "Ray's MLflow guide pattern: rank 0's points equal result.jsonl's" || { show "$WORK/guide.out" 20; fail "the guide's function: exit $rc"; }
import json, os, sys
from mlflow.tracking import MlflowClient
os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
work = sys.argv[1]
want = [(r["_training_iteration"], r["loss"]) for r in map(json.loads, open(f"{work}/guide/result.jsonl"))]
client = MlflowClient(tracking_uri=f"file:{work}/guide_mlruns")
runs = client.search_runs([client.get_experiment_by_name("guide").experiment_id])
assert len(runs) == 1 and runs[0].info.run_name == "guide", runs
got = sorted((m.step, m.value) for m in client.get_metric_history(runs[0].info.run_id, "loss"))
assert got == want and len(want) == 3, (got, want)
PY

# Ray's guide, its W&B tab: rank 0 logs to W&B offline; W&B's transaction log holds each
# reported loss once, in order, under a W&B run whose id is the run's name.
rc=0
WANDB_MODE=offline WANDB_SILENT=true timeout -k 10 120 mpiexec -n 2 "$TRAINRT" \
  --run.workload=python:tests/cli/wandb_guide.py:train_func --train.wandb_dir="$WORK/wandb_runs" --train.epochs=3 \
  --metrics.progress=off --run.storage_path="$WORK" --run.name=wandb_guide >"$WORK/wandb.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && PYTHONPATH=tests/cli "$TRAINRT_PYTHON" - "$WORK" <<'PY' && pass "Ray's W&B guide pattern (offline): rank 0's history equals result.jsonl's" || { show "$WORK/wandb.out" 20; fail "the W&B guide's function: exit $rc"; }
import glob, json, sys
from wandb_records import history, run_record

work = sys.argv[1]
runs = glob.glob(f"{work}/wandb_runs/wandb/offline-run-*")
assert len(runs) == 1 and runs[0].endswith("-wandb_guide"), runs
got = [row["loss"] for row in history(f"{runs[0]}/run-wandb_guide.wandb")]
want = [row["loss"] for row in map(json.loads, open(f"{work}/wandb_guide/result.jsonl"))]
assert got == want and len(want) == 3, (got, want)
run = run_record(f"{runs[0]}/run-wandb_guide.wandb")
assert run.run_id == "wandb_guide" and run.display_name == "wandb_guide", run
PY

# A sweep's trials: runs of one experiment named after the sweep.
cat >"$WORK/sweep.ini" <<INI
[tune]
base = $TRAINRT_SRC/jobs/fashion_mlp.ini
metric = test_accuracy
num_samples = 2
[space]
train.lr = choice(0.01, 0.05)
INI
rc=0
timeout -k 10 300 "$TRAINRT" tune --config "$WORK/sweep.ini" --data.path="$SMALL_DATA" --run.storage_path="$WORK" \
  --run.name=sweep --ranks 1 --train.epochs=2 >"$WORK/sweep.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || { show "$WORK/sweep.out" 20; fail "the sweep exits $rc"; }
"$TRAINRT" results "$WORK/sweep" --export "mlflow=sqlite:///$WORK/sweep.db" >"$WORK/sweep_export.out" 2>&1 \
  && "$TRAINRT_PYTHON" - "$WORK" <<'PY' && pass "a sweep's export: $(tr '\n' ' ' <"$WORK/sweep_export.out")" || fail "a sweep's export: $(cat "$WORK/sweep_export.out")"
import json, sys
from mlflow.tracking import MlflowClient
work = sys.argv[1]
client = MlflowClient(tracking_uri=f"sqlite:///{work}/sweep.db")
runs = client.search_runs([client.get_experiment_by_name("sweep").experiment_id])
assert sorted(r.info.run_name for r in runs) == ["trial_0000", "trial_0001"], [r.info.run_name for r in runs]
for run in runs:
    rows = [json.loads(l) for l in open(f"{work}/sweep/{run.info.run_name}/result.jsonl")]
    points = client.get_metric_history(run.info.run_id, "test_accuracy")
    assert [(m.step, m.value) for m in points] == [(r["_training_iteration"], r["test_accuracy"]) for r in rows]
    assert run.data.params["train.lr"] in ("0.01", "0.05"), run.data.params
PY

# Ray Tune's MLflow integration (ray.air.integrations.mlflow after the port): the driver's
# MLflowLoggerCallback makes one run per trial, and each trial's setup_mlflow its own run.
sed -e 's/\bray\.train\b/trainrt/g' -e 's/\bray\.tune\b/trainrt.tune/g' -e 's/\bray\b/trainrt/g' \
  tests/cli/mlflow_tune_guide.py >"$WORK/mlflow_tune.py"
rc=0
# (in $WORK: with an SQLite store, MLflow keeps artifacts under ./mlruns of the driver's directory)
(cd "$WORK" && PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python" MLFLOW_ALLOW_FILE_STORE=true timeout -k 10 300 \
  "$TRAINRT_PYTHON" "$WORK/mlflow_tune.py" "$WORK/tune_runs" "sqlite:///$WORK/callback.db" "file:$WORK/mixin_mlruns") \
  >"$WORK/mlflow_tune.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && "$TRAINRT_PYTHON" - "$WORK" <<'PY' && pass "Ray Tune's MLflowLoggerCallback and setup_mlflow: a run per trial each, every row's loss at its iteration" || { show "$WORK/mlflow_tune.out" 20; fail "the Tune MLflow script: exit $rc"; }
import json, os, sys
from mlflow.tracking import MlflowClient
os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
work = sys.argv[1]
client = MlflowClient(tracking_uri=f"sqlite:///{work}/callback.db")
runs = client.search_runs([client.get_experiment_by_name("example").experiment_id])
assert len(runs) == 2, [r.info.run_name for r in runs]
for run in runs:
    trial = "_".join(run.data.tags["trial_name"].split("_")[-2:])  # train_function_trial_0000
    rows = [json.loads(l) for l in open(f"{work}/tune_runs/mlflow/{trial}/result.jsonl")]
    got = [(m.step, m.value) for m in client.get_metric_history(run.info.run_id, "mean_loss")]
    assert got == [(r["_training_iteration"], r["mean_loss"]) for r in rows] and len(got) == 3, (got, rows)
    assert run.info.status == "FINISHED" and run.data.params["mlflow/tracking_uri"].startswith("file:")
    assert "result.jsonl" in [a.path for a in client.list_artifacts(run.info.run_id)]
mixin = MlflowClient(tracking_uri=f"file:{work}/mixin_mlruns")
runs = mixin.search_runs([mixin.get_experiment_by_name("mixin_example").experiment_id])
assert len(runs) == 2 and sorted(r.data.params["width"] for r in runs) == ["1", "3"], runs
for run in runs:
    assert [m.step for m in mixin.get_metric_history(run.info.run_id, "mean_loss")] == [0, 1, 2]
PY

# Ray Tune's W&B integration (ray.air.integrations.wandb after the port), offline: the driver's
# WandbLoggerCallback makes one W&B run per trial (its rows at their training_iteration, the group
# the sweep's name), and each trial's setup_wandb its own run (the id the trial's).
sed -e 's/\bray\.train\b/trainrt/g' -e 's/\bray\.tune\b/trainrt.tune/g' -e 's/\bray\b/trainrt/g' \
  tests/cli/wandb_tune_guide.py >"$WORK/wandb_tune.py"
rc=0
PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python" WANDB_MODE=offline WANDB_SILENT=true WANDB_DIR="$WORK/wandb_tune" \
  timeout -k 10 300 "$TRAINRT_PYTHON" "$WORK/wandb_tune.py" "$WORK/tune_runs" >"$WORK/wandb_tune.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && PYTHONPATH=tests/cli "$TRAINRT_PYTHON" - "$WORK" <<'PY' && pass "Ray Tune's WandbLoggerCallback and setup_wandb (offline): a W&B run per trial each, every row's loss at its iteration" || { show "$WORK/wandb_tune.out" 20; fail "the Tune W&B script: exit $rc"; }
import glob, json, sys
from wandb_records import history, run_record
work = sys.argv[1]
logs = glob.glob(f"{work}/wandb_tune/wandb/offline-run-*/*.wandb")
assert len(logs) == 4, logs
for trial in ("trial_0000", "trial_0001"):
    rows = [json.loads(l) for l in open(f"{work}/tune_runs/wandb/{trial}/result.jsonl")]
    runs = {run_record(log).display_name: log for log in logs if run_record(log).run_id == trial}
    callback = history(runs[f"train_function_{trial}"])
    assert [(h["_step"], h["mean_loss"]) for h in callback] == [(r["_training_iteration"], r["mean_loss"]) for r in rows]
    assert run_record(runs[f"train_function_{trial}"]).run_group == "wandb"
    assert [h["fn_loss"] for h in history(runs[trial])] == [r["mean_loss"] for r in rows] and len(rows) == 3
PY
PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python" "$TRAINRT_PYTHON" - >"$WORK/wandb_refused.out" 2>&1 <<'PY' && pass "WandbLoggerCallback refuses what trainrt cannot do: $(cat "$WORK/wandb_refused.out")" || { cat "$WORK/wandb_refused.out"; fail "upload_checkpoints=True was accepted"; }
from trainrt.air.integrations.wandb import WandbLoggerCallback
try:
    WandbLoggerCallback(project="p", upload_checkpoints=True)
except ValueError as error:
    print(error)
else:
    raise SystemExit("accepted")
PY

# Ray Tune's Comet integration (ray.air.integrations.comet after the port), offline: the driver's
# CometLoggerCallback(online=False) makes one Comet experiment per trial, archived for `comet upload`.
sed -e 's/\bray\.train\b/trainrt/g' -e 's/\bray\.tune\b/trainrt.tune/g' -e 's/\bray\b/trainrt/g' \
  tests/cli/comet_tune_guide.py >"$WORK/comet_tune.py"
rc=0
PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python" timeout -k 10 300 "$TRAINRT_PYTHON" "$WORK/comet_tune.py" "$WORK/tune_runs" \
  "$WORK/comet_offline" >"$WORK/comet_tune.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && "$TRAINRT_PYTHON" - "$WORK" <<'PY' && pass "Ray Tune's CometLoggerCallback (offline): an archived experiment per trial, every row's loss at its iteration" || { show "$WORK/comet_tune.out" 20; fail "the Tune Comet script: exit $rc"; }
import glob, json, sys, zipfile
work = sys.argv[1]
archives = glob.glob(f"{work}/comet_offline/*.zip")
assert len(archives) == 2, archives
seen = set()
for archive in archives:
    messages = [json.loads(line) for line in zipfile.ZipFile(archive).read("messages.json").splitlines()]
    name = next(m["payload"]["value"] for m in messages if m["type"] == "log_other" and m["payload"]["key"] == "Name")
    trial = "_".join(name.split("_")[-2:])  # train_function_trial_0000
    rows = [json.loads(line) for line in open(f"{work}/tune_runs/comet/{trial}/result.jsonl")]
    got = [(m["payload"]["metric"]["step"], m["payload"]["metric"]["metricValue"]) for m in messages
           if m["type"] == "metric_msg" and m["payload"]["metric"]["metricName"] == "mean_loss"]
    assert got == [(r["_training_iteration"], r["mean_loss"]) for r in rows] and len(got) == 3, (got, rows)
    assert json.loads(zipfile.ZipFile(archive).read("experiment.json"))["tags"] == ["trainrt-test"]
    seen.add(trial)
assert seen == {"trial_0000", "trial_0001"}, seen
PY
finish
