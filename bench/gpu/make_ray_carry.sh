#!/usr/bin/env bash
# Ray Train for the GPU machine (bench/gpu/README.md, stage raybench), made here: that machine
# reaches no package index, and its Python (3.12) has PyTorch and most of Ray's needs but not Ray.
#
#   bash bench/gpu/make_ray_carry.sh [OUT_DIR]     # -> OUT_DIR/ray-site.tar.xz (default .ray)
#
# Installs, for CPython 3.12 on manylinux x86-64 and without dependencies, the pinned Ray of
# tools/requirements-ray.txt and those of its needs the GPU machine's image lacks (its package list:
# /work/.library/device/KINDS.md), at the same pins, into one folder, and packs it. Ray's Java
# jars and the dashboard's source maps are left out: a Python TorchTrainer uses neither, and the
# device tool carries at most 64 MiB a call (this file is about 40 MB: the data cannot travel
# with it, and the Ray stage uses the bundle an earlier call on the same machine unpacked).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT_DIR=${1:-$REPO/.ray}
PIP=${PIP:-/opt/trainrt-deps/venv/bin/python -m pip}
NEEDS=(ray jsonschema jsonschema-specifications referencing rpds-py pydantic pydantic-core annotated-types
       typing-inspection tensorboardx)
pins=()
for name in "${NEEDS[@]}"; do
  pin=$(grep -m1 -i "^$name==" "$REPO/tools/requirements-ray.txt" | cut -d' ' -f1) ||
    { echo "make_ray_carry: $name is not pinned in tools/requirements-ray.txt" >&2; exit 1; }
  pins+=("$pin")
done
site=$(mktemp -d)
trap 'rm -rf "$site"' EXIT
$PIP install -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
  --target "$site" "${pins[@]}"
rm -rf "$site/ray/jars" "$site/bin"
find "$site/ray/dashboard" -name '*.map' -delete
mkdir -p "$OUT_DIR"
tar -C "$site" -cf - . | xz -T2 -6 >"$OUT_DIR/ray-site.tar.xz"
echo "make_ray_carry: $OUT_DIR/ray-site.tar.xz ($(du -h "$OUT_DIR/ray-site.tar.xz" | cut -f1)): ${pins[*]}"
