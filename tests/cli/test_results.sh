#!/usr/bin/env bash
# `trainrt results RUN_DIR [--json|--csv]` on real runs of the reporter plugin (2 ranks): a
# finished run (last metrics, checkpoints ranked by accuracy max and min, CSV), a run whose rank 1
# throws (failed: the run's own exit 7 shown, the rank and message; the supervisor giving up with
# max_failures = 0: exit 10), a rank killed without a record (looks running, then failed once the
# supervisor recorded it, then a restart that resumes), a run read while it runs (running) and
# then stopped by USR2 (stopped, exit 9) and resumed (a restart naming the stop), a copied run
# directory with a torn last line, goodput (a kill that loses two iterations: lost work; the parts
# add up to the rank-time; the summary's line), and bad input (exit 2, one line on stderr). `trainrt results`
# exits with its own status codes (TRAINRT_RESULTS_*), never a training code.
# ctest: processors=1
source "$(dirname "$0")/../metrics/lib.sh"
THROWING="$TRAINRT_BUILD/tests/plugins/libtest_plugin_throwing.so"
[ -f "$THROWING" ] || { echo "FAIL: $THROWING missing (built with the tests)" >&2; exit 1; }

# results ARGS...: `trainrt results ARGS` with stdout in $WORK/res.out, stderr in $WORK/res.err;
# sets $xrc.
results() {
  xrc=0
  "$TRAINRT" results "$@" >"$WORK/res.out" 2>"$WORK/res.err" || xrc=$?
}
# field FILTER: jq FILTER applied to the last `results --json` output, compact.
field() { jq -c "$1" "$WORK/res.out"; }
# check_json WHAT [JQ_ARGS...] FILTER: passes when jq -e FILTER holds for the last --json output.
check_json() {
  local what=$1
  shift
  jq -e "$@" "$WORK/res.out" >/dev/null 2>&1 && pass "$what" || fail "$what: $(head -c 3000 "$WORK/res.out")"
}
# expect_exit WHAT CODE: the last `results` exited CODE, with nothing on stderr but notes.
expect_exit() {
  [ "$xrc" -eq "$2" ] && pass "$1: exit $2" || { fail "$1: exit $xrc, expected $2"; show "$WORK/res.err"; }
}

# --- a finished run: 8 reports, a checkpoint every 2, best by accuracy (max) -------------------
report_run 2 fin "$WORK/fin.out" --train.reports=8 --train.checkpoint_every=2 \
  --checkpoint.score_attribute=accuracy --checkpoint.score_order=max
[ "$rc" -eq 0 ] || { show "$WORK/fin.out"; fail "finished run exits $rc"; finish; }
results "$WORK/fin" --json
expect_exit "finished run" "$TRAINRT_RESULTS_FINISHED"
check_json "status finished, exit code 0, path, workload, world size 2, no error, no restarts" \
  --arg p "$WORK/fin" '.status == "finished" and .exit_code == 0 and .path == $p and (.workload | endswith("libtest_plugin_reporter.so"))
   and .world_size == 2 and .error == null and .restarts == [] and .attempts == 1'
[ "$(field .metrics)" = "$(tail -1 "$WORK/fin/result.jsonl" | jq -c .)" ] && pass "metrics is the last row as written" \
  || fail "metrics $(field .metrics) vs last row $(tail -1 "$WORK/fin/result.jsonl")"
check_json "rows 8, iterations 8" '.rows == 8 and .iterations == 8'
check_json "latest checkpoint: checkpoint_000008 with its reported metrics" --arg p "$WORK/fin/checkpoints/checkpoint_000008" \
  '.latest_checkpoint.path == $p and .latest_checkpoint.iteration == 8 and .latest_checkpoint.metrics.accuracy == 0.875'
check_json "best checkpoints by accuracy (max): iterations 8, 6, 4, 2, score = metrics.accuracy" \
  '[.best_checkpoints[].iteration] == [8, 6, 4, 2] and all(.best_checkpoints[]; .score == .metrics.accuracy)
   and .checkpoint_score == {"attribute": "accuracy", "order": "max"}'
