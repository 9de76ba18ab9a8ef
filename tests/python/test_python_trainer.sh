#!/usr/bin/env bash
# Ray Train's quickstart (tests/python/ray_quickstart.py) after `sed s/ray.train/trainrt/g` only:
# from a plain `python3 train.py` TorchTrainer.fit() starts its 2 ranks (mpiexec) and returns the
# Result to the driver alone, whose checkpoint's model.pt loads into a fresh model with the
# reported accuracy; under `mpiexec -n 2` every rank runs the function and gets the Result; under
# `mpiexec -n 3` a mismatch with num_workers is one line and 3 ranks train; the script's own
# --run.name beats RunConfig's, and --print-config names each object field a value came from; two fit() calls in one script train once each; loaded as a python: workload, its module-level fit() is one line,
# exit 2, nothing run. A --train.KEY one edit away from a key of the function's train_loop_config
# (--train.epoch for epochs) is one did-you-mean line, exit 2, no traceback, nothing run.
# ctest: fixture=small_data
source "$(dirname "$0")/../lib/common.sh"
require_small_data
export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python" QUICKSTART_DATA="$SMALL_IDX" QUICKSTART_RUNS="$WORK/runs"
sed 's/ray\.train/trainrt/g' tests/python/ray_quickstart.py >"$WORK/train.py"
grep -q "ray" "$WORK/train.py" && fail "the sed left a Ray name: $(grep -m1 ray "$WORK/train.py")"

