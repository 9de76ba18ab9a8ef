#!/usr/bin/env bash
# Installs what trainrt needs on this machine (make deps):
#   bash tools/deps.sh         everything: Debian's packages, the project's Python environment, the
#                              tests' user environment, Ray's environment for the benchmarks
#   bash tools/deps.sh core    what building and running trainrt's core needs (make demo): the
#                              Debian packages above '#@ tests' in tools/packages.txt
# Idempotent: a machine that has it all makes no apt call and no network call at all.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=${1:-all}
[[ $mode == all || $mode == core ]] || { echo "deps: unknown mode '$mode' (all, core)" >&2; exit 2; }
list=$(if [[ $mode == core ]]; then sed '/^#@ tests/,$d' "$here/packages.txt"; else cat "$here/packages.txt"; fi)
mapfile -t wanted < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' <<<"$list")
missing=()
for pkg in "${wanted[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
sudo_cmd=()
[[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "deps: all ${#wanted[@]} packages installed"
else
  echo "deps: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

[[ $mode == all ]] || exit 0

# Environment Modules (Debian's environment-modules) conflicts with lmod as a package, and the
# tests load trainrt's module files with both: its .deb is unpacked (not installed) here, and the
# tests run its modulecmd.tcl with tclsh, as its own init script does.
EM_DIR=${TRAINRT_EM_DIR:-/opt/trainrt-deps/environment-modules}
if [[ ! -r $EM_DIR/usr/lib/x86_64-linux-gnu/modulecmd.tcl ]]; then
  echo "deps: unpacking Debian's environment-modules into $EM_DIR"
  work=$(mktemp -d)
  chmod 0777 "$work"   # apt-get download runs as _apt
  (cd "$work" && apt-get download -q environment-modules) ||
    { "${sudo_cmd[@]}" apt-get update -q && (cd "$work" && apt-get download -q environment-modules); }
  "${sudo_cmd[@]}" mkdir -p "$EM_DIR"
  "${sudo_cmd[@]}" dpkg-deb -x "$work"/environment-modules_*.deb "$EM_DIR"
  rm -rf "$work"
fi

# venv_from_requirements DIR PYTHON REQUIREMENTS [ENV...]: a virtual environment made by PYTHON
# holding REQUIREMENTS (pinned, with hashes; ENV: variables for the install, for packages built from
# source). Idempotent: a venv whose stamp equals the requirements' hash is left alone, with no
# network call.
venv_from_requirements() {
  local dir=$1 python=$2 req=$3 want
  shift 3
  want=$(sha256sum "$req" | cut -d' ' -f1)
  if [[ -x $dir/bin/python3 && "$(cat "$dir/.trainrt-requirements" 2>/dev/null)" == "$want" ]]; then
    echo "deps: $dir matches tools/$(basename "$req")"
    return
  fi
  echo "deps: installing tools/$(basename "$req") into $dir (PyTorch with its CUDA libraries: ~4 GB once)"
  [[ -x $dir/bin/python3 ]] || "$python" -m venv "$dir"
  env "$@" "$dir/bin/pip" install -q --disable-pip-version-check --require-hashes --no-deps -r "$req"
  "$dir/bin/python3" -c 'import torch, numpy' ||
    { echo "deps: the Python stack in $dir does not import (see above)" >&2; exit 1; }
  echo "$want" > "$dir/.trainrt-requirements"
}

# The project's Python stack from PyPI (tools/requirements.txt), in one virtual environment made
# from Debian's /usr/bin/python3 (the interpreter trainrt embeds; its libpython3.11 comes with
# python3-dev). It holds PyTorch 2.x (PyPI's Linux wheel, CUDA libraries included), whose libtorch
# the LibTorch component builds against. h5py is built from source against Debian's parallel HDF5
# (libhdf5_mpich) with MPICH's compiler: PyPI's h5py wheel bundles a serial HDF5 that must never
# meet trainrt's in one process.
VENV=${TRAINRT_VENV:-/opt/trainrt-deps/venv}
venv_from_requirements "$VENV" /usr/bin/python3 "$here/requirements.txt" \
  HDF5_DIR=/usr/lib/x86_64-linux-gnu/hdf5/mpich CC=mpicc HDF5_MPI=OFF
"$VENV/bin/python3" -c 'import pandas, xgboost, optuna, h5py' ||
  { echo "deps: the Python stack in $VENV does not import (see above)" >&2; exit 1; }
# DeepSpeed on CPU ranks loads its shared-memory communication op, which it compiles on first use
# (JIT, into torch's extensions cache, ~/.cache/torch_extensions, minutes on 2 cores): compiled here
# once, so that no test and no first job pays it. Idempotent: a built op is loaded, not rebuilt.
"$VENV/bin/python3" - <<'PY' || { echo "deps: DeepSpeed's CPU communication op did not build (see above)" >&2; exit 1; }
from deepspeed.accelerator import get_accelerator
builder = get_accelerator().create_op_builder("ShareMemCommBuilder")
if builder is not None:
    builder.load(verbose=False)
PY

# A user's own environment for the tests (tests/python/*user_env*): another CPython minor version
# (3.12, pyenv's where there is no other) and another torch than the project's
# (tools/requirements-user-py312.txt), into which the tests build trainrt's package as a user does.
py312=""
for candidate in "$(command -v python3.12 || true)" $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3.12 2>/dev/null); do
  if [[ -n $candidate ]] && "$candidate" -c 'import sys' 2>/dev/null; then py312=$candidate; break; fi
done
[[ -n $py312 ]] || { echo "deps: no CPython 3.12 (python3.12 on PATH or pyenv's) for the user-environment tests" >&2; exit 1; }
venv_from_requirements "${TRAINRT_USER_ENV:-/opt/trainrt-deps/user-py312}" "$py312" "$here/requirements-user-py312.txt"

# Ray Train and Tune beside trainrt, for the benchmarks and conformance runs only (its own venv).
bash "$here/../bench/ray/make_venv.sh"
