#!/usr/bin/env bash
# Checkpoints on CephFS, a parallel filesystem HPC centres run, through ceph-fuse clients
# (storage/page_coherence.hpp does not trust FUSE mounts): a real Ceph cluster of this host (a
# monitor, an OSD keeping its objects in memory, an MDS: tools/cephfs.sh) mounted by 3 clients a,
# b, c; the cases (both layouts, killed and resumed through swapped clients, every checkpoint
# verified through each client, the resumed run's reports equal to the uninterrupted run's) are
# network_fs_cases.sh's.
# Before storage::DirectWriter kept to buffered writes on filesystems not trusted coherent, the
# `file_per_rank` case failed: each writer's client served zeros for its own file's data from
# its own cache, verification through clients a and b reported every checkpoint corrupted, and
# the resumed run trained on those zeros (another rank read its replicated parts through that
# client) and ended with other weights (direct_writer.hpp).
# ctest: resource=cephfs
# ctest: fixture=small_data
# ctest: timeout=600
# ctest: processors=1
source "$(dirname "$0")/lib.sh"

source "$TRAINRT_SRC/tools/cephfs.sh"
source "$(dirname "$0")/network_fs_cases.sh"

[ "$(id -u)" = 0 ] || { echo "FAIL: mounting CephFS needs root" >&2; exit 1; }
trap 'cephfs_down; rm -rf "$WORK"' EXIT
cephfs_up "$WORK/ceph" "${CLIENTS[@]/#/$WORK/client_}" || exit 1
mkdir -p "$WORK/view"
pass "CephFS: a monitor, an OSD (memstore), an MDS; clients a, b, c ($(ceph --version | cut -d' ' -f1-3))"

layout_case shared
layout_case file_per_rank
finish
