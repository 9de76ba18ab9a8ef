# Sourced by the benchmarks that run on the local 3-node cluster (slurm/local-cluster.sh): they
# need root (its network namespaces). Needs `repo` and `say`.
#   bench_cluster_up      starts the cluster unless it is up, and loads its environment
#   bench_cluster_down    stops it again if bench_cluster_up started it (for an EXIT trap)
bench_cluster_started=0

bench_cluster_up() {
  [[ $(id -u) == 0 ]] || { say "needs root (the cluster's network namespaces)"; exit 2; }
  if ! [[ -r /tmp/trainrt-slurm/env.sh ]] ||
     ! (source /tmp/trainrt-slurm/env.sh && timeout 10 scontrol ping 2>/dev/null | grep -q 'is UP'); then
    say "starting the local cluster"
    bash "$repo/slurm/local-cluster.sh" start >&2
    bench_cluster_started=1
  fi
  # shellcheck disable=SC1091
  source /tmp/trainrt-slurm/env.sh
}

bench_cluster_down() {
  ((bench_cluster_started)) && bash "$repo/slurm/local-cluster.sh" stop >&2 || true
}
