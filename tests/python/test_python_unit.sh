#!/usr/bin/env bash
# The Python package's unit tests (pytest, tests/python/unit/): its pure parts (trainrt.tune's
# search-space text, ResultGrid over a sweep report, Result.from_path through C++'s run-directory
# layout, the directory checkpoint's listing), against the build's package and extension.
# ctest: processors=1
source "$(dirname "$0")/../lib/common.sh"
export PYTHONPATH="$TRAINRT_BUILD/lib/trainrt/python"
rc=0
"$TRAINRT_PYTHON" -m pytest -q -p no:cacheprovider tests/python/unit >"$WORK/pytest.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && pass "pytest: $(tail -1 "$WORK/pytest.out")" || { tail -40 "$WORK/pytest.out" >&2; fail "pytest exits $rc"; }
finish
