#!/usr/bin/env bash
# Frameworks through trainrt vs Ray Train and the framework's own launcher (bench/frameworks/README.md):
#   bash bench/frameworks/run.sh [RESULTS.jsonl]     (default bench/results/frameworks/latest.jsonl)
# Each framework of BENCH_FW_LIST (lightning deepspeed accelerate transformers tensorflow lightgbm) under Ray (Ray's
# venv, as written), under trainrt (after `sed 's/ray\.train/trainrt/g'`, fit() from a plain
# python3) and with the framework's own launcher, 2 ranks each, BENCH_FW_REPS times in turn:
# Lightning's bench/frameworks/lightning_bench.py (Lightning's own DDP launcher), the others'
# bench/frameworks/torch_frameworks_bench.py (`deepspeed`, `accelerate launch`, `torchrun`),
# TensorFlow's bench/frameworks/tensorflow_bench.py (two processes with a hand-written TF_CONFIG), LightGBM's
# bench/frameworks/lightgbm_bench.py (two processes with a hand-written machines list; a round, not an epoch). One
# JSON line per run; report.py renders them.
# Variables: BENCH_FW_LIST, BENCH_FW_REPS (3), BENCH_LT_EPOCHS / BENCH_FW_EPOCHS (3),
# BENCH_LT_SAMPLES / BENCH_FW_SAMPLES (60000), BUILD (build), TRAINRT_RAY_VENV
# (/opt/trainrt-deps/ray-venv), TRAINRT_VENV (/opt/trainrt-deps/venv).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
BUILD=${BUILD:-build}
RESULTS=${1:-bench/results/frameworks/latest.jsonl}
REPS=${BENCH_FW_REPS:-3}
FRAMEWORKS=${BENCH_FW_LIST:-lightning deepspeed accelerate transformers tensorflow lightgbm}
RAY_PY=${TRAINRT_RAY_VENV:-/opt/trainrt-deps/ray-venv}/bin/python
PY=${TRAINRT_VENV:-/opt/trainrt-deps/venv}/bin/python
PKG=$repo/$BUILD/lib/trainrt/python
die() { echo "frameworks bench: $*" >&2; exit 1; }
[[ -d $PKG/trainrt ]] || die "no trainrt package in $PKG: build first (make)"
"$RAY_PY" -c 'import ray.train.lightning' 2>/dev/null || die "no Ray with Lightning at $RAY_PY: run \`make deps\`"
WORK=$(mktemp -d /tmp/trainrt-fwbench.XXXXXX)
for script in lightning_bench torch_frameworks_bench tensorflow_bench lightgbm_bench; do
  sed 's/ray\.train/trainrt/g' "bench/frameworks/$script.py" >"$WORK/${script}_trainrt.py"
  cp "bench/frameworks/$script.py" "$WORK/$script.py"
done
mkdir -p "$(dirname "$RESULTS")"
: >"$RESULTS"
"$PY" - "$RESULTS" <<'PY'
import json, os, platform, subprocess, sys
import accelerate, deepspeed, lightgbm, lightning, torch, transformers
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
import tensorflow
ray = subprocess.run([os.environ.get("TRAINRT_RAY_VENV", "/opt/trainrt-deps/ray-venv") + "/bin/python", "-c",
                      "import ray; print(ray.__version__)"], capture_output=True, text=True).stdout.strip()
commit = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True).stdout.strip()
with open(sys.argv[1], "a") as out:
    out.write(json.dumps({"type": "machine", "cpu": platform.processor() or platform.machine(), "nproc": os.cpu_count(),
                          "date": subprocess.run(["date", "-u", "+%Y-%m-%d %H:%M UTC"], capture_output=True, text=True).stdout.strip(),
                          "trainrt": commit, "torch": torch.__version__, "lightning": lightning.__version__, "ray": ray,
                          "deepspeed": deepspeed.__version__, "accelerate": accelerate.__version__,
                          "transformers": transformers.__version__, "tensorflow": tensorflow.__version__,
                          "lightgbm": lightgbm.__version__,
                          "epochs": os.environ.get("BENCH_LT_EPOCHS", "3"), "samples": os.environ.get("BENCH_LT_SAMPLES", "60000"),
                          "load1": os.getloadavg()[0]}) + "\n")
