#!/usr/bin/env bash
# Python training functions on a GPU (label gpu; exit 77 = skipped where no GPU is visible or
# this trainrt has no Python component, or its Python's torch has no CUDA):
#  - inside the function: the NCCL process group (backend auto), get_context().device and torch's
#    current device are the GPU trainrt bound, prepare_model puts the model there, prepare_data_loader
#    hands out pinned batches moved to it, and a state_dict checkpoint of CUDA tensors is staged
#    through pinned memory (private copies: left to a background snapshot) and reported;
#  - Ray's way, from a plain python3: TorchTrainer(ScalingConfig(num_workers=1, use_gpu=True)).fit()
#    starts the rank, whose function trains on cuda:0 (get_device, prepare_model) and reports;
#  - Ray's FashionMNIST recipe (examples/python/fashion_mnist.py) on the GPU ends its first epoch
#    at the same recipe's CPU loss within 1e-4 relative and test accuracy within 0.2 points;
#  - stopped with USR2 while training and rerun, it ends with the uninterrupted GPU run's digest and
#    reports the same numbers at every epoch (the checkpoint of CUDA tensors restored on the device);
#  - two ranks on one GPU and no visible GPU are refused with one line, exit 2, nothing written.
source "$(dirname "$0")/../checkpoint/lib.sh"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  echo "SKIP: no GPU visible (nvidia-smi -L)"; exit 77
fi
"$TRAINRT" --version | grep -q 'Python: libtrainrt_python' || { echo "SKIP: this trainrt has no Python component"; exit 77; }
PY=${TRAINRT_PYTHON:-python3}
command -v "$PY" >/dev/null || { echo "FAIL: no Python at $PY (TRAINRT_PYTHON)" >&2; exit 1; }
"$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null \
  || { echo "SKIP: $PY's torch sees no CUDA device"; exit 77; }
export VIRTUAL_ENV=${VIRTUAL_ENV:-$("$PY" -c 'import sys; print(sys.prefix)')}
DATA=${FASHION_IDX_DIR:-/usr/share/datasets/fashion-mnist}

# --- inside the function
cat >"$WORK/inside.py" <<'PY'
import torch, torch.distributed as dist, trainrt
from torch.utils.data import DataLoader, TensorDataset
from trainrt.torch import prepare_data_loader, prepare_model, state_dict_checkpoint
def check(config):
    ctx = trainrt.get_context()
    assert dist.get_backend() == "nccl", dist.get_backend()
    assert ctx.device == "cuda:0" and torch.cuda.current_device() == 0, (ctx.device, torch.cuda.current_device())
    model = prepare_model(torch.nn.Linear(8, 4))
    assert next(model.parameters()).device == torch.device("cuda:0")
    loader = prepare_data_loader(DataLoader(TensorDataset(torch.randn(32, 8), torch.arange(32)), batch_size=8))
    x, y = next(iter(loader))
    assert x.device == torch.device("cuda:0") and y.device == torch.device("cuda:0"), (x.device, y.device)
    assert loader.loader.pin_memory
    optimizer = torch.optim.Adam(model.parameters())
    model(x.float()).sum().backward(); optimizer.step()
    weight = model.weight.detach().cpu().numpy().copy()
    checkpoint = state_dict_checkpoint(model=model, optimizer=optimizer, epoch=1)
    assert (checkpoint._tensors["model.weight"] == weight).all()  # staged through pinned memory
    assert "model.weight" in checkpoint._private_names()
    trainrt.report({"epoch": 1}, checkpoint=checkpoint)  # restoring it: the USR2 case below
    t = torch.ones(1, device=ctx.device); dist.all_reduce(t); assert t.item() == 1.0
    print(f"inside ok: backend {dist.get_backend()}, device {ctx.device}, pinned batches on {x.device}", flush=True)