# driver_line OUT: the driver's summary lines.
# The ranks under mpiexec share one pipe: one rank's line can land inside another's (print writes
# the text and its newline apart), so driver lines are counted and read as matches, not lines.
drivers() { grep -o 'driver: path ' "$1" | wc -l; }
check_driver() {  # NAME OUT RUN_NAME: the driver's model has the reported accuracy, from RUN_NAME's run
  local line
  line=$(grep -o "driver: path [^,]*, [0-9]* checkpoints, epoch [0-9]*, reported accuracy [0-9.]*, loaded model's [0-9.]*" "$2" | head -1)
  [[ "$line" =~ path\ ([^,]*),\ 2\ checkpoints,\ epoch\ 1,\ reported\ accuracy\ ([0-9.]+),\ loaded\ model\'s\ ([0-9.]+) ]] \
    && [ "${BASH_REMATCH[2]}" = "${BASH_REMATCH[3]}" ] && [ "${BASH_REMATCH[1]}" = "$WORK/runs/$3" ] \
    && pass "$1: $line" || { tail -5 "$2" >&2; fail "$1: driver line '$line'"; }
}

rc=0; timeout -k 10 300 "$TRAINRT_PYTHON" "$WORK/train.py" >"$WORK/plain.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && [ "$(drivers "$WORK/plain.out")" -eq 1 ] \
  && [ "$(jq -r 'select(.event == "start") | .world_size' "$WORK/runs/quickstart/events.jsonl")" = 2 ] \
  && pass "python3 train.py: fit() started 2 ranks, one driver line" || { tail "$WORK/plain.out" >&2; fail "python3 train.py: exit $rc"; }
check_driver plain "$WORK/plain.out" quickstart

rc=0; timeout -k 10 300 mpiexec -n 2 "$TRAINRT_PYTHON" "$WORK/train.py" --run.name=launched >"$WORK/launched.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && [ "$(drivers "$WORK/launched.out")" -eq 2 ] && [ ! -e "$WORK/runs/quickstart/launched" ] \
  && pass "mpiexec -n 2 python3 train.py --run.name=launched: both ranks get the Result of run 'launched'" \
  || { tail "$WORK/launched.out" >&2; fail "under mpiexec: exit $rc"; }
check_driver launched "$WORK/launched.out" launched

rc=0; timeout -k 10 300 mpiexec -n 3 "$TRAINRT_PYTHON" "$WORK/train.py" --run.name=three >"$WORK/three.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && [ "$(grep -c 'ScalingConfig(num_workers=2), but the launcher started 3 ranks' "$WORK/three.out")" -eq 1 ] \
  && pass "mpiexec -n 3: $(grep -m1 'num_workers=2' "$WORK/three.out")" || { tail "$WORK/three.out" >&2; fail "mpiexec -n 3: exit $rc"; }

rc=0; "$TRAINRT_PYTHON" "$WORK/train.py" --print-config --checkpoint.num_to_keep=5 >"$WORK/print.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && grep -qx "name = quickstart    # train.py: RunConfig(name=)" "$WORK/print.out" \
  && grep -qx "storage_path = $WORK/runs    # train.py: RunConfig(storage_path=)" "$WORK/print.out" \
  && grep -qx "num_to_keep = 5    # command line" "$WORK/print.out" && [ ! -e "$WORK/runs/quickstart/print" ] \
  && pass "python3 train.py --print-config: no ranks started; $(grep -m1 'RunConfig(name=)' "$WORK/print.out"); the command line beats the objects" \
  || { cat "$WORK/print.out" >&2; fail "--print-config from the script: exit $rc"; }

# Two fit() calls in one script from a plain python3: the ranks of the second meet the first again
# on their way and get its Result without training it again.
cat >"$WORK/two_fits.py" <<'PY'
import os, trainrt
def f(config):
    trainrt.report({"x": config["x"], "world": trainrt.get_context().world_size})
def trainer(name, x):
    return trainrt.DataParallelTrainer(f, train_loop_config={"x": x}, scaling_config=trainrt.ScalingConfig(num_workers=2),
                                       run_config=trainrt.RunConfig(name=name, storage_path=os.environ["QUICKSTART_RUNS"]))
first = trainer("first", 1).fit()
second = trainer("second", first.metrics["x"] + 1).fit()
print(f"driver: x {first.metrics['x']} then {second.metrics['x']} on {second.metrics['world']} ranks", flush=True)
PY
rc=0; timeout -k 10 120 "$TRAINRT_PYTHON" "$WORK/two_fits.py" >"$WORK/two_fits.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && grep -qx "driver: x 1 then 2 on 2 ranks" "$WORK/two_fits.out" \
  && [ "$(count_events "$WORK/runs/first" '.event == "start"')" -eq 1 ] \
  && pass "two fit() calls from a plain python3: each trained once, the second from the first's Result" \
  || { tail "$WORK/two_fits.out" >&2; fail "two fit() calls: exit $rc"; }

rc=0; timeout -k 10 120 "$TRAINRT" --run.workload=python:"$WORK/train.py":train_func --run.storage_path="$WORK/runs" \
  --run.name=workload >"$WORK/workload.out" 2>&1 || rc=$?
[ "$rc" -eq "$TRAINRT_EXIT_CONFIG" ] && [ "$(grep -c 'calls fit() while trainrt loads it' "$WORK/workload.out")" -eq 1 ] \
  && [ ! -e "$WORK/runs/workload" ] \
  && pass "as a python: workload, module-level fit(): exit 2, $(grep -m1 -o 'calls fit() while.*' "$WORK/workload.out" | cut -c1-80)..." \
  || { cat "$WORK/workload.out" >&2; fail "module-level fit() under trainrt: exit $rc"; }
rc=0; timeout -k 10 120 "$TRAINRT_PYTHON" "$WORK/train.py" --train.epoch=3 --run.name=typo >"$WORK/typo.out" 2>&1 || rc=$?
[ "$rc" -eq "$TRAINRT_EXIT_CONFIG" ] && [ "$(grep -c "did you mean 'train.epochs' (the function's train_loop_config)" "$WORK/typo.out")" -eq 1 ] \
  && ! grep -q Traceback "$WORK/typo.out" && [ ! -e "$WORK/runs/typo" ] \
  && pass "--train.epoch=3 beside train_loop_config's epochs: exit 2, one line: $(grep -m1 -o 'train.epoch (command line).*?' "$WORK/typo.out" | cut -c1-90)" \
  || { cat "$WORK/typo.out" >&2; fail "--train.epoch=3: exit $rc"; }
finish
