# shellcheck shell=bash
# Helpers for the data suite's import tests (sourced by tests/data/test_import_*.sh): running
# `trainrt data import`, checking refusals (exit code, one stderr line, nothing written) and
# checking the written HDF5 with Debian's Python (numpy, h5py; not whatever python3 is on PATH).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

PY="$TRAINRT_PYTHON"
"$PY" -c 'import numpy, h5py' 2>/dev/null ||
  { echo "FAIL: $PY cannot import numpy and h5py (Debian's python3-numpy, python3-h5py)" >&2; exit 1; }
mkdir -p "$WORK/in" "$WORK/bad"

# import_ok NAME ARGS...: `trainrt data import ARGS` must succeed with nothing on stderr; its
# stdout is kept in $WORK/NAME.out. Returns 1 (after fail) otherwise: use it in `if` or `&&`.
import_ok() {
  local name=$1 rc=0; shift
  "$TRAINRT" data import "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
  if [ "$rc" -ne 0 ]; then
    fail "$name: 'trainrt data import $*' exited $rc: $(cat "$WORK/$name.err")"; return 1
  fi
  if [ -s "$WORK/$name.err" ]; then fail "$name: stderr not empty: $(cat "$WORK/$name.err")"; return 1; fi
  return 0
}

# nlines FILE: its lines, counting a last line without a newline.
nlines() { awk 'END { print NR }' "$1"; }

# leftovers: temporary files (*.tmp.*) anywhere under $WORK.
leftovers() { find "$WORK" -name '*.tmp.*' | sort; }

# refused NAME CODE PATTERN ARGS...: `trainrt data ARGS --out $WORK/bad/NAME/out.h5` exits CODE
# with exactly one stderr line starting "trainrt: " and matching the ERE PATTERN, prints no
# summary, and writes nothing: $WORK/bad/NAME stays empty and no *.tmp.* file appears.
refused() {
  local name=$1 code=$2 pattern=$3 rc=0; shift 3
  local dir="$WORK/bad/$name" command="trainrt data $*"
  mkdir -p "$dir"
  "$TRAINRT" data "$@" --out "$dir/out.h5" >"$dir.out" 2>"$dir.err" || rc=$?
  local err; err=$(cat "$dir.err")
  local problems=()
  [ "$rc" -eq "$code" ] || problems+=("exit $rc, expected $code")
  [ "$(nlines "$dir.err")" -eq 1 ] || problems+=("$(nlines "$dir.err") stderr lines, expected 1")
  [[ "$err" == "[trainrt] error: "* ]] || problems+=("stderr does not start with '[trainrt] error: '")
  grep -qE -- "$pattern" "$dir.err" || problems+=("stderr lacks /$pattern/")
  [ ! -s "$dir.out" ] || problems+=("stdout: $(cat "$dir.out")")
  [ -z "$(ls -A "$dir")" ] || problems+=("wrote $(ls -A "$dir" | tr '\n' ' ')")
  [ -z "$(leftovers)" ] || problems+=("left $(leftovers | tr '\n' ' ')")
  find "$WORK" -name '*.tmp.*' -delete
  if [ "${#problems[@]}" -eq 0 ]; then
    pass "$name refused: $err"
  else
    local IFS=';'
    fail "$name: $command: ${problems[*]}; stderr: $err"
  fi
}

# pycheck NAME ARGS... <<'EOF' ... EOF: runs the Python on stdin with ARGS (and tcheck.py
# importable); passes when it exits 0, fails with its output otherwise.
pycheck() {
  local name=$1 out; shift
  if out=$(PYTHONPATH="$WORK" "$PY" - "$@" 2>&1); then pass "$name${out:+ ($out)}"; else fail "$name: $out"; fi
}

cat >"$WORK/tcheck.py" <<'EOF'
"""Checks for the data import tests: collect failures, report them all at exit (exit 1)."""
import atexit, json, math, os, sys
import numpy as np
import h5py

failures = []

def check(condition, message):
    if not condition:
        failures.append(message)
    return bool(condition)

@atexit.register
def _report():
    if failures:
        print("; ".join(failures), flush=True)
        os._exit(1)

def text(value):
    """An HDF5 string attribute as str (h5py gives bytes for fixed-length strings)."""
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]
    return value.decode() if isinstance(value, bytes) else str(value)

