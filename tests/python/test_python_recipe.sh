#!/usr/bin/env bash
# Ray Train's FashionMNIST recipe as a Python training function (examples/python/fashion_mnist.py:
# plain PyTorch, DDP and DistributedSampler set up by trainrt.torch, torch.distributed set up from
# trainrt's world: by default over trainrt's MPI process group, scaling.backend = trainrt) under
# mpiexec on 1 and 2 ranks, from PyTorch's initial weights (tests/data/torch_init_seed0.h5):
# the first epoch's train loss within 1e-5 relative of plain PyTorch DDP (tests/data/torch_reference.json)
# and the same test accuracy; with scaling.backend = gloo the same losses (1e-9) and digest;
# the environment torch.distributed libraries read is set.
source "$(dirname "$0")/../lib/common.sh"
ARGS=(--config examples/python/fashion_mnist.ini --train.epochs=1 --train.init_weights=tests/data/torch_init_seed0.h5
      --metrics.progress=off --failure.collective_timeout=120 --run.storage_path="$WORK")
for n in 1 2; do
  timeout -k 10 300 mpiexec -n $n "$TRAINRT" "${ARGS[@]}" --run.name=n$n >"$WORK/n$n.out" 2>&1 \
    || { tail -30 "$WORK/n$n.out"; fail "the recipe on $n ranks"; finish; }
done
"$TRAINRT_PYTHON" - "$WORK" tests/data/torch_reference.json <<'PY' && pass "epoch-1 losses within 1e-5 of PyTorch DDP's, same accuracy" || fail "the Python recipe differs from PyTorch"
import json, sys
work, ref = sys.argv[1], json.load(open(sys.argv[2]))["runs"]
bad = 0
for n in ("1", "2"):
    ours = [json.loads(l) for l in open(f"{work}/n{n}/result.jsonl")]
    assert len(ours) == 1, f"{n} ranks: {len(ours)} rows"
    for x, y in zip(ours, ref[n]):
        rel = abs(x["loss"] - y["loss"]) / abs(y["loss"])
        ok = rel <= 1e-5 and x["test_accuracy"] == y["test_accuracy"]
        bad += not ok
        print(f"{'ok' if ok else 'FAIL'}: n={n} epoch {x['epoch']}: loss {x['loss']:.9f} vs PyTorch {y['loss']:.9f} "
              f"(rel {rel:.1e}), accuracy {x['test_accuracy']} vs {y['test_accuracy']}")
sys.exit(1 if bad else 0)
PY
digest() { sed -n 's/^weights_digest=\([0-9a-f]\{16\}\)$/\1/p' "$1" | tail -1; }
timeout -k 10 300 mpiexec -n 2 "$TRAINRT" "${ARGS[@]}" --scaling.backend=gloo --run.name=gloo >"$WORK/gloo.out" 2>&1 || fail "gloo run"
a=$(digest "$WORK/n2.out"); b=$(digest "$WORK/gloo.out")
"$TRAINRT_PYTHON" - "$WORK" <<'PY' && pass "backends trainrt (default) and gloo: losses within 1e-9" || fail "trainrt and gloo backends differ"
import json, sys
rows = {b: [json.loads(l) for l in open(f"{sys.argv[1]}/{d}/result.jsonl")] for b, d in (("trainrt", "n2"), ("gloo", "gloo"))}
for x, y in zip(rows["trainrt"], rows["gloo"]):
    assert abs(x["loss"] - y["loss"]) <= 1e-9 * abs(y["loss"]), (x["loss"], y["loss"])
PY
[ -n "$a" ] && [ "$a" = "$b" ] && pass "2 ranks, backends trainrt and gloo: the same weights digest $a" || fail "digests '$a' (trainrt) vs '$b' (gloo)"

# What torch.distributed and its users see inside the function.
cat >"$WORK/env_check.py" <<'PY'
import os, torch, torch.distributed as dist, trainrt
def check(config):
    ctx = trainrt.get_context()
    assert dist.is_initialized() and dist.get_backend() == "trainrt", dist.get_backend()  # auto on CPU
    assert dist.get_rank() == ctx.world_rank and dist.get_world_size() == ctx.world_size == 2
    for key, value in (("RANK", ctx.world_rank), ("WORLD_SIZE", 2), ("LOCAL_RANK", ctx.local_rank),
                       ("LOCAL_WORLD_SIZE", ctx.local_world_size)):
        assert os.environ[key] == str(value), (key, os.environ.get(key))
    assert os.environ["MASTER_ADDR"] and int(os.environ["MASTER_PORT"]) > 0
    assert torch.get_num_threads() == 1, torch.get_num_threads()  # 2 CPUs shared by 2 ranks
    assert config == {"alpha": 0.5, "name": "x", "flag": True, "count": 3}, config
    t = torch.tensor([ctx.world_rank + 1.0]); dist.all_reduce(t); assert t.item() == 3.0
    print(f"env ok on rank {ctx.world_rank}: MASTER_PORT={os.environ['MASTER_PORT']}", flush=True)
PY
timeout -k 10 120 mpiexec -n 2 "$TRAINRT" --run.workload=python:"$WORK/env_check.py":check --train.alpha=0.5 --train.name=x \
  --train.flag=true --train.count=3 --run.storage_path="$WORK" --run.name=env --metrics.progress=off >"$WORK/env.out" 2>&1 \
  && [ "$(grep -o 'env ok on rank' "$WORK/env.out" | wc -l)" -eq 2 ] && pass "process group, environment, threads and typed config: $(grep -m1 'env ok' "$WORK/env.out")" \
  || { tail -20 "$WORK/env.out"; fail "environment inside the function"; }
finish
