#!/usr/bin/env bash
# Builds trainrt's Python component on the GPU machine, for that machine's Python and PyTorch
# (bench/gpu/README.md): the bundle brings libtrainrt built here, but our Python component is
# built for Debian's Python 3.11 and the GPU machine's CUDA PyTorch runs on its own Python.
#
#   bash bench/gpu/build_python_on_gpu.sh BUILD UNPACKED_BUNDLE
#
# Makes, as CMake's python.cmake does here: BUILD/lib/libtrainrt_python.so.<version> (the
# `python:` workload, embedding that Python) and BUILD/lib/trainrt/python/trainrt/ (the package:
# python/trainrt/*.py and the _trainrt extension). Needs g++, that Python's headers and its
# libpython, and pybind11 (the machine's pip one).
set -euo pipefail
source "$(dirname "$0")/component_build.sh" "$@"
py() { "$PYTHON" -c "import sysconfig; print(sysconfig.get_config_var('$1') or '')"; }
PY_INCLUDE=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
[[ -r $PY_INCLUDE/Python.h ]] || die "no Python.h in $PY_INCLUDE (this Python's headers)"
PYBIND_INCLUDE=${PYBIND_INCLUDE:-$("$PYTHON" -c 'import pybind11; print(pybind11.get_include())')} ||
  die "no pybind11 for $PYTHON"
LIBPYTHON=$(py LIBDIR)/$(py LDLIBRARY)
[[ -e $LIBPYTHON ]] || LIBPYTHON=$(ls "$(py LIBDIR)"/libpython3*.so* 2>/dev/null | head -1)
[[ -e $LIBPYTHON ]] || die "no libpython for $("$PYTHON" --version) (the embedding links it)"
EXT=$(py EXT_SUFFIX)
SONAME=$(soname_of libtrainrt_python)
echo "python: $("$PYTHON" --version) headers $PY_INCLUDE, libpython $LIBPYTHON, pybind11 $PYBIND_INCLUDE, g++ $(g++ -dumpfullversion)"

FLAGS=(-std=c++20 -O2 -DNDEBUG -fPIC -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
       -DFMT_SHARED -DTRAINRT_EMBED_PYTHON="\"$("$PYTHON" -c 'import sys; print(sys.executable)')\"" -I"$REPO/include" -I"$BUILD/generated" -I"$REPO/src"
       -isystem "$UNPACKED/include" -isystem "$PY_INCLUDE" -isystem "$PYBIND_INCLUDE")
LIBS=("$BUILD/lib/libtrainrt.so" "$UNPACKED/lib/libfmt.so.9")
package=$BUILD/lib/trainrt/python/trainrt
mkdir -p "$package"
EXTRA=-fvisibility=hidden compile "$REPO"/src/python/module/*.cpp
g++ -shared -o "$package/_trainrt$EXT" "$objects"/module_*.o "${LIBS[@]}" -Wl,-rpath,'$ORIGIN/../../..'
compile "$REPO"/src/python/embed/*.cpp
g++ -shared -Wl,-soname,"$SONAME" -o "$BUILD/lib/libtrainrt_python.so.$VERSION" "$objects"/embed_*.o "${LIBS[@]}" \
  "$LIBPYTHON" -ldl -Wl,-rpath,'$ORIGIN'
link_names libtrainrt_python
cp "$REPO"/python/trainrt/*.py "$package/"
# What python.cmake writes: the Python these libraries were built for, and no torch backend
# (scaling.backend = trainrt needs the torch module, which only CMake builds; GPU runs use NCCL).
printf '# Written by bench/gpu/build_python_on_gpu.sh.\nPYTHON = "%s"\nTORCH = ""\nTRAINRT = "%s"\n' \
  "$("$PYTHON" -c 'import platform; print(platform.python_version())')" "$VERSION" >"$package/_build_info.py"
echo "built $BUILD/lib/$SONAME and $package/_trainrt$EXT"