useful=$(jq -s 'map(._time_this_iter_s) | add' "$WORK/fin/result.jsonl")
check_json "useful_time_s = sum of _time_this_iter_s ($useful), total_time_s >= it" --argjson u "$useful" \
  '(.useful_time_s - $u | fabs) < 1e-6 and .total_time_s >= .useful_time_s and .useful_time_s > 0'

# The same ranking read with score_order = min (run.json is the config snapshot results reads).
report_run 2 fin_min "$WORK/fin_min.out" --train.reports=6 --train.checkpoint_every=2 \
  --checkpoint.score_attribute=accuracy --checkpoint.score_order=min
results "$WORK/fin_min" --json
check_json "best checkpoints by accuracy (min): iterations 2, 4, 6" \
  '[.best_checkpoints[].iteration] == [2, 4, 6] and .best_checkpoints[0].score == 0.5 and .checkpoint_score.order == "min"'

results "$WORK/fin" --csv
expect_exit "--csv of a finished run" "$TRAINRT_RESULTS_FINISHED"
[ "$(wc -l <"$WORK/res.out")" -eq 9 ] && pass "csv: header + 8 lines" || fail "csv has $(wc -l <"$WORK/res.out") lines"
"$TRAINRT_PYTHON" - "$WORK/res.out" "$WORK/fin/result.jsonl" <<'PY' && pass "csv parses (python csv): columns, iterations, values, _ranks as <metric>/<stat>" || fail "csv content"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
src = [json.loads(l) for l in open(sys.argv[2])]
assert len(rows) == 8, len(rows)
assert [int(r["_training_iteration"]) for r in rows] == list(range(1, 9))
for r, s in zip(rows, src):
    assert float(r["loss"]) == s["loss"] and r["phase"] == s["phase"], (r, s)
    assert float(r["loss/max"]) == s["_ranks"]["loss"]["max"] and int(r["loss/max_rank"]) == 1, r
    assert int(r["world_size"]) == 2
assert "_ranks" not in rows[0] and list(rows[0])[0] == "_training_iteration", list(rows[0])
PY

results "$WORK/fin"
expect_exit "summary of a finished run" "$TRAINRT_RESULTS_FINISHED"
n=$(wc -l <"$WORK/res.out")
grep -q '^status: *finished (exit 0)' "$WORK/res.out" && grep -q "^path: *$WORK/fin\$" "$WORK/res.out" \
  && grep -q '^last metrics: .*accuracy = 0.875' "$WORK/res.out" && grep -q '^best checkpoints: *by accuracy (max)' "$WORK/res.out" \
  && grep -q "1\. $WORK/fin/checkpoints/checkpoint_000008 (iteration 8), score 0.875" "$WORK/res.out" \
  && grep -q '^time: *total [0-9]:[0-9][0-9]:[0-9][0-9], useful ' "$WORK/res.out" && [ "$n" -ge 10 ] && [ "$n" -le 20 ] \
  && pass "summary: $n lines with status, path, last metrics, best checkpoints, time" || { fail "summary"; show "$WORK/res.out"; }

# --- a run whose training function throws on rank 1 --------------------------------------------
report_run 2 throws "$WORK/throws.out" --run.workload="plugin:$THROWING"
[ "$rc" -eq "$TRAINRT_EXIT_WORKLOAD" ] || { show "$WORK/throws.out"; fail "throwing run exits $rc, expected $TRAINRT_EXIT_WORKLOAD"; }
results "$WORK/throws" --json
expect_exit "failed run" "$TRAINRT_RESULTS_FAILED"
check_json "status failed, the run's own exit code 7, error: rank 1 and its message" \
  --argjson code "$TRAINRT_EXIT_WORKLOAD" '.status == "failed" and .exit_code == $code and .error.rank == 1
   and (.error.message | contains("loss became NaN at step 3")) and .error.reason == "workload"'
