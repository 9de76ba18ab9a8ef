#!/usr/bin/env bash
# Hugging Face Transformers as Ray Train's guide has it (tests/python/transformers_guide.py: a
# transformers.Trainer in the function, RayTrainReportCallback, prepare_trainer, resume with
# trainer.train(resume_from_checkpoint=...) from get_checkpoint()), after `sed 's/ray\.train/trainrt/g'`:
#  - from a plain `python3 train.py`: fit() starts 2 ranks and the Trainer runs distributed over
#    trainrt's process group (32 steps an epoch: 1024 sequences, 16 per device, 2 processes); one
#    report per epoch with the Trainer's logged loss and eval accuracy; the checkpoint holds the
#    Trainer's folder with both ranks' random states; from_pretrained on it gives a model that
#    classifies held-out sequences;
#  - its train_func as a trainrt workload under mpiexec: USR2 to rank 1 stops it at an epoch's
#    report (exit stopped); the rerun resumes through resume_from_checkpoint and every reported
#    loss and eval accuracy equals the uninterrupted run's; the same after kill -9 of rank 1.
# ctest: timeout=600
source "$(dirname "$0")/../lib/common.sh"
"$TRAINRT_PYTHON" -c 'import transformers' 2>/dev/null || { fail "this Python has no transformers (make deps installs it)"; finish; }
export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python" TRANSFORMERS_STORAGE="$WORK/runs" TRANSFORMERS_OUT="$WORK/out"
sed 's/ray\.train/trainrt/g' tests/python/transformers_guide.py >"$WORK/transformers_guide.py"
grep -qE '^(import|from) ray|ray\.train\.' "$WORK/transformers_guide.py" && fail "the sed left a ray name in the script"

rc=0; TRANSFORMERS_NAME=guide timeout -k 10 300 "$TRAINRT_PYTHON" "$WORK/transformers_guide.py" >"$WORK/guide.out" 2>&1 || rc=$?
line=$(sed -n 's/^TRANSFORMERS_GUIDE //p' "$WORK/guide.out")
[ "$rc" -eq 0 ] && [ -n "$line" ] || { tail -30 "$WORK/guide.out" >&2; fail "the guide's script exits $rc"; finish; }
jq -e '.epochs == [1, 2, 3] and .step == 96 and .losses[2] < .losses[0] and .accuracy > 0.8
       and (.files | index("model.safetensors")) and (.files | index("rng_state_0.pth"))
       and (.files | index("rng_state_1.pth")) and (.files | index("trainer_state.json"))' <<<"$line" >/dev/null \
  && pass "python3 train.py: epochs $(jq -c .epochs <<<"$line"), step $(jq .step <<<"$line") (2 processes), losses $(jq -c '[.losses[] | . * 1000 | round / 1000]' <<<"$line"), checkpoint $(jq -c .files <<<"$line"), held-out accuracy $(jq .accuracy <<<"$line")" \
  || fail "the guide's run reported $line"

# train NAME OUT [ARGS...]: train_func under mpiexec -n 2 as a trainrt workload; sets $rc.
train() {
  local name=$1 out=$2; shift 2
  rc=0
  timeout -k 10 300 mpiexec -n 2 "$TRAINRT" --run.workload=python:"$WORK/transformers_guide.py":train_func \
    --train.epochs=6 --train.samples=1024 --train.lr=0.002 --train.output_dir="$WORK/out_$name" \
    --run.storage_path="$WORK/runs" --run.name="$name" --metrics.progress=off "$@" >"$out" 2>&1 || rc=$?
}
metrics() { jq -s -c '[.[] | [.epoch, .loss, .eval_accuracy]]' "$WORK/runs/$1/result.jsonl"; }
epochs() { jq -s -c '[.[] | .epoch]' "$WORK/runs/$1/result.jsonl"; }

train ref "$WORK/ref.out"
[ "$rc" -eq 0 ] && [ "$(epochs ref)" = "[1,2,3,4,5,6]" ] || { tail -30 "$WORK/ref.out" >&2; fail "the uninterrupted run exits $rc, epochs $(epochs ref)"; finish; }
( train stopped "$WORK/first.out"; echo "$rc" >"$WORK/first.rc" ) &
runner=$!
wait_rows "$WORK/runs/stopped" 2 || fail "no 2 result rows within 60 s"
kill -USR2 "$(rank_pid stopped 1)"
wait "$runner" || true
first_rows=$(rows "$WORK/runs/stopped")
[ "$(cat "$WORK/first.rc")" = "$TRAINRT_EXIT_STOPPED" ] && [ "$first_rows" -lt 6 ] \
  && pass "USR2 to rank 1: stopped at report $first_rows, exit $TRAINRT_EXIT_STOPPED" \
  || { tail -30 "$WORK/first.out" >&2; fail "the stopped run exits $(cat "$WORK/first.rc") after $first_rows rows"; }
rm -rf "$WORK/out_stopped"  # a rerun elsewhere: the Trainer's own output_dir is not what it resumes from
train stopped "$WORK/rerun.out"
[ "$rc" -eq 0 ] && grep -q '^\[trainrt 0\] resuming from' "$WORK/rerun.out" \
  && [ "$(epochs stopped)" = "[1,2,3,4,5,6]" ] && [ "$(metrics stopped)" = "$(metrics ref)" ] \
  && pass "resumed through resume_from_checkpoint: epochs $(epochs stopped), every loss and eval accuracy as the uninterrupted run's" \
  || { tail -30 "$WORK/rerun.out" >&2; fail "after resume (exit $rc): $(metrics stopped) vs $(metrics ref)"; }

( train killed "$WORK/killed.out"; echo "$rc" >"$WORK/killed.rc" ) &
runner=$!
wait_rows "$WORK/runs/killed" 2 || fail "no 2 result rows within 60 s (killed run)"
kill -KILL "$(rank_pid killed 1)"
wait "$runner" || true
rm -rf "$WORK/out_killed"
train killed "$WORK/killed_rerun.out"
[ "$(cat "$WORK/killed.rc")" != 0 ] && [ "$rc" -eq 0 ] && [ "$(epochs killed)" = "[1,2,3,4,5,6]" ] \
  && [ "$(metrics killed)" = "$(metrics ref)" ] \
  && pass "kill -9 of rank 1 (exit $(cat "$WORK/killed.rc")), rerun: every loss and eval accuracy as the uninterrupted run's" \
  || { tail -30 "$WORK/killed_rerun.out" >&2; fail "after kill -9 and rerun (exit $rc): $(metrics killed) vs $(metrics ref)"; }
finish
