#!/usr/bin/env bash
# How Python training functions fail, and the numpy-only path:
#  - an exception on one rank: the job ends with exit 7, the traceback on stderr, the exception and
#    its innermost frames in the `failure` event;
#  - Ctrl-C on a function that never reports: the first asks for a stop it never reaches (the job
#    goes on), the second ends every rank at once with exit 130 and no traceback;
#  - a missing file, a syntax error (FILE:LINE), a missing function (naming those found), an import
#    that fails, torch missing for scaling.backend = gloo, a bad run.workload: one line, exit 2,
#    on both ranks, before the run directory exists;
#  - save_at_stop() with no stop agreed: exit 7 on both ranks, the failure naming what to call;
#  - a virtual environment active at launch (VIRTUAL_ENV) comes first on sys.path;
#  - the numpy example (no torch) trains under mpiexec as a workload and as a plain
#    `python3 script.py` with trainrt.run(): the same weights digest both ways.
source "$(dirname "$0")/../lib/common.sh"
require_data
RUN=(--run.storage_path="$WORK/runs" --metrics.progress=off --failure.collective_timeout=60)

cat >"$WORK/boom.py" <<'PY'
import trainrt

def divide(x):
    return 1 / x

def train(config):
    trainrt.report({"step": 1})
    if trainrt.get_context().world_rank == 1:
        divide(0)
    trainrt.report({"step": 2})

def other():
    pass
PY
code=0
timeout -k 5 120 mpiexec -n 2 "$TRAINRT" --run.workload=python:"$WORK/boom.py":train "${RUN[@]}" --run.name=boom \
  >"$WORK/boom.out" 2>"$WORK/boom.err" || code=$?
[ "$code" -eq 7 ] && pass "an exception on rank 1 ends the job with exit 7" || { cat "$WORK/boom.err"; fail "exception: exit $code, expected 7"; }
grep -q "Traceback (most recent call last)" "$WORK/boom.err" && grep -q "ZeroDivisionError: division by zero" "$WORK/boom.err" \
  && pass "traceback on stderr" || fail "no traceback on stderr"
failure=$(jq -r 'select(.event == "failure") | .message' "$WORK/runs/boom/events.jsonl" 2>/dev/null || true)
[[ "$failure" == *"ZeroDivisionError: division by zero (at boom.py:4 in divide <- boom.py:9 in train)"* ]] \
  && pass "failure event: $failure" || fail "failure event message: '$failure'"

cat >"$WORK/early_save.py" <<'PY'
import trainrt

def train(config):
    trainrt.report({"step": 1})
    trainrt.save_at_stop(trainrt.Checkpoint({"step": 1}))  # no stop was agreed
PY
code=0
timeout -k 5 120 mpiexec -n 2 "$TRAINRT" --run.workload=python:"$WORK/early_save.py":train "${RUN[@]}" --run.name=early_save \
  >"$WORK/early_save.out" 2>"$WORK/early_save.err" || code=$?
failure=$(jq -r 'select(.event == "failure") | .message' "$WORK/runs/early_save/events.jsonl" 2>/dev/null || true)
[ "$code" -eq 7 ] && [[ "$failure" == *"save_at_stop() was called with no stop agreed: call it when should_stop() returned true"* ]] \
  && [ "$(jq -s 'length' "$WORK/runs/early_save/result.jsonl")" -eq 1 ] \
  && pass "save_at_stop() without a stop: exit 7, $failure" \
  || { cat "$WORK/early_save.err" >&2; fail "save_at_stop() without a stop: exit $code, failure '$failure'"; }

# Ctrl-C (SIGINT to the ranks, as mpiexec hands a terminal's on) is a stop at the next report
# (tests/python/test_python_interrupt.sh); a function that never reports does not get there, and a
# second Ctrl-C ends every rank at once: exit 130, no traceback, no finally block.
cat >"$WORK/ctrlc.py" <<'PY'
import os, time, trainrt

def train(config):
    rank = trainrt.get_context().world_rank
    out = config["out"]
    try:
        with open(f"{out}/pid.{rank}", "w") as f:
            f.write(str(os.getpid()))
        while True:
            time.sleep(0.05)
    finally:
        open(f"{out}/finally.{rank}", "w").close()
PY
mkdir -p "$WORK/ctrlc"
timeout -k 5 120 mpiexec -n 2 "$TRAINRT" --run.workload=python:"$WORK/ctrlc.py":train --train.out="$WORK/ctrlc" \
  "${RUN[@]}" --run.name=ctrlc >"$WORK/ctrlc.out" 2>"$WORK/ctrlc.err" &
launcher=$!
for _ in $(seq 600); do [[ -s $WORK/ctrlc/pid.0 && -s $WORK/ctrlc/pid.1 ]] && break; sleep 0.1; done
[[ -s $WORK/ctrlc/pid.0 && -s $WORK/ctrlc/pid.1 ]] || fail "the Ctrl-C function did not start on both ranks"
kill -INT "$(cat "$WORK/ctrlc/pid.0")" "$(cat "$WORK/ctrlc/pid.1")"
sleep 2
kill -0 "$launcher" 2>/dev/null && pass "one Ctrl-C: a function that never reports goes on (its stop waits for a report)" \
  || fail "one Ctrl-C ended a function that never reports"