results "$WORK/throws"
grep -q "^status: *failed (exit $TRAINRT_EXIT_WORKLOAD)" "$WORK/res.out" && pass "summary: failed (exit 7), the run's own code" \
  || { fail "summary status line"; show "$WORK/res.out"; }
grep -q '^error: *rank 1: .*loss became NaN' "$WORK/res.out" && pass "summary names rank 1's error" || { fail "summary error line"; show "$WORK/res.out"; }
# Under the supervisor with max_failures = 0 it gives up at once: a final record after rank 1's.
rc=0
"$TRAINRT" supervise --launcher=mpiexec -n 2 -- "$TRAINRT" --config "$WORK/reporter.ini" --run.name=gives_up \
  --run.workload="plugin:$THROWING" --failure.max_failures=0 >"$WORK/giveup.out" 2>&1 || rc=$?
[ "$rc" -eq "$TRAINRT_EXIT_FAILURE_LIMIT" ] && grep -q 'give_up: giving up: 1 failure(s)' "$WORK/giveup.out" \
  && pass "the supervisor gives up: exit $rc" || { fail "supervisor did not give up: exit $rc"; show "$WORK/giveup.out"; }
results "$WORK/gives_up" --json
expect_exit "run given up" "$TRAINRT_RESULTS_FAILED"
check_json "final failure record: failed, gave up (exit 10), the root cause (rank 1) still the error" \
  --argjson code "$TRAINRT_EXIT_FAILURE_LIMIT" '.status == "failed" and .exit_code == $code
   and (.status_detail | startswith("gave up")) and .error.rank == 1'

# --- rank 1 killed at report 5 (no record), the supervisor's record, then a restart ------------
TRAINRT_FAULT=report:1:5 report_run 2 killed "$WORK/killed.out" --train.reports=10 --train.checkpoint_every=2
[ "$rc" -ne 0 ] || fail "killed run exits 0"
results "$WORK/killed" --json
expect_exit "killed run before any record of the kill" "$TRAINRT_RESULTS_RUNNING"
check_json "killed without a record: running (its detail says it may have been killed), no exit code yet" \
  '.status == "running" and .exit_code == null and (.status_detail | contains("killed")) and .latest_checkpoint.iteration == 4'
# The same kill under the supervisor: it records the failure the step left none of, and with
# max_failures = 0 gives up at once (srun or mpiexec reports the killed rank as 137 or 9).
rc=0
TRAINRT_FAULT=report:1:5 "$TRAINRT" supervise --launcher=mpiexec -n 2 -- "$TRAINRT" --config "$WORK/reporter.ini" \
  --run.name=killed_supervised --train.reports=10 --train.checkpoint_every=2 --failure.max_failures=0 \
  >"$WORK/supervised.out" 2>&1 || rc=$?
[ "$rc" -eq "$TRAINRT_EXIT_FAILURE_LIMIT" ] || { show "$WORK/supervised.out"; fail "supervised kill exits $rc"; }
results "$WORK/killed_supervised" --json
expect_exit "killed run after the supervisor's record" "$TRAINRT_RESULTS_FAILED"
check_json "failed: the supervisor's record of the kill (no rank: nobody else recorded it), then it gave up" \
  '.status == "failed" and .error.rank == null and .error.exit_code != null and (.error.message | contains("exit code"))
   and (.status_detail | startswith("gave up"))'
report_run 2 killed "$WORK/killed2.out" --train.reports=10 --train.checkpoint_every=2
[ "$rc" -eq 0 ] || { show "$WORK/killed2.out"; fail "restart after the kill exits $rc"; }
results "$WORK/killed" --json
expect_exit "restarted run" "$TRAINRT_RESULTS_FINISHED"
check_json "one restart: after failure, resumed from checkpoint_000004; no error now" \
  '.status == "finished" and .error == null and (.restarts | length) == 1 and (.restarts[0].reason | startswith("after failure"))
   and .restarts[0].resumed_from == {"checkpoint": "checkpoint_000004", "iteration": 4} and .attempts == 2 and .rows == 10'
