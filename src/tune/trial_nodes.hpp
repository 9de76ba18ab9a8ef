#pragma once
// Where a sweep's trials run inside a Slurm allocation, and what a lost node takes away. When
// every node of the allocation runs the same number of tasks T and a trial's R ranks fill whole
// nodes (R a multiple of T) or share one (T a multiple of R), the sweep places each trial itself
// on a slot of its own (srun --nodelist, -N, --ntasks-per-node, --exact): a trial's ranks stay on
// as few nodes as they can, and a node's loss ends only the trials on it. Otherwise Slurm places
// them (srun --exact -n R, as outside Slurm mpiexec -n R does) and the allocation's ranks bound
// how many run at once.
// A node lost takes its slots away, not the sweep: its trials are retried on the slots left (the
// attempt is not counted against tune.max_failures_per_trial), later trials leave it out, and
// fewer trials run at once. A node once lost stays out for the rest of the job; a requeued job
// starts again with all of its (new) nodes.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "launch/slurm_client.hpp"
#include "supervise/allocation.hpp"
#include "supervise/node_health.hpp"

namespace trainrt::tune {

// Trials at once when Slurm places them: tune.max_concurrent_trials (`configured`), or (0) as
// many as `ranks_total` holds, at least 1; once nodes were lost (`ranks_left` < `ranks_total`), no
// more than fit in the ranks left: 0 when not one trial does.
std::size_t trial_slots(std::size_t configured, std::size_t ranks_total, std::size_t ranks_left,
                        std::size_t ranks_per_trial);

// The allocation's nodes cut into trial slots (each a list of nodes), in node order; empty when
// its nodes run different numbers of tasks or R and T do not divide (see above).
std::vector<std::vector<std::string>> node_slots(const supervise::Allocation& allocation, std::size_t ranks_per_trial);

class TrialNodes {
public:
    // `ranks_total`: the allocation's tasks (or --ranks outside Slurm, with no allocation).
    TrialNodes(supervise::Allocation allocation, std::size_t ranks_total, std::size_t ranks_per_trial,
               std::size_t configured_slots);

    // Trials that may run at once now.
    std::size_t slots() const;
    // A free slot for a trial about to start (released with give_back); nullopt when none is.
    std::optional<std::size_t> take();
    void give_back(std::size_t slot);
    // The srun options placing a trial on `slot` (or keeping it off lost nodes).
    std::vector<std::string> srun_options(std::size_t slot) const;

    const supervise::NodeSet& lost() const { return lost_; }
    bool touches_lost(const std::vector<std::string>& hosts) const;
    // After a trial's step failed: the allocation's nodes whose Slurm daemon does not answer, or
    // that Slurm reports lost (a "not responding" one only if it fails a probe), are lost.
    // Returns those newly lost; `say` names each and the slots left.
    supervise::NodeSet check_after_failure(launch::SlurmClient& slurm, const supervise::Say& say);
    // A running trial's `hosts` silent in its run's heartbeats for `peer_timeout_s` (counted from
    // `since_s`) whose Slurm daemon does not answer are lost: a trial wholly on a dead node has no
    // peer left to notice, and its srun waits for Slurm's SlurmdTimeout. Returns those newly lost.
    supervise::NodeSet check_silent(launch::SlurmClient& slurm, const std::vector<std::string>& hosts,
                                    const std::string& run_dir, double since_s, double peer_timeout_s,
                                    const supervise::Say& say);

private:
    struct Slot {
        std::vector<std::string> nodes;
        bool busy = false;
        bool lost = false;
    };
    bool placed() const { return !slots_.empty(); }
    std::size_t ranks_left() const;
    supervise::NodeSet lose(const supervise::NodeSet& found, const supervise::Say& say);

    supervise::Allocation allocation_;
    std::size_t ranks_total_;
    std::size_t ranks_per_trial_;
    std::size_t configured_slots_;
    std::vector<Slot> slots_;  // placed by the sweep; empty: placed by Slurm
    std::size_t busy_ = 0;     // trials running
    supervise::NodeSet lost_;
};

}  // namespace trainrt::tune
