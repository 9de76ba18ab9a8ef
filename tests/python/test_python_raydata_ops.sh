#!/usr/bin/env bash
# Ray Data's dataset operations (tests/conformance/raydata_ops.py: constructors, readers of CSV,
# Parquet, JSON Lines and .npy files, transforms, splits, consumers) after the port's sed, under
# trainrt: every operation gives what Ray gave for the same script (tests/conformance/raydata_ops.json,
# stored from Ray's run of it as written).
source "$(dirname "$0")/../lib/common.sh"
export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python"
sed -e 's/\bray\b/trainrt/g' tests/conformance/raydata_ops.py >"$WORK/raydata_ops.py"
grep -qE '\bray\b' "$WORK/raydata_ops.py" && fail "the sed left a ray name"
rc=0; (cd "$WORK" && timeout -k 10 120 "$TRAINRT_PYTHON" raydata_ops.py "$WORK/ours.json") >"$WORK/ops.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || { tail -20 "$WORK/ops.out" >&2; fail "the ported script exits $rc"; finish; }
"$TRAINRT_PYTHON" - tests/conformance/raydata_ops.json "$WORK/ours.json" <<'PY' >"$WORK/compare.out" 2>&1 \
  && pass "$(cat "$WORK/compare.out")" || { cat "$WORK/compare.out" >&2; fail "operations differ from Ray's"; }
import json, sys
ray, ours = (json.load(open(path)) for path in sys.argv[1:3])
differ = [key for key in sorted(set(ray) | set(ours)) if ray.get(key) != ours.get(key)]
for key in differ:
    print(f"{key}: trainrt {json.dumps(ours.get(key))[:200]} where Ray has {json.dumps(ray.get(key))[:200]}")
if differ:
    sys.exit(1)
print(f"{len(ray)} operations give what Ray gave: {', '.join(sorted(ray))}")
PY
finish
