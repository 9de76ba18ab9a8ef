#include "supervise/allocation.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace trainrt::supervise {

NodeSet::NodeSet(std::initializer_list<std::string> nodes) {
    for (const std::string& node : nodes) add(node);
}

NodeSet::NodeSet(const std::vector<std::string>& nodes) {
    for (const std::string& node : nodes) add(node);
}

NodeSet NodeSet::parse(const std::string& comma_list) {
    NodeSet set;
    std::stringstream stream(comma_list);
    for (std::string node; std::getline(stream, node, ',');)
        if (!node.empty()) set.add(node);
    return set;
}

void NodeSet::add(const std::string& node) {
    auto at = std::lower_bound(nodes_.begin(), nodes_.end(), node);
    if (at == nodes_.end() || *at != node) nodes_.insert(at, node);
}

void NodeSet::add(const NodeSet& nodes) {
    for (const std::string& node : nodes.items()) add(node);
}

bool NodeSet::contains(const std::string& node) const {
    return std::binary_search(nodes_.begin(), nodes_.end(), node);
}

std::string NodeSet::str() const { return fmt::format("{}", fmt::join(nodes_, ",")); }

int first_task_count(const std::string& tasks_per_node) {
    const std::string first = tasks_per_node.substr(0, tasks_per_node.find_first_of(",("));
    try {
        return first.empty() ? 1 : std::max(1, std::stoi(first));
    } catch (const std::exception&) {
        return 1;
    }
}

namespace {

std::string own_host() {
    std::array<char, 256> name{};
    if (::gethostname(name.data(), name.size() - 1) != 0) return "unknown";
    return name.data();
}

int int_or(const std::optional<std::string>& text, int fallback) {
    try {
        return text ? std::stoi(*text) : fallback;
    } catch (const std::exception&) {
        return fallback;
    }
}

}  // namespace

Allocation read_allocation(const launch::EnvLookup& env, launch::SlurmClient& slurm) {
    launch::LaunchInfo info;
    launch::read_slurm_job(env, info);
    Allocation allocation;
    allocation.job_id = info.job_id;
    allocation.restart_count = info.restart_count;
    allocation.nodelist = env("SLURM_JOB_NODELIST").value_or("");
    allocation.nodes = slurm.hostnames(allocation.nodelist);
    const auto per_node = env("SLURM_NTASKS_PER_NODE");
    allocation.tasks_per_node =
        per_node ? int_or(per_node, 1) : first_task_count(env("SLURM_TASKS_PER_NODE").value_or(""));
    allocation.world_size = int_or(env("SLURM_NTASKS"), 0);
    allocation.host = own_host();
    allocation.node_name = env("SLURMD_NODENAME").value_or(allocation.host);
    return allocation;
}

std::optional<std::vector<std::string>> relaunch_geometry(const Allocation& allocation, const NodeSet& excluded) {
    if (excluded.empty()) return std::vector<std::string>{};
    const auto left = std::count_if(allocation.nodes.begin(), allocation.nodes.end(),
                                    [&](const std::string& node) { return !excluded.contains(node); });
    if (left <= 0) return std::nullopt;
    return std::vector<std::string>{"-N", std::to_string(left),
                                    fmt::format("--ntasks-per-node={}", allocation.tasks_per_node), "-n",
                                    std::to_string(left * allocation.tasks_per_node),
                                    "--exclude=" + excluded.str(), "--overlap"};
}

std::string watcher_node(const Allocation& allocation, const NodeSet& excluded) {
    for (auto node = allocation.nodes.rbegin(); node != allocation.nodes.rend(); ++node)
        if (*node != allocation.host && *node != allocation.node_name && !excluded.contains(*node)) return *node;
    return "";
}

}  // namespace trainrt::supervise
