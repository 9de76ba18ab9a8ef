#pragma once
// The allocation a supervisor runs in, read once at its start (a relaunch on fewer nodes unsets
// the variables it comes from), and the nodes it leaves out of relaunches.
#include <optional>
#include <string>
#include <vector>

#include "launch/launcher.hpp"
#include "launch/slurm_client.hpp"

namespace trainrt::supervise {

// A sorted set of node names: the nodes left out of the job's relaunches. A node once left out
// stays out for the rest of the job.
class NodeSet {
public:
    NodeSet() = default;
    NodeSet(std::initializer_list<std::string> nodes);
    explicit NodeSet(const std::vector<std::string>& nodes);
    static NodeSet parse(const std::string& comma_list);  // "node1,node3"; "" is empty

    void add(const std::string& node);
    void add(const NodeSet& nodes);
    bool contains(const std::string& node) const;
    bool empty() const { return nodes_.empty(); }
    std::size_t size() const { return nodes_.size(); }
    const std::vector<std::string>& items() const { return nodes_; }
    std::string str() const;  // comma-separated, "" when empty
    bool operator==(const NodeSet& other) const { return nodes_ == other.nodes_; }

private:
    std::vector<std::string> nodes_;
};

struct Allocation {
    std::string job_id;              // "" outside Slurm (the supervisor then launches with mpiexec)
    int restart_count = 0;
    std::string nodelist;            // SLURM_JOB_NODELIST
    std::vector<std::string> nodes;  // its node names, expanded by Slurm
    int tasks_per_node = 1;          // --ntasks-per-node, else the first count of SLURM_TASKS_PER_NODE
    int world_size = 0;              // SLURM_NTASKS (0: unknown)
    std::string host;                // this process's host name (as heartbeats name it)
    std::string node_name;           // Slurm's name for this node (SLURMD_NODENAME), else `host`

    bool several_nodes() const { return nodes.size() > 1; }
};

Allocation read_allocation(const launch::EnvLookup& env, launch::SlurmClient& slurm);

// "2(x3),1" -> 2; "" -> 1.
int first_task_count(const std::string& tasks_per_node);

// The srun options for a relaunch without `excluded`: the nodes left, the job's tasks per node,
// their product, --exclude and --overlap (a step whose node died can linger in slurmctld holding
// its CPUs; without it the relaunch waits "Requested nodes are busy"). Empty when nothing is
// excluded; nullopt when no node is left.
std::optional<std::vector<std::string>> relaunch_geometry(const Allocation& allocation, const NodeSet& excluded);

// The last node of the allocation that is neither this one nor excluded: where the watcher of
// this batch host runs. "" when there is none.
std::string watcher_node(const Allocation& allocation, const NodeSet& excluded);

}  // namespace trainrt::supervise
