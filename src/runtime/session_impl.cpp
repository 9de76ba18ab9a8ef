#include "runtime/session_impl.hpp"

#include "data/shard.hpp"

namespace trainrt::runtime {

SessionImpl::SessionImpl(const JobConfig& config, Context context,
                         std::unique_ptr<Communicator> comm)
    : config_(config), context_(std::move(context)), comm_(std::move(comm)),
      results_(context_.run_dir, context_) {}

void SessionImpl::report(const Metrics& metrics) { results_.record(metrics); }

DatasetShard SessionImpl::dataset_shard(const std::string& split, std::uint64_t epoch) {
    data::ShardRequest request;
    request.path = config_.get("data.path");
    request.split = split;
    request.rank = context_.world_rank;
    request.ranks = context_.world_size;
    request.shuffle = split == "train" && config_.get_bool("data.shuffle");
    request.seed = static_cast<std::uint64_t>(config_.get_int("run.seed"));
    request.epoch = epoch;
    return data::read_shard(request);
}

}  // namespace trainrt::runtime
