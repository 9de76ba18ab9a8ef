#pragma once
// Which nodes a relaunch must leave out: those Slurm knows are lost, and those trainrt's own
// heartbeats show silent before Slurm notices (SlurmdTimeout is 300 s by default).
#include <functional>
#include <string>
#include <vector>

#include "launch/slurm_client.hpp"
#include "runlog/history.hpp"
#include "supervise/allocation.hpp"

namespace trainrt::supervise {

using Say = std::function<void(const std::string&)>;

// A node Slurm flags "not responding" gets this long to run a one-task probe step.
inline constexpr double kProbeTimeoutS = 20;
// A node's Slurm daemon gets this long to accept a connection; a live one answers in milliseconds.
inline constexpr double kDaemonTimeoutS = 1;

// The allocation's nodes Slurm reports down, drained or failed, and those it flags only "not
// responding" that also fail a one-task probe step within `probe_timeout_s`. A live node can be
// flagged for a moment (slurmctld's ping timed out while busy ranks starved its slurmd): the
// probe keeps it in the job, and `say` tells so. Nodes in `excluded` need no probe. Probes run
// in parallel.
NodeSet lost_nodes(launch::SlurmClient& slurm, const Allocation& allocation, const NodeSet& excluded,
                   double probe_timeout_s, const Say& say);

// The nodes of a step still running that are gone: `silent` (its heartbeats say so) and those
// whose Slurm daemon does not answer within `timeout_s` (asked in parallel). Slurm itself flags
// them only after SlurmdTimeout; meanwhile srun waits for their tasks. `say` names each.
NodeSet nodes_gone(launch::SlurmClient& slurm, const std::vector<std::string>& step_nodes, const NodeSet& silent,
                   double timeout_s, const Say& say);

// The nodes of the last attempt whose last heartbeat is older than the newest one by more than
// half the peer timeout: the survivors beat until they ended the step, a dead node stopped a peer
// timeout before that (half leaves room for the beat interval on both sides). Empty when
// heartbeats are off (peer_timeout 0) or none was written.
NodeSet silent_step_hosts(const runlog::History& history, const std::string& run_dir, double peer_timeout_s);

}  // namespace trainrt::supervise
