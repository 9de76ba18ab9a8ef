#!/usr/bin/env bash
# A rank SIGKILLed at any phase of a checkpoint save (TRAINRT_FAULT=<phase>:<rank>:<iteration>)
# leaves the previous committed checkpoint valid; a restart without the fault cleans the
# leftover, resumes from it and ends with the weights of an uninterrupted run.
# 2 ranks, file_per_rank: every phase. 4 ranks: before_data, mid_data, before_rename.
# 2 ranks, shared layout: every phase the shared writer has. `make test` runs one phase of each
# step of the commit per layout (data, manifest, rename, retention) and `make test-long`
# (TRAINRT_TEST_LONG=1) every one.
# ctest: fixture=small_data
source "$(dirname "$0")/lib.sh"

# baseline NP LAYOUT [ARGS...]: the uninterrupted run's digest into $base.
baseline() {
  local np=$1 layout=$2; shift 2
  local name="base_np${np}_${layout}"
  train "$np" "$name" "$WORK/$name.out" --checkpoint.layout="$layout" "$@"
  base=$(digest_of "$WORK/$name.out")
  if [ "$rc" -ne 0 ] || [ -z "$base" ]; then
    show "$WORK/$name.out"; fail "uninterrupted run np=$np layout=$layout: exit $rc, digest '${base}'"
    base=none
  else
    pass "uninterrupted np=$np layout=$layout: digest $base"
  fi
}

# long_only: true when the case only runs in `make test-long` (it repeats a step of the commit a
# shorter case already covers), having said so.
long_only() {
  [ "${TRAINRT_TEST_LONG:-0}" = 1 ] && return 1
  echo "skipped outside make test-long: $*"
}

# kill_case NP LAYOUT PHASE RANK ITERATION RESUME_ITERATION LAST_ITERATION [ARGS...]
kill_case() {
  local np=$1 layout=$2 phase=$3 rank=$4 iter=$5 resume=$6 last=$7; shift 7
  local name="np${np}_${layout}_${phase}" what="np=$np $layout $phase:$rank:$iter"
  local run_dir="$WORK/np${np}_${layout}_${phase}"
  local crash="$WORK/$name.crash.out" again="$WORK/$name.restart.out" vout="$WORK/$name.verify.out"
  local expected; expected=$(ckpt_name "$resume")

  # 1. the faulty run dies at that phase
  TRAINRT_FAULT="$phase:$rank:$iter" train "$np" "$name" "$crash" --checkpoint.layout="$layout" "$@"
  if [ "$rc" -eq 0 ]; then
    show "$crash"; fail "$what: the run finished (exit 0) instead of dying"; return
  elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    fail "$what: the run hung after the kill (timeout ${RUN_TIMEOUT}s)"; return
  fi
  if ! grep -q "fault injection: rank $rank dies at $phase (iteration $iter)" "$crash"; then
    show "$crash"; fail "$what: exit $rc but the fault did not fire"; return
  fi
  pass "$what: killed (exit $rc)"

  # 2. what is committed verifies, and the newest is the expected one
  verify "$run_dir" "$vout"
  if [ "$vrc" -ne 0 ]; then
    show "$vout"; fail "$what: after the crash, checkpoints verify exits $vrc"
  else
    pass "$what: committed checkpoints verify"
  fi
  local newest; newest=$(newest_committed "$run_dir")
  [ "$newest" = "$expected" ] && pass "$what: newest committed is $expected" \
    || fail "$what: newest committed after the crash is '$newest', expected $expected"
  local latest; latest=$(cat "$run_dir/checkpoints/latest" 2>/dev/null || echo "(no latest file)")
  [ "$latest" = "$expected" ] && pass "$what: latest names $expected" \
    || fail "$what: checkpoints/latest says '$latest', expected $expected"

  # 3. a restart without the fault resumes from it, leaves nothing behind and ends identically
  train "$np" "$name" "$again" --checkpoint.layout="$layout" "$@"
  if [ "$rc" -ne 0 ]; then
    show "$again" 25; fail "$what: restart exits $rc"; return
  fi
  local from; from=$(resumed_iteration "$again")
  [ "$from" = "$resume" ] && pass "$what: restart resumes from iteration $resume" \
    || { show "$again"; fail "$what: restart resumed from iteration '${from}', expected $resume"; }
  grep -q "^\[trainrt 0\] resuming from $run_dir/checkpoints/$expected (iteration $resume)\$" "$again" \
    || fail "$what: resume line does not name $run_dir/checkpoints/$expected"
  local left; left=$(leftovers "$run_dir")
  [ -z "$left" ] && pass "$what: no leftover after the restart" \
    || fail "$what: left behind after the restart: $left"
  local digest; digest=$(digest_of "$again")
  [ "$digest" = "$base" ] && pass "$what: digest $digest equals the uninterrupted run's" \
    || fail "$what: digest '$digest' after resume, uninterrupted run gave $base"
  verify "$run_dir" "$vout"
  [ "$vrc" -eq 0 ] || { show "$vout"; fail "$what: after the restart, checkpoints verify exits $vrc"; }
  newest=$(newest_committed "$run_dir")
  [ "$newest" = "$(ckpt_name "$last")" ] \
    || fail "$what: newest checkpoint at the end is '$newest', expected $(ckpt_name "$last")"
  iterations_once "$run_dir" "$last" && pass "$what: result.jsonl has iterations 1..$last once each" \
    || fail "$what: result.jsonl does not hold each iteration exactly once"
}

