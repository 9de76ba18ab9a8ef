#!/usr/bin/env bash
# The memory a streaming rank holds is bounded by its prefetch window (plus a shuffle window and
# fixed buffers), not by the dataset: a 256 MB split streamed in 1 MiB batches with
# prefetch_batches = 4, in every shuffle mode and compressed, grows the process's peak RSS by at
# most BOUND_MB, under a quarter of the dataset. Every sample is handed out once (bytes counted).
# ctest: processors=1
source "$(dirname "$0")/../lib/common.sh"
BENCH="$TRAINRT_BUILD/bench/stream_read_bench"
BOUND_MB=56  # measured up to 43 (blocks over gzip chunks: a window of 16 chunks staged + 16 MB of decompressed chunks)
ROWS=64000  # x: f32 [ROWS, 1024] = 256 MB, y: i64 [ROWS]

"$TRAINRT_PYTHON" - "$WORK" "$ROWS" <<'PY'
import sys, numpy as np
work, rows = sys.argv[1], int(sys.argv[2])
np.save(f"{work}/x.npy", np.random.default_rng(0).random((rows, 1024), dtype=np.float32))
np.save(f"{work}/y.npy", (np.arange(rows) % 10).astype(np.int64))
PY
"$TRAINRT" data import npy "$WORK/x.npy" "$WORK/y.npy" --out "$WORK/big.h5" >/dev/null
"$TRAINRT" data import npy "$WORK/x.npy" "$WORK/y.npy" --out "$WORK/big_gz.h5" --compress 1 >/dev/null
rm -f "$WORK/x.npy" "$WORK/y.npy"
size_mb=$(( $(stat -c %s "$WORK/big.h5") / 1048576 ))
[ "$size_mb" -ge $((4 * BOUND_MB)) ] && pass "dataset $size_mb MB, over 4x the bound of $BOUND_MB MB" \
  || fail "dataset only $size_mb MB"

expected=$((ROWS * (4096 + 8)))
for case in none:big global:big blocks:big none:big_gz blocks:big_gz; do
  shuffle=${case%:*} file=${case#*:}
  out=$("$BENCH" "$WORK/$file.h5" --batch 256 --prefetch 4 --shuffle "$shuffle") || { fail "$case: bench failed"; continue; }
  grown=$(jq -r '.peak_rss_mb - .rss_start_mb | floor' <<<"$out")
  bytes=$(jq -r .bytes <<<"$out")
  [ "$bytes" -eq "$expected" ] || fail "$case: $bytes bytes handed out, expected $expected"
  [ "$grown" -le "$BOUND_MB" ] && pass "$case: peak RSS grew $grown MB while streaming $size_mb MB" \
    || fail "$case: peak RSS grew $grown MB (bound $BOUND_MB MB): $out"
done
finish
