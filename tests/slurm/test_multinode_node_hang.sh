#!/usr/bin/env bash
# A node hangs (every process of node2 stopped, sockets open) under a 3-node job: trainrt's
# heartbeats notice it long before Slurm (SlurmdTimeout=300), the job finishes on the other two.
# The kill variant's test with TRAINRT_NODE_FAULT=freeze; see test_multinode_node_failure.sh.
export TRAINRT_NODE_FAULT=freeze
exec bash "$(dirname "${BASH_SOURCE[0]}")/test_multinode_node_failure.sh"
