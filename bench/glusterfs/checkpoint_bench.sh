#!/usr/bin/env bash
# The checkpoint bench (bench/checkpoint/checkpoint_bench.cpp: write, restore, async, local level) on a
# GlusterFS volume of this host (2 bricks on its disk, FUSE clients: tools/glusterfs_volume.sh):
# 1 rank through one client, then 2 ranks each through a client of its own (as on two nodes). The
# plain side of every ratio writes and reads the same volume. Results in bench/run.sh's form
# (checkpoint_n1.jsonl, checkpoint_n2.jsonl, machine.txt) under OUT_DIR, and OUT_DIR.md rendered
# by bench/reporting/render.py.
#
#   bash bench/glusterfs/checkpoint_bench.sh [OUT_DIR]     # root; make bench-glusterfs
#
# Environment: GLUSTER_BENCH_MIB (state per run, 1024), GLUSTER_BENCH_REPS (4), GLUSTER_BENCH_DIR
# (bricks and clients, /var/tmp/trainrt-glusterfs-bench: on the disk, not in memory), BUILD (build);
# OMP_NUM_THREADS 1 unless set, as `make bench` runs it.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
OUT=${1:-bench/results/glusterfs/checkpoint}
MIB=${GLUSTER_BENCH_MIB:-1024}
REPS=${GLUSTER_BENCH_REPS:-4}
DIR=${GLUSTER_BENCH_DIR:-/var/tmp/trainrt-glusterfs-bench}
BUILD=${BUILD:-build}
BENCH=$repo/$BUILD/bench/checkpoint_bench
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}  # as bench/run.sh
[ -x "$BENCH" ] || { echo "checkpoint_bench: $BENCH missing (make build)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "checkpoint_bench on GlusterFS: mounting needs root" >&2; exit 1; }
source tools/glusterfs_volume.sh
source bench/lib/machine.sh

rm -rf "$DIR"
trap 'gluster_down; rm -rf "$DIR"' EXIT
gluster_up "trainrt_bench_$$" "$DIR/gluster" "$DIR/client_a" "$DIR/client_b"
mkdir -p "$DIR/view" "$OUT"

echo "checkpoint_bench, 1 rank, through client a ($MIB MiB, $REPS repetitions)"
mpiexec -n 1 "$BENCH" --dir "$DIR/client_a/bench" --mib "$MIB" --reps "$REPS" >"$OUT/checkpoint_n1.jsonl"
echo "checkpoint_bench, 2 ranks, each through its own client"
args=("$BENCH" --dir "$DIR/view/bench" --mib "$MIB" --reps "$REPS")
mpiexec -n 1 tools/in_mount.sh "$DIR/client_a" "$DIR/view" "${args[@]}" : \
  -n 1 tools/in_mount.sh "$DIR/client_b" "$DIR/view" "${args[@]}" >"$OUT/checkpoint_n2.jsonl"

{
  machine_lines "$BUILD"
  printf 'torch=%s\n' "not used"
  printf 'openblas=%s\n' "not used"
  printf 'epochs=0\n'
  printf 'skipped=%s\n' "trainrt pytorch torch python allreduce restart report nodes goodput array data xgboost tune"
  printf 'filesystem=%s\n' "GlusterFS $(glusterfs --version | head -1 | cut -d' ' -f2) over FUSE, a volume of 2 bricks in $DIR on $(df -T "$DIR" | tail -1 | awk '{print $2, $1}'), each rank through its own client"
  printf 'omp_num_threads=%s\n' "${OMP_NUM_THREADS:-unset}"
  printf 'load=%s\n' "$(cut -d' ' -f1-3 /proc/loadavg) at the end"
} >"$OUT/machine.txt"
"$(build_python "$BUILD")" bench/reporting/render.py "$OUT" "$OUT.md"
echo "wrote $OUT.md"
