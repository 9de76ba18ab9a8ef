#pragma once
// The commit protocol of a checkpoint in the run directory (hdf5_schemas/checkpoint.md), which
// every save pipeline (pipeline.hpp) ends in: rank 0 creates checkpoints/.pending_<name>; every
// rank writes and fsyncs its files there; the ranks agree that every part is durable (a failure
// anywhere fails the save on every rank, and the pending directory is removed); rank 0 writes
// manifest.json (fsynced), renames .pending_<name> to <name>, fsyncs the directory, replaces
// `latest`, then applies retention. A crash at any instant leaves the previous committed
// checkpoint valid.
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/format/catalog.hpp"
#include "checkpoint/format/manifest.hpp"
#include "checkpoint/write/layout_writer.hpp"
#include "checkpoint/write/write_plan.hpp"
#include "comm/agreement.hpp"
#include "storage/remover.hpp"
#include "trainrt/checkpoint.hpp"
#include "trainrt/comm.hpp"
#include "trainrt/context.hpp"
#include "trainrt/error.hpp"

namespace trainrt::checkpoint {

using Attributes = std::vector<std::pair<std::string, AttributeValue>>;

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

// What one rank wrote, as it is sent to rank 0 for the manifest.
nlohmann::ordered_json rank_write_json(const RankWrite& write);

// The manifest from the tensors every rank described (the plan's blocks name them, with their
// type, global shape and replicated flag) and the files and parts all ranks wrote (`writes`:
// every rank's rank_write_json).
Manifest build_manifest(const WritePlan& plan, const Attributes& attributes, const std::vector<std::string>& writes,
                        const std::string& name, std::int64_t iteration, const Context& context,
                        const std::string& layout, const nlohmann::ordered_json& metrics);

// A save whose every rank's write is durable and agreed, not yet published: what its manifest is
// built from. An async save's manifest is built on the next save's thread, beside the training:
// for a state of many tensors, building it took most of report()'s time.
struct Settled {
    std::string name;
    std::int64_t iteration = 0;
    nlohmann::ordered_json metrics;
    WritePlan plan;  // its blocks' names, types and shapes (their data is gone)
    Attributes attributes;
    std::vector<std::string> writes;  // every rank's RankWrite as JSON
};

class CommitProtocol {
public:
    CommitProtocol(std::unique_ptr<LayoutWriter> writer, RetentionPolicy retention, const Context& context,
                   Communicator& comm);

    LayoutWriter& writer() { return *writer_; }
    bool root() const { return context_.world_rank == 0; }
    std::string dir() const { return checkpoints_dir(context_.run_dir); }
    std::string pending(const std::string& name) const { return dir() + "/" + runlog::kPendingPrefix + name; }

    // Collective: rank 0 makes an empty .pending_<name>; every rank learns whether it could.
    void begin(const std::string& name);
    // This rank's blocks of `plan` into .pending_<name>, its files fsynced (layout_writer.hpp).
    RankWrite write(const WritePlan& plan, const std::string& name);
    // Collective: agree on a step of save `name`; when any rank failed, rank 0 removes the
    // pending directory and every rank throws the agreed CheckpointError.
    void agree_or_discard(const std::exception_ptr& failure, const std::string& name, const std::string& what);
    void discard(const std::string& name) noexcept;
    // Collective, once every rank's data is durable: rank 0 writes the manifest, renames, updates
    // `latest` and applies retention.
    void commit(const WritePlan& plan, const Attributes& attributes, const RankWrite& written, const std::string& name,
                std::int64_t iteration, const nlohmann::ordered_json& metrics);
    // Rank 0, for a save the ranks settled (an async save, on the next save's thread).
    Manifest manifest_of(const Settled& settled) const;
    void publish_and_retain(const Settled& settled);
    // Rank 0: the manifest into the pending directory, then the rename that commits it.
    void publish(const Manifest& manifest);
    // Rank 0. Fault points name `iteration`: publication may run on the next save's thread.
    void apply_retention(const std::string& newest, std::int64_t iteration);
    // Waits for the removal of retired checkpoints (a restore must not take them for leftovers).
    void wait_for_removals() noexcept { remover_.wait(); }

private:
    std::unique_ptr<LayoutWriter> writer_;
    RetentionPolicy retention_;
    const Context& context_;
    Communicator& comm_;
    storage::BackgroundRemover remover_;  // retired checkpoints' bytes
};

}  // namespace trainrt::checkpoint
