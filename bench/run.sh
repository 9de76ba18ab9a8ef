#!/usr/bin/env bash
# Runs trainrt's benchmarks beside their baselines in one go and writes BENCHMARKS.md at the
# repository root (bench/README.md says what each one measures).
#
#   bash bench/run.sh                     # or: make bench
#
# Environment:
#   BUILD=build          build directory (the Makefile's); configured here if it is not yet
#   BENCH_EPOCHS=3       epochs per training run (trainrt and PyTorch alike)
#   BENCH_NODES=0        1: also the node-failure benchmark (root, the local 3-node cluster, ~3 min a fault;
#                        BENCH_NODE_REPEAT=3 faults of each kind); else its stored results are shown
#   BENCH_GOODPUT=0      1: also the goodput harness (root, the local cluster, ~30 min); else its stored result
#   BENCH_TUNE_ARRAY=0   1: also the sweep vs job array comparison (root, the local cluster, ~10 min); else its stored result
#   BENCH_SKIP=          any of: trainrt pytorch torch python allreduce checkpoint restart report nodes goodput array data xgboost tune ray frameworks (comma or space separated); skipped parts
#                        show as "not run" in BENCHMARKS.md
#   BENCH_OUT=           where raw results and logs go (default $BUILD/bench-results/<timestamp>)
#   BENCH_REUSE=DIR      with BENCH_SKIP: the skipped parts' results are taken from DIR (an earlier BENCH_OUT),
#                        and the report says so; e.g. rerun only the checkpoint part:
#                        BENCH_SKIP=trainrt,pytorch,torch,python,allreduce,restart,report,data,xgboost,tune BENCH_REUSE=...
#   BENCH_TIMEOUT=1800   seconds allowed to each benchmark command
#   BENCH_REPORT=BENCHMARKS.md   the report to write (relative to the repository root)
#   JOBS=2               parallel build jobs
#   BENCH_CKPT_MIB=1024  checkpoint benchmark state size in MiB (total over the ranks)
#   BENCH_CKPT_DIR=$BUILD/bench-checkpoint  where the checkpoint benchmark writes (its filesystem is measured)
#   BENCH_CKPT_REPS=6    repetitions of the checkpoint benchmark (after its warm-up round; ratios by couples of them)
#   BENCH_XGB_ROWS=1000000 BENCH_XGB_ROUNDS=20 BENCH_XGB_REPS=3  the XGBoost part's table, rounds, alternations
#   BENCH_TUNE_TRIALS=32 trials of the sweep benchmark's ASHA sweep
#   BENCH_PY_REPS=7      alternations of the Python part's runs on 2 ranks (plain DDP, workload, fit())
#
# Every rank of both trainrt and PyTorch runs one compute thread (OMP_NUM_THREADS=1,
# OPENBLAS_NUM_THREADS=1; PyTorch also torch.set_num_threads(1)), so both get the same cores.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
source bench/lib/machine.sh

BUILD=${BUILD:-build}
EPOCHS=${BENCH_EPOCHS:-3}
skip_list=${BENCH_SKIP:-}
SKIP=" ${skip_list//,/ } "
TIMEOUT=${BENCH_TIMEOUT:-1800}
REPORT=${BENCH_REPORT:-BENCHMARKS.md}
JOBS=${JOBS:-2}
OPENBLAS_OPENMP=/usr/lib/x86_64-linux-gnu/openblas-openmp
DATA=data/fashion-mnist.h5
INIT=tests/data/torch_init_seed0.h5
RANKS=(1 2)

say() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }
skipped() { [[ "$SKIP" == *" $1 "* ]]; }

[[ "$EPOCHS" =~ ^[1-9][0-9]*$ ]] || die "BENCH_EPOCHS must be a positive integer (got '$EPOCHS')"
for part in $SKIP; do
  case $part in trainrt|pytorch|torch|python|allreduce|checkpoint|restart|report|nodes|goodput|array|data|xgboost|tune|ray|frameworks) ;; *) die "BENCH_SKIP: unknown part '$part' (trainrt, pytorch, torch, python, allreduce, checkpoint, restart, report, nodes, goodput, array, data, xgboost, tune, ray, frameworks)";; esac
