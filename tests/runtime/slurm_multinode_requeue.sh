#!/usr/bin/env bash
# slurm_requeue_twice.sh across 2 of the namespaced nodes (1 task each): a 2-node sbatch job requeued
# twice resumes each time and ends bitwise where mpiexec -n 2 on one node ends, every row once.
# ctest: resource=slurm_cluster
# ctest: processors=1
set -euo pipefail
[[ ${TRAINRT_SLURM_NODES:-$(sed -n 's/^export TRAINRT_SLURM_NODES=//p' "${TRAINRT_SLURM_DIR:-/tmp/trainrt-slurm}/env.sh" 2>/dev/null)} -ge 2 ]] ||
  { echo "FAIL [test_multinode_requeue]: the local cluster has fewer than 2 namespaced nodes (TRAINRT_SLURM_NODES)" >&2; exit 1; }
export TRAINRT_REQUEUE_SBATCH="-p multi -N 2 --ntasks-per-node=1 --ntasks=2"
export TRAINRT_REQUEUE_HOSTS="node1,node2"
exec bash "$(dirname "${BASH_SOURCE[0]}")/slurm_requeue_twice.sh"
