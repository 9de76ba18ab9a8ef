#!/usr/bin/env bash
# trainrt vs Ray Train on this machine (issue 58, part 4; bench/ray/README.md): the same Ray-style
# scripts (bench/ray/ray_train_bench.py, bench/ray/ray_tune_bench.py) run as written with Ray's venv
# and under trainrt after `sed 's/ray\.train/trainrt/g; s/ray\.tune/trainrt.tune/g'` (applied here,
# at run time, to a copy), 2 workers, alternated Ray, trainrt, Ray, trainrt ... for
#   launch      launch -> first report() returned on rank 0
#   epoch       an epoch of Ray's FashionMNIST recipe (rank 0's training loop + test pass)
#   checkpoint  report() with a 100 MiB Checkpoint.from_directory (rank 0, median of 5 reports)
#   recovery    SIGKILL of rank 1 after a known report -> first report after the restart
#               (Ray: FailureConfig(max_failures=1); trainrt: `trainrt supervise` relaunching the
#               script, and the plain script's fit() failing + the same command rerun at once)
#   sweep       an 8-trial ASHA sweep's Tuner.fit()
# Writes one JSON line per run (and a first "machine" line) to RESULTS; bench/ray/report.py renders it.
#
#   bash bench/ray/ray_bench.sh [RESULTS.jsonl]     # default bench/results/ray/latest.jsonl
#
# Environment: BENCH_RAY_REPS (3), BENCH_EPOCHS (1; epochs of the recipe per run), BUILD (build),
# TRAINRT_RAY_VENV (/opt/trainrt-deps/ray-venv), TRAINRT_PYTHON (the build's Python: bench/lib/machine.sh),
# BENCH_RAY_PARTS ("launch epoch checkpoint recovery sweep"), BENCH_RAY_SIDES ("ray trainrt"),
# BENCH_RAY_DATA (/usr/share/datasets/fashion-mnist), BENCH_RAY_TIMEOUT (900 s per run), and for
# tiny validation runs: BENCH_RAY_TRAIN_SAMPLES / BENCH_RAY_TEST_SAMPLES (epoch part; 0 = all),
# BENCH_RAY_CKPT_MB (100), BENCH_RAY_REPORTS (5), BENCH_RAY_TRIALS (8), BENCH_RAY_MAX_T (4),
# BENCH_RAY_SWEEP_SAMPLES (12000 training images per sweep trial).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
RESULTS=${1:-bench/results/ray/latest.jsonl}
REPS=${BENCH_RAY_REPS:-3}
EPOCHS=${BENCH_EPOCHS:-1}
BUILD=${BUILD:-build}
RAY_VENV=${TRAINRT_RAY_VENV:-/opt/trainrt-deps/ray-venv}
RAY_PY=$RAY_VENV/bin/python
source "$repo/bench/lib/machine.sh"
TRAINRT_PY=${TRAINRT_PYTHON:-$(build_python "$BUILD")}
TRAINRT=$repo/$BUILD/trainrt
PKG=$repo/$BUILD/lib/trainrt/python
PARTS=${BENCH_RAY_PARTS:-launch epoch checkpoint recovery sweep}
SIDES=${BENCH_RAY_SIDES:-ray trainrt}
DATA=${BENCH_RAY_DATA:-/usr/share/datasets/fashion-mnist}
TIMEOUT=${BENCH_RAY_TIMEOUT:-900}
say() { printf 'ray_bench %s: %s\n' "$(date +%T)" "$*" >&2; }
die() { printf 'ray_bench: %s\n' "$*" >&2; exit 1; }

if [[ " $SIDES " == *" ray "* ]] && ! "$RAY_PY" -c 'import ray.train.torch, ray.tune' >/dev/null 2>&1; then
  die "no working Ray venv at $RAY_VENV (import ray.train.torch, ray.tune failed): run \`bash bench/ray/make_venv.sh\`"
fi
if [[ " $SIDES " == *" trainrt "* ]]; then
  if [[ ! -x $TRAINRT ]] || ! compgen -G "$PKG/trainrt/_trainrt*.so" >/dev/null; then
    die "no trainrt build with its Python package in $BUILD ($TRAINRT, $PKG/trainrt/_trainrt*.so): make build first"
  fi
  command -v mpiexec >/dev/null || die "mpiexec is not on PATH (trainrt's fit() starts its ranks with it)"
