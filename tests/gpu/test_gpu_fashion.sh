#!/usr/bin/env bash
# fashion_mlp on a GPU against the CPU path (label gpu; exit 77 = skipped where no GPU is
# visible, never counted as passed): 1 rank, 2 epochs of batch 256 from the same initial
# weights (tests/data/torch_init_seed0.h5), with the data resident on the GPU and streamed from
# the host (bitwise the same weights). The epoch losses and test accuracies must agree
# within float tolerance (relative 1e-3 on the loss, 0.005 on the accuracy); the GPU run's
# checkpoints verify, and the CPU path resumes from the GPU run's last checkpoint for a third epoch.
source "$(dirname "$0")/../lib/common.sh"
require_data
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  echo "SKIP: no GPU visible (nvidia-smi -L)"; exit 77
fi
args=(--config jobs/fashion_mlp.ini --train.epochs=2 --train.batch_size=256
      --train.init_weights=tests/data/torch_init_seed0.h5 --run.storage_path="$WORK")
mpiexec -n 1 "$TRAINRT" "${args[@]}" --run.name=cpu >"$WORK/cpu.out" 2>&1 || { cat "$WORK/cpu.out"; fail "CPU run"; finish; }
mpiexec -n 1 "$TRAINRT" "${args[@]}" --run.name=gpu --scaling.use_gpu=true >"$WORK/gpu.out" 2>&1 \
  || { cat "$WORK/gpu.out"; fail "GPU run"; finish; }
mpiexec -n 1 "$TRAINRT" "${args[@]}" --run.name=gpu_stream --scaling.use_gpu=true --train.gpu_resident_data=false \
  >"$WORK/gpu_stream.out" 2>&1 || { cat "$WORK/gpu_stream.out"; fail "GPU run with streamed data"; finish; }
digest() { sed -n 's/^weights_digest=//p' "$1"; }
[ -n "$(digest "$WORK/gpu.out")" ] && [ "$(digest "$WORK/gpu.out")" = "$(digest "$WORK/gpu_stream.out")" ] \
  && pass "data resident on the GPU and streamed from the host: same digest $(digest "$WORK/gpu.out")" \
  || fail "resident data digest $(digest "$WORK/gpu.out") != streamed $(digest "$WORK/gpu_stream.out")"
grep -q 'GPU run: CUDA' "$WORK/gpu.out" && pass "GPU run: $(grep 'GPU run' "$WORK/gpu.out")" || fail "no GPU banner"
python3 - "$WORK/cpu/result.jsonl" "$WORK/gpu/result.jsonl" <<'PY' && pass "GPU matches the CPU path within tolerance" || fail "GPU and CPU disagree"
import json, sys
cpu = [json.loads(l) for l in open(sys.argv[1])]
gpu = [json.loads(l) for l in open(sys.argv[2])]
ok = len(cpu) == len(gpu) == 2
for c, g in zip(cpu, gpu):
    rel = abs(c["loss"] - g["loss"]) / abs(c["loss"])
    acc = abs(c["test_accuracy"] - g["test_accuracy"])
    print(f"epoch {c['epoch']}: loss cpu {c['loss']:.6f} gpu {g['loss']:.6f} (rel {rel:.2e}); "
          f"accuracy cpu {c['test_accuracy']:.4f} gpu {g['test_accuracy']:.4f}; "
          f"epoch time cpu {c['epoch_time_s']:.3f} s gpu {g['epoch_time_s']:.3f} s")
    ok = ok and rel < 1e-3 and acc <= 0.005
sys.exit(0 if ok else 1)
PY
"$TRAINRT" checkpoints verify "$WORK/gpu" >/dev/null && pass "GPU checkpoints verify" || fail "GPU checkpoints do not verify"
mpiexec -n 1 "$TRAINRT" "${args[@]}" --run.name=gpu --train.epochs=3 >"$WORK/resume.out" 2>&1 \
  && grep -q 'resuming from .*(iteration 2)' "$WORK/resume.out" \
  && pass "the CPU path resumed the GPU run from its checkpoint and trained epoch 3" \
  || { cat "$WORK/resume.out"; fail "CPU resume of the GPU checkpoint"; }
finish
