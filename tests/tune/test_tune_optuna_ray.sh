#!/usr/bin/env bash
# `trainrt tune` with Ray's OptunaSearch forms beyond [space] domains and one metric:
# - define-by-run (tune.optuna.space = FILE.py:NAME, OptunaSearch(space=function)): 8 trials of a
#   short Python function, 2 at once, each trial's [train] values those the function suggested on
#   its Optuna trial (a key present only when the function's condition asked for it, every value
#   inside its bounds) and the constants it returned, recorded in sweep.json and run as recorded;
#   TPE takes in the finished trials (replayed through the function for their distributions): past
#   n_startup_trials other results give another draw. A function beside [space] domains, one that
#   returns something else than None or a dict of constants, one that raises, and a missing one:
#   one line, exit 2, nothing written.
# - multi-objective (tune.optuna.objectives = loss:min, gain:max, OptunaSearch(metric=[...],
#   mode=[...])): 6 trials without tune.metric, TERMINATED; TPE's draws past n_startup_trials
#   follow both objectives' results.
# ctest: processors=1
source "$(dirname "$0")/../lib/common.sh"
cat >"$WORK/space_fn.py" <<'PY'
import trainrt


def space(trial):
    activation = trial.suggest_categorical("activation", ["relu", "tanh"])
    trial.suggest_float("width", 0, 20)
    if activation == "relu":
        trial.suggest_float("mult", 1, 2)
    return {"steps": 3}


def returns_a_list(trial):
    trial.suggest_float("width", 0, 20)
    return [3]


def raises(trial):
    return trial.suggest_float("width", 20, 0)


def two_objectives(config):
    for step in range(3):
        trainrt.report({"loss": (config["width"] - 5) ** 2 + step, "gain": config["width"] * step})


def objective(config):
    for step in range(config["steps"]):
        trainrt.report({"loss": config["width"] * config.get("mult", 1) + step,
                        "has_mult": int("mult" in config), "relu": int(config["activation"] == "relu")})
PY
cat >"$WORK/base.ini" <<INI
[run]
workload = python:$WORK/space_fn.py:objective
INI
sweep_file() {
  cat >"$WORK/sweep.ini" <<INI
[tune]
base = $WORK/base.ini
metric = loss
mode = min
num_samples = 8
max_concurrent_trials = 2
search = optuna
optuna.n_startup_trials = 3
optuna.space = $WORK/space_fn.py:$1
INI
}
tune() { local out=$1; shift; rc=0; timeout -k 10 300 "$TRAINRT" tune --config "$WORK/sweep.ini" --run.storage_path="$WORK" --ranks 2 "$@" >"$out" 2>&1 || rc=$?; }

sweep_file space
tune "$WORK/by_run.out" --run.name=by_run
S=$WORK/by_run
shape=$(jq '[.trials[].values | (.["train.width"] | tonumber) as $w
            | $w >= 0 and $w <= 20 and .["train.steps"] == "3"
              and (if .["train.activation"] == "relu" then (.["train.mult"] | tonumber) as $m | $m >= 1 and $m <= 2
                   else .["train.activation"] == "tanh" and (has("train.mult") | not) end)] | all' "$S/sweep.json")
ran_as_drawn=1
for i in $(seq 0 7); do
  t=$S/trial_000$i
  relu=$(jq -r '.trials['"$i"'].values["train.activation"] == "relu" | if . then 1 else 0 end' "$S/sweep.json")
  [ "$(wc -l <"$t/result.jsonl")" -eq 3 ] && [ "$(jq -s '[.[].relu] | unique' "$t/result.jsonl")" = "[
  $relu
]" ] && [ "$(jq -s '[.[].has_mult] | unique' "$t/result.jsonl")" = "[
  $relu
]" ] || ran_as_drawn=0
done
both=$(jq '[.trials[].values["train.activation"]] | unique | length' "$S/sweep.json")
[ "$rc" -eq 0 ] && [ "$(jq -r '[.trials[].status] | unique | join(" ")' "$S/sweep.json")" = TERMINATED ] \
  && [ "$(jq '.trials | length' "$S/sweep.json")" -eq 8 ] && [ "$shape" = true ] && [ "$ran_as_drawn" = 1 ] && [ "$both" -eq 2 ] \
  && pass "8 define-by-run trials: TERMINATED, mult only beside relu, every value in bounds, steps = 3, run as drawn ($(jq -c '.trials[0].values' "$S/sweep.json"))" \
  || { tail -20 "$WORK/by_run.out" >&2; fail "define-by-run sweep: exit $rc, shape $shape, ran as drawn $ran_as_drawn, activations $both"; }