PY
rc=0
timeout -k 10 300 mpiexec -n 1 "$TRAINRT" --run.workload=python:"$WORK/inside.py":check --scaling.use_gpu=true \
  --run.storage_path="$WORK" --run.name=inside --metrics.progress=off >"$WORK/inside.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && grep -q 'inside ok' "$WORK/inside.out" && pass "$(grep -m1 'inside ok' "$WORK/inside.out")" \
  || { show "$WORK/inside.out" 40; fail "the checks inside a GPU function (exit $rc)"; }

# --- Ray's way: fit() from a plain python3 starts the rank on the GPU
cat >"$WORK/fit_gpu.py" <<'PY'
import os, torch, trainrt
from trainrt import RunConfig, ScalingConfig
from trainrt.torch import TorchTrainer, get_device, prepare_model
def train_func(config):
    device = get_device()
    model = prepare_model(torch.nn.Linear(8, 1))
    assert device == torch.device("cuda:0") and next(model.parameters()).device == device, device
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.randn(256, 8, device=device, generator=torch.Generator(device).manual_seed(0))
    y = x.sum(1, keepdim=True)
    first = None
    for step in range(1, 31):
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad(); loss.backward(); optimizer.step()
        first = loss.item() if first is None else first
        if step % 10 == 0:
            trainrt.report({"step": step, "loss": loss.item(), "first_loss": first, "cuda": int(loss.is_cuda)})
if __name__ == "__main__":
    result = TorchTrainer(train_func, scaling_config=ScalingConfig(num_workers=1, use_gpu=True),
                          run_config=RunConfig(storage_path=os.environ["FIT_RUNS"], name="fit_gpu")).fit()
    first = result.metrics["first_loss"]
    assert result.error is None and result.metrics["cuda"] == 1 and result.metrics["step"] == 30, result.metrics
    assert result.metrics["loss"] < first, (first, result.metrics["loss"])
    print(f"fit ok: step {result.metrics['step']}, loss {first:.4f} -> {result.metrics['loss']:.4f} on cuda:0", flush=True)
PY
rc=0
PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python" FIT_RUNS="$WORK" timeout -k 10 300 "$PY" "$WORK/fit_gpu.py" >"$WORK/fit_gpu.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && grep -q 'fit ok' "$WORK/fit_gpu.out" && pass "$(grep -m1 'fit ok' "$WORK/fit_gpu.out")" \
  || { show "$WORK/fit_gpu.out" 40; fail "TorchTrainer(ScalingConfig(use_gpu=True)).fit() from python3 (exit $rc)"; }

# --- the recipe: the GPU's first epoch vs the CPU path's, from the same initial weights (the
# recipe seeds torch before it builds the model on the CPU). Not from torch_init_seed0.h5 as the
# CPU tests: the recipe reads it with h5py, and a pip h5py (its own HDF5) inside trainrt resolves
# HDF5's symbols to trainrt's HDF5 ("Not a datatype": docs/guides/gpus.md, Python training functions on GPUs).
CKPT_ARGS=(--config examples/python/fashion_mnist.ini --train.data_dir="$DATA" --metrics.progress=off
           --failure.collective_timeout=120)
train 1 epoch1_cpu "$WORK/epoch1_cpu.out" --train.epochs=1
[ "$rc" -eq 0 ] || { show "$WORK/epoch1_cpu.out" 30; fail "the recipe on the CPU exits $rc"; }
CKPT_ARGS+=(--scaling.use_gpu=true)
train 1 epoch1 "$WORK/epoch1.out" --train.epochs=1
[ "$rc" -eq 0 ] || { show "$WORK/epoch1.out" 30; fail "the recipe on the GPU exits $rc"; }
"$PY" - "$WORK/epoch1/result.jsonl" "$WORK/epoch1_cpu/result.jsonl" "$WORK/compare.txt" <<'PY' \
  && pass "recipe on the GPU, epoch 1 vs the CPU path: $(cat "$WORK/compare.txt")" || fail "the GPU recipe's epoch 1 differs from the CPU path's"
import json, sys
ours, ref = ([json.loads(l) for l in open(p)][0] for p in sys.argv[1:3])
rel = abs(ours["loss"] - ref["loss"]) / abs(ref["loss"])
text = (f"loss {ours['loss']:.7f} vs {ref['loss']:.7f} (rel {rel:.1e}), accuracy {ours['test_accuracy']} vs "
        f"{ref['test_accuracy']}")