PY
tf_native() {  # ENV...: tensorflow_bench.py twice, each with the TF_CONFIG a user writes by hand
  local pids=() rc=0 index
  for index in 0 1; do
    env OMP_NUM_THREADS=1 "$@" BENCH_TF_SIDE=native \
      TF_CONFIG="{\"cluster\": {\"worker\": [\"127.0.0.1:29541\", \"127.0.0.1:29542\"]}, \"task\": {\"type\": \"worker\", \"index\": $index}}" \
      timeout 1800 "$PY" "$WORK/tensorflow_bench.py" &
    pids+=($!)
  done
  for index in "${pids[@]}"; do wait "$index" || rc=$?; done
  return "$rc"
}
lgb_native() {  # ENV...: lightgbm_bench.py twice, each with the machines list a user writes by hand
  local pids=() rc=0 index
  for index in 0 1; do
    env "$@" BENCH_LGB_SIDE=native BENCH_LGB_RANK=$index timeout 1800 "$PY" "$WORK/lightgbm_bench.py" &
    pids+=($!)
  done
  for index in "${pids[@]}"; do wait "$index" || rc=$?; done
  return "$rc"
}
one_run() {  # FRAMEWORK SIDE REP
  local fw=$1 side=$2 rep=$3 out=$WORK/$1_$2_$3.jsonl log=$WORK/$1_$2_$3.log rc=0 t0 t1
  t0=$(date +%s.%N)
  if [ "$fw" = lightning ]; then
    local envs=(BENCH_LT_OUT="$out" BENCH_LT_STORAGE="$WORK/runs" BENCH_LT_NAME="${side}_$rep")
    case $side in
      ray) env RAY_ADDRESS=local "${envs[@]}" BENCH_LT_SIDE=ray timeout 1800 "$RAY_PY" "$WORK/lightning_bench.py" >"$log" 2>&1 || rc=$? ;;
      trainrt) env PYTHONPATH="$PKG" "${envs[@]}" BENCH_LT_SIDE=ray timeout 1800 "$PY" "$WORK/lightning_bench_trainrt.py" >"$log" 2>&1 || rc=$? ;;
      native) env "${envs[@]}" BENCH_LT_SIDE=native timeout 1800 "$PY" "$WORK/lightning_bench.py" >"$log" 2>&1 || rc=$? ;;
    esac
  elif [ "$fw" = lightgbm ]; then
    local envs=(BENCH_LGB_OUT="$out" BENCH_LGB_STORAGE="$WORK/runs" BENCH_LGB_NAME="${side}_$rep")
    case $side in
      ray) env RAY_ADDRESS=local "${envs[@]}" BENCH_LGB_SIDE=ray timeout 1800 "$RAY_PY" "$WORK/lightgbm_bench.py" >"$log" 2>&1 || rc=$? ;;
      trainrt) env PYTHONPATH="$PKG" "${envs[@]}" BENCH_LGB_SIDE=ray timeout 1800 "$PY" "$WORK/lightgbm_bench_trainrt.py" >"$log" 2>&1 || rc=$? ;;
      native) lgb_native "${envs[@]}" >"$log" 2>&1 || rc=$? ;;
    esac
  elif [ "$fw" = tensorflow ]; then
    local envs=(BENCH_TF_OUT="$out" BENCH_TF_STORAGE="$WORK/runs" BENCH_TF_NAME="${side}_$rep")
    case $side in
      ray) env RAY_ADDRESS=local OMP_NUM_THREADS=1 "${envs[@]}" BENCH_TF_SIDE=ray timeout 1800 "$RAY_PY" "$WORK/tensorflow_bench.py" >"$log" 2>&1 || rc=$? ;;
      trainrt) env PYTHONPATH="$PKG" "${envs[@]}" BENCH_TF_SIDE=ray timeout 1800 "$PY" "$WORK/tensorflow_bench_trainrt.py" >"$log" 2>&1 || rc=$? ;;
      native) tf_native "${envs[@]}" >"$log" 2>&1 || rc=$? ;;
    esac
  else
    local envs=(BENCH_FW="$fw" BENCH_FW_OUT="$out" BENCH_FW_STORAGE="$WORK/runs" BENCH_FW_NAME="${fw}_${side}_$rep"
                BENCH_FW_TMP="$WORK/out_${fw}_${side}_$rep")
    local script=$WORK/torch_frameworks_bench.py launcher
    case $fw in
      deepspeed) launcher=("$(dirname "$PY")/deepspeed" --num_accelerators 2 --master_port 29531) ;;
      accelerate) launcher=("$(dirname "$PY")/accelerate" launch --multi_gpu --num_processes 2 --num_machines 1 --mixed_precision no --dynamo_backend no --main_process_port 29532) ;;
      transformers) launcher=("$(dirname "$PY")/torchrun" --nproc_per_node 2 --master_port 29533) ;;
    esac
    case $side in
      ray) env RAY_ADDRESS=local "${envs[@]}" BENCH_FW_SIDE=ray timeout 1800 "$RAY_PY" "$script" >"$log" 2>&1 || rc=$? ;;
      trainrt) env PYTHONPATH="$PKG" "${envs[@]}" BENCH_FW_SIDE=ray timeout 1800 "$PY" "${script%.py}_trainrt.py" >"$log" 2>&1 || rc=$? ;;
      native) env OMP_NUM_THREADS=1 "${envs[@]}" BENCH_FW_SIDE=native timeout 1800 "${launcher[@]}" "$script" >"$log" 2>&1 || rc=$? ;;
    esac
  fi
  t1=$(date +%s.%N)
  "$PY" - "$RESULTS" "$fw" "$side" "$rep" "$rc" "$t0" "$t1" "$out" "$log" <<'PY'
import json, os, sys, time
results, framework, side, rep, rc, t0, t1, out, log = sys.argv[1:]
epochs = [json.loads(line) for line in open(out)] if os.path.exists(out) else []
samples = os.environ.get({"lightning": "BENCH_LT_SAMPLES", "tensorflow": "BENCH_TF_SAMPLES",
                          "lightgbm": "BENCH_LGB_ROWS"}.get(framework, "BENCH_FW_SAMPLES"),
                         "200000" if framework == "lightgbm" else "60000")
row = {"type": "run", "framework": framework, "side": side, "rep": int(rep), "rc": int(rc), "wall_s": float(t1) - float(t0),
       "load1": os.getloadavg()[0], "epochs": epochs, "samples": int(samples), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
if int(rc) != 0:
    row["error"] = [line.strip() for line in open(log, errors="replace")][-1:]
with open(results, "a") as f:
    f.write(json.dumps(row) + "\n")
print(f"frameworks bench: {framework} {side} rep {rep}: exit {rc}, epochs {[round(e['seconds'], 2) for e in epochs]}")
PY
}
for fw in $FRAMEWORKS; do
  for rep in $(seq 1 "$REPS"); do
    for side in ray trainrt native; do one_run "$fw" "$side" "$rep"; done
  done
done
echo "frameworks bench: $RESULTS (logs in $WORK)"
