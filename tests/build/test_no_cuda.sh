#!/usr/bin/env bash
# The build without the optional components (-DTRAINRT_WITH_CUDA=OFF: the nocuda/ alternative
# sources; -DTRAINRT_WITH_TORCH=OFF: no libtrainrt_torch; -DTRAINRT_WITH_PYTHON=OFF: no
# libtrainrt_python): it configures and builds (trainrt, unit tests) in $TRAINRT_BUILD-no-components
# (beside the main build: with ccache, every translation unit the components do not change comes
# from the cache; the library compiles the same with or without CUDA),
# `trainrt --version` says CUDA/NCCL: no, LibTorch: no and Python: no, the unit tests pass,
# use_gpu = true, a LibTorch workload and a Python workload are refused with one line and exit 2,
# the LibTorch example plugin cannot be configured against its install, and a
# short CPU training gives bitwise the weights of this (CUDA) build.
# ctest: processors=1
# ctest: timeout=1800
source "$(dirname "$0")/../lib/common.sh"
require_data
build=$TRAINRT_BUILD-no-components
cmake -S "$TRAINRT_SRC" -B "$build" -DTRAINRT_WITH_CUDA=OFF -DTRAINRT_WITH_TORCH=OFF \
  -DTRAINRT_WITH_PYTHON=OFF >"$WORK/configure.log" 2>&1 \
  || { cat "$WORK/configure.log"; fail "configure without CUDA"; finish; }
grep -q "CUDA/NCCL path 0" "$WORK/configure.log" && pass "configured without CUDA" || fail "CUDA path not off: $(grep 'CUDA/NCCL path' "$WORK/configure.log")"
grep -q "LibTorch component 0" "$WORK/configure.log" && pass "configured without LibTorch" || fail "LibTorch not off: $(grep 'LibTorch component' "$WORK/configure.log")"
grep -q "Python component 0" "$WORK/configure.log" && pass "configured without Python" || fail "Python not off: $(grep 'Python component' "$WORK/configure.log")"
cmake --build "$build" -j 2 --target trainrt unit_tests >"$WORK/build.log" 2>&1 \
  || { tail -30 "$WORK/build.log"; fail "build without CUDA"; finish; }
grep -qiE 'nvcc|\.cu\.o' "$WORK/build.log" && fail "nvcc ran in the no-CUDA build"
grep -q 'trainrt_torch' "$WORK/build.log" && fail "libtrainrt_torch was built with TRAINRT_WITH_TORCH=OFF"
[ ! -e "$build/lib/libtrainrt_torch.so" ] || fail "libtrainrt_torch.so exists in the build without LibTorch"
[ ! -e "$build/lib/libtrainrt_python.so" ] || fail "libtrainrt_python.so exists in the build without Python"
"$build/trainrt" --version | grep -q 'CUDA/NCCL: no; LibTorch: no; Python: no)$' && pass "trainrt --version: $("$build/trainrt" --version)" || fail "version: $("$build/trainrt" --version)"
"$build/tests/unit_tests" >"$WORK/unit.log" 2>&1 && pass "unit tests pass in the no-CUDA build" \
  || { grep -B 4 -A 12 -E 'FAILED|with expansion' "$WORK/unit.log" | head -80; tail -4 "$WORK/unit.log"; fail "unit tests"; }
code=0
"$build/trainrt" --config jobs/fashion_mlp.ini --scaling.use_gpu=true --run.storage_path="$WORK/gpu" 2>"$WORK/gpu.err" || code=$?
[ "$code" -eq 2 ] && [ "$(grep -c . "$WORK/gpu.err")" -eq 1 ] && grep -q "needs a trainrt built with CUDA and NCCL" "$WORK/gpu.err" \
  && pass "use_gpu = true refused: $(cat "$WORK/gpu.err")" || fail "use_gpu refusal: exit $code, $(cat "$WORK/gpu.err")"
code=0
"$build/trainrt" --config jobs/fashion_mlp.ini --run.workload=torch_fashion_mlp --run.storage_path="$WORK/torch" 2>"$WORK/torch.err" || code=$?
[ "$code" -eq 2 ] && [ "$(grep -c . "$WORK/torch.err")" -eq 1 ] && grep -q "LibTorch component, which this trainrt was built without" "$WORK/torch.err" \
  && [ ! -e "$WORK/torch" ] && pass "a LibTorch workload refused: $(cat "$WORK/torch.err")" || fail "torch workload refusal: exit $code, $(cat "$WORK/torch.err")"
code=0
"$build/trainrt" --config jobs/fashion_mlp.ini --run.workload=python:examples/python/numpy_softmax.py:train_func \
  --run.storage_path="$WORK/python" 2>"$WORK/python.err" || code=$?
[ "$code" -eq 2 ] && [ "$(grep -c . "$WORK/python.err")" -eq 1 ] && grep -q "Python component, which this trainrt was built without" "$WORK/python.err" \
  && [ ! -e "$WORK/python" ] && pass "a Python workload refused: $(cat "$WORK/python.err")" || fail "python workload refusal: exit $code, $(cat "$WORK/python.err")"
# A LibTorch plugin against an install without the component: find_package says so at configure.
cmake --install "$build" --prefix "$WORK/prefix" >"$WORK/install.log" 2>&1 || { tail "$WORK/install.log"; fail "install of the no-LibTorch build"; }
code=0
env -u CMAKE_PREFIX_PATH cmake -S "$WORK/prefix/share/trainrt/examples/torch_model" -B "$WORK/torch_example" \
  -DCMAKE_PREFIX_PATH="$WORK/prefix" >"$WORK/torch_example.log" 2>&1 || code=$?
[ "$code" -ne 0 ] && grep -q "this trainrt was built without its LibTorch component" "$WORK/torch_example.log" \
  && pass "a LibTorch plugin cannot be configured against an install without LibTorch" \
  || { tail "$WORK/torch_example.log"; fail "LibTorch plugin against a no-LibTorch install: cmake exit $code"; }
args=(--config jobs/fashion_mlp.ini --train.epochs=1 --train.batch_size=256 --run.storage_path="$WORK")
mpiexec -n 2 "$build/trainrt" "${args[@]}" --run.name=nocuda >"$WORK/nocuda.out" 2>&1
mpiexec -n 2 "$TRAINRT" "${args[@]}" --run.name=cuda >"$WORK/cuda.out" 2>&1
a=$(sed -n 's/^weights_digest=//p' "$WORK/nocuda.out"); b=$(sed -n 's/^weights_digest=//p' "$WORK/cuda.out")
[ -n "$a" ] && [ "$a" = "$b" ] && pass "same CPU training digest in both builds ($a)" || fail "digests '$a' (no CUDA) vs '$b'"
finish