check_json "no score_attribute: best checkpoints newest first, score null" \
  '[.best_checkpoints[].iteration] == [10, 8, 6, 4, 2] and all(.best_checkpoints[]; .score == null)
   and .checkpoint_score.order == "recency"'
# Goodput of a kill that loses work: rank 1 killed at report 7, the last checkpoint at 4, so
# reports 5 and 6 are done again after the resume.
TRAINRT_FAULT=report:1:7 report_run 2 lost "$WORK/lost.out" --train.reports=8 --train.checkpoint_every=4 --train.sleep_ms=50
report_run 2 lost "$WORK/lost2.out" --train.reports=8 --train.checkpoint_every=4 --train.sleep_ms=50
lost=$(jq -s '2 * (map(._time_this_iter_s) | add)' "$WORK/lost/result.superseded.jsonl")
results "$WORK/lost" --json
check_json "goodput: the 2 iterations done again are lost work (0.1 s < it <= 2 ranks x $lost s), the parts sum to the rank-time" \
  --argjson lost "$lost" '.goodput as $g | $g.lost_rank_s.lost_work > 0.1 and $g.lost_rank_s.lost_work <= $lost + 1e-9
   and $g.lost_rank_s.start_up > 0 and $g.ratio > 0 and $g.ratio < 1
   and (($g.lost_rank_s | add) + $g.useful_rank_s - $g.allocated_rank_s | fabs) < 1e-6'

# --- read while running (exit 3, concurrent appends), then USR2 (stopped), then resumed --------
( report_run 2 results_live "$WORK/live.out" --train.reports=40 --train.sleep_ms=300 --train.checkpoint_every=1 \
    --failure.requeue=never; echo "$rc" >"$WORK/live.rc" ) &
runner=$!
wait_rows "$WORK/results_live" 3 || fail "live: no 3 rows within 60 s"
for i in 1 2 3 4 5; do
  results "$WORK/results_live" --json
  [ "$xrc" -eq "$TRAINRT_RESULTS_RUNNING" ] && jq -e '.status == "running" and .rows >= 3' "$WORK/res.out" >/dev/null \
    || { fail "live read $i: exit $xrc, $(head -c 300 "$WORK/res.out")"; break; }
  sleep 0.1
done
[ "$i" -eq 5 ] && [ "$xrc" -eq "$TRAINRT_RESULTS_RUNNING" ] && pass "5 reads while the job appends: running, exit $xrc"
results "$WORK/results_live" --csv
[ "$xrc" -eq "$TRAINRT_RESULTS_RUNNING" ] && [ "$(wc -l <"$WORK/res.out")" -ge 4 ] && pass "--csv while running: rows so far" || fail "--csv while running: exit $xrc"
if pid=$(rank_pid results_live 1); then kill -USR2 "$pid"; else fail "live: rank 1 not found"; fi
wait "$runner" || true
[ "$(cat "$WORK/live.rc")" = "$TRAINRT_EXIT_STOPPED" ] || { show "$WORK/live.out"; fail "live: stopped run exits $(cat "$WORK/live.rc")"; }
results "$WORK/results_live" --json
expect_exit "stopped run" "$TRAINRT_RESULTS_STOPPED"
check_json "status stopped, exit code 9, the signal in the detail, no error" \
  --argjson code "$TRAINRT_EXIT_STOPPED" '.status == "stopped" and .exit_code == $code and (.status_detail | contains("signal USR2")) and .error == null and .rows < 40'
results "$WORK/results_live"
grep -q '^status: *stopped (exit 9)' "$WORK/res.out" && grep -qE '^goodput: *[0-9.]+% of [0-9]:[0-9]{2}:[0-9]{2} rank-time trained; lost: start-up' "$WORK/res.out" \
  && pass "summary: stopped (exit 9), goodput line" || { fail "summary of a stopped run"; show "$WORK/res.out"; }