# TPE past n_startup_trials draws from the finished trials, replayed through the function.
PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python" "$TRAINRT_PYTHON" - "$WORK/space_fn.py:space" >"$WORK/tpe.out" 2>&1 <<'PY' \
  && pass "$(cat "$WORK/tpe.out")" || { cat "$WORK/tpe.out" >&2; fail "TPE's define-by-run draws"; }
import json, sys
from trainrt import _optuna_search as search
spec = sys.argv[1]  # loading the function's file sets sys.argv, as python3 FILE would
def draw(metrics, startup):
    finished = [{"values": {"activation": "tanh", "width": repr(20.0 * i / 8), "steps": "3"}, "metrics": [m]}
                for i, m in enumerate(metrics)]
    request = {"modes": ["min"], "seed": 7, "n_startup_trials": startup, "space": [], "space_function": spec,
               "finished": finished}
    return json.loads(search.suggest(json.dumps(request)))
low_best, high_best = [1, 2, 3, 4, 5, 6, 7, 8], [8, 7, 6, 5, 4, 3, 2, 1]
assert draw(low_best, 4) != draw(high_best, 4), "TPE drew the same values for opposite results"
assert draw(low_best, 20) == draw(high_best, 20), "the start-up draws depend on the results"
assert draw(low_best, 4)["steps"] == "3"
print("TPE's define-by-run draw follows the replayed results past n_startup_trials:", draw(low_best, 4)["width"],
      draw(high_best, 4)["width"])
PY

refused() {  # NAME OUT WHAT PATTERN
  [ "$rc" -eq "$TRAINRT_EXIT_CONFIG" ] && [ "$(grep -c . "$2")" -eq 1 ] && grep -q "$4" "$2" && [ ! -e "$WORK/$1" ] \
    && pass "$3: exit 2, $(cut -c1-160 "$2")" || { cat "$2" >&2; fail "$3: exit $rc"; }
}
printf '[space]\ntrain.lr = uniform(0, 1)\n' >>"$WORK/sweep.ini"
tune "$WORK/both.out" --run.name=both
refused both "$WORK/both.out" "a define-by-run function beside [space]" "keep one of them"
sweep_file returns_a_list
tune "$WORK/list.out" --run.name=list
refused list "$WORK/list.out" "a function returning a list" "returns None or a dict of constants"
sweep_file raises
tune "$WORK/raises.out" --run.name=raises
refused raises "$WORK/raises.out" "a function that raises" "fails on an Optuna trial: ValueError"
sweep_file no_such_function
tune "$WORK/missing.out" --run.name=missing
refused missing "$WORK/missing.out" "a missing function" "has no function 'no_such_function'"
cat >"$WORK/base2.ini" <<INI
[run]
workload = python:$WORK/space_fn.py:two_objectives
INI
cat >"$WORK/sweep.ini" <<INI
[tune]
base = $WORK/base2.ini
num_samples = 6
max_concurrent_trials = 2
search = optuna
optuna.n_startup_trials = 2
optuna.objectives = loss:min, gain:max
[space]
train.width = uniform(0, 20)
INI
tune "$WORK/two.out" --run.name=two
[ "$rc" -eq 0 ] && [ "$(jq -r '[.trials[].status] | unique | join(" ")' "$WORK/two/sweep.json")" = TERMINATED ] \
  && [ "$(jq '.trials | length' "$WORK/two/sweep.json")" -eq 6 ] \
  && pass "two objectives (loss:min, gain:max), no tune.metric: 6 trials TERMINATED" \
  || { tail -20 "$WORK/two.out" >&2; fail "multi-objective sweep: exit $rc"; }
PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python" "$TRAINRT_PYTHON" - >"$WORK/tpe2.out" 2>&1 <<'PY' \
  && pass "$(cat "$WORK/tpe2.out")" || { cat "$WORK/tpe2.out" >&2; fail "TPE's multi-objective draws"; }
import json
from trainrt import _optuna_search as search
space = [{"key": "train.width", "kind": "uniform", "values": [], "low": 0.0, "high": 20.0, "q": 0}]
def draw(loss, gain, startup):
    finished = [{"values": {"train.width": repr(20.0 * i / 8)}, "metrics": [l, g]}
                for i, (l, g) in enumerate(zip(loss, gain))]
    request = {"modes": ["min", "max"], "seed": 7, "n_startup_trials": startup, "space": space, "finished": finished}
    return json.loads(search.suggest(json.dumps(request)))["train.width"]
up, down = [1, 2, 3, 4, 5, 6, 7, 8], [8, 7, 6, 5, 4, 3, 2, 1]
assert draw(up, down, 4) != draw(down, up, 4), "TPE drew the same value for opposite results"
assert draw(up, down, 20) == draw(down, up, 20), "the start-up draws depend on the results"
print("TPE's two-objective draw follows the results past n_startup_trials:", draw(up, down, 4), draw(down, up, 4))
PY
finish
