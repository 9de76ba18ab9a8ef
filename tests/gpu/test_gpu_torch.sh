#!/usr/bin/env bash
# The LibTorch component on a GPU (label gpu; exit 77 = skipped where no GPU is visible or this
# trainrt has no LibTorch component). On the GPU machine it is built against that machine's CUDA
# LibTorch (bench/gpu/build_torch_on_gpu.sh, with the plugin example):
#  - one built against a LibTorch without CUDA (Debian's) refuses use_gpu with one line, exit 2;
#    then the rest is skipped (exit 77);
#  - torch_fashion_cnn, one epoch on the GPU against one on the CPU from the same seed: the loss
#    within 1e-3 (relative) and the test accuracy within 0.01; prepare_model says the module is on cuda:0;
#  - with train.deterministic (enable_reproducibility), two GPU runs of it and one resumed after its
#    first epoch end with one digest, and the resumed run reports the uninterrupted run's numbers;
#  - the torch process group on CUDA tensors, mpiexec -n 2 on the one GPU (torch_group_check):
#    allreduce (sum, avg, max; non-contiguous), broadcast and allgather equal the same on CPU tensors;
#  - the plugin example (examples/torch_model: AdamW, batch norm, dropout drawn from the GPU's
#    generator) on the GPU, stopped with USR2 mid-epoch and rerun: it resumes on the GPU, ends
#    with the uninterrupted GPU run's digest and reports every number of it.
source "$(dirname "$0")/../checkpoint/lib.sh"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  echo "SKIP: no GPU visible (nvidia-smi -L)"; exit 77
fi
"$TRAINRT" --version | grep -q 'LibTorch: libtrainrt_torch' || { echo "SKIP: this trainrt has no LibTorch component"; exit 77; }
PY=${TRAINRT_PYTHON:-python3}

# --- torch_fashion_cnn: the GPU's first epoch vs the CPU's
CKPT_ARGS=(--config jobs/fashion_mlp.ini --data.path="$SMALL_DATA" --run.workload=torch_fashion_cnn --train.epochs=1
           --train.batch_size=64 --metrics.progress=off)
train 1 cnn_gpu "$WORK/cnn_gpu.out" --scaling.use_gpu=true
if [ "$rc" -eq 2 ] && grep -q "has no CUDA" "$WORK/cnn_gpu.out"; then
  [ "$(grep -c "has no CUDA" "$WORK/cnn_gpu.out")" -eq 1 ] && pass "a LibTorch without CUDA: exit 2, $(grep -m1 -o 'torch: .*' "$WORK/cnn_gpu.out")" \
    || { show "$WORK/cnn_gpu.out"; fail "the refusal is not one line"; finish; }
  echo "SKIP: the LibTorch component has no CUDA (build it with bench/gpu/build_torch_on_gpu.sh)"; exit 77
fi
[ "$rc" -eq 0 ] || { show "$WORK/cnn_gpu.out" 30; fail "torch_fashion_cnn on the GPU exits $rc"; finish; }
train 1 cnn_cpu "$WORK/cnn_cpu.out"
[ "$rc" -eq 0 ] || { show "$WORK/cnn_cpu.out" 30; fail "torch_fashion_cnn on the CPU exits $rc"; finish; }
"$PY" - "$WORK/cnn_gpu/result.jsonl" "$WORK/cnn_cpu/result.jsonl" "$WORK/compare.txt" <<'PY' \
  && pass "torch_fashion_cnn, epoch 1 on the GPU vs the CPU: $(cat "$WORK/compare.txt")" || fail "the GPU's epoch differs from the CPU's: $(cat "$WORK/compare.txt")"
import json, sys
gpu, cpu = ([r for r in map(json.loads, open(p)) if "test_accuracy" in r][-1] for p in sys.argv[1:3])
rel = abs(gpu["loss"] - cpu["loss"]) / abs(cpu["loss"])
text = (f"loss {gpu['loss']:.6f} vs {cpu['loss']:.6f} (rel {rel:.1e}), accuracy {gpu['test_accuracy']} vs "
        f"{cpu['test_accuracy']}, train time {gpu['train_time_s']:.2f} s vs {cpu['train_time_s']:.2f} s")
open(sys.argv[3], "w").write(text)
sys.exit(0 if rel <= 1e-3 and abs(gpu["test_accuracy"] - cpu["test_accuracy"]) <= 0.01 else 1)
PY

grep -q "module on cuda:0" "$WORK/cnn_gpu.out" && ! grep -q "module on cuda" "$WORK/cnn_cpu.out" \
  && pass "$(grep -m1 -o 'prepare_model: .*' "$WORK/cnn_gpu.out")" || fail "prepare_model did not say it put the module on cuda:0"

# --- torch_fashion_cnn with train.deterministic: two uninterrupted GPU runs, and one stopped after
# its first epoch and resumed, end with one digest and report the same numbers
CKPT_ARGS=(--config jobs/fashion_mlp.ini --data.path="$SMALL_DATA" --run.workload=torch_fashion_cnn --train.batch_size=64
           --scaling.use_gpu=true --train.deterministic=true --metrics.progress=off)