def expected_counts(fractions, n):
    """The documented rule: floor(fraction * N) rows each, the remainder one by one to the first splits."""
    counts = [math.floor(f * n) for f in fractions]
    i = 0
    while sum(counts) < n:
        counts[i % len(counts)] += 1
        i += 1
    return counts

def check_root(f, name, feature_column=None, label_column=None, source_contains=None):
    a = f.attrs
    check(text(a.get("format", "")) == "trainrt-dataset", f"{f.filename}: format {a.get('format')!r}")
    check(int(a.get("format_version", -1)) == 2, f"{f.filename}: format_version {a.get('format_version')!r}")
    check(text(a.get("name", "")) == name, f"{f.filename}: name {a.get('name')!r}, expected {name!r}")
    if source_contains is not None:
        check(source_contains in text(a.get("source", "")), f"{f.filename}: source {a.get('source')!r} "
              f"lacks {source_contains!r}")
    for key, want in (("feature_column", feature_column), ("label_column", label_column)):
        got = text(a[key]) if key in a else None
        check(got == want, f"{f.filename}: {key} {got!r}, expected {want!r}")

def check_stats(column, where):
    """mean/std attributes: per sample element over the split (population std)."""
    values = column[()].astype(np.float64).reshape(column.shape[0], -1)
    check(np.all(np.isfinite(values)), f"{where}: the statistics check needs finite values")
    if not check("mean" in column.attrs and "std" in column.attrs, f"{where}: no mean/std attributes"):
        return
    mean, std = np.asarray(column.attrs["mean"]), np.asarray(column.attrs["std"])
    check(mean.shape == std.shape == (values.shape[1],), f"{where}: mean/std shapes {mean.shape} {std.shape}")
    check(np.allclose(mean, values.mean(axis=0), rtol=1e-9, atol=1e-12),
          f"{where}: mean {mean[:4]} != {values.mean(axis=0)[:4]}")
    check(np.allclose(std, values.std(axis=0), rtol=1e-9, atol=1e-12),
          f"{where}: std {std[:4]} != {values.std(axis=0)[:4]}")

def check_table(path, X, y, names, label_name, label_dtype, num_classes, feature_dtype=np.float32,
                split="train", rows=None):
    """A CSV import's split holds exactly rows `rows` (default: all) of X and y, in this order."""
    with h5py.File(path, "r") as f:
        where = f"{path}:/{split}"
        if not check(split in f, f"{path}: no split {split}"):
            return
        g = f[split]
        if rows is not None:
            X, y = X[rows], (None if y is None else y[rows])
        check(int(g.attrs.get("count", -1)) == len(X), f"{where}: count {g.attrs.get('count')}, expected {len(X)}")
        F = g["features"]
        check(F.dtype == np.dtype(feature_dtype), f"{where}/features: dtype {F.dtype}, expected {feature_dtype}")
        check(F.shape == X.shape, f"{where}/features: shape {F.shape}, expected {X.shape}")
        if F.shape == X.shape:
            got = F[()]
            bad = np.argwhere(got != X.astype(feature_dtype))
            check(len(bad) == 0, f"{where}/features: {len(bad)} values differ, first at {bad[:1].tolist()}: "
                  f"{got[tuple(bad[0])] if len(bad) else ''} vs {X[tuple(bad[0])] if len(bad) else ''}")
        check(json.loads(text(F.attrs.get("names", "null"))) == names,
              f"{where}/features: names {F.attrs.get('names')!r}, expected {names}")
        check_stats(F, where + "/features")
        if y is None:
            check("label" not in g, f"{where}: a label column without --label")
            return
        if not check("label" in g, f"{where}: no label column"):
            return
        L = g["label"]
        check(L.dtype == np.dtype(label_dtype), f"{where}/label: dtype {L.dtype}, expected {label_dtype}")
        check(L.shape == (len(y),), f"{where}/label: shape {L.shape}, expected {(len(y),)}")
        if L.shape == (len(y),):
            check(np.array_equal(L[()], y.astype(label_dtype)) and np.array_equal(L[()].astype(np.float64), y),
                  f"{where}/label: values differ from the file's")
        check(text(L.attrs.get("name", "")) == label_name, f"{where}/label: name {L.attrs.get('name')!r}, "
              f"expected {label_name!r}")
        got_classes = int(L.attrs["num_classes"]) if "num_classes" in L.attrs else None
        check(got_classes == num_classes, f"{where}/label: num_classes {got_classes}, expected {num_classes}")
EOF
