#!/usr/bin/env bash
# Your own LibTorch model: the installed example (examples/torch_model: a custom residual module,
# AdamW, dropout, here batch norm), built out of tree against the install with find_package(trainrt
# COMPONENTS torch) (fixture install.setup), trained by the installed trainrt under mpiexec. Stopped
# with USR2 mid-epoch and rerun it reports every number of the uninterrupted run (running and
# epoch losses; batch-norm statistics: the test accuracy uses them) and ends with its digest; the same run resumed with another
# width is refused with exit 8 naming the tensor; a batch that does not divide is refused by its
# preflight (exit 2, one line, nothing written). The same plugin, unchanged, runs as the trials of a
# `trainrt tune` sweep.
# ctest: fixture=trainrt_installed
source "$(dirname "$0")/../checkpoint/lib.sh"
prefix=$TRAINRT_BUILD/test-install/prefix
plugin=$TRAINRT_BUILD/test-install/torch_example/libtorch_model.so
[ -x "$prefix/bin/trainrt" ] && [ -f "$plugin" ] || { echo "FAIL: no installed trainrt or LibTorch example ($plugin): install.setup" >&2; exit 1; }
TRAINRT=$prefix/bin/trainrt
ini=$prefix/share/trainrt/examples/torch_model/torch_model.ini
CKPT_ARGS=(--config "$ini" --run.workload="plugin:$plugin" --data.path="$DATA" --train.epochs=2
           --train.batch_size=256 --train.report_every=20 --train.norm=batch --metrics.progress=off)
model_digest() { sed -n 's/^torch_model_digest=\([0-9a-f]\{16\}\)$/\1/p' "$1" | tail -1; }
# The rows' numbers, without the stopped run's own stop row (its checkpoint's report: no loss)
# and iteration numbers (shifted by that row).
reported() { jq -c 'select(.running_loss != null or .loss != null) | {epoch, batch, running_loss, loss, test_accuracy}' "$1/result.jsonl"; }

train 2 ref "$WORK/ref.out"
base=$(model_digest "$WORK/ref.out")
[ "$rc" -eq 0 ] && [ -n "$base" ] && pass "the example plugin trains under mpiexec -n 2: digest $base, $(tail -1 "$WORK/ref/result.jsonl" | jq -c '{loss, test_accuracy}')" \
  || { show "$WORK/ref.out"; fail "uninterrupted run exits $rc"; finish; }
jq -e -s 'last | .test_accuracy > 0.75' "$WORK/ref/result.jsonl" >/dev/null || fail "test accuracy after two epochs: $(tail -1 "$WORK/ref/result.jsonl")"

( train 2 stopped "$WORK/stopped.out"; echo "$rc" >"$WORK/stopped.rc" ) &
runner=$!
wait_rows "$WORK/stopped" 2 || fail "no 2 progress rows within 60 s"
pid=$(rank_pid stopped 1) && kill -USR2 "$pid" || fail "rank 1 not found"
wait "$runner" || true
[ "$(cat "$WORK/stopped.rc")" = 9 ] || { show "$WORK/stopped.out"; fail "stopped run exits $(cat "$WORK/stopped.rc"), expected 9"; }
train 2 stopped "$WORK/resumed.out"
[ "$rc" -eq 0 ] && grep -q '^\[trainrt 0\] resuming from' "$WORK/resumed.out" && [ "$(model_digest "$WORK/resumed.out")" = "$base" ] \
  && pass "stopped mid-epoch by USR2 and rerun: resumed, same digest $base" \
  || { show "$WORK/resumed.out"; fail "resume: exit $rc, digest $(model_digest "$WORK/resumed.out") vs $base"; }
if diff <(reported "$WORK/ref") <(reported "$WORK/stopped") >"$WORK/rows.diff"; then
  pass "every reported number equals the uninterrupted run's ($(wc -l <"$WORK/ref/result.jsonl") rows, last $(tail -1 "$WORK/ref/result.jsonl" | jq -c '{loss, test_accuracy}'))"
else
  cat "$WORK/rows.diff" >&2; fail "the resumed run reported other numbers"
fi

train 2 ref "$WORK/wider.out" --train.epochs=3 --train.width=128
[ "$rc" -eq 8 ] && grep -q "tensor 'model.stem.weight' is float32 \[256, 784\], the model's is float32 \[128, 784\]" "$WORK/wider.out" \
  && pass "resumed with another width: exit 8, $(grep -m1 -o "tensor 'model.stem.weight'.*" "$WORK/wider.out")" \
  || { show "$WORK/wider.out"; fail "mismatched resume: exit $rc"; }

train 2 odd "$WORK/odd.out" --train.batch_size=255
[ "$rc" -eq 2 ] && [ "$(grep -c . "$WORK/odd.out.stderr")" -eq 1 ] && grep -q "does not divide by the 2 ranks" "$WORK/odd.out" \
  && [ ! -e "$WORK/odd" ] && pass "a batch that does not divide: exit 2, $(cat "$WORK/odd.out.stderr")" \
  || { show "$WORK/odd.out"; fail "odd batch: exit $rc"; }
# The same plugin, unchanged, as the trials of a sweep: `trainrt tune` over its own train.lr key, two
# 1-rank trials at once (a narrower model: width 64, one block); each trial is a run of the plugin with its rate, reports its accuracy and
# digest, and `trainrt results` names the better one.
cat >"$WORK/sweep.ini" <<INI
[tune]
base = $ini
metric = test_accuracy
num_samples = 2
ranks_per_trial = 1
[space]
train.lr = grid(0.001, 0.003)
INI
rc=0; timeout -k 10 300 "$TRAINRT" tune --config "$WORK/sweep.ini" --ranks 2 --run.workload="plugin:$plugin" --data.path="$DATA" \
  --train.epochs=1 --train.batch_size=256 --train.width=64 --train.blocks=1 --metrics.progress=off --run.storage_path="$WORK" --run.name=sweep >"$WORK/sweep.out" 2>&1 || rc=$?
S=$WORK/sweep
digests=$(for t in trial_0000 trial_0001; do model_digest "$S/$t.out"; done | sort -u | grep -c . || true)
best=$(for t in trial_0000 trial_0001; do jq -r "select(.loss != null) | \"$t \\(.test_accuracy)\"" "$S/$t/result.jsonl" | tail -1; done | sort -k2 -g | tail -1)
[ "$rc" -eq 0 ] && [ "$(jq -r '[.trials[].status] | join(" ")' "$S/sweep.json")" = "TERMINATED TERMINATED" ] \
  && [ "$(jq -r '[.trials[].values["train.lr"]] | join(" ")' "$S/sweep.json")" = "0.001 0.003" ] && [ "$digests" -eq 2 ] \
  && "$TRAINRT" results "$S" --json | jq -e --arg t "${best% *}" '.best_trial == $t' >/dev/null \
  && pass "the plugin as 2 sweep trials (lr 0.001, 0.003): both TERMINATED, 2 digests, best ${best}" \
  || { tail -20 "$WORK/sweep.out" >&2; fail "plugin sweep: exit $rc, $(jq -c '[.trials[] | {status, last_exit}]' "$S/sweep.json" 2>/dev/null), best '$best'"; }
finish