report_run 2 results_live "$WORK/live2.out" --train.reports=40 --train.checkpoint_every=1
results "$WORK/results_live" --json
expect_exit "resumed stopped run" "$TRAINRT_RESULTS_FINISHED"
check_json "restart after the stop: reason names the signal, resumed from the stop checkpoint" \
  '.status == "finished" and (.restarts | length) == 1 and (.restarts[0].reason | startswith("after stop (signal USR2"))
   and .restarts[0].resumed_from.iteration > 0 and .rows == 40 and .total_time_s >= .useful_time_s
   and (.goodput.useful_rank_s - 2 * .useful_time_s) <= 1e-6 and .goodput.useful_rank_s > 0'

# --- a copy elsewhere, read by a relative path; a torn last line; CSV quoting ------------------
mkdir -p "$WORK/elsewhere" && cp -a "$WORK/fin" "$WORK/elsewhere/copy"
(cd "$WORK/elsewhere" && "$TRAINRT" results copy --json >"$WORK/res.out" 2>"$WORK/res.err") && xrc=0 || xrc=$?
expect_exit "copied run dir (relative path)" "$TRAINRT_RESULTS_FINISHED"
check_json "copy: path and checkpoint paths are the copy's" --arg p "$WORK/elsewhere/copy" \
  '.path == $p and (.latest_checkpoint.path | startswith($p + "/checkpoints/")) and all(.best_checkpoints[]; .path | startswith($p))'
tail -1 "$WORK/fin/result.jsonl" | jq -c '._training_iteration = 9 | .phase = "a, \"quoted\"\nphase"' >>"$WORK/elsewhere/copy/result.jsonl"
printf '{"loss": 0.1, "_training_it' >>"$WORK/elsewhere/copy/result.jsonl"
results "$WORK/elsewhere/copy" --json
check_json "a torn last line is skipped (9 rows) and noted" '.rows == 9 and .metrics._training_iteration == 9 and (.warnings | length) == 1'
results "$WORK/elsewhere/copy" --csv
"$TRAINRT_PYTHON" - "$WORK/res.out" <<'PY' && pass "csv: RFC 4180 quoting of comma, quote and newline" || fail "csv quoting: $(tail -c 300 "$WORK/res.out")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == 9 and rows[-1]["phase"] == 'a, "quoted"\nphase', rows[-1]["phase"]
PY

# --- bad input: exit 2, one line on stderr, nothing on stdout ----------------------------------
mkdir -p "$WORK/empty" && : >"$WORK/plain"
bad() {
  local what=$1; shift
  results "$@"
  if [ "$xrc" -eq "$TRAINRT_EXIT_CONFIG" ] && [ "$(wc -l <"$WORK/res.err")" -eq 1 ] && grep -q '^\[trainrt\] error: results: ' "$WORK/res.err" \
     && ! grep -qE 'terminate called|internal error' "$WORK/res.err" && [ ! -s "$WORK/res.out" ]; then
    pass "$what: exit 2, $(cat "$WORK/res.err")"
  else
    fail "$what: exit $xrc, stderr: $(cat "$WORK/res.err")"
  fi
}
bad "missing dir" "$WORK/nope"
bad "a plain file" "$WORK/plain"
bad "an empty dir" "$WORK/empty"
bad "an unknown option" "$WORK/fin" --bogus
bad "--json and --csv" "$WORK/fin" --json --csv
bad "no RUN_DIR" --json
bad "two RUN_DIRs" "$WORK/fin" "$WORK/fin_min"
results --help
[ "$xrc" -eq 0 ] && grep -q "0 finished, $TRAINRT_RESULTS_RUNNING running, $TRAINRT_RESULTS_STOPPED stopped, $TRAINRT_RESULTS_FAILED failed" "$WORK/res.out" \
  && grep -q 'total_time_s' "$WORK/res.out" \
  && pass "--help documents the exit codes, the status rule and the times" || fail "--help: exit $xrc"
finish
