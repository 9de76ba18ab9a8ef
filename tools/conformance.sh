#!/usr/bin/env bash
# make conformance: Ray's own examples run under Ray (the reference, stored in
# tests/conformance/ray_reference.json), and the framework guides' scripts (tests/python/*_guide.py)
# under Ray (tests/conformance/ray_guides.json, which the framework tests compare their trainrt runs
# with); then Ray's examples under trainrt after the port, every one of them,
# writing the outcome table into docs/reference/ray-conformance.md and the counts into
# tests/conformance/trainrt_summary.json (make bench shows them in BENCHMARKS.md). `make test` runs the trainrt
# half of the examples expected to conform against the stored reference, without Ray running.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
source bench/lib/machine.sh
PY=$(build_python "$BUILD") || { echo "conformance: no project Python for $BUILD (make build)" >&2; exit 1; }
RAY_PY=${TRAINRT_RAY_VENV:-/opt/trainrt-deps/ray-venv}/bin/python
[ -x "$RAY_PY" ] || { echo "conformance: no Ray venv at $RAY_PY: make deps makes it" >&2; exit 1; }
[ -d data/fashion-mnist-6k-idx ] ||
  { echo "conformance: data/fashion-mnist-6k-idx missing: make test makes it (its small_data fixture)" >&2; exit 1; }
if [ "${CONFORMANCE_SKIP_RAY:-0}" != 1 ]; then
  "$PY" tests/conformance/ray_examples.py ray --python "$RAY_PY" --fashion-idx data/fashion-mnist-6k-idx \
    --out tests/conformance/ray_reference.json
  "$PY" tests/conformance/ray_guides.py ray --python "$RAY_PY" --data data/fashion-mnist-6k-idx \
    --out tests/conformance/ray_guides.json
fi
PYTHONPATH="$PWD/$BUILD/lib/trainrt/python" "$PY" tests/conformance/ray_examples.py trainrt --python "$PY" \
  --ray-python "$RAY_PY" --fashion-idx data/fashion-mnist-6k-idx --reference tests/conformance/ray_reference.json \
  --table docs/reference/ray-conformance.md --summary tests/conformance/trainrt_summary.json
