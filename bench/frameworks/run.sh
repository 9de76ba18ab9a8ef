#!/usr/bin/env bash
# Frameworks through trainrt vs Ray Train and the framework's own launcher (bench/frameworks/README.md):
#   bash bench/frameworks/run.sh [RESULTS.jsonl]     (default bench/results/frameworks/latest.jsonl)
# Lightning: bench/frameworks/lightning_bench.py under Ray (Ray's venv, as written), under trainrt
# (after `sed 's/ray\.train/trainrt/g'`, fit() from a plain python3) and with Lightning's own DDP
# launcher, 2 ranks each, BENCH_FW_REPS times in turn. One JSON line per run; report.py renders them.
# Variables: BENCH_FW_REPS (3), BENCH_LT_EPOCHS (3), BENCH_LT_SAMPLES (60000), BUILD (build),
# TRAINRT_RAY_VENV (/opt/trainrt-deps/ray-venv), TRAINRT_VENV (/opt/trainrt-deps/venv).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
BUILD=${BUILD:-build}
RESULTS=${1:-bench/results/frameworks/latest.jsonl}
REPS=${BENCH_FW_REPS:-3}
RAY_PY=${TRAINRT_RAY_VENV:-/opt/trainrt-deps/ray-venv}/bin/python
PY=${TRAINRT_VENV:-/opt/trainrt-deps/venv}/bin/python
PKG=$repo/$BUILD/lib/trainrt/python
die() { echo "frameworks bench: $*" >&2; exit 1; }
[[ -d $PKG/trainrt ]] || die "no trainrt package in $PKG: build first (make)"
"$RAY_PY" -c 'import ray.train.lightning' 2>/dev/null || die "no Ray with Lightning at $RAY_PY: run \`make deps\`"
WORK=$(mktemp -d /tmp/trainrt-fwbench.XXXXXX)
sed 's/ray\.train/trainrt/g' bench/frameworks/lightning_bench.py >"$WORK/lightning_bench_trainrt.py"
cp bench/frameworks/lightning_bench.py "$WORK/lightning_bench.py"
mkdir -p "$(dirname "$RESULTS")"
: >"$RESULTS"
"$PY" - "$RESULTS" <<'PY'
import json, os, platform, subprocess, sys
import lightning, torch
ray = subprocess.run([os.environ.get("TRAINRT_RAY_VENV", "/opt/trainrt-deps/ray-venv") + "/bin/python", "-c",
                      "import ray; print(ray.__version__)"], capture_output=True, text=True).stdout.strip()
commit = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True).stdout.strip()
with open(sys.argv[1], "a") as out:
    out.write(json.dumps({"type": "machine", "cpu": platform.processor() or platform.machine(), "nproc": os.cpu_count(),
                          "date": subprocess.run(["date", "-u", "+%Y-%m-%d %H:%M UTC"], capture_output=True, text=True).stdout.strip(),
                          "trainrt": commit, "torch": torch.__version__, "lightning": lightning.__version__, "ray": ray,
                          "epochs": os.environ.get("BENCH_LT_EPOCHS", "3"), "samples": os.environ.get("BENCH_LT_SAMPLES", "60000"),
                          "load1": os.getloadavg()[0]}) + "\n")
PY
one_run() {  # SIDE REP
  local side=$1 rep=$2 out=$WORK/$1_$2.jsonl log=$WORK/$1_$2.log rc=0 t0 t1
  local envs=(BENCH_LT_OUT="$out" BENCH_LT_STORAGE="$WORK/runs" BENCH_LT_NAME="${side}_$rep")
  t0=$(date +%s.%N)
  case $side in
    ray) env RAY_ADDRESS=local "${envs[@]}" BENCH_LT_SIDE=ray timeout 1800 "$RAY_PY" "$WORK/lightning_bench.py" >"$log" 2>&1 || rc=$? ;;
    trainrt) env PYTHONPATH="$PKG" "${envs[@]}" BENCH_LT_SIDE=ray timeout 1800 "$PY" "$WORK/lightning_bench_trainrt.py" >"$log" 2>&1 || rc=$? ;;
    native) env "${envs[@]}" BENCH_LT_SIDE=native timeout 1800 "$PY" "$WORK/lightning_bench.py" >"$log" 2>&1 || rc=$? ;;
  esac
  t1=$(date +%s.%N)
  "$PY" - "$RESULTS" "$side" "$rep" "$rc" "$t0" "$t1" "$out" "$log" <<'PY'
import json, os, sys
results, side, rep, rc, t0, t1, out, log = sys.argv[1:]
epochs = [json.loads(line) for line in open(out)] if os.path.exists(out) else []
row = {"type": "run", "side": side, "rep": int(rep), "rc": int(rc), "wall_s": float(t1) - float(t0),
       "load1": os.getloadavg()[0], "epochs": epochs}
if int(rc) != 0:
    row["error"] = [line.strip() for line in open(log, errors="replace")][-1:]
with open(results, "a") as f:
    f.write(json.dumps(row) + "\n")
print(f"frameworks bench: {side} rep {rep}: exit {rc}, epochs {[round(e['seconds'], 2) for e in epochs]}")
PY
}
for rep in $(seq 1 "$REPS"); do
  for side in ray trainrt native; do one_run "$side" "$rep"; done
done
echo "frameworks bench: $RESULTS (logs in $WORK)"
