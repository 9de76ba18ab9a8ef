#include "tune/trial_nodes.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "runlog/clock.hpp"
#include "runlog/heartbeats.hpp"

namespace trainrt::tune {
namespace {

std::string joined(const std::vector<std::string>& nodes) {
    std::string text;
    for (const std::string& node : nodes) text += (text.empty() ? "" : ",") + node;
    return text;
}

}  // namespace

std::size_t trial_slots(std::size_t configured, std::size_t ranks_total, std::size_t ranks_left,
                        std::size_t ranks_per_trial) {
    const std::size_t per_trial = std::max<std::size_t>(1, ranks_per_trial);
    const std::size_t base = configured > 0 ? configured : std::max<std::size_t>(1, ranks_total / per_trial);
    return ranks_left >= ranks_total ? base : std::min(base, ranks_left / per_trial);
}

std::vector<std::vector<std::string>> node_slots(const supervise::Allocation& allocation, std::size_t ranks_per_trial) {
    const auto per_node = static_cast<std::size_t>(std::max(allocation.tasks_per_node, 1));
    const bool uniform = allocation.world_size > 0 &&
                         allocation.nodes.size() * per_node == static_cast<std::size_t>(allocation.world_size);
    std::vector<std::vector<std::string>> slots;
    if (!uniform || ranks_per_trial == 0) return slots;
    if (per_node % ranks_per_trial == 0) {
        for (const std::string& node : allocation.nodes)
            for (std::size_t i = 0; i < per_node / ranks_per_trial; ++i) slots.push_back({node});
    } else if (ranks_per_trial % per_node == 0) {
        const std::size_t width = ranks_per_trial / per_node;
        for (std::size_t first = 0; first + width <= allocation.nodes.size(); first += width)
            slots.emplace_back(allocation.nodes.begin() + static_cast<std::ptrdiff_t>(first),
                               allocation.nodes.begin() + static_cast<std::ptrdiff_t>(first + width));
    }
    return slots;
}

TrialNodes::TrialNodes(supervise::Allocation allocation, std::size_t ranks_total, std::size_t ranks_per_trial,
                       std::size_t configured_slots)
    : allocation_(std::move(allocation)), ranks_total_(ranks_total), ranks_per_trial_(ranks_per_trial),
      configured_slots_(configured_slots) {
    if (allocation_.job_id.empty()) return;
    const auto cut = node_slots(allocation_, ranks_per_trial_);
    if (configured_slots_ > cut.size()) return;  // more at once than the nodes hold: Slurm shares them
    for (const auto& nodes : cut) slots_.push_back({nodes});
}

// The ranks less the lost nodes' tasks (the allocation's tasks per node each).
std::size_t TrialNodes::ranks_left() const {
    const std::size_t gone = lost_.size() * static_cast<std::size_t>(std::max(allocation_.tasks_per_node, 1));
    return ranks_total_ > gone ? ranks_total_ - gone : 0;
}

std::size_t TrialNodes::slots() const {
    if (!placed()) return trial_slots(configured_slots_, ranks_total_, ranks_left(), ranks_per_trial_);
    const auto live = static_cast<std::size_t>(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return !s.lost; }));
    return configured_slots_ > 0 ? std::min(configured_slots_, live) : live;
}

std::optional<std::size_t> TrialNodes::take() {
    if (busy_ >= slots()) return std::nullopt;
    if (!placed()) return ++busy_, 0;
    for (std::size_t i = 0; i < slots_.size(); ++i)
        if (!slots_[i].busy && !slots_[i].lost) {
            slots_[i].busy = true;
            ++busy_;
            return i;
        }
    return std::nullopt;
}

void TrialNodes::give_back(std::size_t slot) {
    if (busy_ > 0) --busy_;
    if (placed() && slot < slots_.size()) slots_[slot].busy = false;
}

std::vector<std::string> TrialNodes::srun_options(std::size_t slot) const {
    if (!placed()) return lost_.empty() ? std::vector<std::string>{} : std::vector<std::string>{"--exclude=" + lost_.str()};
    const std::vector<std::string>& nodes = slots_.at(slot).nodes;
    return {"--nodelist=" + joined(nodes), "-N", std::to_string(nodes.size()),
            fmt::format("--ntasks-per-node={}", ranks_per_trial_ / nodes.size())};
}

bool TrialNodes::touches_lost(const std::vector<std::string>& hosts) const {
    return std::any_of(hosts.begin(), hosts.end(), [&](const std::string& host) { return lost_.contains(host); });
}

supervise::NodeSet TrialNodes::check_after_failure(launch::SlurmClient& slurm, const supervise::Say& say) {
    std::vector<std::string> asked;
    for (const std::string& node : allocation_.nodes)
        if (!lost_.contains(node)) asked.push_back(node);
    supervise::NodeSet found = supervise::nodes_gone(slurm, asked, {}, supervise::kDaemonTimeoutS, say);
    supervise::NodeSet known = lost_;
    known.add(found);
    found.add(supervise::lost_nodes(slurm, allocation_, known, supervise::kProbeTimeoutS, say));
    return lose(found, say);
}

supervise::NodeSet TrialNodes::check_silent(launch::SlurmClient& slurm, const std::vector<std::string>& hosts,
                                            const std::string& run_dir, double since_s, double peer_timeout_s,
                                            const supervise::Say& say) {
    if (peer_timeout_s <= 0) return {};
    std::vector<std::string> silent;
    for (const auto& host : runlog::silent_hosts(run_dir, hosts, since_s, runlog::now_seconds(), peer_timeout_s))
        if (!lost_.contains(host.host)) silent.push_back(host.host);
    if (silent.empty()) return {};
    return lose(supervise::nodes_gone(slurm, silent, {}, supervise::kDaemonTimeoutS, say), say);
}

supervise::NodeSet TrialNodes::lose(const supervise::NodeSet& found, const supervise::Say& say) {
    supervise::NodeSet newly;
    for (const std::string& node : found.items())
        if (!lost_.contains(node)) newly.add(node);
    if (newly.empty()) return newly;
    const std::size_t before = slots();
    lost_.add(newly);
    for (Slot& slot : slots_)
        slot.lost = slot.lost || std::any_of(slot.nodes.begin(), slot.nodes.end(),
                                             [&](const std::string& node) { return newly.contains(node); });
    say(fmt::format("sweep: {} lost: its trials go on elsewhere, later trials leave it out; {} trial(s) at once, {} "
                    "before", newly.str(), slots(), before));
    return newly;
}

}  // namespace trainrt::tune
