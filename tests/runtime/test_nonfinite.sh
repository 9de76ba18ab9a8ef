#!/usr/bin/env bash
# [failure] on_nonfinite: a report() with a NaN metric ends the run on every rank with exit 7 and
# one line naming the metric and the iteration; its checkpoint is not committed, so the latest is
# the last finite one; the failure event says so; a rerun resumes from it. `ignore` goes on. And
# fashion_mlp with lr = 1e30 (diverges in its first epoch) ends with exit 7 and no checkpoint.
source "$(dirname "$0")/../metrics/lib.sh"

# The reporter checkpoints every report; rank 1 reports loss = NaN at iteration 6.
report_run 2 diverged "$WORK/diverged.out" --train.reports=10 --train.checkpoint_every=1 --train.nan_at=6 --train.nan_rank=1
[ "$rc" -eq 7 ] && pass "NaN on rank 1 at iteration 6: exit 7" || { show "$WORK/diverged.out"; fail "exit $rc, expected 7"; }
line=$(grep '^\[trainrt [0-9]*\] error: ' "$WORK/diverged.out" || true)
[ "$(grep -c . <<<"$line")" -eq 1 ] && grep -q "on rank 1: workload: metric 'loss' = nan reported at iteration 6 is not finite" <<<"$line" \
  && pass "one line: $line" || fail "error lines: $line"
latest=$(cat "$WORK/diverged/checkpoints/latest" 2>/dev/null || true)
[ "$latest" = checkpoint_000005 ] && [ ! -e "$WORK/diverged/checkpoints/checkpoint_000006" ] \
  && pass "latest checkpoint is the last finite one ($latest); none for iteration 6" \
  || fail "latest '$latest'; $(ls "$WORK/diverged/checkpoints")"
jq -e -s '[.[] | select(.event == "failure")] | length == 1 and (.[0].reason == "workload") and (.[0].exit_code == 7)
          and (.[0].message | contains("iteration 6"))' "$WORK/diverged/events.jsonl" >/dev/null \
  && pass "one failure event naming iteration 6, exit code 7" || fail "failure events: $(grep failure "$WORK/diverged/events.jsonl")"

report_run 2 diverged "$WORK/rerun.out" --train.reports=10 --train.checkpoint_every=1
[ "$rc" -eq 0 ] && grep -q "resuming from .*checkpoint_000005 (iteration 5)" "$WORK/rerun.out" \
  && grep -q "reporter_done=10" "$WORK/rerun.out" && pass "the rerun resumed from iteration 5 and finished" \
  || { show "$WORK/rerun.out"; fail "rerun: exit $rc"; }

report_run 2 ignored "$WORK/ignored.out" --train.reports=8 --train.checkpoint_every=1 --train.nan_at=3 \
  --failure.on_nonfinite=ignore
[ "$rc" -eq 0 ] && [ -d "$WORK/ignored/checkpoints/checkpoint_000003" ] \
  && pass "on_nonfinite = ignore: finished, the NaN report's checkpoint committed" || { show "$WORK/ignored.out"; fail "ignore: exit $rc"; }

require_data
code=0
timeout -k 5 300 mpiexec -n 2 "$TRAINRT" --config jobs/fashion_mlp.ini --train.epochs=2 --train.lr=1e30 \
  --run.storage_path="$WORK" --run.name=lr >"$WORK/lr.out" 2>&1 || code=$?
[ "$code" -eq 7 ] && grep -q "metric 'loss' = -\?nan reported at iteration 1" "$WORK/lr.out" \
  && [ -z "$(find "$WORK/lr/checkpoints" -mindepth 1 -maxdepth 1 -name 'checkpoint_*' 2>/dev/null)" ] \
  && pass "fashion_mlp with lr = 1e30: exit 7 at iteration 1, no checkpoint" || { show "$WORK/lr.out"; fail "lr 1e30: exit $code"; }
finish
