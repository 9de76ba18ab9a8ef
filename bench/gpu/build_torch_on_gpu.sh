#!/usr/bin/env bash
# Builds trainrt's LibTorch component on the GPU machine, against that machine's CUDA LibTorch
# (PyTorch's wheel: its include/ and lib/), in place of the one built here against Debian's
# CPU-only libtorch 1.13 (bench/gpu/README.md). Also builds, for gpu.test_gpu_torch, the
# out-of-tree plugin example (examples/torch_model) and tests/gpu/torch_group_check against it.
#
#   bash bench/gpu/build_torch_on_gpu.sh BUILD UNPACKED_BUNDLE
#
# Makes BUILD/lib/libtrainrt_torch.so.<version> (the soname the core loads),
# BUILD/gpu_plugins/libtorch_model.so and BUILD/gpu_plugins/torch_group_check. Needs g++ and a Python whose torch has CUDA.
set -euo pipefail
source "$(dirname "$0")/component_build.sh" "$@"
TORCH=$("$PYTHON" -c 'import os, torch; print(os.path.dirname(torch.__file__))') || die "no torch for $PYTHON"
ABI=$("$PYTHON" -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')
"$PYTHON" -c 'import torch, sys; sys.exit(0 if torch.version.cuda else 1)' || die "$PYTHON's torch has no CUDA"
[[ -r $TORCH/include/torch/csrc/api/include/torch/torch.h ]] || die "no LibTorch headers under $TORCH/include"
[[ -r $UNPACKED/include/mpich/mpi.h && -r $UNPACKED/include/xxhash.h ]] ||
  die "the bundle has no MPICH or xxHash headers (make it again with make_bundle.sh)"
SONAME=$(soname_of libtrainrt_torch)
echo "torch: $("$PYTHON" -c 'import torch; print(torch.__version__)') at $TORCH (C++11 ABI $ABI), g++ $(g++ -dumpfullversion)"

# The bundle's fmt (the one libtrainrt was built with) before LibTorch's own fmt headers.
FLAGS=(-std=c++20 -O2 -DNDEBUG -fPIC -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
       -DFMT_SHARED -DUSE_C10D_GLOO -DUSE_DISTRIBUTED -D_GLIBCXX_USE_CXX11_ABI="$ABI"
       -I"$REPO/include" -I"$BUILD/generated" -I"$REPO/src"
       -isystem "$UNPACKED/include" -isystem "$UNPACKED/include/mpich"
       -isystem "$TORCH/include" -isystem "$TORCH/include/torch/csrc/api/include")
# libtorch_cuda is linked even though no symbol of ours names it: it registers CUDA with ATen.
TORCH_LIBS=(-L"$TORCH/lib" -Wl,--no-as-needed -ltorch_cuda -lc10_cuda -Wl,--as-needed -ltorch -ltorch_cpu -lc10
            -Wl,-rpath,"$TORCH/lib")
compile "$REPO"/src/torch/*.cpp
g++ -shared -Wl,-soname,"$SONAME" -o "$BUILD/lib/libtrainrt_torch.so.$VERSION" "$objects"/*.o \
  "$BUILD/lib/libtrainrt.so" "$UNPACKED/lib/libfmt.so.9" "$UNPACKED/lib/libxxhash.so.0" "${TORCH_LIBS[@]}" \
  -Wl,-rpath,'$ORIGIN'
link_names libtrainrt_torch
echo "built $BUILD/lib/$SONAME"

mkdir -p "$BUILD/gpu_plugins"
g++ "${FLAGS[@]}" -shared -o "$BUILD/gpu_plugins/libtorch_model.so" "$REPO/examples/torch_model/plugin.cpp" \
  "$BUILD/lib/libtrainrt_torch.so" "$BUILD/lib/libtrainrt.so" "$UNPACKED/lib/libfmt.so.9" "${TORCH_LIBS[@]}" \
  -Wl,-rpath,"$BUILD/lib"
echo "built $BUILD/gpu_plugins/libtorch_model.so"
g++ "${FLAGS[@]}" -o "$BUILD/gpu_plugins/torch_group_check" "$REPO/tests/gpu/torch_group_check.cpp" \
  "$BUILD/lib/libtrainrt_torch.so" "$BUILD/lib/libtrainrt.so" "$UNPACKED/lib/libfmt.so.9" "$UNPACKED/lib/libmpich.so.12" \
  "${TORCH_LIBS[@]}" -Wl,-rpath,"$BUILD/lib"
echo "built $BUILD/gpu_plugins/torch_group_check"
