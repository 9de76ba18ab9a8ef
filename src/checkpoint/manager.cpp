#include "checkpoint/manager.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checkpoint/format/catalog.hpp"
#include "checkpoint/format/layout.hpp"
#include "checkpoint/format/validate.hpp"
#include "checkpoint/read/reader.hpp"
#include "checkpoint/read/replicated_exchange.hpp"
#include "checkpoint/read/verify.hpp"
#include "checkpoint/write/fault.hpp"
#include "checkpoint/write/layout_writer.hpp"
#include "checkpoint/write/local_level.hpp"
#include "checkpoint/write/snapshot_check.hpp"
#include "comm/agreement.hpp"
#include "comm/strings.hpp"
#include "storage/direct_writer.hpp"
#include "storage/page_coherence.hpp"
#include "storage/posix.hpp"
#include "storage/remover.hpp"
#include "runlog/clock.hpp"
#include "trainrt/error.hpp"
#include "trainrt/threads.hpp"
#include "log/log.hpp"

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

using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

// Runs a step of a save or restore: whatever fails underneath (storage, HDF5...) is the
// checkpoint's failure (exit 8), with its own message.
template <class Step>
std::exception_ptr attempt_checkpoint(Step&& step) {
    return comm::attempt([&] {
        try {
            step();
        } catch (const CheckpointError&) {
            throw;
        } catch (const std::exception& error) {
            throw CheckpointError(error.what());
        }
    });
}

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

using Attributes = std::vector<std::pair<std::string, AttributeValue>>;

Json rank_write_json(const RankWrite& write) {
    Json files = Json::array(), parts = Json::array();
    for (const FileEntry& f : write.files) files.push_back(file_json(f));
    for (const auto& [tensor, p] : write.parts)
        parts.push_back({{"tensor", tensor}, {"file", p.file}, {"dataset", p.dataset},
                         {"offset", p.offset}, {"shape", p.shape}});
    return {{"files", files}, {"parts", parts}};
}

// The manifest from the tensors every rank described (the plan's blocks name them, with their
// type, global shape and replicated flag) and the files and parts all ranks wrote.
Manifest build_manifest(const WritePlan& plan, const Attributes& attributes, const std::vector<std::string>& writes,
                        const std::string& name, std::int64_t iteration, const Context& context,
                        const std::string& layout, const Json& metrics) {
    Manifest manifest{name, iteration, context.world_size, layout, runlog::time_now(), metrics, attributes, {}, {}};
    for (const TensorPart& part : plan.blocks)
        manifest.tensors[part.name] = {part.type, part.global_shape, part.replicated, {}};
    for (const std::string& text : writes) {
        Json write = Json::parse(text);
        for (const Json& f : write.at("files")) merge_file(manifest.files, file_from_json(f, "a rank's write"));
        for (const Json& p : write.at("parts"))
            manifest.tensors.at(p.at("tensor").get<std::string>())
                .parts.push_back({p.at("file"), p.at("dataset"), p.at("offset").get<Shape>(),
                                  p.at("shape").get<Shape>()});
    }
    for (const FileEntry& file : manifest.files) check_ranges(file, "the ranks' writes of " + name);
    return manifest;
}

}  // namespace

struct CheckpointManager::Impl {
    CheckpointOptions options;
    const Context& context;
    Communicator& comm;
    std::unique_ptr<LayoutWriter> writer;