# Retention (num_to_keep=2) after a kill during retention: the restart catches up.
check_kept() {  # check_kept RUN_DIR WHAT COUNT
  local n; n=$(committed "$1" | wc -l)
  [ "$n" -eq "$3" ] && pass "$2: $3 checkpoints kept at the end" \
    || fail "$2: $n checkpoints at the end ($(committed "$1" | tr '\n' ' ')), num_to_keep=2 keeps $3"
}

started=$SECONDS
# ---- 2 ranks, file_per_rank: every phase (9 iterations; 4 = end of epoch 1)
baseline 2 file_per_rank
kill_case 2 file_per_rank before_data      1 2 1 9
long_only "2 file_per_rank mid_data" || kill_case 2 file_per_rank mid_data         1 5 4 9
long_only "2 file_per_rank after_data" || kill_case 2 file_per_rank after_data       1 4 3 9
kill_case 2 file_per_rank before_manifest  0 6 5 9
kill_case 2 file_per_rank before_rename    0 7 6 9
# committed at iteration 5, killed while deleting the oldest: resumes from 5 itself
kill_case 2 file_per_rank during_retention 0 5 5 9 --checkpoint.num_to_keep=2
check_kept "$WORK/np2_file_per_rank_during_retention" "np=2 during_retention" 2
echo "2 ranks, file_per_rank: $((SECONDS - started)) s"

# ---- 4 ranks (oversubscribed), file_per_rank, 1 epoch: iterations 1-3 mid-epoch, 4 at its end
t=$SECONDS
CKPT_ARGS=(--config jobs/fashion_mlp.ini --data.path="$SMALL_DATA" --train.batch_size=64 --train.epochs=1
           --checkpoint.every_steps=24)
baseline 4 file_per_rank
long_only "4 file_per_rank before_data" || kill_case 4 file_per_rank before_data   3 2 1 4
kill_case 4 file_per_rank mid_data      0 3 2 4
long_only "4 file_per_rank before_rename" || kill_case 4 file_per_rank before_rename 0 4 3 4
echo "4 ranks, file_per_rank: $((SECONDS - t)) s"

# ---- 2 ranks, shared layout (one data.h5 through MPI-IO), 1 epoch
t=$SECONDS
baseline 2 shared
long_only "2 shared before_data" || kill_case 2 shared before_data      1 2 1 4
kill_case 2 shared mid_data         1 3 2 4
long_only "2 shared after_data" || kill_case 2 shared after_data       1 4 3 4
long_only "2 shared before_manifest" || kill_case 2 shared before_manifest  0 3 2 4
kill_case 2 shared before_rename    0 4 3 4
kill_case 2 shared during_retention 0 3 3 4 --checkpoint.num_to_keep=2
check_kept "$WORK/np2_shared_during_retention" "np=2 shared during_retention" 2
echo "2 ranks, shared: $((SECONDS - t)) s; total $((SECONDS - started)) s"
finish
