#!/usr/bin/env bash
# Checkpoints on a network filesystem whose clients' page caches are not coherent with each other
# (storage/page_coherence.hpp): a real GlusterFS volume (glusterd, 2 bricks) mounted by 3 FUSE
# clients a, b, c; the cases (both layouts, killed and resumed through swapped clients) are
# network_fs_cases.sh's.
# Before page_coherence, the `shared` layout committed every checkpoint with a checksum its file
# did not have (each rank hashed the other's metadata from its own stale pages).
# ctest: resource=glusterfs
# ctest: fixture=small_data
# ctest: timeout=600
# ctest: processors=1
source "$(dirname "$0")/lib.sh"

source "$TRAINRT_SRC/tools/glusterfs_volume.sh"
source "$(dirname "$0")/network_fs_cases.sh"

[ "$(id -u)" = 0 ] || { echo "FAIL: mounting GlusterFS needs root" >&2; exit 1; }
trap 'gluster_down; rm -rf "$WORK"' EXIT
gluster_up "trainrt_test_$$" "$WORK/gluster" "${CLIENTS[@]/#/$WORK/client_}" || exit 1
mkdir -p "$WORK/view"
pass "GlusterFS volume trainrt_test_$$: 2 bricks, clients a, b, c ($(glusterfs --version | head -1))"

layout_case shared
layout_case file_per_rank
finish
