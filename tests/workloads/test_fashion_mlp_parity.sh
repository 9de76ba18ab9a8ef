#!/usr/bin/env bash
# fashion_mlp against PyTorch 1.13 on the same recipe, from the same initial weights
# (tests/data/torch_init_seed0.h5, made once by tools/torch_reference.py): per-epoch train loss
# within 0.5 % and test accuracy within 0.5 points, on 1, 2 and 4 ranks; and the rank counts agree
# with each other the same way.
source "$(dirname "$0")/../lib/common.sh"
require_data
REF=tests/data/torch_reference.json
for n in 1 2 4; do
  mpiexec -n $n "$TRAINRT" --config jobs/fashion_mlp.ini --train.epochs=2 \
    --train.init_weights=tests/data/torch_init_seed0.h5 \
    --run.storage_path="$WORK" --run.name=n$n >"$WORK/n$n.out"
done
"$TRAINRT_PYTHON" - "$WORK" "$REF" <<'PY'
import json, sys
work, ref_path = sys.argv[1], sys.argv[2]
ref = json.load(open(ref_path))["runs"]
ours = {n: [json.loads(l) for l in open(f"{work}/n{n}/result.jsonl")] for n in ("1", "2", "4")}
bad = 0
def compare(label, a, b):
    global bad
    for x, y in zip(a, b):
        rel = abs(x["loss"] - y["loss"]) / abs(y["loss"])
        acc = abs(x["test_accuracy"] - y["test_accuracy"])
        ok = rel <= 0.005 and acc <= 0.005
        bad += not ok
        print(f"{'ok' if ok else 'FAIL'}: {label} epoch {x['epoch']}: loss {x['loss']:.6f} vs "
              f"{y['loss']:.6f} (rel {rel:.2e}), accuracy {x['test_accuracy']:.4f} vs {y['test_accuracy']:.4f}")
for n in ("1", "2", "4"):
    assert len(ours[n]) == 2, f"{n} ranks reported {len(ours[n])} rows, expected 2"
    compare(f"trainrt n={n} vs torch n={n}", ours[n], ref[n])
for n in ("2", "4"):
    compare(f"trainrt n={n} vs trainrt n=1", ours[n], ours["1"])
sys.exit(1 if bad else 0)
PY
echo "all checks passed"
