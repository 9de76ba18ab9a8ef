#!/usr/bin/env bash
# Makes the Ray Train / Ray Tune venv for the comparison runs in bench/ray/ (default
# /opt/trainrt-deps/ray-venv; TRAINRT_RAY_VENV overrides it), from Debian's /usr/bin/python3 and
# tools/requirements-ray.txt (pinned, with hashes). PyTorch is not installed twice: a .pth file in
# the ray venv's site-packages appends the project venv's site-packages (tools/deps.sh, default
# /opt/trainrt-deps/venv; TRAINRT_VENV overrides it) to sys.path, after the ray venv's own
# packages, so Ray's pins win and torch comes from the project venv.
# Idempotent: a venv whose stamp equals the requirements' sha256 makes no network call.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
RAY_VENV=${TRAINRT_RAY_VENV:-/opt/trainrt-deps/ray-venv}
PROJECT_VENV=${TRAINRT_VENV:-/opt/trainrt-deps/venv}
req=$root/tools/requirements-ray.txt
want=$(sha256sum "$req" | cut -d' ' -f1)

[[ -r $PROJECT_VENV/.trainrt-requirements ]] ||
  { echo "ray-venv: the project venv $PROJECT_VENV is not ready: run tools/deps.sh first" >&2; exit 1; }
project_sp=$("$PROJECT_VENV/bin/python3" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')

if [[ -x $RAY_VENV/bin/python3 && "$(cat "$RAY_VENV/.trainrt-ray-requirements" 2>/dev/null)" == "$want" ]]; then
  echo "ray-venv: $RAY_VENV matches tools/requirements-ray.txt"
else
  echo "ray-venv: installing tools/requirements-ray.txt into $RAY_VENV (~80 MB download, ~630 MB on disk)"
  [[ -x $RAY_VENV/bin/python3 ]] || /usr/bin/python3 -m venv "$RAY_VENV"
  "$RAY_VENV/bin/pip" install -q --disable-pip-version-check --require-hashes --no-deps -r "$req"
  rm -f "$RAY_VENV/.trainrt-ray-requirements"   # written below, once it imports
fi

# Rewritten every time (no network): follows TRAINRT_VENV. A plain path line in a .pth file is
# appended to sys.path after the directory that holds it.
ray_sp=$("$RAY_VENV/bin/python3" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
echo "$project_sp" > "$ray_sp/zz-trainrt-project-venv.pth"

if [[ ! -e $RAY_VENV/.trainrt-ray-requirements ]]; then
  "$RAY_VENV/bin/python3" -c 'import ray, ray.train.torch, torch' ||
    { echo "ray-venv: ray + the project's torch do not import in $RAY_VENV (see above)" >&2; exit 1; }
  echo "$want" > "$RAY_VENV/.trainrt-ray-requirements"
fi