done

# --- preflight: every tool before anything long starts ---
command -v cmake >/dev/null || die "cmake not found (make deps installs it)"
command -v mpiexec >/dev/null || die "mpiexec not found (package mpich; make deps installs it)"
command -v timeout >/dev/null || die "timeout (coreutils) not found"
[[ -f $INIT ]] || die "$INIT missing (tools/torch_reference.py writes it)"
if [[ ! -f $BUILD/CMakeCache.txt ]]; then
  say "configuring $BUILD"
  cmake -S . -B "$BUILD" >&2 || die "cmake could not configure $BUILD"
fi
PY=$(build_python "$BUILD") || die "no project Python for $BUILD: run make deps, then configure $BUILD"
$PY -c 'import pandas' 2>/dev/null || die "$PY cannot import pandas (the project environment: make deps)"
if ! skipped pytorch; then
  $PY -c 'import torch, h5py, numpy' 2>/dev/null ||
    die "$PY cannot import torch/h5py/numpy (the project environment: make deps)"
fi

# --- build ---
# Only what the benchmarks run: a broken test elsewhere in the tree does not stop them.
targets=()
{ skipped trainrt && skipped restart && skipped report && skipped torch; } || targets+=(trainrt)
skipped report || targets+=(test_plugin_reporter)
skipped allreduce || targets+=(allreduce_bench)
skipped checkpoint || targets+=(checkpoint_bench)
skipped data || targets+=(trainrt stream_read_bench)
# The LibTorch part needs the component (bench/torch/); a build without it says so in the report.
TORCH_BUILT=0
if ! skipped torch && grep -q '^TRAINRT_WITH_TORCH:.*=\(AUTO\|ON\)$' "$BUILD/CMakeCache.txt" &&
   grep -q '^Torch_DIR:PATH=/' "$BUILD/CMakeCache.txt"; then
  TORCH_BUILT=1
  targets+=(trainrt_torch torch_ddp_bench torch_plain_loop)
fi
# The Python part needs the component (libtrainrt_python and the trainrt package).
# The data part uses it too (trainrt's Python loader beside PyTorch's DataLoader), when configured.
PYTHON_BUILT=0 PYTHON_BUILT_ANY=0
if { ! skipped python || ! skipped data || ! skipped xgboost; } &&
   [[ $'\n'$(cmake --build "$BUILD" --target help)$'\n' == *$'\n... trainrt_python\n'* ]]; then
  skipped python || PYTHON_BUILT=1
  PYTHON_BUILT_ANY=1
  targets+=(trainrt_python)
