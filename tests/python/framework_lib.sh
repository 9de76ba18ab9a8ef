# shellcheck shell=bash
# Shared by the framework tests (tests/python/test_python_{lightning,accelerate,transformers,tensorflow}.sh):
# a guide's script after the one sed, and its train_func as a trainrt workload under mpiexec,
# uninterrupted, and stopped by a signal to rank 1, rerun, killed, rerun again, its reports compared
# with the uninterrupted run's.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

# sed_copy SCRIPT: $WORK/<its name> after `sed 's/ray\.train/trainrt/g'`; a ray name left fails.
sed_copy() {
  local copy=$WORK/$(basename "$1")
  sed 's/ray\.train/trainrt/g' "$1" >"$copy"
  grep -qE '^(import|from) ray|ray\.train\.' "$copy" && fail "the sed left a ray name in $copy"
  return 0
}

# The caller sets FW_ARGS (the workload's trainrt arguments, e.g. --run.workload=python:F:train_func
# --train.epochs=N), FW_ROW (a jq filter of one result row: what must equal after a resume),
# FW_EPOCHS (the JSON list of the rows' .epoch, or of .$FW_EPOCH_KEY, in a complete run) and may define fw_before_run
# NAME (run before every run and rerun: what a run elsewhere would not find, removed).
fw_train() {  # NAME OUT: the workload under mpiexec -n 2 into $WORK/runs/NAME; sets $rc
  fw_before_run "$1"
  rc=0
  timeout -k 10 300 mpiexec -n 2 "$TRAINRT" "${FW_ARGS[@]}" --run.storage_path="$WORK/runs" --run.name="$1" \
    --metrics.progress=off >"$2" 2>&1 || rc=$?
}
fw_rows() { jq -s -c "[.[] | $FW_ROW]" "$WORK/runs/$1/result.jsonl"; }
fw_epochs() { jq -s -c "[.[] | .${FW_EPOCH_KEY:-epoch}]" "$WORK/runs/$1/result.jsonl"; }
fw_before_run() { :; }

# fw_reference: the uninterrupted run "ref"; ends the test when it fails.
fw_reference() {
  fw_train ref "$WORK/ref.out"
  [ "$rc" -eq 0 ] && [ "$(fw_epochs ref)" = "$FW_EPOCHS" ] \
    || { tail -30 "$WORK/ref.out" >&2; fail "the uninterrupted run exits $rc, epochs $(fw_epochs ref)"; finish; exit 1; }
}

# fw_interrupt NAME SIGNAL [WHEN]: run (or rerun) NAME, SIGNAL to rank 1 once 2 reports are in, or
# with WHEN=resumed once rank 0 says it resumes; sets $first_rc, $first_rows; the run's output is
# $WORK/NAME.SIGNAL.out.
fw_interrupt() {
  local name=$1 signal=$2 when=${3:-rows} runner out=$WORK/$1.$2.out
  ( fw_train "$name" "$out"; echo "$rc" >"$WORK/$name.rc" ) &
  runner=$!
  if [ "$when" = resumed ]; then
    local deadline=$((SECONDS + 60))
    until grep -q '^\[trainrt 0\] resuming from' "$out" 2>/dev/null; do
      ((SECONDS < deadline)) || { fail "$name: no resume within 60 s"; break; }
      sleep 0.05
    done
  else
    wait_rows "$WORK/runs/$name" 2 || fail "$name: no 2 result rows within 60 s"
  fi
  kill "-$signal" "$(rank_pid "$name" 1)"
  wait "$runner" || true
  first_rc=$(cat "$WORK/$name.rc")
  first_rows=$(rows "$WORK/runs/$name")
}

# fw_rerun_matches NAME HOW: reruns NAME; passes when it resumed and every report equals ref's.
fw_rerun_matches() {
  fw_train "$1" "$WORK/$1.rerun.out"
  [ "$rc" -eq 0 ] && grep -q '^\[trainrt 0\] resuming from' "$WORK/$1.rerun.out" \
    && [ "$(fw_epochs "$1")" = "$FW_EPOCHS" ] && [ "$(fw_rows "$1")" = "$(fw_rows ref)" ] \
    && pass "$2, rerun: resumed, epochs $(fw_epochs "$1"), every report ($FW_ROW) as the uninterrupted run's" \
    || { tail -30 "$WORK/$1.rerun.out" >&2; fail "$2, rerun (exit $rc): $(fw_rows "$1") vs $(fw_rows ref)"; }
}

# fw_stop_and_kill SIGNAL: one run interrupted twice, then completed: SIGNAL to rank 1 stops it
# (exit stopped, before the last report); its rerun resumes and is killed (-9 of rank 1) as it
# resumes; the second rerun resumes again and completes with every report of the uninterrupted run.
fw_stop_and_kill() {
  local last stopped_at
  last=$(jq length <<<"$FW_EPOCHS")
  fw_interrupt chain "$1"
  stopped_at=$first_rows
  [ "$first_rc" = "$TRAINRT_EXIT_STOPPED" ] && [ "$stopped_at" -lt "$last" ] \
    && pass "SIG$1 to rank 1 reached trainrt: stopped at report $stopped_at, exit $TRAINRT_EXIT_STOPPED" \
    || { tail -30 "$WORK/chain.$1.out" >&2; fail "the stopped run exits $first_rc after $first_rows reports"; }
  fw_interrupt chain KILL resumed
  [ "$first_rc" != 0 ] && [ "$first_rows" -lt "$last" ] \
    && pass "the stopped run's rerun resumed and was killed (kill -9 of rank 1) after report $first_rows, exit $first_rc" \
    || { tail -30 "$WORK/chain.KILL.out" >&2; fail "the rerun to be killed exits $first_rc after $first_rows reports"; }
  fw_rerun_matches chain "SIG$1 stop, then kill -9 of rank 1 in the resumed run"
}

# fw_matches_ray GUIDE LINE: the summary line of trainrt's run of tests/python/GUIDE_guide.py after
# the port equals Ray's run of the same script as written (tests/conformance/ray_guides.json, stored
# by `make conformance`; tests/conformance/ray_guides.py compares).
fw_matches_ray() {
  local said
  said=$("$TRAINRT_PYTHON" "$TRAINRT_SRC/tests/conformance/ray_guides.py" compare \
    --reference "$TRAINRT_SRC/tests/conformance/ray_guides.json" "$1" "$2" 2>&1) \
    && pass "the guide's run, $said" || fail "the guide's run differs from Ray's: $said"
}
