#!/usr/bin/env bash
# A node hangs (every process of node2 stopped, sockets open) under a 3-node job: trainrt's
# heartbeats notice it long before Slurm (SlurmdTimeout=300), the job finishes on the other two.
# The kill variant's test with TRAINRT_NODE_FAULT=freeze; see slurm_node_failure.sh.
# ctest: resource=slurm_cluster
# ctest: fixture=small_data
# ctest: processors=1
export TRAINRT_NODE_FAULT=freeze
exec bash "$(dirname "${BASH_SOURCE[0]}")/slurm_node_failure.sh"