    // An async save whose every rank's write is durable and agreed, not yet published: what its
    // manifest is built from. The manifest is built on the next save's thread, beside the
    // training: for a state of many tensors, building it took most of report()'s time.
    struct Settled {
        std::string name;
        std::int64_t iteration = 0;
        Json metrics;
        WritePlan plan;  // its blocks' names, types and shapes (their data is gone)
        Attributes attributes;
        std::vector<std::string> writes;  // every rank's RankWrite as JSON
    };
    Manifest manifest_of(const Settled& settled) const {
        return build_manifest(settled.plan, settled.attributes, settled.writes, settled.name, settled.iteration,
                              context, writer->name(), settled.metrics);
    }
    // An async save between its background write and its commit. Its thread first publishes
    // (rank 0) the async save before it, whose every part the ranks agreed was durable, then
    // writes this save's data: the previous save is committed before this one's data is written.
    struct InFlight {
        std::string name;
        std::int64_t iteration = 0;
        Json metrics;
        WritePlan plan;  // its blocks' data in host_copy
        Attributes attributes;
        std::string written_json;  // this rank's RankWrite (rank_write_json), made on the thread
        std::optional<Settled> previous;  // rank 0: the save before, to publish first
        std::exception_ptr failure;  // what publishing the previous save or write_local threw
        std::thread thread;
        // Background snapshot: set by the thread once the state's large blocks are copied.
        std::mutex copy_mutex;
        std::condition_variable copy_done;
        bool copied = true;
        std::vector<BlockSamples> samples;  // per block of `plan`: the large ones' at report()
        void mark_copied() {
            std::lock_guard<std::mutex> lock(copy_mutex);
            copied = true;
            copy_done.notify_all();
        }
    };
    std::unique_ptr<InFlight> in_flight;
    std::vector<HostBuffer> host_copy;  // reused by every async save; one save in flight at most
    storage::BackgroundRemover remover;  // retired checkpoints' bytes
    std::unique_ptr<LocalLevel> local;   // with local levels
    std::int64_t local_saves = 0;
    std::optional<Manifest> newest_local;  // the newest local checkpoint, until it is in the run directory
    // A local checkpoint being copied to the run directory on a thread (file copies only: no MPI,
    // no HDF5), published by the next save or finish().
    struct Flush {
        Manifest manifest;
        std::exception_ptr failure;
        std::thread thread;
    };
    std::unique_ptr<Flush> flushing;
    std::string restored_level = "pfs";

    bool root() const { return context.world_rank == 0; }
    // Collective. Across nodes the exchange spares the shared filesystem N reads. On a filesystem
    // not trusted coherent (storage/page_coherence.hpp) every replicated byte a rank takes then
    // comes from bytes a rank verified in memory, not through a client that may serve others (a
    // ceph-fuse client served zeros for blocks it had written: test_cephfs.sh); the ranks agree,
    // so that none depends on every rank judging the filesystem alike. Otherwise, on one node the
    // files and the MPI transfers go through the same memory and disk, and the exchange is the
    // slower of the two there.
    bool exchanges_replicated(const std::string& path) {
        if (options.replicated_reads != ReplicatedReads::automatic)
            return options.replicated_reads == ReplicatedReads::exchange;
        if (context.num_nodes > 1) return true;
        const double coherent = storage::page_cache_coherent(path) ? 1.0 : 0.0;
        return comm.allreduce_value(coherent, ReduceOp::min) == 0.0;
    }
    std::string dir() const { return checkpoints_dir(context.run_dir); }
    std::string pending(const std::string& name) const { return dir() + "/.pending_" + name; }

    void begin(const std::string& name);
    std::vector<std::string> candidates();
    std::string verify_together(const std::string& path, Manifest& manifest, KeptImage& kept);
    WritePlan plan(const CheckpointState& state) const {
        return plan_writes(state, context.world_rank, context.world_size, options.spread_replicated);
    }
    RankWrite write_local(const WritePlan& plan, const std::string& name);
    void commit(const WritePlan& plan, const Attributes& attributes, const RankWrite& written,
                const std::string& name, std::int64_t iteration, const Json& metrics);
    // Joins the async save in flight and agrees that every rank wrote it; rank 0 gets what its
    // manifest is built from (to publish). Nothing when no save is in flight.
    std::optional<Settled> settle_in_flight();
    void publish_and_retain(const Settled& settled) {
        publish(manifest_of(settled));
        apply_retention(settled.name, settled.iteration);
    }
    // Copies this rank's blocks of `plan` and writes them on a thread, after publishing `previous`
    // (rank 0); the thread makes the pending directory on every rank.
    void start_async(const WritePlan& plan, const Attributes& attributes, const std::string& name,
                     std::int64_t iteration, const Json& metrics, std::optional<Settled> previous);
    void take_snapshot(InFlight& flight);
    void publish(const Manifest& manifest);
    // Fault points name `iteration`: publication may run on the next save's thread.
    void apply_retention(const std::string& newest, std::int64_t iteration);
    void discard(const std::string& name) noexcept;
    SaveReport save_local(const CheckpointState& state, std::int64_t iteration, const Json& metrics);
    // Collective: every rank starts copying its file of local checkpoint `manifest` to the run
    // directory in the background; settle_flush() waits for the copies and rank 0 publishes it
    // there as any checkpoint.
    void start_flush(Manifest manifest);
    void settle_flush();
    void agree_local(const std::exception_ptr& failure, const std::string& name, const std::string& what) {
        try {
            comm::agree(comm, failure, what);
        } catch (const CheckpointError&) {
            local->discard(name);
            throw;
        }
    }
    // Collective: agree on a step of save `name`; when any rank failed, rank 0 removes the
    // pending directory and every rank throws the agreed CheckpointError.
    void agree_or_discard(const std::exception_ptr& failure, const std::string& name, const std::string& what) {
        try {
            comm::agree(comm, failure, what);
        } catch (const CheckpointError&) {
            discard(name);
            throw;
        }
    }
};

