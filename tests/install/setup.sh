#!/usr/bin/env bash
# ctest fixture `trainrt_installed`: installs this build with `cmake --install` into
# $TRAINRT_BUILD/test-install/prefix, then builds the installed example (share/trainrt/examples/
# regression) out of tree against it with find_package(trainrt), into .../example.
set -euo pipefail
: "${TRAINRT_BUILD:?run through ctest}"
root=$TRAINRT_BUILD/test-install
rm -rf "$root"
mkdir -p "$root"
cmake --install "$TRAINRT_BUILD" --prefix "$root/prefix" >"$root/install.log" 2>&1 \
  || { cat "$root/install.log" >&2; echo "FAIL: cmake --install" >&2; exit 1; }
# The examples compile through ccache when this build does (as a user's build would not; the
# cache key is the same from any clone: paths relative to $root).
launcher=()
if grep -q '^TRAINRT_CCACHE:BOOL=ON' "$TRAINRT_BUILD/CMakeCache.txt" && command -v ccache >/dev/null; then
  launcher=("-DCMAKE_CXX_COMPILER_LAUNCHER=env;CCACHE_BASEDIR=$root;CCACHE_NOHASHDIR=1;ccache")
fi
example=$root/prefix/share/trainrt/examples/regression
[ -f "$example/CMakeLists.txt" ] || { echo "FAIL: the example is not installed under $example" >&2; exit 1; }
# A clean environment for the out-of-tree build: nothing from the source tree on any path.
env -u CMAKE_PREFIX_PATH cmake -S "$example" -B "$root/example" -DCMAKE_PREFIX_PATH="$root/prefix" \
  -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >"$root/example-configure.log" 2>&1 \
  || { cat "$root/example-configure.log" >&2; echo "FAIL: configuring the example against the install" >&2; exit 1; }
cmake --build "$root/example" -j 2 >"$root/example-build.log" 2>&1 \
  || { cat "$root/example-build.log" >&2; echo "FAIL: building the example against the install" >&2; exit 1; }
echo "installed into $root/prefix; example built in $root/example"
# With the LibTorch component installed, its example too (examples/torch_model, COMPONENTS torch).
if [ -f "$root/prefix/lib/cmake/trainrt/trainrtTorchTargets.cmake" ]; then
  torch_example=$root/prefix/share/trainrt/examples/torch_model
  env -u CMAKE_PREFIX_PATH cmake -S "$torch_example" -B "$root/torch_example" -DCMAKE_PREFIX_PATH="$root/prefix" \
    -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >"$root/torch-example-configure.log" 2>&1 \
    || { cat "$root/torch-example-configure.log" >&2; echo "FAIL: configuring the LibTorch example against the install" >&2; exit 1; }
  cmake --build "$root/torch_example" -j 2 >"$root/torch-example-build.log" 2>&1 \
    || { cat "$root/torch-example-build.log" >&2; echo "FAIL: building the LibTorch example against the install" >&2; exit 1; }
  echo "LibTorch example built in $root/torch_example"
fi