open(sys.argv[3], "w").write(text)
print(text)
sys.exit(0 if rel <= 1e-4 and abs(ours["test_accuracy"] - ref["test_accuracy"]) <= 0.002 else 1)
PY

# --- stop with USR2 and resume on the GPU
EPOCHS=3
CKPT_ARGS+=(--train.epochs=$EPOCHS --train.check_every=100)
train 1 ref "$WORK/ref.out"
base=$(digest_of "$WORK/ref.out")
[ "$rc" -eq 0 ] && [ -n "$base" ] || { show "$WORK/ref.out" 30; fail "uninterrupted GPU run exits $rc"; finish; }
( train 1 usr2 "$WORK/usr2.first.out"; echo "$rc" >"$WORK/usr2.rc" ) &
runner=$!
# The run directory exists once rank 0 passed its start-up (the stop handler is in place long
# before); 2 s later the function is training (an epoch here lasts seconds).
for _ in $(seq 600); do [ -d "$WORK/usr2" ] && break; sleep 0.1; done
sleep 2
pid=$(rank_pid usr2 0) && kill -USR2 "$pid"
wait "$runner" || true
[ "$(cat "$WORK/usr2.rc")" = 9 ] \
  && pass "USR2: the GPU run stopped with exit 9, last row $(tail -1 "$WORK/usr2/result.jsonl" | grep -o '"epoch":[0-9.]*')" \
  || { show "$WORK/usr2.first.out"; fail "the stopped GPU run exits $(cat "$WORK/usr2.rc") (expected 9; 0: it ended first)"; }
train 1 usr2 "$WORK/usr2.rerun.out"
[ "$rc" -eq 0 ] && [ "$(digest_of "$WORK/usr2.rerun.out")" = "$base" ] \
  && pass "stopped + resumed on the GPU from iteration $(resumed_iteration "$WORK/usr2.rerun.out"): digest $base" \
  || { show "$WORK/usr2.rerun.out" 30; fail "rerun exits $rc, digest $(digest_of "$WORK/usr2.rerun.out") vs $base"; }
"$PY" - "$EPOCHS" "$WORK/ref/result.jsonl" "$WORK/usr2/result.jsonl" <<'PY' && pass "every epoch row of the resumed run equals the uninterrupted run's" || fail "reported numbers differ after the resume"
import json, sys
rows = [[r for r in map(json.loads, open(p)) if float(r["epoch"]).is_integer()] for p in sys.argv[2:]]
keys = ("epoch", "loss", "test_accuracy")
a, b = ([{k: r[k] for k in keys} for r in x] for x in rows)
print(a, b, sep="\n")
sys.exit(0 if a == b and len(a) == int(sys.argv[1]) else 1)
PY

# --- refusals
refused() {  # NAME TEXT NP [VAR=VALUE...]
  local name=$1 text=$2 np=$3 rc=0; shift 3
  env "$@" timeout -k 10 120 mpiexec -n "$np" "$TRAINRT" --run.workload=python:"$WORK/inside.py":check \
    --scaling.use_gpu=true --run.storage_path="$WORK" --run.name="$name" >"$WORK/$name.out" 2>&1 || rc=$?
  if [ "$rc" -eq 2 ] && [ "$(grep -c -- "$text" "$WORK/$name.out")" -eq 1 ] && [ ! -e "$WORK/$name" ]; then
    pass "$name: exit 2, one line '$(grep -m1 -- "$text" "$WORK/$name.out")', nothing written"
  else
    show "$WORK/$name.out" 20; fail "$name: exit $rc (expected 2, one line with '$text', no run directory)"
  fi
}
[ "$(nvidia-smi -L | grep -c '^GPU ')" -eq 1 ] && refused two_ranks_one_gpu "share GPU" 2
refused no_visible_gpu "sees no CUDA device" 1 CUDA_VISIBLE_DEVICES=
finish
