#include "runtime/session_impl.hpp"

#include <iostream>
#include <mutex>

#include <fmt/format.h>

#include "data/shard.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"
#include "h5/h5.hpp"
#include "storage/run_dir.hpp"

namespace trainrt::runtime {

SessionImpl::SessionImpl(const JobConfig& config, Context context,
                         std::unique_ptr<Communicator> comm)
    : config_(config), context_(std::move(context)), comm_(std::move(comm)),
      results_(context_.run_dir, context_),
      checkpoints_(checkpoint::options_from(config), context_, *comm_) {}

void SessionImpl::report(const Metrics& metrics) { results_.record(metrics); }

void SessionImpl::report(const Metrics& metrics, const CheckpointState& state) {
    // The row first: a crash between the two repeats this row after the resume (the previous
    // checkpoint is restored), where the other order would lose it for good.
    results_.record(metrics);
    const std::int64_t iteration = results_.iterations();
    checkpoint::SaveReport saved;
    try {
        saved = checkpoints_.save(state, iteration, metrics::to_json(metrics));
    } catch (const CheckpointError& error) {
        if (error.on_all_ranks()) {
            try {  // this report did not happen; on a full disk the next start moves the row
                results_.resume_after(iteration - 1);
            } catch (const Error&) {
            }
        }
        throw;
    }
    if (context_.world_rank == 0)
        storage::append_event(context_.run_dir, "checkpoint", context_,
                              {{"checkpoint", saved.name}, {"iteration", iteration},
                               {"rank0_bytes", saved.bytes}, {"stall_s", saved.stall_s},
                               {"async", config_.get_bool("checkpoint.async")}});
}

void SessionImpl::restore() {
    restored_ = checkpoints_.restore();
    const std::int64_t superseded = results_.resume_after(restored_ ? restored_->iteration() : 0);
    if (superseded > 0 && context_.world_rank == 0)
        storage::write_stderr_line(fmt::format(
            "trainrt: {} result row(s) reported after the {} were moved to result.superseded.jsonl",
            superseded, restored_ ? "restored checkpoint" : "last start"));
    if (!restored_) return;
    if (context_.world_rank == 0) {
        storage::append_event(context_.run_dir, "restore", context_,
                              {{"checkpoint", restored_->path()},
                               {"iteration", restored_->iteration()},
                               {"written_by_ranks", restored_->world_size()},
                               {"superseded_rows", superseded}});
        std::cout << "[trainrt] resuming from " << restored_->path() << " (iteration "
                  << restored_->iteration() << ")" << std::endl;
    }
}

DatasetShard SessionImpl::dataset_shard(const std::string& split, std::uint64_t epoch) {
    data::ShardRequest request;
    request.path = config_.get("data.path");
    request.split = split;
    request.rank = context_.world_rank;
    request.ranks = context_.world_size;
    request.shuffle = split == "train" && config_.get_bool("data.shuffle");
    request.seed = static_cast<std::uint64_t>(config_.get_int("run.seed"));
    request.epoch = epoch;
    std::lock_guard<std::mutex> hdf5(h5::library_mutex());  // an async save may be writing
    return data::read_shard(request);
}

}  // namespace trainrt::runtime
