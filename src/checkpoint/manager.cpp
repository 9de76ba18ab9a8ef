#include "checkpoint/manager.hpp"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "checkpoint/format/catalog.hpp"
#include "checkpoint/read/restore.hpp"
#include "checkpoint/write/async_save.hpp"
#include "checkpoint/write/commit.hpp"
#include "checkpoint/write/local_level.hpp"
#include "checkpoint/write/local_save.hpp"
#include "checkpoint/write/sync_save.hpp"
#include "comm/agreement.hpp"
#include "comm/strings.hpp"
#include "log/log.hpp"
#include "trainrt/error.hpp"

namespace fs = std::filesystem;

namespace trainrt::checkpoint {

CheckpointOptions options_from(const CheckpointSettings& settings) {
    CheckpointOptions options;
    options.layout.layout = name_of(settings.layout.value);
    options.layout.alignment = static_cast<std::uint64_t>(settings.alignment_mb.value * 1048576.0);
    options.layout.stripe_count = static_cast<int>(settings.stripe_count.value);
    options.layout.stripe_size = static_cast<std::uint64_t>(settings.stripe_size_mb.value * 1048576.0);
    options.retention.num_to_keep = settings.num_to_keep.value;
    options.retention.score_attribute = settings.score_attribute.value;
    options.retention.higher_is_better = settings.score_order.value == ScoreOrder::max;
    options.async = settings.async.value;
    options.background_snapshot = settings.snapshot.value == SnapshotMode::background;
    if (options.background_snapshot && !options.async)
        throw ConfigError(fmt::format("config: {} needs {} = true: without it report() writes the checkpoint itself",
                                      settings.snapshot.stated("background"), settings.async.key));
    options.spread_replicated = settings.spread_replicated.value;
    options.replicated_reads = settings.replicated_reads.value;
    options.resume_from = settings.resume_from.value;
    options.levels = settings.levels.value;
    options.local_dir = settings.local_dir.value;
    options.pfs_every = settings.pfs_every.value;
    if (options.levels != CheckpointLevels::pfs && (options.async || settings.layout.value == CheckpointLayout::shared))
        throw ConfigError(fmt::format(
            "config: {} needs {} = file_per_rank and {} = false: the local levels copy each rank's file as written",
            settings.levels.stated(name_of(settings.levels.value)), settings.layout.key, settings.async.key));
    if (options.async && settings.layout.value == CheckpointLayout::shared)
        throw ConfigError(fmt::format(
            "config: {} needs {} = file_per_rank: the shared layout writes collectively through MPI-IO, "
            "which a background thread cannot", settings.async.stated("true"), settings.layout.key));
    return options;
}

namespace {

std::unique_ptr<LayoutWriter> make_writer(const LayoutOptions& layout) {
    return layout.layout == "shared" ? make_shared_file_writer(layout) : make_file_per_rank_writer(layout);
}

}  // namespace

struct CheckpointManager::Impl {
    CheckpointOptions options;
    const Context& context;
    Communicator& comm;
    CommitProtocol commit;                  // into the run directory, which every pipeline ends in
    std::unique_ptr<LocalLevel> local;      // with local levels
    std::unique_ptr<SavePipeline> pipeline;  // after `commit` and `local`, which it uses
    std::string restored_level = "pfs";

