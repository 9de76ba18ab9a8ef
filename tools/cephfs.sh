# shellcheck shell=bash
# A CephFS filesystem on this host for tests of checkpoints on a parallel filesystem whose clients
# are FUSE clients (ceph-fuse: src/storage/page_coherence.hpp), as on a cluster that runs CephFS.
# One monitor, one OSD keeping its objects in memory (memstore: the tests are about what clients
# see, not about disks), one MDS, pools of one replica, no authentication (the daemons listen on
# 127.0.0.1 only). Sourced; needs root and Debian's ceph-mon, ceph-osd, ceph-mds, ceph-fuse (make
# deps). Usage:
#   cephfs_up DIR CLIENT...        the daemons started under DIR (configuration, data, logs),
#                                  the filesystem created, and mounted at each CLIENT directory
#                                  (each its own ceph-fuse client, as on separate nodes)
#   cephfs_down                    unmounts every client and stops the daemons (call it from an
#                                  EXIT trap)
# A rank sees the run directory through a client of its own with tools/in_mount.sh, as with
# tools/glusterfs_volume.sh.
CEPHFS_DIR=""
CEPHFS_CLIENTS=()      # directories mounted here
CEPHFS_MEMSTORE_BYTES=${CEPHFS_MEMSTORE_BYTES:-4294967296}  # the OSD's memory for objects

cephfs_up() {
  local dir=$1 client; shift
  for tool in ceph ceph-mon ceph-osd ceph-mds ceph-fuse monmaptool ss; do
    command -v "$tool" >/dev/null || { echo "FAIL: $tool missing (make deps installs Ceph's packages)" >&2; return 1; }
  done
  CEPHFS_DIR=$dir
  mkdir -p "$dir/run" "$dir/log" "$dir/mon.a" "$dir/osd.0" "$dir/mds.a"
  cephfs_config "$dir" "$(cat /proc/sys/kernel/random/uuid)" "$(cephfs_free_port)" || return 1
  cephfs_start_mon "$dir" && cephfs_start_osd "$dir" && cephfs_start_mds "$dir" || {
    tail -5 "$dir"/log/*.log >&2; return 1
  }
  for client in "$@"; do
    cephfs_mount "$client" "$(basename "$client")" || return 1
    CEPHFS_CLIENTS+=("$client")
  done
}

# A TCP port of 127.0.0.1 that nothing listens on, for the monitor.
cephfs_free_port() {
  local port
  for port in $(seq 33300 33399); do
    [ -z "$(ss -Htln "sport = :$port" 2>/dev/null)" ] && { echo "$port"; return 0; }
  done
  echo 33300
}

# The MDS's tick and the clients' release of capabilities they no longer use at 1 s, not 5 s:
# each open of a file another client wrote waited for them (a 2-rank restore through swapped
# clients started its first step 19 s after the process, 2.3 s with these), and the test still
# catches what it is for (a client's own stale cache: direct_writer.hpp).
cephfs_config() {
  local dir=$1 fsid=$2 port=$3
  cat >"$dir/ceph.conf" <<EOF
[global]
fsid = $fsid
mon host = v2:127.0.0.1:$port
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon warn on pool no redundancy = false
mon warn on insecure global id reclaim allowed = false
osd crush chooseleaf type = 0
osd objectstore = memstore
memstore device bytes = $CEPHFS_MEMSTORE_BYTES
ms bind ipv6 = false
mds tick interval = 1
client caps release delay = 1
osd data = $dir/osd.\$id
mon data = $dir/mon.\$id
mds data = $dir/mds.\$id
run dir = $dir/run
log file = $dir/log/\$name.log
admin socket = $dir/run/\$name.asok
pid file = $dir/run/\$name.pid
EOF
  monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$port]" "$dir/monmap" >/dev/null
}

cephfs_cli() { timeout 60 ceph -c "$CEPHFS_DIR/ceph.conf" "$@"; }

cephfs_start_mon() {
  local dir=$1
  ceph-mon -c "$dir/ceph.conf" --mkfs -i a --monmap "$dir/monmap" >/dev/null 2>&1 &&
    ceph-mon -c "$dir/ceph.conf" -i a >/dev/null 2>&1 && cephfs_cli -s >/dev/null 2>&1
}

cephfs_start_osd() {
  local dir=$1 id
  id=$(cephfs_cli osd create) && [ "$id" = 0 ] || { echo "FAIL: ceph osd create gave '$id'" >&2; return 1; }
  ceph-osd -c "$dir/ceph.conf" -i 0 --mkfs >/dev/null 2>&1 && ceph-osd -c "$dir/ceph.conf" -i 0 >/dev/null 2>&1 &&
    cephfs_wait "the OSD up" osd stat '1 up'
}

cephfs_start_mds() {
  local dir=$1
  cephfs_cli osd pool create cephfs_data 8 >/dev/null 2>&1 &&
    cephfs_cli osd pool create cephfs_metadata 8 >/dev/null 2>&1 &&
    cephfs_cli fs new cephfs cephfs_metadata cephfs_data >/dev/null 2>&1 &&
    ceph-mds -c "$dir/ceph.conf" -i a >/dev/null 2>&1 &&
    cephfs_wait "the MDS active" mds stat 'up:active'
}

# cephfs_wait WHAT CMD... PATTERN: until `ceph CMD` prints PATTERN (60 s at most).
cephfs_wait() {
  local what=$1 pattern=${*: -1} args=("${@:2:$#-2}")
  for _ in $(seq 120); do
    cephfs_cli "${args[@]}" 2>/dev/null | grep -q "$pattern" && return 0
    sleep 0.5
  done
  echo "FAIL: Ceph: $what not within 60 s ($(cephfs_cli "${args[@]}" 2>&1 | head -1))" >&2
  return 1
}

# cephfs_mount DIR NAME: a ceph-fuse client at DIR, its pid file, admin socket and log named NAME
# (two clients may not share them).
cephfs_mount() {
  local dir=$1 name=$2
  local run="$CEPHFS_DIR/run" out
  mkdir -p "$dir"
  out=$(ceph-fuse -c "$CEPHFS_DIR/ceph.conf" --pid-file="$run/fuse-$name.pid" \
    --admin-socket="$run/fuse-$name.asok" --log-file="$CEPHFS_DIR/log/fuse-$name.log" "$dir" 2>&1) ||
    { echo "FAIL: ceph-fuse at $dir: $out" >&2; return 1; }
  case $(stat -f -c %T "$dir") in
    fuse | fuseblk) ;;
    *) echo "FAIL: $dir is $(stat -f -c %T "$dir"), not a FUSE mount" >&2; return 1 ;;
  esac
}

cephfs_down() {
  local client
  [ -n "$CEPHFS_DIR" ] || return 0
  for client in "${CEPHFS_CLIENTS[@]}"; do umount -l "$client" 2>/dev/null || true; done
  cephfs_stop "$CEPHFS_DIR/run"/fuse-*.pid "$CEPHFS_DIR/run/mds.a.pid" "$CEPHFS_DIR/run/osd.0.pid" \
    "$CEPHFS_DIR/run/mon.a.pid"
  CEPHFS_CLIENTS=() CEPHFS_DIR=""
}

# cephfs_stop PIDFILE...: TERM, then KILL after 10 s, each process whose pid file is there.
cephfs_stop() {
  local file pid pids=()
  for file in "$@"; do
    [ -s "$file" ] && pid=$(cat "$file") && kill "$pid" 2>/dev/null && pids+=("$pid")
  done
  for _ in $(seq 100); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && return 0
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
}
