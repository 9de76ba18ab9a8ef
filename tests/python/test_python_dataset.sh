#!/usr/bin/env bash
# trainrt.get_dataset() from a Python training function on 2 ranks (the streaming reader behind
# Ray Data's names): every sample once per epoch across the ranks in each shuffle, batch_size per
# worker, columns with their dtypes and shapes, a position saved mid-epoch resumes with exactly the
# rest of the epoch, iter_torch_batches gives tensors, a resume under another batch size is refused.
source "$(dirname "$0")/../lib/common.sh"

"$TRAINRT_PYTHON" - "$WORK" <<'PY'
import sys, numpy as np
w = sys.argv[1]
n = 203
np.save(f"{w}/id.npy", np.arange(n, dtype=np.int64))
np.save(f"{w}/x.npy", (np.arange(n * 6, dtype=np.float32) / 6).reshape(n, 2, 3))
PY
"$TRAINRT" data import npy "$WORK/id.npy" "$WORK/x.npy" --features x --label id --out "$WORK/d.h5" >/dev/null

cat >"$WORK/stream.py" <<'PY'
import numpy as np
import trainrt

def train(config):
    ds = trainrt.get_dataset("train")
    rank = trainrt.get_context().world_rank
    assert ds.size == 203 and ds.feature_column == "x" and ds.label_column == "id", (ds.size, ds.feature_column)
    assert [c["name"] for c in ds.columns] == ["id", "x"] and ds.columns[1]["shape"] == [2, 3]
    for shuffle in ["none", "global", "blocks"]:
        seen = np.zeros(203, dtype=np.int64)
        it = ds.iter_batches(batch_size=8, epoch=3, shuffle=shuffle, shuffle_buffer=32)
        for batch in it:
            assert batch["x"].dtype == np.float32 and batch["x"].shape[1:] == (2, 3)
            assert batch["id"].dtype == np.int64
            assert np.array_equal(batch["x"][:, 0, 0], batch["id"].astype(np.float32)), "x row != id row"
            assert len(batch["id"]) in (7, 8) or it.position["next_batch"] == len(it)
            np.add.at(seen, batch["id"], 1)
        trainrt.allreduce(seen, "sum")
        assert (seen == 1).all(), f"{shuffle}: samples seen {np.bincount(seen)} times"
        print(f"rank {rank}: {shuffle}: every sample once in {len(it)} batches of 16", flush=True)
    whole = [b["id"].tolist() for b in ds.iter_batches(batch_size=8, epoch=5, shuffle="global")]
    it = ds.iter_batches(batch_size=8, epoch=5, shuffle="global")
    head = [next(it)["id"].tolist() for _ in range(5)]
    state = it.state_dict()
    rest = [b["id"].tolist() for b in ds.iter_batches(batch_size=8, shuffle="global", resume=state)]
    assert state == {"epoch": 5, "next_batch": 5, "batch_size": 16, "shuffle": "global",
                     "order": "global rows=203 batch=16 seed=0"}, state
    assert head + rest == whole, "resume did not give the rest of the epoch"
    print(f"rank {rank}: resumed at batch 5: the rest of the epoch exactly", flush=True)
    import torch
    batch = next(iter(ds.iter_torch_batches(batch_size=4, columns=["x"])))
    assert isinstance(batch["x"], torch.Tensor) and batch["x"].dtype == torch.float32 and list(batch) == ["x"]
    print(f"rank {rank}: iter_torch_batches: tensors", flush=True)
    try:
        ds.iter_batches(batch_size=4, shuffle="global", resume=state)
    except trainrt.Error as error:
        print(f"rank {rank}: refused: {error}", flush=True)
PY
out=$WORK/stream.out
timeout -k 5 300 mpiexec -n 2 "$TRAINRT" --run.workload=python:"$WORK/stream.py":train --data.path="$WORK/d.h5" \
  --scaling.backend=mpi --run.storage_path="$WORK/runs" --run.name=stream --metrics.progress=off >"$out" 2>&1 && rc=0 || rc=$?
[ "$rc" -eq 0 ] || { cat "$out"; fail "the function failed (exit $rc)"; finish; }
for shuffle in none global blocks; do
  [ "$(grep -o "$shuffle: every sample once in 13 batches of 16" "$out" | wc -l)" -eq 2 ] \
    && pass "$shuffle: every sample once per epoch across 2 ranks, 8 per worker" || fail "$shuffle: $(grep "$shuffle" "$out")"
done
[ "$(grep -o "resumed at batch 5: the rest of the epoch exactly" "$out" | wc -l)" -eq 2 ] && pass "state_dict() mid-epoch resumes exactly" \
  || fail "resume: $(cat "$out")"
[ "$(grep -o "iter_torch_batches: tensors" "$out" | wc -l)" -eq 2 ] && pass "iter_torch_batches gives float32 tensors" || fail "torch batches"
grep -q "refused: iter_batches: the position given as resume was saved in the order 'global rows=203 batch=16 seed=0', this run reads it in the order 'global rows=203 batch=8 seed=0'" "$out" \
  && pass "a position under another batch size is refused" || fail "no refusal: $(cat "$out")"
finish
