#!/usr/bin/env bash
# ctest fixture `user_environment`: trainrt's Python package built for a user's own environment
# of another Python minor version and another torch than trainrt's (CPython 3.12 and torch 2.12:
# /opt/trainrt-deps/user-py312, made by `make deps` from tools/requirements-user-py312.txt), as the
# docs tell a user to: `pip install --no-build-isolation $TRAINRT_ROOT/share/trainrt/python`, from
# the install of the trainrt_installed fixture. Reinstalled each run (the environment is the tests').
source "$(dirname "$0")/../lib/common.sh"
ENVB=${TRAINRT_USER_ENV:-/opt/trainrt-deps/user-py312}
INSTALLED=$TRAINRT_BUILD/test-install/prefix
[ -x "$ENVB/bin/python3" ] || { fail "$ENVB missing (make deps makes it)"; finish; }
[ -f "$INSTALLED/share/trainrt/python/pyproject.toml" ] || { fail "$INSTALLED/share/trainrt/python not installed"; finish; }
# Built from a copy of the install at one path for every checkout (the install is relocatable), so
# that ccache finds the objects a fresh clone's earlier run compiled: its keys hold the sources' and
# headers' paths. One ctest run at a time uses this path; the environment is the tests' anyway.
PREFIX=${TRAINRT_USER_ENV_ROOT:-/tmp/trainrt-user-env/prefix}
rm -rf "$PREFIX" && mkdir -p "$(dirname "$PREFIX")" && cp -a "$INSTALLED" "$PREFIX" \
  || { fail "copying $INSTALLED to $PREFIX"; finish; }
# Compiles through ccache when this build does (CMake reads the launcher from the environment).
launcher=()
if grep -q '^TRAINRT_CCACHE:BOOL=ON' "$TRAINRT_BUILD/CMakeCache.txt" && command -v ccache >/dev/null; then
  launcher=(CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR=/tmp CCACHE_NOHASHDIR=1)
fi
start=$SECONDS
if env "${launcher[@]}" TRAINRT_BUILD_JOBS=2 TRAINRT_ROOT="$PREFIX" \
   "$ENVB/bin/pip" install -q --no-build-isolation --no-deps --force-reinstall "$PREFIX/share/trainrt/python" \
   >"$WORK/pip.out" 2>&1; then
  pass "pip install --no-build-isolation \$TRAINRT_ROOT/share/trainrt/python in $ENVB: $((SECONDS - start)) s"
else
  tail -30 "$WORK/pip.out" >&2
  fail "building trainrt's package for $ENVB"
fi
"$ENVB/bin/python3" - <<'PY' && pass "built for $("$ENVB/bin/python3" -c 'import trainrt._build_info as b; print(f"CPython {b.PYTHON}, torch {b.TORCH}")')" || fail "the build's files"
import os, sys, sysconfig
import trainrt._build_info as info
site = sysconfig.get_paths()["purelib"]
folder = os.path.join(site, "trainrt")
names = os.listdir(folder)
assert info.PYTHON.startswith(f"{sys.version_info.major}.{sys.version_info.minor}."), info.PYTHON
import torch
assert info.TORCH == torch.__version__.split("+")[0], (info.TORCH, torch.__version__)
for wanted in ("libtrainrt_python.so.0.1", "libtrainrt_torch.so.0.1"):
    assert wanted in names, (wanted, names)
assert any(n.startswith("_trainrt.cpython-") for n in names) and any(n.startswith("_trainrt_torch.cpython-") for n in names), names
assert os.path.exists(os.path.join(site, "trainrt-environment-first.pth"))
PY
finish
