#!/usr/bin/env bash
# torch_fashion_mlp (LibTorch, DDP over trainrt) against PyTorch 1.13 in Python on the same recipe
# from the same initial weights (tests/data/torch_init_seed0.h5; tests/data/torch_reference.json
# holds PyTorch's per-epoch numbers): per-epoch train loss within 1e-5 relative and the same test
# accuracy, on 1 and 2 ranks.
source "$(dirname "$0")/../lib/common.sh"
require_data
for n in 1 2; do
  mpiexec -n $n "$TRAINRT" --config jobs/fashion_mlp.ini --run.workload=torch_fashion_mlp --train.epochs=2 \
    --train.init_weights=tests/data/torch_init_seed0.h5 --metrics.progress=off \
    --run.storage_path="$WORK" --run.name=n$n >"$WORK/n$n.out" 2>&1 || { tail "$WORK/n$n.out"; fail "torch_fashion_mlp on $n ranks"; finish; }
done
"$TRAINRT_PYTHON" - "$WORK" tests/data/torch_reference.json <<'PY' && pass "per-epoch losses within 1e-5 of PyTorch's" || fail "torch_fashion_mlp differs from PyTorch"
import json, sys
work, ref = sys.argv[1], json.load(open(sys.argv[2]))["runs"]
bad = 0
for n in ("1", "2"):
    ours = [json.loads(l) for l in open(f"{work}/n{n}/result.jsonl")]
    assert len(ours) == 2, f"{n} ranks: {len(ours)} rows"
    for x, y in zip(ours, ref[n]):
        rel = abs(x["loss"] - y["loss"]) / abs(y["loss"])
        ok = rel <= 1e-5 and x["test_accuracy"] == y["test_accuracy"]
        bad += not ok
        print(f"{'ok' if ok else 'FAIL'}: n={n} epoch {x['epoch']}: loss {x['loss']:.9f} vs PyTorch {y['loss']:.9f} "
              f"(rel {rel:.1e}), accuracy {x['test_accuracy']} vs {y['test_accuracy']}")
sys.exit(1 if bad else 0)
PY
finish
