#!/usr/bin/env bash
# in_mount.sh SOURCE VIEW CMD...: runs CMD in a private mount namespace where directory SOURCE is
# bound on VIEW (root). For one rank of an MPMD mpiexec to see a path through a filesystem client
# of its own (tools/glusterfs_volume.sh), as a rank on another node would.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: in_mount.sh SOURCE VIEW CMD..." >&2; exit 2; }
# shellcheck disable=SC2016 # expanded by the inner bash
exec unshare -m --propagation private bash -c 'mount --bind "$0" "$1" && shift && exec "$@"' "$@"