kill -INT "$(cat "$WORK/ctrlc/pid.0")" "$(cat "$WORK/ctrlc/pid.1")"
t_second=$SECONDS
code=0; wait "$launcher" || code=$?
# Each rank exits 130 at once; mpiexec reports 130, or its own code when it tore down the rank that
# had not exited yet: the job ended, quickly, without a traceback or the function's finally.
[[ $code -ne 0 && $code -ne 124 ]] && ((SECONDS - t_second <= 10)) && ! grep -q "Traceback" "$WORK/ctrlc.err" \
  && [[ ! -e $WORK/ctrlc/finally.0 && ! -e $WORK/ctrlc/finally.1 ]] \
  && pass "the second Ctrl-C ends every rank at once (mpiexec exit $code), no traceback" \
  || { cat "$WORK/ctrlc.err"; fail "second Ctrl-C: exit $code after $((SECONDS - t_second)) s"; }

# refused CASE EXPECTED WORKLOAD [ENV...]: exit 2, one line containing EXPECTED, no run directory.
refused() {
  local name=$1 expected=$2 workload=$3 code=0; shift 3
  env "$@" timeout -k 5 60 mpiexec -n 2 "$TRAINRT" --run.workload="$workload" "${RUN[@]}" --run.name="$name" \
    >"$WORK/$name.out" 2>"$WORK/$name.err" || code=$?
  local lines; lines=$(sort -u "$WORK/$name.err" | grep -c .)
  if [ "$code" -eq 2 ] && [ "$lines" -eq 1 ] && grep -qF -- "$expected" "$WORK/$name.err" && [ ! -e "$WORK/runs/$name" ]; then
    pass "$name: exit 2, $(head -1 "$WORK/$name.err")"
  else
    cat "$WORK/$name.err" >&2; fail "$name: exit $code, $lines distinct line(s), run dir $([ -e "$WORK/runs/$name" ] && echo exists || echo absent)"
  fi
}
printf 'def train(config):\n    x = (1,\n' >"$WORK/syntax.py"
printf 'import no_such_module_here\ndef train(config):\n    pass\n' >"$WORK/imports.py"
printf 'def train(config):\n    pass\n' >"$WORK/notorch.py"
refused missing "$WORK/nothere.py: no such file" python:"$WORK/nothere.py":train
refused syntax "$WORK/syntax.py:2: syntax error" python:"$WORK/syntax.py":train
refused nofunc "has no function 'trian'; its functions: divide, other, train" python:"$WORK/boom.py":trian
refused imports "imports.py:1: ModuleNotFoundError: No module named 'no_such_module_here'" python:"$WORK/imports.py":train
refused nomodule "no module named 'not_a_package.mod'" python:not_a_package.mod:train
refused unnamed "name the function: python:FILE.py:FUNC" python:"$WORK/boom.py"

# A virtual environment of this Python with system packages: its own packages come first.
/usr/bin/python3 -m venv --system-site-packages --without-pip "$WORK/venv"
site=$(echo "$WORK"/venv/lib/python3*/site-packages)
printf 'raise ImportError("this venv shadows torch")\n' >"$site/torch.py"
printf 'VALUE = 42\n' >"$site/venv_only_pkg.py"
cat >"$WORK/usevenv.py" <<'PY'
import venv_only_pkg, trainrt
def train(config):
    trainrt.report({"value": venv_only_pkg.VALUE})
PY
code=0
VIRTUAL_ENV="$WORK/venv" timeout -k 5 60 mpiexec -n 2 "$TRAINRT" --run.workload=python:"$WORK/usevenv.py":train "${RUN[@]}" \
  --run.name=venv >"$WORK/venv.out" 2>&1 || code=$?
[ "$code" -eq 0 ] && grep -q '"value":42' "$WORK/runs/venv/result.jsonl" && pass "VIRTUAL_ENV's own package imported" \
  || { tail "$WORK/venv.out"; fail "venv run: exit $code"; }
refused torchbroken "scaling.backend = gloo needs torch, which does not import: ImportError: this venv shadows torch" \
  python:"$WORK/notorch.py":train VIRTUAL_ENV="$WORK/venv" TRAINRT_SCALING_BACKEND=gloo

# The numpy example: as a workload, and as a plain python3 script with trainrt.run().
NP=(--config examples/python/numpy_softmax.ini --train.epochs=2 "${RUN[@]}")
timeout -k 5 120 mpiexec -n 2 "$TRAINRT" "${NP[@]}" --run.name=np_workload >"$WORK/np1.out" 2>&1 || { tail "$WORK/np1.out"; fail "numpy example as a workload"; }
PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python" timeout -k 5 120 mpiexec -n 2 "$TRAINRT_PYTHON" examples/python/numpy_softmax.py \
  "${NP[@]}" --run.name=np_script >"$WORK/np2.out" 2>&1 || { tail "$WORK/np2.out"; fail "numpy example as a script"; }
a=$(sed -n 's/^weights_digest=//p' "$WORK/np1.out"); b=$(sed -n 's/^weights_digest=//p' "$WORK/np2.out")
acc=$(jq -r 'select(.epoch == 2) | .test_accuracy' "$WORK/runs/np_workload/result.jsonl" 2>/dev/null || echo 0)
[ -n "$a" ] && [ "$a" = "$b" ] && awk "BEGIN { exit !($acc > 0.75) }" \
  && pass "numpy example: test accuracy $acc after 2 epochs, digest $a as a workload and as trainrt.run()" \
  || fail "numpy example: digests '$a' vs '$b', accuracy $acc"
finish
