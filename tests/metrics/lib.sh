# shellcheck shell=bash
# Helpers for the metrics suite: fast runs of the `reporter` test plugin (tests/plugins/reporter.cpp:
# known rank-dependent values, optional straggler, late key, checkpoints) under mpiexec.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
REPORTER="$TRAINRT_BUILD/tests/plugins/libtest_plugin_reporter.so"
[ -f "$REPORTER" ] || { echo "FAIL: $REPORTER missing (built with the tests)" >&2; exit 1; }
cat >"$WORK/reporter.ini" <<INI
[run]
storage_path = $WORK
workload = plugin:$REPORTER
INI

# report_run NP NAME OUT [--key=value ...]: runs the reporter on NP ranks as run NAME (run dir
# $WORK/NAME), stdout+stderr to OUT; sets rc.
report_run() {
  local np=$1 name=$2 out=$3
  shift 3
  rc=0
  mpiexec -n "$np" "$TRAINRT" --config "$WORK/reporter.ini" --run.name="$name" "$@" >"$out" 2>&1 || rc=$?
}

show() { echo "--- $1:" >&2; tail -n 30 "$1" >&2; }

# h5_rows RUN_DIR: the rows of metrics.h5 as JSON lines {iteration, loss} read with h5py (SWMR).
h5_py() {
  "$TRAINRT_PYTHON" - "$@" <<'PY'
import json, sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    d = f["metrics"][:]
for row in d:
    print(json.dumps({"iteration": int(row["_training_iteration"]), "loss": float(row["loss"])}))
PY
}
