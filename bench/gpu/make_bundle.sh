#!/usr/bin/env bash
# Prepares, on one of our Debian 12 machines, everything trainrt needs on a GPU machine that has
# CUDA, a driver and PyTorch's NCCL/cuBLAS but none of our Debian libraries (bench/gpu/README.md):
#
#   bash bench/gpu/make_bundle.sh [BUNDLE_DIR]        (default .gpu, ignored by git)
#
# BUNDLE_DIR/bundle.tar.xz then holds
#   build/     the GPU-relevant part of the build tree (binaries stripped of debug info, the ctest
#              files), at the same relative place as here
#   lib/       every shared library our binaries load that is not glibc, libstdc++ or a CUDA/NCCL
#              library, taken from Debian's own .deb files (apt-get download + dpkg-deb -x)
#   bin/       MPICH's mpiexec (hydra) and its proxy, from Debian's mpich .deb
#   data/      Debian's FashionMNIST IDX files (dataset-fashion-mnist), imported there
#   include/   fmt's and MPICH's headers, for the Python and LibTorch components built there
#              (build_python_on_gpu.sh, build_torch_on_gpu.sh)
#   MANIFEST   where the build lived here (ctest files hold absolute paths), versions, contents
# CUDA's runtime, cuBLAS and NCCL are not brought: the GPU machine's own (PyTorch's wheels or
# /usr/local/cuda) are used; ours would be ~400 MB.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
BUILD=${BUILD:-build}
OUTDIR=${1:-.gpu}
BUILD_ABS=$(cd "$BUILD" 2>/dev/null && pwd) || { echo "make_bundle: no build at $BUILD (run make build)" >&2; exit 2; }
grep -q '^#define TRAINRT_HAS_CUDA 1' "$BUILD/generated/trainrt/build_config.hpp" ||
  { echo "make_bundle: $BUILD was built without CUDA (cmake -DTRAINRT_WITH_CUDA=ON)" >&2; exit 2; }
cmake --build "$BUILD" -j "${JOBS:-2}" --target trainrt trainrt_cuda nccl_check engine_uneven_check checkpoint_bench >/dev/null

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/build/lib" "$stage/build/tests" "$stage/build/bench" "$stage/lib" "$stage/bin" "$stage/data" "$stage/debs"

# The build: binaries (debug info stripped: the bundle must travel), and every CTestTestfile.cmake
# so that `ctest -L gpu` runs in the copied tree.
binaries=("$BUILD/trainrt" "$BUILD/tests/nccl_check" "$BUILD/tests/engine_uneven_check")
[[ -x $BUILD/bench/gpu_step_bench ]] && binaries+=("$BUILD/bench/gpu_step_bench")
binaries+=("$BUILD/bench/checkpoint_bench")  # run_on_gpu.sh's ckpt stage: the checkpoint figures on that machine's disk and cores
for f in "${binaries[@]}"; do
  mkdir -p "$stage/build/$(dirname "${f#"$BUILD"/}")"
  objcopy --strip-debug "$f" "$stage/build/${f#"$BUILD"/}"
done
for f in "$BUILD"/lib/libtrainrt.so* "$BUILD"/lib/libtrainrt_cuda.so*; do  # the core and its CUDA component
  if [[ -L $f ]]; then cp -P "$f" "$stage/build/lib/"; else objcopy --strip-debug "$f" "$stage/build/lib/$(basename "$f")"; fi
done
(cd "$BUILD" && find . -name CTestTestfile.cmake -print0 | xargs -0 -I{} cp --parents {} "$stage/build/")
cp -r "$BUILD/generated" "$stage/build/"

# Shared libraries: what ldd resolves here, minus the C runtime and the CUDA/NCCL family, each
# extracted from the .deb of the package that owns it.
skip='^(libtrainrt|linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libutil|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcublasLt|libnccl|libnvidia)\.'
mpich_tools=(/usr/bin/mpiexec.hydra /usr/bin/hydra_pmi_proxy)
mapfile -t wanted < <(for f in "${binaries[@]}" "$BUILD"/lib/libtrainrt.so "$BUILD"/lib/libtrainrt_cuda.so "${mpich_tools[@]}"; do ldd "$f"; done |
  awk '$3 ~ /^\// {print $1" "$3}' | sort -u | while read -r name path; do
    [[ $name =~ $skip ]] || echo "$path"
  done)
declare -A packages=()
for path in "${wanted[@]}"; do
  real=$(readlink -f "$path")
  pkg=$(dpkg -S "$real" 2>/dev/null | head -1 | cut -d: -f1) || true
  [[ -n $pkg ]] || pkg=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1) || true
  [[ -n $pkg ]] || { echo "make_bundle: no Debian package owns $path" >&2; exit 2; }
  packages[$pkg]=1
done
packages[mpich]=1   # mpiexec and hydra_pmi_proxy
chmod 0777 "$stage/debs"
(cd "$stage/debs" && apt-get download -q "${!packages[@]}" >/dev/null 2>&1) ||
  { apt-get update -q >/dev/null && (cd "$stage/debs" && apt-get download -q "${!packages[@]}" >/dev/null); }
for deb in "$stage"/debs/*.deb; do dpkg-deb -x "$deb" "$stage/root"; done
for path in "${wanted[@]}"; do
  name=$(basename "$path")
  found=$(find "$stage/root" -name "$name" \( -type f -o -type l \) | head -1)
  [[ -n $found ]] || { echo "make_bundle: $name is not in its package's .deb" >&2; exit 2; }
  cp -L "$found" "$stage/lib/$name"
done
cp -L "$stage/root/usr/bin/mpiexec.hydra" "$stage/bin/mpiexec"
cp -L "$stage/root/usr/bin/hydra_pmi_proxy" "$stage/bin/"

cp /usr/share/datasets/fashion-mnist/*-ubyte.gz "$stage/data/"
# The headers the Python and LibTorch components need there beyond the compiler's, Python's,
# pybind11's and LibTorch's (build_python_on_gpu.sh, build_torch_on_gpu.sh): fmt's, MPICH's
# (src/comm's MPI headers are included by the torch component's process group) and xxHash's.
mkdir -p "$stage/include" && cp -r /usr/include/fmt "$stage/include/"
cp -r /usr/include/x86_64-linux-gnu/mpich "$stage/include/mpich"
cp /usr/include/xxhash.h "$stage/include/"  # the torch component's weights digest
{
  echo "build_dir=$BUILD_ABS"
  echo "repo_dir=$here"
  echo "made=$(date -u +%FT%TZ) on $(hostname)"
  echo "trainrt=$("$BUILD/trainrt" --version | tr '\n' ' ')"
  echo "commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo none)"
  echo "packages=${!packages[*]}"
  echo "libs=$(ls "$stage/lib" | tr '\n' ' ')"
} >"$stage/MANIFEST"

rm -rf "$stage/debs" "$stage/root"
mkdir -p "$OUTDIR"
tar -C "$stage" -cJf "$OUTDIR/bundle.tar.xz" .
echo "make_bundle: $OUTDIR/bundle.tar.xz ($(du -h "$OUTDIR/bundle.tar.xz" | cut -f1)): ${#wanted[@]} libraries from ${#packages[@]} packages"
