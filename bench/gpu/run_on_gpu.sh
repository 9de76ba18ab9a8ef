#!/usr/bin/env bash
# Runs trainrt on a GPU machine from the bundle bench/gpu/make_bundle.sh made (bench/gpu/README.md).
# Run it in a copy of the repository on that machine:
#
#   OUT=results-dir bash bench/gpu/run_on_gpu.sh [BUNDLE_DIR] [STAGE...]
#
# Stages (default: probe test bench):
#   probe  what the machine has: GPU, driver, nvcc, MPI, Python/PyTorch/NCCL, and which of
#          trainrt's libraries its own loader cannot find (ldd before the bundle is used)
#   test   ctest -L gpu in the unpacked build (NCCL collectives, CUDA fashion_mlp vs the CPU
#          path, stop with USR2 and resume on the GPU)
#   python builds the Python component for the machine's Python (build_python_on_gpu.sh), so that
#          test's gpu.test_gpu_python and pybench run Python training functions on the GPU
#   torch  builds the LibTorch component and the plugin example against the machine's CUDA
#          LibTorch (build_torch_on_gpu.sh), so that test's gpu.test_gpu_torch runs them on the GPU
#   bench  bench/gpu/bench_gpu.sh: CUDA fashion_mlp vs PyTorch on the same GPU (data resident /
#          data loading included), trainrt's NCCL allreduce vs a plain ncclAllReduce loop, the
#          GEMM share of a step
#   pybench bench/gpu/python_gpu_bench.sh: Python functions (MLP recipe, ResNet-18) through
#          trainrt vs plain PyTorch, and a GPU model's checkpoint stall vs its device-to-host copy
#   raybench python_gpu_bench.sh with PYBENCH_SIDE=ray: the same Python functions under Ray Train
#          (TorchTrainer, ScalingConfig(use_gpu=True)) vs plain PyTorch; Ray from RAY_CARRY/ray-site.tar.xz
#          (default .ray; bench/gpu/make_ray_carry.sh) and FashionMNIST from the bundle an earlier
#          call on the same machine unpacked (Ray and the bundle together exceed what one call carries)
# REUSE_UNPACKED=1 uses what an earlier call on the same warm machine unpacked and built.
#   stall  bench/gpu/stall_profile.py: where that stall goes (staging vs report(), two stagings,
#          an idle GPU before the checkpoint, cProfile)
#   ckpt   bench/checkpoint_bench on 1 and 2 ranks on this machine's disk and cores (GPU_CKPT_DIR,
#          default /var/tmp; GPU_CKPT_REPS=4, GPU_CKPT_MIB=1024, GPU_CKPT_RANKS="1 2"):
#          $OUT/${GPU_CKPT_NAME:-ckpt}/ is a results directory of bench/run.sh's form, rendered here
#          by bench/reporting/render.py
#   determ what train.deterministic costs: torch_fashion_cnn on the GPU with it and without it,
#          alternated (GPU_DETERM_PAIRS=2 pairs of GPU_DETERM_EPOCHS=2 epochs); needs the torch stage
# Everything it prints also goes to $OUT/<stage>.log; benchmark JSON lines to $OUT/gpu_bench.jsonl.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
cd "$REPO"
BUNDLE_DIR=${1:-.gpu}
shift || true
STAGES=("$@")
[[ ${#STAGES[@]} -gt 0 ]] || STAGES=(probe test bench)
OUT=${OUT:-$REPO/gpu-out}
EPOCHS=${GPU_BENCH_EPOCHS:-3}
mkdir -p "$OUT"
UNPACKED=/tmp/trainrt-gpu-bundle

say() { printf '== %s\n' "$*"; }
die() { echo "run_on_gpu: $*" >&2; exit 1; }

unpack() {
  [[ -r $BUNDLE_DIR/bundle.tar.xz ]] || die "no $BUNDLE_DIR/bundle.tar.xz (make it with bench/gpu/make_bundle.sh)"
  rm -rf "$UNPACKED" && mkdir -p "$UNPACKED"
  tar -C "$UNPACKED" -xJf "$BUNDLE_DIR/bundle.tar.xz" || die "cannot unpack $BUNDLE_DIR/bundle.tar.xz"
  read_manifest
  # A real build tree (the machine that made the bundle) is never replaced by the bundle's subset.
  [[ ! -e $REPO/$BUILD_REL/CMakeCache.txt ]] || die "$REPO/$BUILD_REL is a build tree: run this on the GPU machine's copy"
  rm -rf "${REPO:?}/$BUILD_REL" && mkdir -p "$(dirname "$REPO/$BUILD_REL")"
  cp -a "$UNPACKED/build" "$REPO/$BUILD_REL"
  link_built_repo
}

# REUSE_UNPACKED=1: what an earlier call on this (still warm) machine unpacked, with the components
# it built there, is used as it is (a lease's device time is short); false where there is none.
reuse() {
  [[ ${REUSE_UNPACKED:-0} == 1 && -r $UNPACKED/MANIFEST ]] || return 1
  read_manifest
  [[ -x $REPO/$BUILD_REL/trainrt && -d $REPO/$BUILD_REL/lib ]] || return 1
  link_built_repo
  REUSED=1
  echo "run_on_gpu: reusing $UNPACKED and $REPO/$BUILD_REL from an earlier call"
}

read_manifest() {
  built_repo=$(sed -n 's/^repo_dir=//p' "$UNPACKED/MANIFEST")
  built_dir=$(sed -n 's/^build_dir=//p' "$UNPACKED/MANIFEST")
  BUILD_REL=${built_dir#"$built_repo"/}
  BUILD=$REPO/$BUILD_REL
  TRAINRT=$BUILD/trainrt
}

# The ctest files name the build's absolute paths: make them valid here.
link_built_repo() {
  if [[ $built_repo != "$REPO" ]]; then
    if [[ -e $built_repo && ! -L $built_repo ]]; then die "$built_repo exists and is not this repository"; fi
    mkdir -p "$(dirname "$built_repo")" && ln -sfn "$REPO" "$built_repo"
  fi
}

# Directories holding the GPU machine's own CUDA runtime, cuBLAS and NCCL (PyTorch's wheels first).
cuda_lib_dirs() {
  local py_dirs
  py_dirs=$(python3 - <<'PY' 2>/dev/null
import glob, os, site
roots = site.getsitepackages() + [site.getusersitepackages()]
for root in roots:
    for lib in sorted(glob.glob(os.path.join(root, "nvidia", "*", "lib"))) + sorted(glob.glob(os.path.join(root, "nvidia", "cu*", "lib"))):
        print(lib)
PY
)
  printf '%s\n' $py_dirs /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib | awk '!seen[$0]++' |
    while read -r d; do [[ -d $d ]] && echo "$d"; done | paste -sd:
}

use_bundle() {
  export LD_LIBRARY_PATH="$UNPACKED/lib:$(cuda_lib_dirs)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PATH="$UNPACKED/bin:$PATH"
  # ctest runs the MPI tests with the mpiexec CMake found here (/usr/bin/mpiexec), which may be
  # another MPI there (Open MPI): point the copied ctest files at MPICH's, from the bundle.
  local mpiexec_here
  mpiexec_here=$(grep -rhoE '"/[^" ]*/mpiexec[^/" ]*"' "$BUILD/tests/CTestTestfile.cmake" | tr -d '"' | head -1)
  [[ -z $mpiexec_here ]] || find "$BUILD" -name CTestTestfile.cmake -exec sed -i "s|\"$mpiexec_here\"|\"$UNPACKED/bin/mpiexec\"|g" {} +
  local missing
  missing=$(ldd "$TRAINRT" "$BUILD"/lib/libtrainrt.so "$BUILD/tests/nccl_check" "$UNPACKED"/bin/* | grep 'not found' | sort -u)
  [[ -z $missing ]] || die "libraries still missing with the bundle: $missing"
  export FASHION_IDX_DIR=$UNPACKED/data  # the IDX files, for the Python tests and benchmarks
  TRAINRT_PYTHON=$(command -v python3)  # the tests' numpy and h5py: this machine's PyTorch Python
  export TRAINRT_PYTHON
  # The ctest files name the build machine's project environment (tests/CMakeLists.txt TEST_ENV).
  find "$BUILD" -name CTestTestfile.cmake -exec sed -i -E "s|TRAINRT_PYTHON=[^;\"]*|TRAINRT_PYTHON=$TRAINRT_PYTHON|g" {} +
  if [[ ! -s $REPO/data/fashion-mnist.h5 ]]; then
    "$TRAINRT" data import fashion-mnist --from "$UNPACKED/data" --out "$REPO/data/fashion-mnist.h5" >/dev/null ||
      die "importing FashionMNIST failed"
  fi
}

stage_probe() {
  say "machine"; uname -a; grep PRETTY_NAME /etc/os-release; nproc; free -g | head -2
  say "GPU"; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  say "nvcc"; nvcc --version 2>&1 | tail -2 || echo "no nvcc on PATH"
  say "glibc / libstdc++"; ldd --version | head -1; ls /usr/lib/x86_64-linux-gnu/libstdc++.so.6.* 2>/dev/null
  say "MPI"; for c in mpiexec mpirun ompi_info mpichversion; do printf '%s: %s\n' "$c" "$(command -v "$c" || echo none)"; done
  say "ctest"; command -v ctest && ctest --version | head -1
  say "python / torch"
  python3 -c 'import sys, torch; print(sys.version.split()[0], torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version(), torch.cuda.get_device_name())'
  say "python3's libpython (none: linked statically)"; ldd "$(python3 -c 'import sys; print(sys.executable)')" | grep libpython || echo none
  say "CUDA/NCCL library dirs"; cuda_lib_dirs | tr ':' '\n'
  say "what the machine's loader cannot find for trainrt (before the bundle)"
  ldd "$TRAINRT" "$BUILD"/lib/libtrainrt.so | grep 'not found' | sort -u || echo "(nothing)"
  say "bundle"; cat "$UNPACKED/MANIFEST"
}

stage_test() {
  say "ctest -L gpu ${GPU_TESTS:+-R $GPU_TESTS}"
  # gpu.test_component (labels local;gpu) needs an install: it runs where the build was made.
  (cd "$BUILD" && ctest -L gpu -E "^gpu[.]test_component$" ${GPU_TESTS:+-R "$GPU_TESTS"} --output-on-failure --timeout 600 ${CTEST_VERBOSE:+-V})
}

stage_python() {
  if [[ ${REUSED:-0} == 1 && -e $BUILD/lib/libtrainrt_python.so ]]; then echo "python: built by the earlier call"; return; fi
  bash bench/gpu/build_python_on_gpu.sh "$BUILD" "$UNPACKED"
}

stage_torch() { bash bench/gpu/build_torch_on_gpu.sh "$BUILD" "$UNPACKED"; }

stage_pybench() {
  bash bench/gpu/python_gpu_bench.sh "$BUILD" "$UNPACKED/data" "$OUT/python_gpu_bench.jsonl" \
    "${PYBENCH_EPOCHS:-4}" "${PYBENCH_ROUNDS:-1}"
}

stage_raybench() {
  local carry=${RAY_CARRY:-.ray}/ray-site.tar.xz site=/tmp/trainrt-ray-site data=$UNPACKED/data
  [[ -r $carry ]] || { echo "no $carry (make it with bench/gpu/make_ray_carry.sh)"; return 1; }
  [[ -d $data ]] || { echo "no $data: run the bundle's stages first on this machine"; return 1; }
  rm -rf "$site" && mkdir -p "$site" && tar -C "$site" -xJf "$carry" || return 1
  PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH} PYBENCH_SIDE=ray bash bench/gpu/python_gpu_bench.sh - "$data" \
    "$OUT/ray_gpu_bench.jsonl" "${PYBENCH_EPOCHS:-4}" "${PYBENCH_ROUNDS:-1}"
}

stage_stall() {
  local work
  work=$(mktemp -d)
  timeout -k 10 300 "$UNPACKED/bin/mpiexec" -n 1 "$TRAINRT" --run.workload=python:bench/gpu/stall_profile.py:profile_func \
    --scaling.use_gpu=true --checkpoint.async=true --checkpoint.snapshot=background \
    --train.data_dir="$UNPACKED/data" --train.rounds="${STALL_ROUNDS:-8}" --run.storage_path="$work" --run.name=stall \
    --metrics.progress=off
}

# The checkpoint benchmark's results directory: checkpoint_n1/n2.jsonl and a machine.txt naming
# this machine and the filesystem written, every other part of bench/run.sh marked skipped.
stage_ckpt() {
  local dir=${GPU_CKPT_DIR:-/var/tmp}/trainrt-bench-checkpoint results=$OUT/${GPU_CKPT_NAME:-ckpt} n
  mkdir -p "$results"
  for n in ${GPU_CKPT_RANKS:-1 2}; do
    say "checkpoint_bench, $n rank(s), in $dir"
    "$UNPACKED/bin/mpiexec" -n "$n" "$BUILD/bench/checkpoint_bench" --dir "$dir" --mib "${GPU_CKPT_MIB:-1024}" \
      --reps "${GPU_CKPT_REPS:-4}" >"$results/checkpoint_n$n.jsonl" || return 1
    grep -c '"what"' "$results/checkpoint_n$n.jsonl"
  done
  {
    printf 'cpu=%s\n' "$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -n1)"
    printf 'nproc=%s\n' "$(nproc)"
    printf 'date=%s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
    printf 'kernel=%s\n' "$(uname -r)"
    printf 'trainrt=%s\n' "$(sed -n 's/^commit=//p' "$UNPACKED/MANIFEST")"
    printf 'compiler=%s\n' "the bundle's build (bench/gpu/make_bundle.sh)"
    printf 'build_type=%s\n' "RelWithDebInfo, debug info stripped"
    printf 'mpich=%s\n' "the bundle's (Debian 12's)"
    printf 'torch=%s\n' "not used"
    printf 'openblas=%s\n' "not used"
    printf 'epochs=0\n'
    printf 'skipped=%s\n' "trainrt pytorch torch python allreduce restart report nodes goodput array data xgboost tune"
    printf 'filesystem=%s\n' "$(df -hT "$(dirname "$dir")" | tail -1)"
    printf 'omp_num_threads=%s\n' "${OMP_NUM_THREADS:-unset}"
    printf 'load=%s\n' "$(cut -d' ' -f1-3 /proc/loadavg) at the end"
  } >"$results/machine.txt"
}

# Epoch training times of torch_fashion_cnn on the GPU, train.deterministic false and true alternated.
stage_determ() {
  local work pair flag
  work=$(mktemp -d)
  for pair in $(seq "${GPU_DETERM_PAIRS:-2}"); do
    for flag in false true; do
      timeout -k 5 120 "$UNPACKED/bin/mpiexec" -n 1 "$TRAINRT" --config jobs/fashion_mlp.ini --data.path="$REPO/data/fashion-mnist.h5" \
        --run.workload=torch_fashion_cnn --train.epochs="${GPU_DETERM_EPOCHS:-2}" --train.batch_size=64 \
        --scaling.use_gpu=true --train.deterministic=$flag --metrics.progress=off \
        --run.storage_path="$work" --run.name="cnn_${flag}_$pair" >"$work/cnn_${flag}_$pair.out" 2>&1 ||
        { tail -20 "$work/cnn_${flag}_$pair.out"; return 1; }
      grep -h '"train_time_s"' "$work/cnn_${flag}_$pair/result.jsonl" |
        sed "s/^{/{\"deterministic\": $flag, \"pair\": $pair, /" | tee -a "$OUT/determ.jsonl"
    done
  done
}

stage_bench() { bash bench/gpu/bench_gpu.sh "$BUILD" "$UNPACKED/data" "$OUT/gpu_bench.jsonl" "$EPOCHS"; }

if [[ "${STAGES[*]}" == raybench ]]; then
  echo "run_on_gpu: raybench needs no build"
elif ! reuse; then
  unpack
fi
status=0
for stage in "${STAGES[@]}"; do
  case $stage in
    probe) stage_probe 2>&1 | tee "$OUT/probe.log" ;;
    test) use_bundle; stage_test 2>&1 | tee "$OUT/test.log"; [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1 ;;
    python) use_bundle; stage_python 2>&1 | tee "$OUT/python.log"; [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1 ;;
    torch) use_bundle; stage_torch 2>&1 | tee "$OUT/torch.log"; [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1 ;;
    bench) use_bundle; stage_bench 2>&1 | tee "$OUT/bench.log"; [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1 ;;
    pybench) use_bundle; stage_pybench 2>&1 | tee "$OUT/pybench.log"; [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1 ;;
    raybench) stage_raybench 2>&1 | tee "$OUT/raybench.log"; [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1 ;;
    stall) use_bundle; stage_stall 2>&1 | tee "$OUT/stall.log"; [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1 ;;
    ckpt) use_bundle; stage_ckpt 2>&1 | tee "$OUT/ckpt.log"; [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1 ;;
    determ) use_bundle; stage_determ 2>&1 | tee "$OUT/determ.log"; [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1 ;;
    *) die "unknown stage '$stage' (probe, python, torch, test, bench, pybench, raybench, stall, ckpt, determ)" ;;
  esac
done
exit $status