for name in det_a det_b; do train 1 "$name" "$WORK/$name.out" --train.epochs=2; done
train 1 det_resumed "$WORK/det_first.out" --train.epochs=1
train 1 det_resumed "$WORK/det_rest.out" --train.epochs=2
digests=$(for out in det_a det_b det_rest; do digest_of "$WORK/$out.out"; done | sort -u)
if [ "$(echo "$digests" | grep -c .)" -eq 1 ] && [ -n "$(resumed_iteration "$WORK/det_rest.out")" ]; then
  pass "deterministic CNN on the GPU: two runs and one resumed after epoch 1 (iteration $(resumed_iteration "$WORK/det_rest.out")): digest $digests"
else
  show "$WORK/det_rest.out" 20; fail "deterministic CNN on the GPU: digests $(echo $digests), resumed from '$(resumed_iteration "$WORK/det_rest.out")'"
fi
"$PY" - "$WORK/det_a/result.jsonl" "$WORK/det_resumed/result.jsonl" <<'PY' \
  && pass "the resumed deterministic CNN reported the uninterrupted run's numbers" || fail "the resumed CNN's rows differ"
import json, sys
keys = ("epoch", "loss", "test_loss", "test_accuracy")
a, b = ([{k: r[k] for k in keys} for r in map(json.loads, open(p)) if "test_loss" in r] for p in sys.argv[1:])
print(a, b, sep="\n")
sys.exit(0 if a == b and len(a) == 2 else 1)
PY

built=$(dirname "$TRAINRT")/gpu_plugins  # bench/gpu/build_torch_on_gpu.sh's
# --- the process group on CUDA tensors, two ranks on the GPU
rc=0; timeout -k 10 120 mpiexec -n 2 "$built/torch_group_check" >"$WORK/group.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && pass "torch process group, 2 ranks: $(grep -c '^ok' "$WORK/group.out") checks on CUDA tensors: $(grep '^ok' "$WORK/group.out" | cut -c5- | paste -sd';')" \
  || { show "$WORK/group.out" 20; fail "torch_group_check exits $rc (none: build it with bench/gpu/build_torch_on_gpu.sh)"; }

# --- the plugin example: stop with USR2 mid-epoch and resume on the GPU
plugin=$built/libtorch_model.so
[ -f "$plugin" ] || { fail "no $plugin: build it with bench/gpu/build_torch_on_gpu.sh"; finish; }
# Batch 32: 1875 steps an epoch, long enough on a GPU for the signal to land mid-epoch.
CKPT_ARGS=(--config examples/torch_model/torch_model.ini --run.workload="plugin:$plugin" --data.path="$DATA"
           --train.epochs=2 --train.batch_size=32 --train.report_every=50 --train.norm=batch --scaling.use_gpu=true
           --metrics.progress=off)
model_digest() { sed -n 's/^torch_model_digest=\([0-9a-f]\{16\}\)$/\1/p' "$1" | tail -1; }
train 1 ref "$WORK/ref.out"
base=$(model_digest "$WORK/ref.out")
[ "$rc" -eq 0 ] && [ -n "$base" ] && pass "the plugin on the GPU: digest $base, $(tail -1 "$WORK/ref/result.jsonl")" \
  || { show "$WORK/ref.out" 30; fail "the plugin's uninterrupted GPU run exits $rc"; finish; }
( train 1 stopped "$WORK/stopped.out"; echo "$rc" >"$WORK/stopped.rc" ) &
runner=$!
wait_rows "$WORK/stopped" 3 || fail "no 3 progress rows within 60 s"
pid=$(rank_pid stopped 0) && kill -USR2 "$pid" || fail "rank 0 not found"
wait "$runner" || true
[ "$(cat "$WORK/stopped.rc")" = 9 ] && pass "USR2: the plugin's GPU run stopped with exit 9 at $(tail -1 "$WORK/stopped/result.jsonl")" \
  || { show "$WORK/stopped.out"; fail "the stopped run exits $(cat "$WORK/stopped.rc"), expected 9 (0: it ended first)"; finish; }
train 1 stopped "$WORK/resumed.out"
[ "$rc" -eq 0 ] && [ -n "$(resumed_iteration "$WORK/resumed.out")" ] && [ "$(model_digest "$WORK/resumed.out")" = "$base" ] \
  && pass "stopped mid-epoch and rerun on the GPU: resumed from iteration $(resumed_iteration "$WORK/resumed.out"), digest $base" \
  || { show "$WORK/resumed.out" 30; fail "resume: exit $rc, digest $(model_digest "$WORK/resumed.out") vs $base"; }
"$PY" - "$WORK/ref/result.jsonl" "$WORK/stopped/result.jsonl" <<'PY' \
  && pass "every number the resumed run reported equals the uninterrupted run's" || fail "reported numbers differ after the resume"
import json, sys
keys = ("epoch", "batch", "running_loss", "loss", "test_accuracy")
def rows(path):  # the stopped run's own stop row (no loss) left out
    return [{k: r.get(k) for k in keys} for r in map(json.loads, open(path))
            if r.get("running_loss") is not None or r.get("loss") is not None]
a, b = rows(sys.argv[1]), rows(sys.argv[2])
print(len(a), "rows vs", len(b))
for x, y in zip(a, b):
    if x != y: print("first difference:", x, y); break
sys.exit(0 if a == b and a else 1)
PY
finish
