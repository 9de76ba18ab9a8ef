#!/usr/bin/env bash
# ctest fixture `small_data`: data/fashion-mnist-6k.h5, the first 6000 training and 1000 test
# images of Debian's FashionMNIST (data/fashion-mnist.h5, which `make test` imports first), cut
# with numpy and imported like any user's arrays (`trainrt data import npy`). Tests that train
# many short runs (kills at every checkpoint phase, stop and resume) use it: the same code paths
# on a tenth of the samples. Made once; kept while its source is unchanged.
source "$(dirname "$0")/common.sh"
require_data
SMALL=$TRAINRT_SRC/data/fashion-mnist-6k.h5
if [ -f "$SMALL" ] && [ "$SMALL" -nt "$DATA" ] && "$TRAINRT" data info "$SMALL" >/dev/null 2>&1; then
  pass "$SMALL is there"
  finish
  exit 0
fi
/usr/bin/python3 - "$DATA" "$WORK" <<'PY' || { fail "cutting $DATA with numpy"; finish; }
import sys, h5py, numpy as np
source, out = sys.argv[1], sys.argv[2]
with h5py.File(source, "r") as f:
    for split, rows in (("train", 6000), ("test", 1000)):
        np.savez(f"{out}/{split}.npz", images=f[f"{split}/images"][:rows], labels=f[f"{split}/labels"][:rows])
PY
"$TRAINRT" data import npy "$WORK/train.npz" "$WORK/test.npz" --split "train=$WORK/train.npz,test=$WORK/test.npz" \
  --features images --label labels --name fashion-mnist-6k --out "$SMALL" >"$WORK/import.out" 2>&1 \
  && pass "$(cat "$WORK/import.out")" || { cat "$WORK/import.out" >&2; fail "importing the small dataset"; }
finish
