#!/usr/bin/env bash
# checkpoint.async + snapshot = background from a Python function: report() awaits the copy of
# arrays that view the function's state (it changes them right after: the checkpoint holds the
# values at report()), but not of private copies (trainrt.torch's pinned staging of CUDA tensors,
# marked with Checkpoint._mark_private): those are kept alive and copied beside the next steps,
# while the function drops its references and fills new memory. Both checkpoints hold what was
# reported, read back with h5py by name.
source "$(dirname "$0")/../lib/common.sh"
cat >"$WORK/snap.py" <<'PY'
import numpy as np, trainrt
from trainrt import _state
from trainrt.checkpoint import Checkpoint
N = 2_000_000  # 16 MB per array: far above the background snapshot's 1 MiB
def f():
    private = np.arange(N, dtype=np.float64)
    first = Checkpoint({"p": private}); first._mark_private([private])
    trainrt.report({"step": 1}, checkpoint=first)
    assert _state._local["snapshot_sources"] is not None, "a private-only checkpoint was awaited in report()"
    del first, private
    junk = [np.full(N, 7.0) for _ in range(4)]  # reuses the memory, had the arrays gone
    live = np.full(N, 1.0)
    private = np.arange(N, dtype=np.float64) * 2
    second = Checkpoint({"p": private, "live": live}); second._mark_private([private])
    trainrt.report({"step": 2}, checkpoint=second)
    assert _state._local["snapshot_sources"] is None, "state that views the function's arrays was not awaited"
    live[:] = -1.0
    print("snapshot function done", len(junk), flush=True)
PY
rc=0
mpiexec -n 1 "$TRAINRT" --run.workload=python:"$WORK/snap.py":f --checkpoint.async=true --checkpoint.snapshot=background \
  --run.storage_path="$WORK" --run.name=snap --metrics.progress=off >"$WORK/snap.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && grep -q 'snapshot function done' "$WORK/snap.out" \
  && pass "private arrays left to the background copy, views of the state awaited in report()" \
  || { cat "$WORK/snap.out" >&2; fail "the snapshot function (exit $rc)"; finish; }
"$TRAINRT_PYTHON" - "$WORK/snap/checkpoints" <<'PY' && pass "both checkpoints hold the reported values" || fail "a checkpoint holds other values than reported"
import glob, sys, h5py, numpy as np
def arrays(iteration):
    found = {}
    for path in glob.glob(f"{sys.argv[1]}/checkpoint_*{iteration}/*.h5"):
        with h5py.File(path, "r") as f:
            f.visititems(lambda name, obj: found.__setitem__(name.split("/")[-1], obj[...]) if isinstance(obj, h5py.Dataset) else None)
    return found
N = 2_000_000
one, two = arrays(1), arrays(2)
assert np.array_equal(one["p"], np.arange(N, dtype=np.float64)), "checkpoint 1: p"
assert np.array_equal(two["p"], np.arange(N, dtype=np.float64) * 2), "checkpoint 2: p"
assert np.array_equal(two["live"], np.full(N, 1.0)), "checkpoint 2: live changed after report()"
print("checkpoint 1: p; checkpoint 2: p, live: as reported")
PY
finish
