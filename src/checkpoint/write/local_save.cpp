#include "checkpoint/write/local_save.hpp"

#include <chrono>
#include <thread>
#include <utility>
#include <vector>

#include "checkpoint/format/catalog.hpp"
#include "checkpoint/format/layout.hpp"
#include "checkpoint/format/validate.hpp"
#include "checkpoint/write/fault.hpp"
#include "checkpoint/write/write_plan.hpp"
#include "comm/agreement.hpp"
#include "comm/strings.hpp"
#include "storage/direct_writer.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace trainrt::checkpoint {

// A local checkpoint being copied to the run directory on a thread, published by the next save
// or finish().
struct LocalSave::Flush {
    Manifest manifest;
    std::exception_ptr failure;
    std::thread thread;
};

LocalSave::LocalSave(CommitProtocol& commit, LocalLevel& level, std::int64_t pfs_every, bool spread_replicated,
                     const Context& context, Communicator& comm)
    : commit_(commit), level_(level), pfs_every_(pfs_every), spread_replicated_(spread_replicated),
      context_(context), comm_(comm) {}

LocalSave::~LocalSave() {
    if (flushing_ && flushing_->thread.joinable()) flushing_->thread.join();
}

SaveReport LocalSave::save(const CheckpointState& state, std::int64_t iteration, const nlohmann::ordered_json& metrics) {
    const auto start = std::chrono::steady_clock::now();
    settle_flush();
    SaveReport report{checkpoint_name(iteration), 0, 0, 0};
    set_fault_iteration(iteration);
    validate_state(state, comm_);
    const WritePlan plan = plan_writes(state, context_.world_rank, context_.world_size, spread_replicated_);
    report.bytes = plan.bytes();
    RankWrite written;
    agree_local(attempt_checkpoint([&] {
                    level_.begin(report.name);
                    fault_point("before_data", context_.world_rank);
                    written = commit_.writer().write(plan, level_.pending(report.name), context_);
                }),
                report.name, "checkpoint: writing " + report.name + " to the local level");
    agree_local(attempt_checkpoint([&] { level_.exchange(report.name); }), report.name,
                "checkpoint: sending " + report.name + " to the partner ranks");
    const std::vector<std::string> writes = comm::allgather_strings(comm_, rank_write_json(written).dump());
    const std::string text = comm::broadcast_string(
        comm_, commit_.root() ? to_json(build_manifest(plan, state.attributes(), writes, report.name, iteration, context_,
                                                       commit_.writer().name(), metrics)).dump() : std::string(), 0);
    const Manifest manifest = manifest_from_text(text, report.name);
    agree_local(attempt_checkpoint([&] { level_.commit(manifest); }), report.name,
                "checkpoint: committing " + report.name + " on the local level");
    newest_ = manifest;
    if (++saves_ % pfs_every_ == 0) start_flush(manifest);
    report.stall_s = report.commit_s = seconds_since(start);
    return report;
}

void LocalSave::finish() {
    settle_flush();
    if (newest_) {
        start_flush(*newest_);
        settle_flush();
    }
}

void LocalSave::start_flush(Manifest manifest) {
    newest_.reset();
    commit_.begin(manifest.name);
    auto flush = std::make_unique<Flush>();
    flush->manifest = std::move(manifest);
    Flush* raw = flush.get();
    flush->thread = std::thread([this, raw] {
        raw->failure = attempt_checkpoint([&] {
            const std::string to = commit_.pending(raw->manifest.name) + "/" + rank_file_name(context_.world_rank);
            fault_point_at("during_flush", context_.world_rank, raw->manifest.iteration);
            storage::copy_file_direct(level_.own_file(raw->manifest.name), to);
            storage::fsync_path(to);
        });
    });
    flushing_ = std::move(flush);
}

void LocalSave::settle_flush() {
    if (!flushing_) return;
    const std::unique_ptr<Flush> flush = std::move(flushing_);
    flush->thread.join();
    const Manifest& manifest = flush->manifest;
    commit_.agree_or_discard(flush->failure, manifest.name,
                             "checkpoint: copying " + manifest.name + " to the run directory");
    const std::exception_ptr failure = commit_.root() ? attempt_checkpoint([&] { commit_.publish(manifest); }) : nullptr;
    commit_.agree_or_discard(failure, manifest.name, "checkpoint: committing " + manifest.name);
    if (commit_.root()) commit_.apply_retention(manifest.name, manifest.iteration);
}

void LocalSave::agree_local(const std::exception_ptr& failure, const std::string& name, const std::string& what) {
    try {
        comm::agree(comm_, failure, what);
    } catch (const CheckpointError&) {
        level_.discard(name);
        throw;
    }
}

}  // namespace trainrt::checkpoint