// Rank 0 makes an empty .pending_<name>; every rank learns whether it could.
void CheckpointManager::Impl::begin(const std::string& name) {
    std::exception_ptr failure;
    if (root())
        failure = attempt_checkpoint([&] {
            storage::make_dirs(dir());
            fs::remove_all(pending(name));
            // No fsync here: a pending directory need not survive a crash, and an fsync of the
            // directory would wait for every dirty page of the filesystem's journal (ext4
            // data=ordered), stalling training in async mode. The commit's rename is fsynced.
            storage::make_dirs(pending(name));
        });
    comm::agree(comm, failure, "checkpoint: creating " + pending(name));
}

RankWrite CheckpointManager::Impl::write_local(const WritePlan& plan, const std::string& name) {
    fault_point("before_data", context.world_rank);
    return writer->write(plan, pending(name), context);
}

void CheckpointManager::Impl::discard(const std::string& name) noexcept {
    if (!root()) return;
    std::error_code ignored;
    fs::remove_all(pending(name), ignored);
}

// Every rank's data is durable: rank 0 writes the manifest, renames, updates `latest`.
void CheckpointManager::Impl::commit(const WritePlan& plan, const Attributes& attributes,
                                     const RankWrite& written, const std::string& name,
                                     std::int64_t iteration, const Json& metrics) {
    std::vector<std::string> writes = comm::allgather_strings(comm, rank_write_json(written).dump());
    std::exception_ptr failure;
    if (root())
        failure = attempt_checkpoint(
            [&] { publish(build_manifest(plan, attributes, writes, name, iteration, context, writer->name(), metrics)); });
    agree_or_discard(failure, name, "checkpoint: committing " + name);
    if (root()) apply_retention(name, iteration);
}

std::optional<CheckpointManager::Impl::Settled> CheckpointManager::Impl::settle_in_flight() {
    if (!in_flight) return std::nullopt;
    std::unique_ptr<InFlight> flight = std::move(in_flight);
    flight->thread.join();
    try {
        comm::agree(comm, flight->failure, "checkpoint: writing " + flight->name);
    } catch (const CheckpointError&) {
        discard(flight->name);
        if (flight->previous) discard(flight->previous->name);  // its publication failed
        throw;
    }
    std::vector<std::string> writes = comm::allgather_strings(comm, flight->written_json);
    if (!root()) return std::nullopt;
    return Settled{flight->name,           flight->iteration,          std::move(flight->metrics),
                   std::move(flight->plan), std::move(flight->attributes), std::move(writes)};
}

void CheckpointManager::Impl::publish(const Manifest& manifest) {
    const std::string staging = pending(manifest.name);
    fault_point_at("before_manifest", context.world_rank, manifest.iteration);
    storage::write_file_atomic(staging + "/" + kManifestFile, to_json(manifest).dump(2) + "\n");
    fault_point_at("before_rename", context.world_rank, manifest.iteration);
    const std::string final_dir = dir() + "/" + manifest.name;
    if (fs::exists(final_dir)) {
        // A checkpoint of this iteration from a run that crashed after it, which restore skipped
        // (it did not verify, or resume_from chose an older one): set it aside, then replace it.
        const std::string stale = dir() + "/.deleting_stale_" + manifest.name;
        fs::remove_all(stale);
        storage::rename_durable(final_dir, stale);
        storage::rename_durable(staging, final_dir);
        fs::remove_all(stale);
    } else {
        storage::rename_durable(staging, final_dir);
    }
    try {  // committed by the rename; `latest` is a convenience (restore scans the directory)
        write_latest(context.run_dir, manifest.name);
    } catch (const Error& e) {
        log::warn("{} is committed, but updating checkpoints/latest failed: {}", manifest.name, e.what());
    }
}

