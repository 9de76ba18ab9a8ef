#!/usr/bin/env bash
# Ray's own examples (from the Ray package `make deps` installs beside trainrt) after the documented
# port, under trainrt, against Ray's runs of the same examples stored in
# tests/conformance/ray_reference.json (`make conformance` reruns Ray and regenerates it and the
# docs' table). Fails when an example the harness lists as conforming (CONFORMS) does not run or
# reports other trials, iterations, metric names or checkpoints than under Ray; the docs give the
# same port command as the harness.
# ctest: processors=1
# ctest: fixture=small_data
# ctest: timeout=1500
source "$(dirname "$0")/../lib/common.sh"
RAY_PY=${TRAINRT_RAY_VENV:-/opt/trainrt-deps/ray-venv}/bin/python
[ -x "$RAY_PY" ] || { echo "FAIL: no Ray venv at $RAY_PY: make deps makes it (bench/ray/make_venv.sh)" >&2; exit 1; }
port=$("$TRAINRT_PYTHON" -c 'import sys; sys.path.insert(0, "tests/conformance"); import ray_examples as r
print(" ".join("'"'"'" + a + "'"'"'" if a.startswith("s/") else a for a in r.PORT))')
grep -qF -- "$port" docs/guides/coming-from-ray.md && pass "the docs give the harness's port: $port" ||
  fail "docs/guides/coming-from-ray.md does not give the harness's port: $port"
export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python"
rc=0
"$TRAINRT_PYTHON" tests/conformance/ray_examples.py trainrt --python "$TRAINRT_PYTHON" --ray-python "$RAY_PY" \
  --fashion-idx "$SMALL_IDX" --reference tests/conformance/ray_reference.json --conforming-only \
  >"$WORK/conformance.out" 2>&1 || rc=$?
cat "$WORK/conformance.out"
[ "$rc" -eq 0 ] && pass "$(tail -1 "$WORK/conformance.out")" || fail "the examples expected to run as under Ray did not (above)"
finish
