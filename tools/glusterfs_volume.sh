# shellcheck shell=bash
# A GlusterFS volume on this host for tests and benchmarks of checkpoints on a network filesystem
# whose clients' page caches are not coherent (FUSE clients: src/storage/page_coherence.hpp).
# Sourced; needs root and Debian's glusterfs-server (make deps). Usage:
#   gluster_up NAME DIR CLIENT...   glusterd answering (the one running, or one started here),
#                                   volume NAME of 2 bricks under DIR (files spread over them by
#                                   name), started and mounted at each CLIENT directory (each its
#                                   own FUSE client, as on separate nodes)
#   gluster_mount_in PID DIR [OPTS] one more client of the volume, mounted at DIR inside the mount
#                                   namespace of process PID (a node of slurm/local-cluster.sh:
#                                   its slurmd, whose tasks then see the volume through it), with
#                                   mount options OPTS (e.g. attribute-timeout=60)
#   gluster_down                    unmounts every client, stops and deletes the volume, and stops
#                                   glusterd when gluster_up started it (call it from an EXIT trap)
# A rank sees the run directory through a client of its own with tools/in_mount.sh:
#   mpiexec -n 1 tools/in_mount.sh CLIENT_A VIEW CMD... : -n 1 tools/in_mount.sh CLIENT_B VIEW CMD...
GLUSTER_VOLUME=""
GLUSTER_CLIENTS=()
GLUSTER_NS_CLIENTS=()   # "PID DIR" of the clients mounted inside other mount namespaces
GLUSTER_STARTED_DAEMON=0

gluster_up() {
  local name=$1 dir=$2 host client; shift 2
  for tool in glusterd gluster mount.glusterfs unshare; do
    command -v "$tool" >/dev/null || { echo "FAIL: $tool missing (make deps installs glusterfs-server)" >&2; return 1; }
  done
  gluster_daemon "$dir" || return 1
  host=$(hostname)
  mkdir -p "$dir/brick1" "$dir/brick2"
  gluster --mode=script volume create "$name" "$host:$dir/brick1" "$host:$dir/brick2" force >/dev/null || return 1
  GLUSTER_VOLUME=$name
  gluster --mode=script volume start "$name" >/dev/null || return 1
  for client in "$@"; do
    mkdir -p "$client"
    mount -t glusterfs "$host:/$name" "$client" || return 1
    GLUSTER_CLIENTS+=("$client")
    case $(stat -f -c %T "$client") in
      fuse | fuseblk) ;;
      *) echo "FAIL: $client is $(stat -f -c %T "$client"), not a FUSE mount" >&2; return 1 ;;
    esac
  done
}

# glusterd answering; started (logging into DIR) when none runs.
gluster_daemon() {
  gluster --mode=script volume list >/dev/null 2>&1 && return 0
  mkdir -p "$1"
  glusterd -p "$1/glusterd.pid" --log-file="$1/glusterd.log" || return 1
  GLUSTER_STARTED_DAEMON=1
  for _ in $(seq 100); do gluster --mode=script volume list >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "FAIL: glusterd did not answer within 10 s" >&2; tail -5 "$1/glusterd.log" >&2
  return 1
}

# This host's root mount is private (nothing mounted here later reaches other mount namespaces),
# so a namespace's client is mounted from inside it; its FUSE daemon runs in this host's network.
gluster_mount_in() {
  local pid=$1 dir=$2 options=(${3:+-o "$3"})
  nsenter -t "$pid" -m mount -t glusterfs "${options[@]}" "$(hostname):/$GLUSTER_VOLUME" "$dir" || return 1
  GLUSTER_NS_CLIENTS+=("$pid $dir")
  case $(nsenter -t "$pid" -m stat -f -c %T "$dir") in
    fuse | fuseblk) ;;
    *) echo "FAIL: $dir in the mounts of process $pid is not a FUSE mount" >&2; return 1 ;;
  esac
}

gluster_down() {
  local client
  for client in "${GLUSTER_NS_CLIENTS[@]}"; do
    nsenter -t "${client%% *}" -m umount -l "${client#* }" 2>/dev/null || true
  done
  for client in "${GLUSTER_CLIENTS[@]}"; do mountpoint -q "$client" && umount -l "$client"; done
  if [ -n "$GLUSTER_VOLUME" ]; then
    gluster --mode=script volume stop "$GLUSTER_VOLUME" force >/dev/null 2>&1 || true
    gluster --mode=script volume delete "$GLUSTER_VOLUME" >/dev/null 2>&1 || true
  fi
  if [ "$GLUSTER_STARTED_DAEMON" = 1 ]; then pkill -x glusterfsd || true; pkill -x glusterd || true; fi
  GLUSTER_VOLUME="" GLUSTER_CLIENTS=() GLUSTER_NS_CLIENTS=() GLUSTER_STARTED_DAEMON=0
}
