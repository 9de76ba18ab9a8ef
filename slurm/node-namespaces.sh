# Network namespaces that make one machine look like several Slurm nodes (sourced by
# slurm/local-cluster.sh; shared/notes/slurm-mpi-facts.md, "A multi-node Slurm cluster on one machine").
#
# A bridge $NET_BRIDGE in the root namespace holds $NET_SUBNET.254/24; namespace $NET_PREFIX-nodeI
# has one veth with $NET_SUBNET.I/24 and no default route, so traffic between the nodes stays on
# addresses this script made. Processes started by node_exec see hostname nodeI (own UTS namespace).
#
# Requires: NODES, NET_PREFIX, NET_SUBNET, NET_BRIDGE, and say/die from the sourcing script.

netns_name() { echo "$NET_PREFIX-node$1"; }

# The namespaces this cluster made (also those of an earlier start with more nodes).
netns_list() {
  ip netns list 2>/dev/null | awk -v p="$NET_PREFIX-node" 'index($1, p) == 1 { print $1 }'
}

netns_down() {
  local ns
  for ns in $(netns_list); do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || say "could not delete network namespace $ns"
  done
  if ip link show "$NET_BRIDGE" >/dev/null 2>&1; then ip link del "$NET_BRIDGE" || true; fi
}

netns_check_subnet() {
  [[ "$NET_SUBNET" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
    die "TRAINRT_SLURM_SUBNET must be the first three octets of a /24 (e.g. 10.77.0), not '$NET_SUBNET'"
  if ip -4 -o addr show | grep -v " $NET_BRIDGE " | grep -q " inet $NET_SUBNET\."; then
    die "$NET_SUBNET.0/24 is already used on this machine (ip addr); choose another with TRAINRT_SLURM_SUBNET"
  fi
}

# Creates the bridge and NODES namespaces node1..nodeNODES.
netns_up() {
  local i ns host_end
  netns_down
  netns_check_subnet
  ip link add "$NET_BRIDGE" type bridge || die "cannot create bridge $NET_BRIDGE (ip link add ... type bridge)"
  ip addr add "$NET_SUBNET.254/24" dev "$NET_BRIDGE"
  ip link set "$NET_BRIDGE" up
  for ((i = 1; i <= NODES; i++)); do
    ns=$(netns_name "$i")
    host_end="$NET_PREFIX-n$i"
    ip netns add "$ns" || die "cannot create network namespace $ns (ip netns add)"
    ip link add "$host_end" type veth peer name eth0 netns "$ns"
    ip link set "$host_end" master "$NET_BRIDGE" up
    ip -n "$ns" addr add "$NET_SUBNET.$i/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
  done
}

# Runs CMD... as node I: in its network namespace with hostname nodeI. Execs (keeps the PID).
node_exec() {
  local i=$1
  shift
  exec ip netns exec "$(netns_name "$i")" unshare --uts -- sh -c 'hostname "$0" && exec "$@"' "node$i" "$@"
}