fi
if (( ${#targets[@]} )); then
  say "building ${targets[*]} in $BUILD"
  cmake --build "$BUILD" -j "$JOBS" --target "${targets[@]}" >&2 ||
    die "the build failed (cmake --build $BUILD --target ${targets[*]}); fix it and run again"
fi
TRAINRT=$BUILD/trainrt
ALLREDUCE=$BUILD/bench/allreduce_bench
skipped trainrt || [[ -x $TRAINRT ]] || die "$TRAINRT was not built"
skipped allreduce || [[ -x $ALLREDUCE ]] || die "$ALLREDUCE was not built"
CKPT_BENCH=$BUILD/bench/checkpoint_bench
skipped checkpoint || [[ -x $CKPT_BENCH ]] || die "$CKPT_BENCH was not built"

if { ! skipped trainrt || ! skipped restart || ! skipped report || ! skipped torch || ! skipped data; } && [[ ! -f $DATA ]]; then
  say "importing FashionMNIST into $DATA"
  mkdir -p "$(dirname "$DATA")"
  "$TRAINRT" data import fashion-mnist --out "$DATA" >&2 || die "'$TRAINRT data import fashion-mnist' failed"
fi

OUT=${BENCH_OUT:-$BUILD/bench-results/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
if [[ -n ${BENCH_REUSE:-} ]]; then
  # The skipped parts' stored results are copied in once the parts that run are done (below), never
  # over a file of this run: a part that appends to its file (the overlap pairs) must not add to
  # an earlier run's lines.
  [[ -d $BENCH_REUSE && -f $BENCH_REUSE/machine.txt ]] || die "BENCH_REUSE=$BENCH_REUSE is not a results directory of bench/run.sh (no machine.txt)"
  [[ -n ${skip_list//[ ,]/} ]] || die "BENCH_REUSE needs BENCH_SKIP: the parts to take from $BENCH_REUSE instead of running them"
  REUSED_FROM=$(cd "$BENCH_REUSE" && pwd)
  REUSED_DATE=$(sed -n 's/^date=//p' "$BENCH_REUSE/machine.txt")
fi
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
cores=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)   # nproc obeys OMP_NUM_THREADS
storage=$(mktemp -d "${TMPDIR:-/tmp}/trainrt-bench.XXXXXX")
# The run directories are removed after a good run and kept (in $OUT/runs) after a failed one.
cleanup() {
  local rc=$?
  if (( rc != 0 )) && [[ -d $storage ]] && mv "$storage" "$OUT/runs" 2>/dev/null; then
    say "kept trainrt's run directories in $OUT/runs"
  fi
  rm -rf "$storage"
}
trap cleanup EXIT
say "raw results and logs: $OUT"

export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

# run NAME OUTFILE CMD...: runs CMD with a time limit, stdout to OUTFILE, stderr to NAME.log;
# on failure says which and shows the log's end.
run() {
  local name=$1 outfile=$2; shift 2
  local log=$OUT/$name.log rc=0
  say "running $name: $*"
  printf '%s\n' "uptime before: $(uptime)" >"$log"
  date +%s.%N >"$OUT/$name.start"   # launch time, for start-up figures (first_step_unix - start)
  timeout "$TIMEOUT" "$@" >"$outfile" 2>>"$log" || rc=$?
  printf '%s\n' "uptime after: $(uptime)" >>"$log"
  if (( rc != 0 )); then
    (( rc == 124 )) && say "$name ran past BENCH_TIMEOUT=${TIMEOUT}s"
    say "$name failed (exit $rc); log $log ends with:"
    tail -n 20 "$log" >&2
    exit 1
  fi
}

# expect_lines FILE N WHAT: FILE holds N per-epoch JSON lines (those with epoch_time_s).
expect_lines() {
  local got
  got=$(grep -c '"epoch_time_s"' "$1" || true)
  (( got == $2 )) || die "$3: expected $2 JSON lines in $1, found $got"
}

# --- LibTorch (part "torch") ---
# torch_fashion_mlp, Ray's recipe in LibTorch, from the same init weights as the other two.
torch_fashion_run() {
  local n=$1 name=torch_n$1
  run "$name" "$OUT/$name.stdout" mpiexec -n "$n" "$TRAINRT" --config jobs/fashion_mlp.ini \
    --run.workload=torch_fashion_mlp --train.epochs="$EPOCHS" --train.init_weights="$INIT" \
    --run.storage_path="$storage" --run.name="bench_$name"
  cp "$storage/bench_$name/result.jsonl" "$OUT/$name.jsonl"
  expect_lines "$OUT/$name.jsonl" "$EPOCHS" "torch_fashion_mlp on $n ranks"
}
# --- Python (part "python") ---
# bench/pytorch/pytorch_ddp.py's recipe body as a trainrt Python function (bench/python/recipe_in_trainrt.py),
# torch.distributed set up by trainrt over BACKEND (gloo: python_nN; trainrt, its MPI process group:
# python_trainrt_nN), same OpenBLAS and threads as the plain script.
python_recipe_run() {
  local n=$1 backend=$2 suffix=${3:-} name
  if [[ $backend == gloo ]]; then name=python_n$n$suffix; else name=python_${backend}_n$n$suffix; fi
  run "$name" "$OUT/$name.stdout" env LD_LIBRARY_PATH="$OPENBLAS_OPENMP${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    mpiexec -n "$n" "$TRAINRT" --run.workload=python:bench/python/recipe_in_trainrt.py:train --scaling.backend="$backend" \
    --train.epochs="$EPOCHS" --train.init="$INIT" --metrics.progress=off --run.storage_path="$storage" --run.name="bench_$name"
  cp "$storage/bench_$name/result.jsonl" "$OUT/$name.jsonl"
  expect_lines "$OUT/$name.jsonl" "$EPOCHS" "the recipe as a trainrt Python function ($backend) on $n ranks"
}
# The same recipe through TorchTrainer.fit() from a plain python3 (python_fit_nN): fit() starts the
# ranks with mpiexec, as a Ray user's script does.
# BACKEND (default gloo; trainrt: python_fit_trainrt_nN) as --scaling.backend.
python_fit_run() {
  local n=$1 backend=${3:-gloo} name
  if [[ $backend == gloo ]]; then name=python_fit_n$1${2:-}; else name=python_fit_${backend}_n$1${2:-}; fi
  run "$name" "$OUT/$name.stdout" env LD_LIBRARY_PATH="$OPENBLAS_OPENMP${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    PYTHONPATH="$BUILD/lib/trainrt/python${PYTHONPATH:+:$PYTHONPATH}" \
    "$PY" bench/python/recipe_fit.py --ranks "$n" --scaling.backend="$backend" --train.epochs="$EPOCHS" --train.init="$INIT" \
    --metrics.progress=off --run.storage_path="$storage" --run.name="bench_$name"
  cp "$storage/bench_$name/result.jsonl" "$OUT/$name.jsonl"
  expect_lines "$OUT/$name.jsonl" "$EPOCHS" "the recipe through TorchTrainer.fit() on $n ranks"
}
# startup_run WORKLOAD I: one epoch on 2 ranks under /usr/bin/time; one JSON line with rank 0's
# "first step ... after process start" and the largest max RSS of the ranks.
startup_run() {
  local workload=$1 name=startup_$1_$2
  # Each rank's max RSS into its own file (MPICH sets PMI_RANK): their stderr lines would interleave.
  run "$name" "$OUT/$name.stdout" mpiexec -n 2 bash -c '/usr/bin/time -f %M -o "$0.rss.$PMI_RANK" "$@"' "$OUT/$name" \
    "$TRAINRT" --config jobs/fashion_mlp.ini --run.workload="$workload" --train.epochs=1 --metrics.progress=off \
    --run.storage_path="$storage" --run.name="$name"
  local first rss
  first=$(sed -n 's/^\[trainrt 0\] first step \([0-9.]*\) s after process start.*/\1/p' "$OUT/$name.stdout" "$OUT/$name.log" | head -1)
  rss=$(cat "$OUT/$name".rss.* 2>/dev/null | sort -n | tail -1)
  [[ -n $first && -n $rss ]] || die "$name: no first-step time or RSS in $OUT/$name.stdout / $OUT/$name.log"
  printf '{"bench":"startup","workload":"%s","first_step_s":%s,"max_rss_kb":%s}\n' "$workload" "$first" "$rss" >>"$OUT/torch_startup.jsonl"
}
# Overlap (prepare_model) vs one flat allreduce after backward beside no averaging (the compute
# floor), and start-up/RSS with and without
# LibTorch, each pair alternated three times.
torch_overlap_and_startup() {
  local i mode workload
  for i in 1 2 3; do
    for mode in none overlap flat; do
      run "torch_ddp_${mode}_$i" "$OUT/torch_ddp_${mode}_$i.stdout" mpiexec -n 2 "$TRAINRT" --data.path="$DATA" \
        --run.workload="plugin:$repo/$BUILD/bench/libtorch_ddp_bench.so" --train.mode="$mode" --train.warmup=30 \
        --train.steps=400 --metrics.progress=off --run.storage_path="$storage" --run.name="torch_ddp_${mode}_$i"
      grep '"bench":"torch_ddp"' "$OUT/torch_ddp_${mode}_$i.stdout" >>"$OUT/torch_ddp.jsonl" ||
        die "torch_ddp_bench ($mode) printed no result line"
    done
    for workload in fashion_mlp torch_fashion_mlp; do startup_run "$workload" "$i"; done
  done
}

for n in "${RANKS[@]}"; do
  # trainrt and PyTorch alternate per rank count, so drift in the machine's load hits both.
  if ! skipped trainrt; then
    name=bench_n$n
    run "trainrt_n$n" "$OUT/trainrt_n$n.stdout" \
      mpiexec -n "$n" "$TRAINRT" --config jobs/fashion_mlp.ini --train.epochs="$EPOCHS" \
      --run.storage_path="$storage" --run.name="$name" --train.init_weights="$INIT"
    [[ -f $storage/$name/result.jsonl ]] || die "trainrt on $n ranks wrote no $storage/$name/result.jsonl"
    cp "$storage/$name/result.jsonl" "$OUT/trainrt_n$n.jsonl"
    expect_lines "$OUT/trainrt_n$n.jsonl" "$EPOCHS" "trainrt on $n ranks"
  fi
  if ! skipped pytorch; then
    run "pytorch_n$n" "$OUT/pytorch_n$n.jsonl" \
      env LD_LIBRARY_PATH="$OPENBLAS_OPENMP${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      "$PY" bench/pytorch/pytorch_ddp.py --ranks "$n" --epochs "$EPOCHS" --init "$INIT"
    expect_lines "$OUT/pytorch_n$n.jsonl" "$EPOCHS" "PyTorch on $n ranks"
  fi
  if (( PYTHON_BUILT )); then
    python_recipe_run "$n" gloo
    python_fit_run "$n"
    if compgen -G "$BUILD/lib/trainrt/python/trainrt/_trainrt_torch.*.so" >/dev/null; then
      python_recipe_run "$n" trainrt
      python_fit_run "$n" "" trainrt
    fi
  fi
  if (( TORCH_BUILT )); then
    torch_fashion_run "$n"
    if (( n == 1 )); then run torch_plain "$OUT/torch_plain.jsonl" "$BUILD/bench/torch_plain_loop" "$DATA" "$EPOCHS"; fi
  fi
done
if (( TORCH_BUILT )); then torch_overlap_and_startup; fi
# More alternations of the Python comparison on 2 ranks (suffix _rI): a single pair of runs moves
# by ±20 % on this shared machine; the report takes the median of the pairs' ratios.
if (( PYTHON_BUILT )) && ! skipped pytorch; then
  for i in $(seq 2 "${BENCH_PY_REPS:-7}"); do
    run "pytorch_n2_r$i" "$OUT/pytorch_n2_r$i.jsonl" env LD_LIBRARY_PATH="$OPENBLAS_OPENMP${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      "$PY" bench/pytorch/pytorch_ddp.py --ranks 2 --epochs "$EPOCHS" --init "$INIT"
    python_recipe_run 2 gloo "_r$i"
    python_fit_run 2 "_r$i"
    if compgen -G "$BUILD/lib/trainrt/python/trainrt/_trainrt_torch.*.so" >/dev/null; then
      python_recipe_run 2 trainrt "_r$i"
      python_fit_run 2 "_r$i" trainrt
    fi
  done
fi
if (( PYTHON_BUILT )); then
  # report() with and without a state_dict checkpoint of the recipe's model and optimizer, 2 ranks.
  run python_report "$OUT/python_report.jsonl" mpiexec -n 2 "$TRAINRT" \
    --run.workload=python:bench/python/recipe_in_trainrt.py:report_cost --train.reports=30 \
    --metrics.progress=off --run.storage_path="$storage" --run.name=bench_python_report
  grep -q '"bench": "python_report"' "$OUT/python_report.jsonl" || die "report_cost printed no python_report line"
  # Checkpoint.from_directory of a 100 MiB directory vs copying it and fsyncing (1 rank, one checkpoint kept).
  run python_directory "$OUT/python_directory.jsonl" mpiexec -n 1 "$TRAINRT" \
    --run.workload=python:bench/python/directory_checkpoint.py:bench --train.mib=100 --train.repeats=5 \
    --checkpoint.num_to_keep=1 --metrics.progress=off --run.storage_path="$storage" --run.name=bench_python_directory
  grep -q '"bench": "directory_checkpoint"' "$OUT/python_directory.jsonl" || die "directory_checkpoint printed no line"
  # A Python-bound loop: plain python3, trainrt.run() in it, the python: workload (embedded); alternated.
  : >"$OUT/python_interpreter.jsonl"
  for i in $(seq 1 "${BENCH_PY_REPS:-7}"); do
    run "python_interp_plain_r$i" "$OUT/python_interp.tmp" "$PY" bench/python/interpreter_loop.py 5
    cat "$OUT/python_interp.tmp" >>"$OUT/python_interpreter.jsonl"
    run "python_interp_run_r$i" "$OUT/python_interp.tmp" env PYTHONPATH="$BUILD/lib/trainrt/python${PYTHONPATH:+:$PYTHONPATH}" \
      "$PY" bench/python/interpreter_loop.py --trainrt-run --train.reps=5 --metrics.progress=off \
      --run.storage_path="$storage" --run.name=bench_python_interp_run
    grep '"bench": "interpreter"' "$OUT/python_interp.tmp" >>"$OUT/python_interpreter.jsonl"
    run "python_interp_embedded_r$i" "$OUT/python_interp.tmp" mpiexec -n 1 "$TRAINRT" \
      --run.workload=python:bench/python/interpreter_loop.py:embedded --train.reps=5 --metrics.progress=off \
      --run.storage_path="$storage" --run.name=bench_python_interp_embedded
    grep '"bench": "interpreter"' "$OUT/python_interp.tmp" >>"$OUT/python_interpreter.jsonl"
  done
  rm -f "$OUT/python_interp.tmp"
  [[ $(grep -c '"bench": "interpreter"' "$OUT/python_interpreter.jsonl") -eq $((3 * ${BENCH_PY_REPS:-7})) ]] ||
    die "interpreter_loop printed fewer lines than runs ($OUT/python_interpreter.jsonl)"
fi

if ! skipped allreduce; then
  run allreduce "$OUT/allreduce.jsonl" mpiexec -n 2 "$ALLREDUCE"
  grep -q '"bench":"gradient_reducer"' "$OUT/allreduce.jsonl" ||
    die "allreduce_bench printed no gradient_reducer line ($OUT/allreduce.jsonl)"
fi

if ! skipped checkpoint; then
  for n in "${RANKS[@]}"; do
    run "checkpoint_n$n" "$OUT/checkpoint_n$n.jsonl" mpiexec -n "$n" "$CKPT_BENCH" \
      --dir "${BENCH_CKPT_DIR:-$BUILD/bench-checkpoint}" --mib "${BENCH_CKPT_MIB:-1024}" --reps "${BENCH_CKPT_REPS:-6}"
    grep -q '"what":"async_stall"' "$OUT/checkpoint_n$n.jsonl" ||
      die "checkpoint_bench on $n ranks printed no async_stall line ($OUT/checkpoint_n$n.jsonl)"
  done
fi

if ! skipped restart; then
  command -v jq >/dev/null || die "jq not found (make deps installs it)"
  for n in 2 4; do
    run "restart_n$n" "$OUT/restart_n$n.jsonl" bash bench/restart/restart_bench.sh "$TRAINRT" "$n" 3 "$storage"
    [[ $(grep -c '"bench":"restart"' "$OUT/restart_n$n.jsonl") == 3 ]] ||
      die "restart_bench on $n ranks printed no 3 result lines ($OUT/restart_n$n.jsonl)"
  done
fi

if ! skipped report; then
  run report_n2 "$OUT/report_n2.jsonl" bash bench/report_cost/report_bench.sh "$TRAINRT" "$BUILD" 2 3 "$storage"
  [[ $(grep -c '"what":"report"' "$OUT/report_n2.jsonl") == 3 ]] ||
    die "report_bench printed no 3 report lines ($OUT/report_n2.jsonl)"
fi

# Data (part "data"): the streaming reader, cold, against a plain read; peak RSS per rank; fashion_mlp's data
# wait; trainrt from C++ and from Python against PyTorch's DataLoader + h5py (bench/data/data_bench.sh).
# XGBoost (part "xgboost"): the built-in workload against a hand-written xgboost.train (bench/xgboost/).
if ! skipped xgboost && (( PYTHON_BUILT_ANY )) && "$PY" -c 'import xgboost' 2>/dev/null; then
  run xgboost "$OUT/xgboost.stdout" bash bench/xgboost/xgboost_bench.sh "$TRAINRT" "$OUT/xgboost_bench.jsonl" \
    "$storage/xgboost" "${BENCH_XGB_ROWS:-1000000}" "${BENCH_XGB_ROUNDS:-20}" "${BENCH_XGB_REPS:-3}"
fi

# Sweeps (part "tune"): an ASHA sweep and random search with its budget (bench/tune/), FashionMNIST.
if ! skipped tune; then
  run tune "$OUT/tune.stdout" bash bench/tune/tune_bench.sh "$TRAINRT" "$DATA" "$storage/tune" \
    "$OUT/tune_bench.json" "${BENCH_TUNE_TRIALS:-32}"
fi

if ! skipped data; then
  run data "$OUT/data.stdout" bash bench/data/data_bench.sh "$TRAINRT" "$BUILD" "$OUT/data_bench.jsonl" "$storage/data"
fi

# measured PART: NOTE for a part measured in this run.
measured() { printf 'Measured in this run.\n' >"$OUT/$1_note.txt"; }
# stored PART STORED DEST WHY SOURCE: a part not measured in this run shows the stored results
# STORED (under bench/results/, copied to DEST beside this run's) and a note saying why (WHY), what
# made them (SOURCE) and the commit and date bench/results/index.json gives them; without stored
# results its note is empty and its section says "not run".
stored() {
  local part=$1 file=$2 dest=$3 why=$4 source=$5
  if [[ -r $file ]]; then
    cp "$file" "$dest"
    printf '%s\n' "Not measured by this run ($why): the stored results of $source ($file, $("$PY" bench/reporting/results_index.py origin "$file"))." \
      >"$OUT/${part}_note.txt"
  else
    : >"$OUT/${part}_note.txt"
  fi
}

# GPU: measured here where a GPU is visible and this build has CUDA; otherwise the section shows the
# latest results measured on a GPU machine (bench/results/gpu/, made with bench/gpu/run_on_gpu.sh).
if nvidia-smi -L 2>/dev/null | grep -q '^GPU ' && [[ -x $BUILD/tests/nccl_check ]]; then
  cmake --build "$BUILD" -j "$JOBS" --target gpu_step_bench >&2 || die "building gpu_step_bench failed"
  run gpu "$OUT/gpu.stdout" bash bench/gpu/bench_gpu.sh "$BUILD" /usr/share/datasets/fashion-mnist "$OUT/gpu_bench.jsonl" "$EPOCHS"
  measured gpu
else
  stored gpu bench/results/gpu/h100-latest.jsonl "$OUT/gpu_bench.jsonl" "no GPU on this machine" \
    "\`bash bench/gpu/run_on_gpu.sh\` on a lent GPU machine"
fi

# cluster_part PART FLAG DEST STORED WHY SOURCE CMD...: a part run on the local 3-node cluster (root,
# minutes to half an hour) only when the variable FLAG is 1: CMD writes DEST; otherwise DEST is
# the stored result STORED (WHY: what runs it; SOURCE: what made it).
cluster_part() {
  local part=$1 flag=$2 dest=$3 file=$4 why=$5 source=$6
  shift 6
  if [[ ${!flag:-0} == 1 ]] && ! skipped "$part"; then
    run "$part" "$OUT/$part.stdout" "$@"
    measured "$part"
  else
    stored "$part" "$file" "$dest" "$why" "$source"
  fi
}
# Node failure (about 3 minutes per fault).
cluster_part nodes BENCH_NODES "$OUT/node_failure.jsonl" bench/results/multinode/latest.jsonl "BENCH_NODES=1 runs it" \
  "\`bash bench/multinode/node_failure_bench.sh\` on this kind of machine" \
  bash bench/multinode/node_failure_bench.sh "$OUT/node_failure.jsonl" "${BENCH_NODE_REPEAT:-3}"
# Goodput of a compressed long job (about 30 minutes).
cluster_part goodput BENCH_GOODPUT "$OUT/goodput.json" bench/results/multinode/goodput.json \
  "BENCH_GOODPUT=1 or \`make bench-goodput\` runs it" "\`bash bench/multinode/goodput_bench.sh\` on this kind of machine" \
  bash bench/multinode/goodput_bench.sh "$OUT/goodput.json"
# The same sweep in one allocation and as a Slurm job array (about 15 minutes).
cluster_part array BENCH_TUNE_ARRAY "$OUT/array_sweep.json" bench/results/tune/job_array.json \
  "BENCH_TUNE_ARRAY=1 or \`make bench-tune-array\` runs it" "\`bash bench/tune/job_array_bench.sh\` on this kind of machine" \
  bash bench/tune/job_array_bench.sh "$OUT/array_sweep.json"

# trainrt vs Ray Train (part "ray", bench/ray/): the same Ray-style scripts under Ray (its own venv,
# bench/ray/make_venv.sh) and, after the one sed, under trainrt, alternated; skipped, the stored run.
if ! skipped ray; then
  run ray "$OUT/ray.stdout" bash bench/ray/ray_bench.sh "$OUT/ray.jsonl"
  measured ray
else
  stored ray bench/results/ray/latest.jsonl "$OUT/ray.jsonl" "BENCH_SKIP names ray" "\`bash bench/ray/ray_bench.sh\`"
fi

# Frameworks through trainrt vs Ray Train and the framework's own launcher (part "frameworks",
# bench/frameworks/): Lightning, 2 ranks; skipped, the stored run.
if ! skipped frameworks; then
  run frameworks "$OUT/frameworks.stdout" bash bench/frameworks/run.sh "$OUT/frameworks.jsonl"
  measured frameworks
else
  stored frameworks bench/results/frameworks/latest.jsonl "$OUT/frameworks.jsonl" "BENCH_SKIP names frameworks" \
    "\`bash bench/frameworks/run.sh\`"
fi

# --- where and with what it ran ---
version_of() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo "not installed"; }
blas_of_trainrt=$(ldd "$TRAINRT" 2>/dev/null | awk '/libopenblas/ {print $3; exit}' || true)
{
  machine_lines "$BUILD"
  printf 'torch=%s\n' "$($PY -c 'import torch; print(torch.__version__)' 2>/dev/null || echo unavailable)"
  printf 'openblas=%s (trainrt: %s; PyTorch: %s)\n' "$(version_of libopenblas0)" "${blas_of_trainrt:-?}" "$OPENBLAS_OPENMP"
  printf 'epochs=%s\n' "$EPOCHS"
  printf 'skipped=%s\n' "$(echo $SKIP)"
  [[ -z ${REUSED_FROM:-} ]] || printf 'reused_from=%s\nreused_date=%s\n' "$REUSED_FROM" "$REUSED_DATE"
  printf 'load=%s\n' "$load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
} >"$OUT/machine.txt"

[[ -z ${REUSED_FROM:-} ]] || cp -n "$REUSED_FROM"/* "$OUT"/ 2>/dev/null || true
say "writing $REPORT"
"$PY" bench/reporting/render.py "$OUT" "$REPORT" || die "could not render the results in $OUT"
say "done: $REPORT (raw results in $OUT)"
