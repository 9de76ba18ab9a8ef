#!/usr/bin/env bash
# A Python training function (examples/python/fashion_mnist.py: model, optimizer, data loader
# position and RNGs in a state_dict checkpoint) stops and resumes bitwise: USR2 to rank 1 in the
# middle of epoch 2 (the function saves mid-epoch with save_at_stop, no row: exit 9) and a rerun
# that reports what the uninterrupted run did, and kill -9 of
# rank 0 in epoch 2 and a rerun, each end with the uninterrupted run's weights digest. The
# checkpoint is HDF5 without pickle: h5py reads the model's tensors by their state_dict names.
source "$(dirname "$0")/../checkpoint/lib.sh"
CKPT_ARGS=(--config examples/python/fashion_mnist.ini --train.epochs=2 --train.batch_size=256 --train.check_every=40
           --metrics.progress=off --failure.collective_timeout=120)

train 2 ref "$WORK/ref.out"
base=$(digest_of "$WORK/ref.out")
[ "$rc" -eq 0 ] && [ -n "$base" ] || { show "$WORK/ref.out" 30; fail "uninterrupted run exits $rc"; finish; }

resume_case() {  # NAME HOW(usr2|kill)
  local name=$1 how=$2 runner pid first_rc
  ( train 2 "$name" "$WORK/$name.first.out"; echo "$rc" >"$WORK/$name.rc" ) &
  runner=$!
  wait_rows "$WORK/$name" 1 || fail "$name: no result row within 60 s"
  sleep 1  # into epoch 2
  pid=$(rank_pid "$name" "$([ "$how" = usr2 ] && echo 1 || echo 0)") || { fail "$name: rank not found"; wait "$runner"; return; }
  if [ "$how" = usr2 ]; then kill -USR2 "$pid"; else kill -9 "$pid"; fi
  wait "$runner" || true
  first_rc=$(cat "$WORK/$name.rc")
  if [ "$how" = usr2 ]; then [ "$first_rc" = 9 ] || { show "$WORK/$name.first.out"; fail "$name: stopped run exits $first_rc, expected 9"; }
  else [ "$first_rc" != 0 ] || fail "$name: the killed run exited 0 (it finished before the kill)"; fi
  train 2 "$name" "$WORK/$name.rerun.out"
  [ "$rc" -eq 0 ] || { show "$WORK/$name.rerun.out" 30; fail "$name: rerun exits $rc"; return; }
  [ "$(digest_of "$WORK/$name.rerun.out")" = "$base" ] \
    && pass "$name: resumed from iteration $(resumed_iteration "$WORK/$name.rerun.out"), same digest $base" \
    || fail "$name: digest $(digest_of "$WORK/$name.rerun.out") after resume != uninterrupted $base"
}
resume_case usr2 usr2
stopped=$(grep -o 'stopped at iteration [0-9]* ([a-z]*); checkpoint checkpoint_[0-9]*' "$WORK/usr2.first.out" || true)
[ "$stopped" = "stopped at iteration 1 (signal); checkpoint checkpoint_000002" ] \
  && pass "the USR2 stop saved in the middle of epoch 2 with save_at_stop ($stopped), no row for it" \
  || { show "$WORK/usr2.first.out"; fail "the USR2 stop: '$stopped'"; }
[ "$(reported "$WORK/usr2")" = "$(reported "$WORK/ref")" ] \
  && pass "the stopped and resumed run reports what the uninterrupted one did ($(rows "$WORK/usr2") rows)" \
  || fail "usr2/result.jsonl differs from the uninterrupted run's: $(reported "$WORK/usr2" | cut -c1-150)"
resume_case kill kill

ckpt="$WORK/ref/checkpoints/$(newest_committed "$WORK/ref")"
"$TRAINRT_PYTHON" - "$ckpt" <<'PY' && pass "checkpoint readable with h5py by state_dict names, no pickle" || fail "checkpoint contents"
import glob, sys, h5py
names, pickled = set(), False
def visit(name, obj):
    global pickled
    if isinstance(obj, h5py.Dataset):
        names.add(name.split("/")[-1])
        pickled |= obj.dtype.kind in "OV"
for path in glob.glob(sys.argv[1] + "/*.h5"):
    with h5py.File(path, "r") as f:
        f.visititems(visit)
need = {"model.fc1.weight", "model.fc1.bias", "model.fc3.weight"}
assert need <= names, f"missing {need - names} in {sorted(names)[:10]}"
assert not pickled, "an opaque (pickled) dataset"
print("tensors:", ", ".join(sorted(n for n in names if n.startswith("model."))))
PY
finish
