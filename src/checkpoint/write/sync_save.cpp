#include "checkpoint/write/sync_save.hpp"

#include <chrono>
#include <exception>

#include "checkpoint/format/catalog.hpp"
#include "checkpoint/format/validate.hpp"
#include "checkpoint/write/fault.hpp"
#include "checkpoint/write/write_plan.hpp"

namespace trainrt::checkpoint {

SyncSave::SyncSave(CommitProtocol& commit, bool spread_replicated, const Context& context, Communicator& comm)
    : commit_(commit), spread_replicated_(spread_replicated), context_(context), comm_(comm) {}

SaveReport SyncSave::save(const CheckpointState& state, std::int64_t iteration, const nlohmann::ordered_json& metrics) {
    const auto start = std::chrono::steady_clock::now();
    SaveReport report{checkpoint_name(iteration), 0, 0, 0};
    set_fault_iteration(iteration);
    validate_state(state, comm_);
    const WritePlan plan = plan_writes(state, context_.world_rank, context_.world_size, spread_replicated_);
    report.bytes = plan.bytes();
    commit_.begin(report.name);
    RankWrite written;
    std::exception_ptr failure = attempt_checkpoint([&] { written = commit_.write(plan, report.name); });
    commit_.agree_or_discard(failure, report.name, "checkpoint: writing " + report.name);
    commit_.commit(plan, state.attributes(), written, report.name, iteration, metrics);
    report.stall_s = report.commit_s = seconds_since(start);
    return report;
}

}  // namespace trainrt::checkpoint