fi
[[ -r $DATA/train-images-idx3-ubyte.gz || -r $DATA/train-images-idx3-ubyte ]] || die "no FashionMNIST IDX files in $DATA"

WORK=$(mktemp -d /tmp/trainrt-raybench.XXXXXX)
STORAGE=$WORK/runs
mkdir -p "$WORK/ray" "$WORK/trainrt" "$WORK/logs" "$STORAGE" "$(dirname "$RESULTS")"
trap 'rm -rf "$WORK/runs"' EXIT
# The scripts: Ray's as written; trainrt's made by the one sed, and nothing else.
SED='s/ray\.train/trainrt/g; s/ray\.tune/trainrt.tune/g'
for script in ray_train_bench.py ray_tune_bench.py; do
  cp "bench/ray/$script" "$WORK/ray/$script"
  sed "$SED" "bench/ray/$script" >"$WORK/trainrt/$script"
done
# `trainrt supervise`'s program: the sed'ed script, behind a wrapper without arguments (one_run).
printf '#!/bin/sh\nexec "%s" "%s"\n' "$TRAINRT_PY" "$WORK/trainrt/ray_train_bench.py" >"$WORK/trainrt/ray_train_bench.sh"
chmod +x "$WORK/trainrt/ray_train_bench.sh"

# Machine facts: the first line of RESULTS.
# shellcheck source=bench/lib/machine.sh
source "$repo/bench/lib/machine.sh"
{
  machine_lines "$BUILD" 2>/dev/null || true
  printf 'ray=%s\n' "$("$RAY_PY" -c 'import ray; print(ray.__version__)' 2>/dev/null || echo none)"
  printf 'ray_torch=%s\n' "$("$RAY_PY" -c 'import torch; print(torch.__version__)' 2>/dev/null || echo none)"
  printf 'trainrt_torch=%s\n' "$("$TRAINRT_PY" -c 'import torch; print(torch.__version__)' 2>/dev/null || echo none)"
  printf 'python=%s\n' "$("$TRAINRT_PY" -c 'import sys; print(sys.version.split()[0])')"
  printf 'memory_gb=%s\n' "$(awk '/MemTotal/ {printf "%.1f", $2 / 1048576}' /proc/meminfo)"
  printf 'load1_start=%s\n' "$(cut -d' ' -f1 /proc/loadavg)"
  printf 'reps=%s\nepochs=%s\nparts=%s\n' "$REPS" "$EPOCHS" "$PARTS"
  printf 'settings=%s\n' "train_samples=${BENCH_RAY_TRAIN_SAMPLES:-0} test_samples=${BENCH_RAY_TEST_SAMPLES:-0} ckpt_mb=${BENCH_RAY_CKPT_MB:-100} reports=${BENCH_RAY_REPORTS:-5} trials=${BENCH_RAY_TRIALS:-8} max_t=${BENCH_RAY_MAX_T:-4} sweep_samples=${BENCH_RAY_SWEEP_SAMPLES:-12000}"
} | "$TRAINRT_PY" -c '
import json, sys
facts = dict(line.rstrip("\n").split("=", 1) for line in sys.stdin if "=" in line)
print(json.dumps({"type": "machine", **facts}))' >"$RESULTS"

now() { date +%s.%N; }
# env_for PART NAME OUT: the environment of one run, one VAR=VALUE a line (the scripts read their
# settings from it; for `env`, a later assignment of a name wins).
env_for() {
  local part=$1 name=$2 out=$3
  printf '%s\n' RAY_BENCH_NAME="$name" RAY_BENCH_OUT="$out" RAY_BENCH_STORAGE="$STORAGE" RAY_BENCH_DATA="$DATA" \
    RAY_BENCH_EPOCHS="$EPOCHS" RAY_BENCH_TRAIN_SAMPLES="${BENCH_RAY_TRAIN_SAMPLES:-0}" \
    RAY_BENCH_TEST_SAMPLES="${BENCH_RAY_TEST_SAMPLES:-0}" RAY_BENCH_CKPT_MB="${BENCH_RAY_CKPT_MB:-100}" \
    RAY_BENCH_REPORTS="${BENCH_RAY_REPORTS:-5}" RAY_BENCH_MODE="$part" RAY_BENCH_WORKERS=2
  [[ $part == sweep ]] && printf '%s\n' RAY_BENCH_TRIALS="${BENCH_RAY_TRIALS:-8}" RAY_BENCH_MAX_T="${BENCH_RAY_MAX_T:-4}" \
    RAY_BENCH_TRAIN_SAMPLES="${BENCH_RAY_SWEEP_SAMPLES:-12000}" RAY_BENCH_TEST_SAMPLES=2000
  return 0
}

