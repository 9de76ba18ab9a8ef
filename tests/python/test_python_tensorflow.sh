#!/usr/bin/env bash
# TensorFlow/Keras as Ray Train's guide has it (tests/python/tensorflow_guide.py: a
# MultiWorkerMirroredStrategy in the function, TensorflowTrainer, the Keras ReportCheckpointCallback,
# the model loaded from get_checkpoint() in the strategy's scope), after `sed 's/ray\.train/trainrt/g'`:
#  - from a plain `python3 train.py`: fit() starts 2 ranks, TF_CONFIG makes them one cluster of two
#    workers, one report per epoch with Keras's loss and accuracy, the loss falls, the model of
#    result.checkpoint classifies the test images, and every number equals Ray's run of the same
#    script (tests/conformance/ray_guides.json);
#  - its train_func as a trainrt workload under mpiexec: USR2 to rank 1 stops the run at the epoch's
#    report, its rerun resumes and is killed (kill -9 of rank 1) as it resumes, the second rerun
#    resumes and every reported loss and accuracy equals the uninterrupted run's;
#  - prepare_dataset_shard turns TensorFlow's auto-sharding off; Ray's names that take arguments
#    refuse what they cannot do with one line.
# ctest: fixture=small_data
source "$(dirname "$0")/framework_lib.sh"
require_small_data
"$TRAINRT_PYTHON" -c 'import tensorflow, tf_keras' 2>/dev/null || { fail "this Python has no tensorflow/tf-keras (make deps installs them)"; finish; }
export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python:$TRAINRT_SRC/tests/python" TENSORFLOW_DATA="$SMALL_IDX" \
  TENSORFLOW_STORAGE="$WORK/runs" TF_CPP_MIN_LOG_LEVEL=2
sed_copy tests/python/tensorflow_guide.py

rc=0; TENSORFLOW_NAME=guide timeout -k 10 300 "$TRAINRT_PYTHON" "$WORK/tensorflow_guide.py" >"$WORK/guide.out" 2>&1 || rc=$?
line=$(sed -n 's/^TENSORFLOW_GUIDE //p' "$WORK/guide.out")
[ "$rc" -eq 0 ] && [ -n "$line" ] || { tail -30 "$WORK/guide.out" >&2; fail "the guide's script exits $rc"; finish; }
jq -e '(.losses | length) == 3 and .losses[2] < .losses[0] and .test_accuracy > 0.6' <<<"$line" >/dev/null \
  && pass "python3 train.py: losses $(jq -c '[.losses[] | . * 1000 | round / 1000]' <<<"$line"), the checkpoint's model -> test accuracy $(jq '.test_accuracy * 1000 | round / 1000' <<<"$line")" \
  || fail "the guide's run reported $line"
jq -e '.world_size == 2' "$WORK/runs/guide/result.jsonl" >/dev/null \
  && pass "the guide's run trained on 2 ranks" || fail "the guide's run: world sizes $(jq -s -c '[.[].world_size]' "$WORK/runs/guide/result.jsonl")"
fw_matches_ray tensorflow "$line"

FW_ARGS=(--run.workload=python:"$WORK/tensorflow_guide.py":train_func --train.epochs=6 --train.samples=6000)
FW_ROW='[.loss, .accuracy]' FW_EPOCH_KEY=_training_iteration FW_EPOCHS='[1,2,3,4,5,6]'
fw_reference
fw_stop_and_kill USR2

"$TRAINRT_PYTHON" - >"$WORK/refused.out" 2>"$WORK/refused.err" <<'PY' && pass "refused with one line each: $(paste -sd'|' "$WORK/refused.out")" || { cat "$WORK/refused.out" "$WORK/refused.err" >&2; fail "a bad argument was accepted"; }
import os
os.environ["TF_USE_LEGACY_KERAS"] = "1"
import tensorflow as tf
import trainrt
from trainrt.tensorflow import TensorflowCheckpoint, TensorflowTrainer
from trainrt.tensorflow.keras import ReportCheckpointCallback
cases = [lambda: ReportCheckpointCallback(checkpoint_on="epoch_ends"),
         lambda: TensorflowTrainer(lambda: None, tensorflow_config={"backend": "grpc"}),
         lambda: TensorflowCheckpoint.get_model(trainrt.Checkpoint.from_directory(os.getcwd()))]
from trainrt.tensorflow import prepare_dataset_shard
policy = prepare_dataset_shard(tf.data.Dataset.range(4)).options().experimental_distribute.auto_shard_policy
if policy != tf.data.experimental.AutoShardPolicy.OFF:
    raise SystemExit(f"prepare_dataset_shard left auto-sharding {policy}")
for case in cases:
    try:
        case()
    except (ValueError, TypeError) as error:
        print(str(error).splitlines()[0])
    else:
        raise SystemExit("accepted")
PY
finish
