#!/usr/bin/env bash
# Bad plugins, each refused with one clear line (rank 0 only under mpiexec -n 2), exit 2, before
# anything starts (no run directory): a missing file, a library that is not a plugin, a missing
# workload name, a plugin built against another trainrt version, bad values for a plugin's
# declared keys. A preflight failing on one rank only ends every rank (exit 7), no hang. A training function that throws
# on one rank ends the job on both ranks (no hang) with that rank's message in the failure record.
# ctest: fixture=trainrt_installed
source "$(dirname "$0")/lib.sh"
PLUGINS=$TRAINRT_BUILD/tests/plugins

# refused NAME PATTERN WORKLOAD [ARGS...]: mpiexec -n 2 trainrt with that workload exits 2, prints exactly
# one line matching PATTERN, and leaves no run directory.
refused() {
  local name=$1 pattern=$2 workload=$3 code=0
  shift 3
  timeout -k 5 60 mpiexec -n 2 "$TRAINRT" --config "${CONFIG:-$REGRESSION_INI}" --run.workload="$workload" \
    --run.storage_path="$WORK/$name" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || code=$?
  local lines; lines=$(grep -c . "$WORK/$name.err" || true)
  if [ "$code" -eq 2 ] && [ "$lines" -eq 1 ] && grep -qE -- "$pattern" "$WORK/$name.err" && [ ! -e "$WORK/$name" ]; then
    pass "$name: $(cat "$WORK/$name.err")"
  else
    fail "$name: exit $code, $lines stderr lines: $(cat "$WORK/$name.err") (run dir left: $([ -e "$WORK/$name" ] && echo yes || echo no))"
  fi
}

refused missing_file "workload plugin /nonexistent/libnope.so: no such readable file" "plugin:/nonexistent/libnope.so"
refused not_a_plugin "libtest_plugin_no_workload.so: it registers no workload \(TRAINRT_WORKLOAD" \
  "plugin:$PLUGINS/libtest_plugin_no_workload.so"
refused wrong_name "no workload 'regresion' \(symbol trainrt_workload_regresion not found\); it registers: regression" \
  "plugin:$PLUGIN:regresion"
refused other_version "built against trainrt 0.0.9 \(plugin ABI 1\), this is trainrt 0.1.0 .*rebuild it" \
  "plugin:$PLUGINS/libtest_plugin_other_version.so"
echo "not an ELF file" >"$WORK/garbage.so"
refused not_elf "garbage.so: cannot load it: .*(invalid ELF header|file too short)" "plugin:$WORK/garbage.so"

# A plugin's declared train.* keys are checked like a built-in's, and their defaults apply.
printf '[run]\nname = keyed\n' >"$WORK/keyed.ini"
CONFIG=$WORK/keyed.ini refused keyed_bound "bad value '0' for train.steps \(command line\): expected an integer >= 1" \
  "plugin:$PLUGINS/libtest_plugin_keyed.so" --train.steps=0
CONFIG=$WORK/keyed.ini refused keyed_unknown "unknown key 'train.stepz' \(command line\): did you mean 'train.steps'\?; workload keyed accepts: train.steps" \
  "plugin:$PLUGINS/libtest_plugin_keyed.so" --train.stepz=2
code=0
timeout -k 5 60 mpiexec -n 2 "$TRAINRT" --config "$WORK/keyed.ini" --run.workload="plugin:$PLUGINS/libtest_plugin_keyed.so" \
  --run.storage_path="$WORK" --run.name=keyed >"$WORK/keyed.out" 2>&1 || code=$?
[ "$code" -eq 0 ] && grep -qx "keyed_steps=3" "$WORK/keyed.out" && pass "declared default train.steps = 3 applies" \
  || { cat "$WORK/keyed.out" >&2; fail "keyed plugin with defaults: exit $code"; }

# A preflight that fails on rank 1 only: both ranks end (exit 7), one line naming rank 1.
code=0
timeout -k 5 60 mpiexec -n 2 "$TRAINRT" --config "$WORK/keyed.ini" --run.workload="plugin:$PLUGINS/libtest_plugin_picky.so" \
  --run.storage_path="$WORK/picky" >"$WORK/picky.out" 2>"$WORK/picky.err" || code=$?
[ "$code" -eq 7 ] && [ "$(grep -c . "$WORK/picky.err")" -eq 1 ] && [ ! -e "$WORK/picky" ] \
  && grep -q "on rank 1: workload picky: preflight: /scratch/data missing on this node" "$WORK/picky.err" \
  && pass "preflight failing on rank 1 only: exit 7 on all ranks, one line: $(cat "$WORK/picky.err")" \
  || fail "picky preflight: exit $code, stderr: $(cat "$WORK/picky.err")"

# Each error domain raised in the preflight of rank 1 only: every rank ends with that domain's exit
# code (mpiexec returns the highest of its ranks' codes: a rank ending otherwise would show), one
# line, nothing written.
for case in config:2 launch:3 comm:4 storage:5 hdf5:5 data:6 workload:7 checkpoint:8 failure:10; do
  domain=${case%:*} want=${case#*:} code=0
  TRAINRT_PICKY_DOMAIN=$domain timeout -k 5 60 mpiexec -n 2 "$TRAINRT" --config "$WORK/keyed.ini" \
    --run.workload="plugin:$PLUGINS/libtest_plugin_picky.so" --run.storage_path="$WORK/picky_$domain" \
    >"$WORK/picky_$domain.out" 2>"$WORK/picky_$domain.err" || code=$?
  [ "$code" -eq "$want" ] && [ "$(grep -c . "$WORK/picky_$domain.err")" -eq 1 ] && [ ! -e "$WORK/picky_$domain" ] \
    && grep -q "on rank 1: picky: raised on rank 1 only" "$WORK/picky_$domain.err" \
    || fail "$domain error on rank 1: exit $code (want $want), stderr: $(cat "$WORK/picky_$domain.err")"
done
pass "each error domain raised on rank 1 only: every rank exits with that domain's code"

# A training function that throws on rank 1 while rank 0 waits in a collective.
code=0
timeout -k 5 60 mpiexec -n 2 "$TRAINRT" --config "$REGRESSION_INI" --run.storage_path="$WORK" --run.name=throws \
  --run.workload="plugin:$PLUGINS/libtest_plugin_throwing.so" >"$WORK/throws.out" 2>&1 || code=$?
[ "$code" -ne 0 ] && [ "$code" -ne 124 ] && [ "$code" -ne 137 ] && pass "throwing workload: the job ended (exit $code), no hang" \
  || fail "throwing workload: exit $code"
# (Its stderr line usually shows too, but mpiexec may drop output in flight when it tears the job
# down, so the record is what is checked.)
jq -e -s 'map(select(.event == "failure")) | length == 1 and .[0].rank == 1 and (.[0].message | test("loss became NaN"))' \
  "$WORK/throws/events.jsonl" >/dev/null && pass "failure record: rank 1 with its message" \
  || fail "failure records: $(grep failure "$WORK/throws/events.jsonl")"
finish