// Deletion only after the new checkpoint is committed; a failure here is a warning. The victims
// leave the catalog here; their bytes are removed in the background (the save does not wait).
void CheckpointManager::Impl::apply_retention(const std::string& newest, std::int64_t iteration) {
    std::vector<std::string> retired;
    try {
        for (const std::string& victim : retention_victims(context.run_dir, newest, options.retention)) {
            fault_point_at("during_retention", context.world_rank, iteration);
            retired.push_back(retire_checkpoint(context.run_dir, victim));
        }
    } catch (const std::exception& e) {
        log::warn("checkpoint retention: {}", e.what());
    }
    remover.remove(std::move(retired));
}

CheckpointManager::CheckpointManager(CheckpointOptions options, const Context& context,
                                     Communicator& comm)
    : impl_(std::unique_ptr<Impl>(new Impl{std::move(options), context, comm, nullptr, nullptr})) {
    impl_->writer = impl_->options.layout.layout == "shared"
                        ? make_shared_file_writer(impl_->options.layout)
                        : make_file_per_rank_writer(impl_->options.layout);
    if (impl_->options.levels != CheckpointLevels::pfs)
        impl_->local = std::make_unique<LocalLevel>(impl_->options.levels, impl_->options.local_dir, context, comm);
}

const std::string& CheckpointManager::restored_level() const { return impl_->restored_level; }

CheckpointManager::~CheckpointManager() {
    if (impl_->in_flight && impl_->in_flight->thread.joinable()) impl_->in_flight->thread.join();
    if (impl_->flushing && impl_->flushing->thread.joinable()) impl_->flushing->thread.join();
}

