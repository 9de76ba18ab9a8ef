#!/usr/bin/env bash
# Ray's directory checkpoints (tests/python/dir_checkpoint_func.py: torch.save into a temporary
# directory, Checkpoint.from_directory, get_checkpoint().as_directory() + torch.load; rank 1 adds a
# file of its own): a run stopped by USR2 (exit 9) and rerun reports every loss of the uninterrupted
# run and ends with its weights; after the run, trainrt.Checkpoint.open(run dir) in a plain python3
# gives the merged directory (every rank's files) whose model.pt loads into a fresh model with the
# trained weights; a checkpoint reported by rank 0 alone (the others None) saves; a damaged
# checkpoint is refused by Checkpoint.open with the reason.
source "$(dirname "$0")/../checkpoint/lib.sh"
CKPT_ARGS=(--run.workload=python:tests/python/dir_checkpoint_func.py:train --train.epochs=8 --metrics.progress=off
           --failure.collective_timeout=60 --scaling.backend=gloo)
losses() { jq -s -c '[.[] | .loss]' "$WORK/$1/result.jsonl"; }
export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python"

train 2 ref "$WORK/ref.out"
base=$(digest_of "$WORK/ref.out")
[ "$rc" -eq 0 ] && [ -n "$base" ] || { show "$WORK/ref.out" 30; fail "uninterrupted run exits $rc"; finish; }

( train 2 stopped "$WORK/first.out" --train.sleep_s=0.3; echo "$rc" >"$WORK/first.rc" ) &
runner=$!
wait_rows "$WORK/stopped" 3 || fail "no 3 result rows within 60 s"
kill -USR2 "$(rank_pid stopped 1)"
wait "$runner" || true
first_rows=$(rows "$WORK/stopped")
[ "$(cat "$WORK/first.rc")" = 9 ] && [ "$first_rows" -lt 8 ] && pass "USR2: stopped at report $first_rows, exit 9" \
  || { show "$WORK/first.out" 30; fail "stopped run exits $(cat "$WORK/first.rc") after $first_rows rows"; }
train 2 stopped "$WORK/rerun.out"
[ "$rc" -eq 0 ] || { show "$WORK/rerun.out" 30; fail "rerun exits $rc"; finish; }
[ "$(digest_of "$WORK/rerun.out")" = "$base" ] && [ "$(losses stopped)" = "$(losses ref)" ] \
  && pass "resumed from iteration $(resumed_iteration "$WORK/rerun.out") through as_directory + torch.load: every loss and the digest $base as uninterrupted" \
  || fail "after resume: digest $(digest_of "$WORK/rerun.out") (want $base), losses $(losses stopped) vs $(losses ref)"

"$TRAINRT_PYTHON" - "$WORK/ref" "$base" <<'PY' && pass "Checkpoint.open(run dir) after the run: merged files, model.pt loads the trained weights" || fail "reading the checkpoint after the run"
import os, sys, torch
sys.path.insert(0, "tests/python")
import trainrt
from dir_checkpoint_func import make_model
checkpoint = trainrt.Checkpoint.open(sys.argv[1])
with checkpoint.as_directory() as d:
    files = sorted(os.path.relpath(os.path.join(r, f), d) for r, _, fs in os.walk(d) for f in fs)
    assert files == ["extra.json", "model.pt", "optimizer.pt", "rank1/note.txt"], files
    assert open(os.path.join(d, "rank1/note.txt")).read() == "rank 1 after epoch 7\n"
    model = make_model()
    model.load_state_dict(torch.load(os.path.join(d, "model.pt")))
assert not os.path.exists(d), "as_directory left its copy behind"
digest = trainrt.digest(model.state_dict().values())
assert digest == sys.argv[2], (digest, sys.argv[2])
out = checkpoint.to_directory(os.path.join(sys.argv[1], "..", "copy"))
assert os.path.getsize(os.path.join(out, "model.pt")) > 0
print(f"{checkpoint.path}: {files}, digest {digest}")
PY

# rank 0 alone reports a directory; the others pass None
cat >"$WORK/rank0_only.py" <<'PY'
import os, tempfile, trainrt
def train(config):
    for epoch in range(2):
        checkpoint = None
        with tempfile.TemporaryDirectory() as d:
            if trainrt.get_context().world_rank == 0:
                open(os.path.join(d, "state.txt"), "w").write(f"epoch {epoch}")
                checkpoint = trainrt.Checkpoint.from_directory(d)
            trainrt.report({"epoch": epoch}, checkpoint=checkpoint)
PY
code=0
mpiexec -n 2 "$TRAINRT" --run.workload=python:"$WORK/rank0_only.py":train --run.storage_path="$WORK" --run.name=rank0 \
  --metrics.progress=off >"$WORK/rank0.out" 2>&1 || code=$?
[ "$code" -eq 0 ] && "$TRAINRT_PYTHON" -c "
import sys, trainrt
with trainrt.Checkpoint.open(sys.argv[1]).as_directory() as d:
    assert open(d + '/state.txt').read() == 'epoch 1'" "$WORK/rank0" \
  && pass "rank 0 alone reports a directory, the others None: saved and readable" \
  || { show "$WORK/rank0.out"; fail "rank-0-only directory checkpoint: exit $code"; }

newest=$(newest_committed "$WORK/ref")
bad="$WORK/ref/checkpoints/$newest"
shard=$(ls "$bad"/*.h5 | head -1)
printf 'x' | dd of="$shard" bs=1 seek=100 conv=notrunc status=none
"$TRAINRT_PYTHON" -c "import sys, trainrt; trainrt.Checkpoint.open(sys.argv[1])" "$bad" >"$WORK/bad.out" 2>&1 \
  && fail "a damaged checkpoint opened" \
  || { grep -q "does not verify" "$WORK/bad.out" && pass "damaged checkpoint refused: $(grep -o 'checkpoint: .*' "$WORK/bad.out" | head -1 | cut -c1-150)" \
       || { cat "$WORK/bad.out" >&2; fail "damaged checkpoint: no reason given"; }; }
finish
