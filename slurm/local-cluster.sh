#!/usr/bin/env bash
# A real Slurm cluster on this one machine for trainrt's tests: munged, slurmctld, a slurmd for
# node "head" (this machine) and one per extra node in a network namespace; no systemd needed (run as root).
#
#   slurm/local-cluster.sh start    (re)start a fresh cluster; returns once every node is idle
#   slurm/local-cluster.sh stop     cancel every job, stop the daemons this script started, remove
#                                   the namespaces and the bridge
#   slurm/local-cluster.sh restart  same as start
#   slurm/local-cluster.sh status   exit 0 when up (prints daemons and node states), 1 when not
#   slurm/local-cluster.sh exec I CMD...   run CMD as node I (its namespace and hostname), e.g. an
#                                   srun across nodes; nodes reach only addresses on the bridge
#   slurm/local-cluster.sh node-kill I     node I dies: SIGKILL to every process in its namespace
#                                   (slurmd, slurmstepd, tasks), as a power loss would
#   slurm/local-cluster.sh node-freeze I   node I hangs: SIGSTOP to every process in its namespace
#   slurm/local-cluster.sh node-poweroff I node I loses power: its link cut, then every process killed
#                                   (nothing it sends while dying reaches anyone; node-kill's
#                                   processes die on a live kernel, which closes their connections)
#   slurm/local-cluster.sh node-start I    node I comes back: a fresh slurmd, waits until it registered
#                                   (ReturnToService=2 returns a DOWN node when it registers)
#
# Then: source "${TRAINRT_SLURM_DIR:-/tmp/trainrt-slurm}/env.sh"   (exports SLURM_CONF)
#
# Node: NodeName=head NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=8 (more than the machine has, through
# SlurmdParameters=config_overrides), partition "debug" (the default). Multi-node: nodes node1..node3
# (TRAINRT_SLURM_NODES, 0 for none), CPUs=4 each, partition "multi", each slurmd in its own network
# namespace (slurm/node-namespaces.sh) with address $TRAINRT_SLURM_SUBNET.I on a bridge holding
# $TRAINRT_SLURM_SUBNET.254, where the controller is reached. Everything lives in $TRAINRT_SLURM_DIR
# (default /tmp/trainrt-slurm: etc/, log/, run/, spool/, state/), wiped on every start because the
# controller would otherwise restore old node and job state.
#
# Environment: TRAINRT_SLURM_DIR, TRAINRT_SLURM_CTLD_PORT (6817), TRAINRT_SLURM_SLURMD_PORT (6818),
# TRAINRT_SLURM_CPUS (8), TRAINRT_SLURM_MEMORY (MiB, 2048), TRAINRT_SLURM_START_TIMEOUT (s, 30),
# TRAINRT_SLURM_NODES (3), TRAINRT_SLURM_NODE_CPUS (4), TRAINRT_SLURM_SUBNET (10.77.0),
# TRAINRT_SLURM_NET_PREFIX (trt: names of namespaces, veths, bridge), TRAINRT_SLURMD_TIMEOUT (s, 300: the default of real clusters; trainrt must notice a dead node first).
#
# Facts this relies on (shared/notes/slurm-mpi-facts.md): PID 1 here does not reap orphans, so a
# stopped daemon can linger as a zombie; liveness is read from /proc/PID/stat, never `kill -0`.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATE=${TRAINRT_SLURM_DIR:-/tmp/trainrt-slurm}
CTLD_PORT=${TRAINRT_SLURM_CTLD_PORT:-6817}
SLURMD_PORT=${TRAINRT_SLURM_SLURMD_PORT:-6818}
CPUS=${TRAINRT_SLURM_CPUS:-8}
REAL_MEMORY=${TRAINRT_SLURM_MEMORY:-2048}
START_TIMEOUT=${TRAINRT_SLURM_START_TIMEOUT:-30}
NODES=${TRAINRT_SLURM_NODES:-3}
NODE_CPUS=${TRAINRT_SLURM_NODE_CPUS:-4}
NET_SUBNET=${TRAINRT_SLURM_SUBNET:-10.77.0}
NET_PREFIX=${TRAINRT_SLURM_NET_PREFIX:-trt}
NET_BRIDGE=$NET_PREFIX-br0
SLURMD_TIMEOUT=${TRAINRT_SLURMD_TIMEOUT:-300}
TEMPLATE=$here/local-cluster.conf.in
CONF=$STATE/etc/slurm.conf
MARKER=$STATE/.trainrt-slurm
MUNGE_KEY=/etc/munge/munge.key
MUNGE_RUN=/run/munge
MUNGE_SOCKET=$MUNGE_RUN/munge.socket.2
MUNGE_LOG=/var/log/munge/munged.log