// Collective: rank 0 removes leftovers and lists the checkpoints to try, newest first
// (resume_from alone when set); every rank gets the list.
std::vector<std::string> CheckpointManager::Impl::candidates() {
    std::string listed;
    std::exception_ptr failure;
    if (root())
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

// Collective: every rank reads the manifest and checksums a share of the files (rank 0 alone
// would read every rank's shards, the whole checkpoint, while the others wait), then checks the
// schema of a share; the verdict, the first problem found, is the same on every rank. A rank
// keeps its own file's bytes from its share (`kept`) when the checkpoint verifies.
std::string CheckpointManager::Impl::verify_together(const std::string& path, Manifest& manifest, KeptImage& kept) {
    auto first_of_all = [&](const std::string& mine) {
        for (const std::string& problem : comm::allgather_strings(comm, mine))
            if (!problem.empty()) return problem;
        return std::string();
    };
    std::string mine = read_manifest_or_reason(path, manifest);
    if (mine.empty()) mine = verify_share(path, manifest, context.world_rank, context.world_size, &kept);
    std::string verdict = first_of_all(mine);
    if (verdict.empty()) verdict = first_of_all(verify_schema_share(path, manifest, context.world_rank, context.world_size, &kept));
    if (!verdict.empty()) {
        kept.image.reset();
        kept.ranges.clear();
    }
    return verdict;
}

std::optional<Checkpoint> CheckpointManager::restore() {
    Impl& m = *impl_;
    m.remover.wait();  // retired checkpoints are not leftovers of an interrupted save
    const std::vector<std::string> candidates = m.candidates();
    if (m.local && m.options.resume_from.empty()) {  // a local checkpoint as new as the run directory's newest
        const std::int64_t newest =
            candidates.empty() ? 0 : std::max<std::int64_t>(0, iteration_of_name(fs::path(candidates.front()).filename()));
        if (std::optional<LocalRestore> found = m.local->restore(newest)) {
            m.restored_level = found->level;
            return std::move(found->checkpoint);
        }
    }
    for (const std::string& path : candidates) {
        // Held beside the state it is read into: at most half the memory left, shared with the
        // node's other ranks. A rank alone reads every file it verifies (either layout); among
        // several, its own file_per_rank file.
        const std::string own = m.context.world_size == 1 ? "" : rank_file_name(m.context.world_rank);
        const std::uint64_t budget = storage::available_memory_bytes() / 2 / std::max(1, m.context.local_size);
        KeptImage kept{own, budget, {}, {}};
        Manifest manifest;
        const std::string problem = m.verify_together(path, manifest, kept);
        if (problem.empty()) {
            std::shared_ptr<Checkpoint::Impl> impl =
                open_checkpoint_impl(path, std::move(manifest), std::move(kept), compute_threads(m.context));
            const std::uint64_t held = impl->kept.held_bytes();
            if (m.exchanges_replicated(path)) {
                const std::uint64_t received = exchange_replicated(*impl, m.comm, m.context, budget > held ? budget - held : 0);
                if (m.root() && received > 0)
                    log::info("restore: {:.1f} MiB of replicated tensors received from the ranks that verified them "
                              "(checkpoint.replicated_reads), not read from their files", received / 1048576.0);
            }
            return Checkpoint(impl);
        }
        if (!m.options.resume_from.empty()) {
            std::exception_ptr refused;
            if (m.root())
                refused = std::make_exception_ptr(CheckpointError(
                    fmt::format("checkpoint: resume_from {} does not verify: {}", path, problem)));
            comm::agree(m.comm, refused, "checkpoint: restore");
        }
        if (m.root()) log::warn("skipping checkpoint {}: {}", path, problem);
    }
    return std::nullopt;
}

SaveReport CheckpointManager::save(const CheckpointState& state, std::int64_t iteration,
                                   const Json& metrics) {
    Impl& m = *impl_;
    if (m.local) return m.save_local(state, iteration, metrics);
    const auto start = Clock::now();
    // Async: the save in flight is agreed here and published by this save's thread.
    std::optional<Impl::Settled> previous = m.options.async ? m.settle_in_flight() : std::nullopt;
    finish();
    SaveReport report{checkpoint_name(iteration), 0, 0, 0};
    WritePlan plan;
    set_fault_iteration(iteration);
    try {
        validate_state(state, m.comm);
        plan = m.plan(state);
        report.bytes = plan.bytes();
        if (!m.options.async) m.begin(report.name);
    } catch (const Error&) {  // the save before is durable on every rank: commit it all the same
        if (previous) {
            try {
                m.publish_and_retain(*previous);
            } catch (const std::exception& error) {
                log::warn("checkpoint: committing {} failed: {}", previous->name, error.what());
            }
        }
        throw;
    }
    if (m.options.async) {
        m.start_async(plan, state.attributes(), report.name, iteration, metrics, std::move(previous));
        report.stall_s = seconds_since(start);
        return report;
    }
    RankWrite written;
    std::exception_ptr failure = attempt_checkpoint([&] { written = m.write_local(plan, report.name); });
    m.agree_or_discard(failure, report.name, "checkpoint: writing " + report.name);
    m.commit(plan, state.attributes(), written, report.name, iteration, metrics);
    report.stall_s = report.commit_s = seconds_since(start);
    return report;
}

void CheckpointManager::Impl::start_async(const WritePlan& plan, const Attributes& attributes, const std::string& name,
                                          std::int64_t iteration, const Json& metrics, std::optional<Settled> previous) {
    auto flight = std::make_unique<InFlight>();
    flight->name = name;
    flight->iteration = iteration;
    flight->metrics = metrics;
    flight->previous = std::move(previous);
    const bool background = options.background_snapshot;
    flight->plan = copy_blocks(plan, host_copy, background ? CopySelect::small : CopySelect::all);
    if (background) {
        flight->copied = false;
        for (std::size_t i = 0; i < plan.blocks.size(); ++i)
            flight->samples.push_back(plan.writes[i] && plan.blocks[i].bytes() >= kBackgroundBlockBytes
                                          ? sample_block(plan.blocks[i].data, plan.blocks[i].bytes())
                                          : BlockSamples{});
    }
    flight->attributes = attributes;
    InFlight* raw = flight.get();
    flight->thread = std::thread([this, raw, background] {
        // The snapshot comes first (the training thread may wait for it), then the save before is
        // published whatever the snapshot found, then this one is written.
        const std::exception_ptr snapshot = background ? attempt_checkpoint([&] { take_snapshot(*raw); }) : nullptr;
        raw->mark_copied();
        raw->failure = attempt_checkpoint([&] {
            if (raw->previous) publish_and_retain(*raw->previous);
            if (snapshot) std::rethrow_exception(snapshot);
            // Every rank makes the pending directory (mkdir -p): no agreement on the main thread.
            // A stale one was removed by restore's clean-up or by the discard of a failed save.
            storage::make_dirs(pending(raw->name));
            raw->written_json = rank_write_json(write_local(raw->plan, raw->name)).dump();
        });
    });
    in_flight = std::move(flight);
}

// The large blocks copied into the host buffers, each checked against its samples from report().
void CheckpointManager::Impl::take_snapshot(InFlight& flight) {
    if (options.before_background_copy) options.before_background_copy();
    const WritePlan live = flight.plan;
    flight.plan = copy_blocks(live, host_copy, CopySelect::large);
    for (std::size_t i = 0; i < live.blocks.size(); ++i) {
        if (flight.samples[i].words.empty()) continue;
        const TensorPart& block = live.blocks[i];
        const std::string problem =
            snapshot_problem(block.name, flight.samples[i], flight.plan.blocks[i].data, block.data, block.bytes());
        if (!problem.empty()) throw CheckpointError(problem);
    }
}

double CheckpointManager::await_snapshot() {
    Impl::InFlight* flight = impl_->in_flight.get();
    if (flight == nullptr) return 0;
    std::unique_lock<std::mutex> lock(flight->copy_mutex);
    if (flight->copied) return 0;
    const auto start = Clock::now();
    flight->copy_done.wait(lock, [&] { return flight->copied; });
    return seconds_since(start);
}

// Commits the async save in flight on return (publication on this thread).
void CheckpointManager::finish() {
    Impl& m = *impl_;
    m.settle_flush();
    if (m.newest_local) {
        m.start_flush(*m.newest_local);
        m.settle_flush();
    }
    if (!m.in_flight) return;
    const std::string name = m.in_flight->name;
    const std::optional<Impl::Settled> settled = m.settle_in_flight();
    std::exception_ptr failure;
    if (m.root()) failure = attempt_checkpoint([&] { m.publish(m.manifest_of(*settled)); });
    m.agree_or_discard(failure, name, "checkpoint: committing " + name);
    if (m.root()) m.apply_retention(name, settled->iteration);
}

SaveReport CheckpointManager::Impl::save_local(const CheckpointState& state, std::int64_t iteration,
                                               const Json& metrics) {
    const auto start = Clock::now();
    settle_flush();
    SaveReport report{checkpoint_name(iteration), 0, 0, 0};
    set_fault_iteration(iteration);
    validate_state(state, comm);
    const WritePlan plan = this->plan(state);
    report.bytes = plan.bytes();
    RankWrite written;
    agree_local(attempt_checkpoint([&] {
                    local->begin(report.name);
                    fault_point("before_data", context.world_rank);
                    written = writer->write(plan, local->pending(report.name), context);
                }),
                report.name, "checkpoint: writing " + report.name + " to the local level");
    agree_local(attempt_checkpoint([&] { local->exchange(report.name); }), report.name,
                "checkpoint: sending " + report.name + " to the partner ranks");
    const std::vector<std::string> writes = comm::allgather_strings(comm, rank_write_json(written).dump());
    const std::string text = comm::broadcast_string(
        comm, root() ? to_json(build_manifest(plan, state.attributes(), writes, report.name, iteration, context,
                                              writer->name(), metrics)).dump() : std::string(), 0);
    const Manifest manifest = manifest_from_text(text, report.name);
    agree_local(attempt_checkpoint([&] { local->commit(manifest); }), report.name,
                "checkpoint: committing " + report.name + " on the local level");
    newest_local = manifest;
    if (++local_saves % options.pfs_every == 0) start_flush(manifest);
    report.stall_s = report.commit_s = seconds_since(start);
    return report;
}

void CheckpointManager::Impl::start_flush(Manifest manifest) {
    newest_local.reset();
    begin(manifest.name);
    auto flush = std::make_unique<Flush>();
    flush->manifest = std::move(manifest);
    Flush* raw = flush.get();
    flush->thread = std::thread([this, raw] {
        raw->failure = attempt_checkpoint([&] {
            const std::string to = pending(raw->manifest.name) + "/" + rank_file_name(context.world_rank);
            fault_point_at("during_flush", context.world_rank, raw->manifest.iteration);
            storage::copy_file_direct(local->own_file(raw->manifest.name), to);
            storage::fsync_path(to);
        });
    });
    flushing = std::move(flush);
}

void CheckpointManager::Impl::settle_flush() {
    if (!flushing) return;
    const std::unique_ptr<Flush> flush = std::move(flushing);
    flush->thread.join();
    const Manifest& manifest = flush->manifest;
    agree_or_discard(flush->failure, manifest.name, "checkpoint: copying " + manifest.name + " to the run directory");
    const std::exception_ptr failure = root() ? attempt_checkpoint([&] { publish(manifest); }) : nullptr;
    agree_or_discard(failure, manifest.name, "checkpoint: committing " + manifest.name);
    if (root()) apply_retention(manifest.name, manifest.iteration);
}

}  // namespace trainrt::checkpoint
