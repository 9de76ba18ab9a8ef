#!/usr/bin/env bash
# ctest fixture `small_data`: data/fashion-mnist-6k.h5, the first 6000 training and 1000 test
# images of Debian's FashionMNIST (data/fashion-mnist.h5, which `make test` imports first), cut
# with numpy and imported like any user's arrays (`trainrt data import npy`); and the same images
# as gzipped IDX files in data/fashion-mnist-6k-idx/ for the Python example, which reads IDX. Tests that train
# many short runs (kills at every checkpoint phase, stop and resume) use it: the same code paths
# on a tenth of the samples. Made once; kept while its source is unchanged.
source "$(dirname "$0")/common.sh"
require_data
SMALL=$TRAINRT_SRC/data/fashion-mnist-6k.h5
SMALL_IDX=$TRAINRT_SRC/data/fashion-mnist-6k-idx
# The project environment's Python (numpy, h5py): TRAINRT_PYTHON, set by ctest (tests/CMakeLists.txt).
if [ -f "$SMALL" ] && [ "$SMALL" -nt "$DATA" ] && "$TRAINRT" data info "$SMALL" >/dev/null 2>&1 \
   && [ -f "$SMALL_IDX/t10k-labels-idx1-ubyte.gz" ]; then
  pass "$SMALL is there"
  finish
  exit 0
fi
"$TRAINRT_PYTHON" - "$DATA" "$WORK" <<'PY' || { fail "cutting $DATA with numpy"; finish; }
import sys, h5py, numpy as np
source, out = sys.argv[1], sys.argv[2]
with h5py.File(source, "r") as f:
    for split, rows in (("train", 6000), ("test", 1000)):
        np.savez(f"{out}/{split}.npz", images=f[f"{split}/images"][:rows], labels=f[f"{split}/labels"][:rows])
PY
"$TRAINRT" data import npy "$WORK/train.npz" "$WORK/test.npz" --split "train=$WORK/train.npz,test=$WORK/test.npz" \
  --features images --label labels --name fashion-mnist-6k --out "$SMALL" >"$WORK/import.out" 2>&1 \
  && pass "$(cat "$WORK/import.out")" || { cat "$WORK/import.out" >&2; fail "importing the small dataset"; }
# IDX: a big-endian header (magic, one count per dimension), then the bytes; only the first count
# changes when the files are cut.
mkdir -p "$SMALL_IDX.tmp"
"$TRAINRT_PYTHON" - "${FASHION_IDX_DIR:-/usr/share/datasets/fashion-mnist}" "$SMALL_IDX.tmp" <<'PY' || fail "cutting the IDX files"
import gzip, struct, sys
source, out = sys.argv[1], sys.argv[2]
for prefix, rows in (("train", 6000), ("t10k", 1000)):
    for kind in ("images-idx3", "labels-idx1"):
        name = f"{prefix}-{kind}-ubyte.gz"
        data = gzip.open(f"{source}/{name}").read()
        ndim = data[3]
        dims = struct.unpack(f">{ndim}I", data[4:4 + 4 * ndim])
        per_row = 1
        for d in dims[1:]:
            per_row *= d
        header = data[:4] + struct.pack(f">{ndim}I", rows, *dims[1:])
        body = data[4 + 4 * ndim:4 + 4 * ndim + rows * per_row]
        with gzip.open(f"{out}/{name}", "wb") as f:
            f.write(header + body)
PY
rm -rf "$SMALL_IDX" && mv "$SMALL_IDX.tmp" "$SMALL_IDX" && pass "$SMALL_IDX: 6000 + 1000 images as IDX"
finish