say() { echo "local-cluster: $*"; }
die() { echo "local-cluster: error: $*" >&2; exit 1; }
[[ "$NODES" =~ ^[0-9]$ ]] || die "TRAINRT_SLURM_NODES must be 0..9, not '$NODES'"
# shellcheck source=node-namespaces.sh
source "$here/node-namespaces.sh"

# --- processes -------------------------------------------------------------------------------

# Process state letter of PID (R, S, D, Z, ...) or nothing when there is no such process.
proc_state() {
  local stat
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 0
  stat=${stat##*) }          # the command name may hold spaces and parentheses
  echo "${stat%% *}"
}

# True when PID is a live (not zombie) process, whatever it runs (a daemon just launched may still be
# setsid or setpriv for a moment before it execs).
proc_alive() {
  local state
  [[ "$1" =~ ^[0-9]+$ ]] || return 1
  state=$(proc_state "$1")
  [[ -n "$state" && "$state" != Z && "$state" != X ]]
}

# True when PID is a live (not zombie) process running the program named NAME.
is_running() {
  local pid=$1 name=$2 state exe
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  state=$(proc_state "$pid")
  [[ -n "$state" && "$state" != Z && "$state" != X ]] || return 1
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
  exe=${exe% (deleted)}
  exe_is "$exe" "$name"
}

# True when the executable path EXE is the program NAME (Debian installs e.g. slurmd as an
# alternative pointing to /usr/sbin/slurmd-wlm).
declare -A RESOLVED=()
exe_is() {
  local exe=$1 name=$2 base=${1##*/}
  [[ "$base" == "$name" || "$base" == "$name-wlm" ]] && return 0
  if [[ -z "${RESOLVED[$name]+set}" ]]; then
    RESOLVED[$name]=$(readlink -f "$(command -v "$name" 2>/dev/null || echo "/nonexistent/$name")" 2>/dev/null || true)
  fi
  [[ -n "${RESOLVED[$name]}" && "$exe" == "${RESOLVED[$name]}" ]]
}

# Cheap first filter (no fork): the kernel's 15-character command name of PID starts like NAME.
comm_is() {
  local comm
  { read -r comm <"/proc/$1/comm"; } 2>/dev/null || return 1
  [[ "$comm" == "${2:0:15}"* ]]
}

read_pid() {
  if [[ -r "$1" ]]; then head -n1 "$1" | tr -dc '0-9'; fi
}

# Every PID in the given files (one per file; missing files are skipped).
read_pids() {
  local f
  for f in "$@"; do [[ ! -r "$f" ]] || read_pid "$f"; echo; done | grep -v '^$' || true
}

# PIDs of live NAME processes that belong to this cluster: those in its PID files plus any whose
# command line names this cluster's slurm.conf (in case a PID file was lost).
cluster_pids() {
  local name=$1 pid cmdline
  local -A seen=()
  for pid in $(read_pids "$STATE/run/$name".*pid); do
    if is_running "$pid" "$name" && [[ -z "${seen[$pid]:-}" ]]; then seen[$pid]=1; echo "$pid"; fi
  done
  for pid in /proc/[0-9]*; do
    pid=${pid#/proc/}
    [[ -z "${seen[$pid]:-}" ]] || continue
    if ! comm_is "$pid" "$name" || ! is_running "$pid" "$name"; then continue; fi
    cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || continue
    if [[ " $cmdline " == *" $CONF "* ]]; then seen[$pid]=1; echo "$pid"; fi
  done
}

# Waits up to SECONDS for every PID (running NAME) to be gone or a zombie.
wait_gone() {
  local name=$1 seconds=$2 pid deadline
  shift 2
  deadline=$((SECONDS + seconds))
  while ((SECONDS < deadline)); do
    local alive=0
    for pid in "$@"; do is_running "$pid" "$name" && alive=1; done
    ((alive)) || return 0
    sleep 0.1
  done
  return 1
}

# SIGTERM, then SIGKILL after GRACE seconds, for this cluster's NAME processes.
stop_daemon() {
  local name=$1 grace=$2 pids pid
  mapfile -t pids < <(cluster_pids "$name")
  if ((${#pids[@]} == 0)); then rm -f "$STATE/run/$name".*pid; return 0; fi
  say "stopping $name (pid ${pids[*]})"
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  if ! wait_gone "$name" "$grace" "${pids[@]}"; then
    say "$name did not stop within ${grace}s; sending SIGKILL"
    for pid in "${pids[@]}"; do
      if is_running "$pid" "$name"; then kill -KILL "$pid" 2>/dev/null || true; fi
    done
    wait_gone "$name" 5 "${pids[@]}" || die "$name (pid ${pids[*]}) survives SIGKILL"
  fi
  rm -f "$STATE/run/$name".*pid
}

# Job step daemons of this cluster: slurmstepd processes whose spool directory is ours. Used only
# after slurmd is gone, for steps that outlived it.
stray_stepds() {
  local pid
  for pid in /proc/[0-9]*; do
    pid=${pid#/proc/}
    if ! comm_is "$pid" slurmstepd || ! is_running "$pid" slurmstepd; then continue; fi
    if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qxF "SLURM_CONF=$CONF"; then
      echo "$pid"
    fi
  done
}

# --- munge -----------------------------------------------------------------------------------

munge_works() {
  [[ -S "$MUNGE_SOCKET" ]] || return 1
  munge -n -S "$MUNGE_SOCKET" 2>/dev/null | unmunge -S "$MUNGE_SOCKET" >/dev/null 2>&1
}

prepare_munge_files() {
  id munge >/dev/null 2>&1 || die "no 'munge' user: install the munge package (bash tools/deps.sh)"
  install -d -m 0700 -o munge -g munge /etc/munge
  install -d -m 0755 -o munge -g munge "$MUNGE_RUN"
  install -d -m 0700 -o munge -g munge /var/lib/munge /var/log/munge
  if [[ ! -s "$MUNGE_KEY" ]]; then
    say "creating munge key $MUNGE_KEY"
    mungekey --create --keyfile="$MUNGE_KEY" --force
  fi
  chown munge:munge "$MUNGE_KEY"
  chmod 0400 "$MUNGE_KEY"
}

start_munge() {
  if munge_works; then
    say "munged already answers on $MUNGE_SOCKET"
    return 0
  fi
  prepare_munge_files
  local pid
  pid=$(read_pid "$MUNGE_RUN/munged.pid")
  if is_running "$pid" munged; then
    die "munged (pid $pid) runs but does not answer on $MUNGE_SOCKET; see $MUNGE_LOG"
  fi
  rm -f "$MUNGE_SOCKET" "$MUNGE_SOCKET.lock"
  say "starting munged"
  setsid setpriv --reuid=munge --regid=munge --init-groups -- \
    munged --foreground --socket="$MUNGE_SOCKET" --log-file="$MUNGE_LOG" \
    </dev/null >>"$STATE/log/munged.out" 2>&1 &
  echo $! >"$STATE/run/munged.launch.pid"
  local deadline=$((SECONDS + 10))
  until munge_works; do
    if ! proc_alive "$!" || ((SECONDS >= deadline)); then
      tail -n 20 "$STATE/log/munged.out" "$MUNGE_LOG" >&2 2>/dev/null || true
      die "munged did not come up"
    fi
    sleep 0.05
  done
}

stop_munge() {
  local pid
  pid=$(read_pid "$STATE/run/munged.launch.pid")
  [[ -n "$pid" ]] || return 0          # not started by this script: leave it alone
  if is_running "$pid" munged; then
    say "stopping munged (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    wait_gone munged 10 "$pid" || { kill -KILL "$pid" 2>/dev/null || true; wait_gone munged 5 "$pid" || true; }
  fi
  rm -f "$STATE/run/munged.launch.pid"
}

# --- slurm -----------------------------------------------------------------------------------

# Cancels every job and waits (bounded) until none is left running or completing.
cancel_all_jobs() {
  ((${#1} > 0)) || return 0
  [[ -r "$CONF" ]] || return 0
  local jobs deadline
  jobs=$(SLURM_CONF=$CONF timeout 10 squeue -h -o %A 2>/dev/null | sort -u | tr '\n' ' ') || return 0
  [[ -n "${jobs// /}" ]] || return 0
  say "cancelling jobs: $jobs"
  # shellcheck disable=SC2086
  SLURM_CONF=$CONF timeout 10 scancel $jobs 2>/dev/null || true
  [[ -n "$(cluster_pids slurmd)" ]] || return 0   # nobody left to finish them
  deadline=$((SECONDS + 15))
  while ((SECONDS < deadline)); do
    jobs=$(SLURM_CONF=$CONF timeout 10 squeue -h -o %A 2>/dev/null) || return 0
    [[ -n "$jobs" ]] || return 0
    sleep 0.2
  done
  say "jobs still listed after 15 s: ${jobs//$'\n'/ }"
}

stop_slurm() {
  local ctld
  ctld=$(cluster_pids slurmctld | tr '\n' ' ')
  cancel_all_jobs "$ctld"
  stop_daemon slurmd 10
  stop_daemon slurmctld 10
  local stray tree
  mapfile -t stray < <(stray_stepds)
  if ((${#stray[@]} > 0)); then
    mapfile -t tree < <(descendants "${stray[@]}")
    say "killing leftover slurmstepd (pid ${stray[*]}) and its tasks (pid ${tree[*]:-none})"
    kill -KILL "${stray[@]}" "${tree[@]}" 2>/dev/null || true
    wait_gone slurmstepd 5 "${stray[@]}" || true
  fi
  netns_down
}

# Every live descendant of the given PIDs (children first found through /proc/PID/stat's ppid).
descendants() {
  local -A parent_of=()
  local pid stat rest
  for pid in /proc/[0-9]*; do
    pid=${pid#/proc/}
    { read -r stat <"/proc/$pid/stat"; } 2>/dev/null || continue
    rest=${stat##*) }
    rest=${rest#* }               # drop the state letter
    parent_of[$pid]=${rest%% *}
  done
  local -a frontier=("$@") next
  local -A found=()
  while ((${#frontier[@]} > 0)); do
    next=()
    for pid in "${!parent_of[@]}"; do
      local p
      for p in "${frontier[@]}"; do
        if [[ "${parent_of[$pid]}" == "$p" && -z "${found[$pid]:-}" ]]; then
          found[$pid]=1; next+=("$pid"); echo "$pid"
        fi
      done
    done
    frontier=("${next[@]}")
  done
}

# The node and partition lines of the namespaced nodes (none when NODES is 0).
multi_node_lines() {
  ((NODES > 0)) || return 0
  local i names=()
  for ((i = 1; i <= NODES; i++)); do
    echo "NodeName=node$i NodeHostname=node$i NodeAddr=$NET_SUBNET.$i CPUs=$NODE_CPUS RealMemory=$REAL_MEMORY State=UNKNOWN"
    names+=("node$i")
  done
  echo "PartitionName=multi Nodes=$(IFS=,; echo "${names[*]}") MaxTime=INFINITE State=UP OverSubscribe=NO"
}

write_conf() {
  [[ -r "$TEMPLATE" ]] || die "missing template $TEMPLATE"
  local ctld_addr=127.0.0.1 lines
  ((NODES == 0)) || ctld_addr=$NET_SUBNET.254
  lines=$(multi_node_lines | sed -z 's/\n/\\n/g')
  sed -e "s|@STATE@|$STATE|g" -e "s|@CTLD_PORT@|$CTLD_PORT|g" -e "s|@SLURMD_PORT@|$SLURMD_PORT|g" \
      -e "s|@CPUS@|$CPUS|g" -e "s|@REAL_MEMORY@|$REAL_MEMORY|g" -e "s|@NODES@|$NODES|g" \
      -e "s|@CTLD_ADDR@|$ctld_addr|g" -e "s|@SLURMD_TIMEOUT@|$SLURMD_TIMEOUT|g" \
      -e "s|@MULTI_NODES@|$lines|" "$TEMPLATE" >"$CONF"
  if grep -n '@[A-Z_]*@' "$CONF" >&2; then die "unfilled placeholder in $CONF"; fi
  # slurmd inside `ip netns exec` sees a fresh /sys without cgroup mounts; v1 makes it start
  # (no cgroup is used: proctrack/linuxproc, task/none).
  ((NODES == 0)) || echo "CgroupPlugin=cgroup/v1" >"$STATE/etc/cgroup.conf"
  # A PMIx fence that can never complete (seen once in 8 runs: a step relaunched after its batch
  # host died, whose fence ring still named the dead node) fails after 30 s instead of Slurm's
  # default 300: the step ends before trainrt starts and the supervisor retries the launch.
  echo "PMIxTimeout=30" >"$STATE/etc/mpi.conf"
  local node
  for node in $(node_names); do mkdir -p "$STATE/tmp/$node" "$STATE/spool/$node"; done
}

node_names() {
  local i
  echo head
  for ((i = 1; i <= NODES; i++)); do echo "node$i"; done
}

# Removes and recreates $STATE, refusing to wipe a directory that this script did not make.
wipe_state() {
  [[ "$STATE" == /* && "$STATE" != / ]] || die "TRAINRT_SLURM_DIR must be an absolute path, not '$STATE'"
  if [[ -e "$STATE" && ! -e "$MARKER" ]] && [[ -n "$(ls -A "$STATE" 2>/dev/null)" ]]; then
    die "$STATE exists, is not empty and is not a trainrt cluster directory; refusing to wipe it"
  fi
  local munged_pid
  munged_pid=$(read_pid "$STATE/run/munged.launch.pid")
  rm -rf "$STATE"
  mkdir -p "$STATE"/{etc,log,run,spool,state,tmp}
  chmod 0755 "$STATE"
  : >"$MARKER"
  [[ -z "$munged_pid" ]] || echo "$munged_pid" >"$STATE/run/munged.launch.pid"
}

node_state() { SLURM_CONF=$CONF timeout 10 sinfo -h -N -n "$1" -o %T 2>/dev/null | head -n1; }

# Nodes not idle yet, as "name:state" words (nothing when every node is idle).
nodes_not_idle() {
  local node state
  for node in $(node_names); do
    state=$(node_state "$node" || true)
    [[ "$state" == idle ]] || echo "$node:${state:-no answer}"
  done
}

show_logs() {
  local f
  for f in "$STATE/log/slurmctld.log" "$STATE/log/slurmctld.out" "$STATE/log"/slurmd.*log \
           "$STATE/log"/slurmd*.out "$STATE/log/munged.out"; do
    [[ -s "$f" ]] || continue
    echo "----- tail of $f" >&2
    tail -n 25 "$f" >&2
  done
}

require_tools() {
  local t missing=()
  for t in slurmctld slurmd sinfo squeue scontrol scancel munge unmunge munged mungekey setsid setpriv ip unshare; do
    command -v "$t" >/dev/null 2>&1 || missing+=("$t")
  done
  ((${#missing[@]} == 0)) || die "missing programs: ${missing[*]} (install the packages: bash tools/deps.sh)"
  [[ $(id -u) -eq 0 ]] || die "must run as root (starts munged as 'munge' and the Slurm daemons as root)"
}

# Starts slurmctld, head's slurmd and one slurmd per namespaced node (PIDs in run/*.launch.pid).
launch_daemons() {
  say "starting slurmctld and $((NODES + 1)) slurmd (state in $STATE)"
  setsid slurmctld -D -f "$CONF" </dev/null >>"$STATE/log/slurmctld.out" 2>&1 &
  echo $! >"$STATE/run/slurmctld.launch.pid"
  setsid slurmd -D -N head -f "$CONF" </dev/null >>"$STATE/log/slurmd.out" 2>&1 &
  echo $! >"$STATE/run/slurmd.launch.pid"
  local i
  for ((i = 1; i <= NODES; i++)); do
    (node_exec "$i" setsid slurmd -D -N "node$i" -f "$CONF") </dev/null >>"$STATE/log/slurmd.node$i.out" 2>&1 &
    echo $! >"$STATE/run/slurmd.node$i.launch.pid"
  done
}

# True while every daemon this start launched is alive.
daemons_alive() {
  local f
  for f in "$STATE/run"/*.launch.pid; do
    [[ $f == */munged.launch.pid ]] && continue
    proc_alive "$(read_pid "$f")" || { say "${f##*/} names a process that exited"; return 1; }
  done
}

# Waits until every node is idle; stops everything and fails on a dead daemon or the timeout.
wait_idle() {
  local deadline=$((SECONDS + START_TIMEOUT)) pending
  while :; do
    if daemons_alive; then
      pending=$(nodes_not_idle | paste -sd " " -)
      [[ -n "$pending" ]] || return 0
    else
      show_logs
      stop_slurm
      die "a Slurm daemon exited during start-up (logs above, in $STATE/log)"
    fi
    if ((SECONDS >= deadline)); then
      show_logs
      stop_slurm
      die "nodes not idle after ${START_TIMEOUT}s: $pending (logs above)"
    fi
    sleep 0.1
  done
}

cmd_start() {
  require_tools
  local started
  started=$(date +%s.%N)
  stop_slurm
  wipe_state
  write_conf
  export SLURM_CONF=$CONF
  start_munge
  ((NODES == 0)) || netns_up
  launch_daemons
  wait_idle
  cat >"$STATE/env.sh" <<ENV
# Written by slurm/local-cluster.sh start. Source it to use the local cluster.
export SLURM_CONF=$CONF
export TRAINRT_SLURM_DIR=$STATE
export TRAINRT_SLURM_NODES=$NODES
ENV
  say "up: head (CPUs=$CPUS, partition debug) and $NODES nodes (CPUs=$NODE_CPUS, partition multi) idle" \
      "in $(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s"
  say "use it with: source $STATE/env.sh"
}

cmd_stop() {
  require_tools
  stop_slurm
  stop_munge
  rm -f "$STATE/env.sh"
  say "stopped"
}

cmd_status() {
  local name pids up=1 state
  for name in munged slurmctld slurmd; do
    if [[ $name == munged ]]; then
      if munge_works; then pids="answers on $MUNGE_SOCKET"; else pids=""; fi
    else
      pids=$(cluster_pids "$name" | paste -sd " " -)
      [[ -z "$pids" ]] || pids="pid $pids"
    fi
    if [[ -n "$pids" ]]; then echo "$name: running ($pids)"; else echo "$name: not running"; up=0; fi
  done
  local node
  for node in $(node_names); do
    state=""
    [[ ! -r "$CONF" ]] || state=$(node_state "$node" || true)
    echo "node $node: ${state:-unknown}"
    case "$state" in idle|mixed|allocated|completing) ;; *) up=0 ;; esac
  done
  if ((up)); then
    echo "cluster: up (source $STATE/env.sh)"
    return 0
  fi
  echo "cluster: down"
  return 1
}

# Node number argument of node-kill/node-start/exec, checked.
node_arg() {
  [[ "${1:-}" =~ ^[1-9]$ ]] && (($1 <= NODES)) || die "no such node '${1:-}' (nodes 1..$NODES)"
}

cmd_node_kill() {
  node_arg "$1"
  local pids
  pids=$(ip netns pids "$(netns_name "$1")" 2>/dev/null | paste -sd " " -)
  say "node$1 dies: SIGKILL to ${pids:-no processes}"
  # shellcheck disable=SC2086
  [[ -z "$pids" ]] || kill -KILL $pids 2>/dev/null || true
}

# A power loss: node I's link is cut first, so nothing its processes do while they die (srun's
# helper cancelling its steps when srun vanishes, the kernel closing their sockets) reaches
# another node or the controller; then every process is stopped (none acts once another is gone)
# and killed. node-start reconnects it with its old connections dropped, as after a reboot.
cmd_node_poweroff() {
  node_arg "$1"
  local pids
  ip link set "$NET_PREFIX-n$1" down || die "cannot cut node$1's link ($NET_PREFIX-n$1)"
  pids=$(ip netns pids "$(netns_name "$1")" 2>/dev/null | paste -sd " " -)
  say "node$1 loses power: link cut, SIGSTOP then SIGKILL to ${pids:-no processes}"
  # shellcheck disable=SC2086
  [[ -z "$pids" ]] || { kill -STOP $pids 2>/dev/null; kill -KILL $pids 2>/dev/null; } || true
}

# Brings node I's link back if node-poweroff cut it, after dropping the sockets its dead processes
# left (a rebooted node has none: they would send their goodbyes late).
node_reconnect() {
  local host_end="$NET_PREFIX-n$1"
  ip link show "$host_end" 2>/dev/null | grep -q "state DOWN" || return 0
  ip netns exec "$(netns_name "$1")" ss -K -t -a >/dev/null 2>&1 || say "node$1: old sockets not dropped (ss -K)"
  ip link set "$host_end" up || die "cannot reconnect node$1 ($host_end)"
}

# A hung node (a kernel stall, a wedged driver): every process of node I stopped (SIGSTOP), its
# sockets open, its link up. Nothing reacts until Slurm's SlurmdTimeout; node-kill then
# node-start brings it back.
cmd_node_freeze() {
  node_arg "$1"
  local pids
  pids=$(ip netns pids "$(netns_name "$1")" 2>/dev/null | paste -sd " " -)
  say "node$1 hangs: SIGSTOP to ${pids:-no processes}"
  # shellcheck disable=SC2086
  [[ -z "$pids" ]] || kill -STOP $pids 2>/dev/null || true
}

cmd_node_start() {
  node_arg "$1"
  node_reconnect "$1"
  # A rebooted node's temporary files are gone: the PMIx sockets of step daemons that were killed
  # would otherwise make the same step id fail to launch there when the job is requeued
  # ("Cannot bind() UNIX socket ... stepd.slurm.pmix.J.S: Address already in use").
  find "$STATE/spool/node$1" -maxdepth 1 -name 'stepd.slurm.pmix.*' -delete 2>/dev/null || true
  export SLURM_CONF=$CONF
  (node_exec "$1" setsid slurmd -D -N "node$1" -f "$CONF") </dev/null >>"$STATE/log/slurmd.node$1.out" 2>&1 &
  echo $! >"$STATE/run/slurmd.node$1.launch.pid"
  # Back once its slurmd registered: no longer flagged not responding (a trailing '*') or down. It
  # may stay mixed while a job that held it when it died still runs on the other nodes.
  local deadline=$((SECONDS + 2 * START_TIMEOUT)) state=""
  while ((SECONDS < deadline)); do
    state=$(node_state "node$1" || true)
    case "$state" in
      ""|*'*'|down*|unk*|drain*|fail*) ;;
      *) say "node$1 is back ($state)"; return 0 ;;
    esac
    sleep 0.2
  done
  die "node$1 not back $((2 * START_TIMEOUT))s after its slurmd started (state '${state:-no answer}')"
}

case "${1:-}" in
  start|restart) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  exec)
    node_arg "${2:-}"
    (($# > 2)) || die "usage: $0 exec NODE CMD..."
    export SLURM_CONF=$CONF
    node_exec "$2" "${@:3}" ;;
  node-kill) cmd_node_kill "${2:-}" ;;
  node-start) cmd_node_start "${2:-}" ;;
  node-freeze) cmd_node_freeze "${2:-}" ;;
  node-poweroff) cmd_node_poweroff "${2:-}" ;;
  *) echo "usage: $0 start|stop|restart|status|exec NODE CMD...|node-kill NODE|node-freeze NODE|node-poweroff NODE|node-start NODE" >&2; exit 2 ;;
esac