    // Collective: the shared layout's writer and the local levels learn the ranks.
    Impl(CheckpointOptions options, const Context& context, Communicator& comm);
    // The local levels take every save (options_from allows them without async only); else async
    // or sync.
    std::unique_ptr<SavePipeline> pick_pipeline();
    std::vector<std::string> candidates();
    std::optional<Checkpoint> restore_local(const std::vector<std::string>& candidates);
};

CheckpointManager::Impl::Impl(CheckpointOptions options_in, const Context& context_in, Communicator& comm_in)
    : options(std::move(options_in)), context(context_in), comm(comm_in),
      commit(make_writer(options.layout), options.retention, context, comm),
      local(options.levels == CheckpointLevels::pfs
                ? nullptr
                : std::make_unique<LocalLevel>(options.levels, options.local_dir, context, comm)),
      pipeline(pick_pipeline()) {}

std::unique_ptr<SavePipeline> CheckpointManager::Impl::pick_pipeline() {
    if (local)
        return std::make_unique<LocalSave>(commit, *local, options.pfs_every, options.spread_replicated, context, comm);
    if (options.async)
        return std::make_unique<AsyncSave>(
            commit, AsyncOptions{options.background_snapshot, options.before_background_copy, options.spread_replicated},
            context, comm);
    return std::make_unique<SyncSave>(commit, options.spread_replicated, context, comm);
}

// Collective: rank 0 removes leftovers and lists the checkpoints to try, newest first
// (resume_from alone when set); every rank gets the list.
std::vector<std::string> CheckpointManager::Impl::candidates() {
    std::string listed;
    std::exception_ptr failure;
    if (context.world_rank == 0)
        failure = attempt_checkpoint([&] {
            for (const std::string& removed : clean_leftovers(context.run_dir))
                log::warn("removed leftover of an interrupted save: {}", removed);
            if (!options.resume_from.empty()) listed = options.resume_from + "\n";
            const std::vector<std::string> names = committed_names(context.run_dir);
            for (auto name = names.rbegin(); options.resume_from.empty() && name != names.rend(); ++name)
                listed += checkpoints_dir(context.run_dir) + "/" + *name + "\n";
        });
    comm::agree(comm, failure, "checkpoint: restore");
    listed = comm::broadcast_string(comm, listed, 0);
    std::vector<std::string> paths;
    for (std::size_t begin = 0, end; (end = listed.find('\n', begin)) != std::string::npos; begin = end + 1)
        paths.push_back(listed.substr(begin, end - begin));
    return paths;
}

// Collective: the newest complete local checkpoint of at least the iteration of `candidates`' first.
std::optional<Checkpoint> CheckpointManager::Impl::restore_local(const std::vector<std::string>& candidates) {
    const std::int64_t newest =
        candidates.empty() ? 0 : std::max<std::int64_t>(0, iteration_of_name(fs::path(candidates.front()).filename()));
    std::optional<LocalRestore> found = local->restore(newest);
    if (!found) return std::nullopt;
    restored_level = found->level;
    return std::move(found->checkpoint);
}

CheckpointManager::CheckpointManager(CheckpointOptions options, const Context& context, Communicator& comm)
    : impl_(std::make_unique<Impl>(std::move(options), context, comm)) {}

// The pipeline joins its threads first (a save in flight is not committed), then the local
// levels go, then the commit protocol waits for the removal of retired checkpoints.
CheckpointManager::~CheckpointManager() = default;

const std::string& CheckpointManager::restored_level() const { return impl_->restored_level; }

std::optional<Checkpoint> CheckpointManager::restore() {
    Impl& m = *impl_;
    m.commit.wait_for_removals();  // retired checkpoints are not leftovers of an interrupted save
    const std::vector<std::string> candidates = m.candidates();
    if (m.local && m.options.resume_from.empty()) {  // a local checkpoint as new as the run directory's newest
        if (std::optional<Checkpoint> found = m.restore_local(candidates)) return found;
    }
    return RunRestore(m.options.replicated_reads, m.context, m.comm)
        .first_valid(candidates, !m.options.resume_from.empty());
}

SaveReport CheckpointManager::save(const CheckpointState& state, std::int64_t iteration,
                                   const nlohmann::ordered_json& metrics) {
    return impl_->pipeline->save(state, iteration, metrics);
}

double CheckpointManager::await_snapshot() { return impl_->pipeline->await_snapshot(); }

void CheckpointManager::finish() { impl_->pipeline->finish(); }

}  // namespace trainrt::checkpoint