# one_run PART SIDE VARIANT REP: runs it, appends its result line.
one_run() {
  local part=$1 side=$2 variant=$3 rep=$4
  local name="${part}_${side}_${variant}_r${rep}"
  local out=$WORK/out/$name log=$WORK/logs/$name.log log2="" rc=0 t0 t_end script cmd=()
  mkdir -p "$out"
  script=ray_train_bench.py
  [[ $part == sweep ]] && script=ray_tune_bench.py
  local envs=()
  mapfile -t envs < <(env_for "$part" "$name" "$out")
  if [[ $side == ray ]]; then
    # address "local": a fresh Ray of this process's own, never one named by /tmp/ray/ray_current_cluster
    cmd=(env RAY_ADDRESS=local "${envs[@]}" "$RAY_PY" "$WORK/ray/$script")
  elif [[ $variant == supervise ]]; then
    # trainrt's relaunch: the supervisor runs the script's ranks (mpiexec) and relaunches them after
    # a failure; it finds the run directory from the same run.name/storage_path the script uses.
    # `trainrt supervise -- python3 SCRIPT` is refused (the supervisor reads the program's arguments
    # as trainrt keys: "config: unexpected argument 'SCRIPT'"), so the program is a one-line wrapper.
    cmd=(env PYTHONPATH="$PKG" "${envs[@]}" TRAINRT_RUN_NAME="$name" TRAINRT_RUN_STORAGE_PATH="$STORAGE"
         "$TRAINRT" supervise --launcher=mpiexec -n 2 -- "$WORK/trainrt/${script%.py}.sh")
  else
    cmd=(env PYTHONPATH="$PKG" "${envs[@]}" "$TRAINRT_PY" "$WORK/trainrt/$script")
  fi
  say "rep $rep: $part, $side ($variant)"
  t0=$(now)
  RAY_BENCH_T0=$t0 timeout -k 20 "$TIMEOUT" "${cmd[@]}" >"$log" 2>&1 || rc=$?
  if [[ $variant == rerun && $rc -ne 0 ]]; then
    # fit() raised TrainingFailedError (trainrt does not retry from fit()): the same command again,
    # at once, resumes the run from its checkpoint (the run directory is the run).
    log2=$WORK/logs/$name.rerun.log
    rc=0; timeout -k 20 "$TIMEOUT" "${cmd[@]}" >"$log2" 2>&1 || rc=$?
  fi
  t_end=$(now)
  if [[ $rc -ne 0 && -d $STORAGE/$name ]]; then  # keep a failed run's record and trial outputs (small)
    mkdir -p "$WORK/logs/$name.files"
    (cd "$STORAGE/$name" && find . \( -name '*.out' -o -name events.jsonl -o -name sweep.json \) -size -10M \
      -exec cp --parents {} "$WORK/logs/$name.files/" \;) || true
  fi
  "$TRAINRT_PY" bench/ray/collect.py "$part" "$side" "$variant" "$rep" "$t0" "$t_end" "$rc" "$out" "$log" ${log2:+"$log2"} \
    >>"$RESULTS"
  say "  -> $(tail -1 "$RESULTS" | cut -c1-300)"
  rm -rf "${STORAGE:?}/$name"
}

variants_of() {  # PART SIDE: the variants run for it
  case "$2:$1" in
    ray:*) echo main ;;
    trainrt:recovery) echo supervise rerun ;;
    trainrt:*) echo main ;;
  esac
}

say "results -> $RESULTS; logs in $WORK/logs"
for rep in $(seq 1 "$REPS"); do
  for part in $PARTS; do
    for side in $SIDES; do
      for variant in $(variants_of "$part" "$side"); do
        one_run "$part" "$side" "$variant" "$rep"
      done
    done
  done
done
say "done: $(grep -c '"type": "run"' "$RESULTS") runs in $RESULTS (logs kept in $WORK/logs)"
