#include "supervise/node_health.hpp"

#include <algorithm>
#include <future>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "runlog/heartbeats.hpp"

namespace trainrt::supervise {

NodeSet lost_nodes(launch::SlurmClient& slurm, const Allocation& allocation, const NodeSet& excluded,
                   double probe_timeout_s, const Say& say) {
    if (allocation.nodelist.empty()) return {};
    NodeSet lost(slurm.nodes_in_state(allocation.nodelist, "down,drain,fail"));
    std::vector<std::pair<std::string, std::future<bool>>> probes;
    for (const std::string& node : slurm.nodes_in_state(allocation.nodelist, "no_respond"))
        if (!lost.contains(node) && !excluded.contains(node))
            probes.emplace_back(node, std::async(std::launch::async, [&slurm, node, probe_timeout_s] {
                                    return slurm.probe(node, probe_timeout_s);
                                }));
    for (auto& [node, alive] : probes) {
        if (alive.get())
            say(fmt::format("Slurm flags {} not responding, but it runs a step: keeping it", node));
        else
            lost.add(node);
    }
    return lost;
}

NodeSet nodes_gone(launch::SlurmClient& slurm, const std::vector<std::string>& step_nodes, const NodeSet& silent,
                   double timeout_s, const Say& say) {
    NodeSet gone;
    std::vector<std::pair<std::string, std::future<std::optional<bool>>>> asked;
    for (const std::string& node : step_nodes) {
        if (silent.contains(node)) {
            say(fmt::format("{} is gone: its heartbeat is silent", node));
            gone.add(node);
        } else {
            asked.emplace_back(node, std::async(std::launch::async, [&slurm, node, timeout_s] {
                                   return slurm.daemon_answers(node, timeout_s);
                               }));
        }
    }
    for (auto& [node, answers] : asked)
        if (answers.get() == false) {
            say(fmt::format("{} is gone: its Slurm daemon does not answer", node));
            gone.add(node);
        }
    return gone;
}

NodeSet silent_step_hosts(const runlog::History& history, const std::string& run_dir, double peer_timeout_s) {
    if (peer_timeout_s <= 0 || history.attempts.empty()) return {};
    const runlog::Event& event = history.event(history.attempts.back().start);
    const auto* start = event.as<runlog::StartEvent>();
    if (start == nullptr || !event.time) return {};
    std::optional<double> newest;
    for (const std::string& host : start->hosts)
        if (auto beat = runlog::read_heartbeat(run_dir, host); beat && *beat >= *event.time)
            newest = std::max(newest.value_or(*beat), *beat);
    if (!newest) return {};
    const double limit = std::max(peer_timeout_s / 2, 2 * runlog::heartbeat_interval(peer_timeout_s));
    NodeSet silent;
    for (const auto& host : runlog::silent_hosts(run_dir, start->hosts, *event.time, *newest, limit))
        silent.add(host.host);
    return silent;
}

}  // namespace trainrt::supervise
