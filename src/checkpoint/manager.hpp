#pragma once
// The checkpoint lifecycle of one run: restore at start-up, atomic commit on report, retention,
// async save. All ranks call every method (they are collective).
//
// A front. Saves go through the pipeline the settings pick (write/pipeline.hpp): sync, async, or
// the node-local levels ([checkpoint] levels, write/local_level.hpp), where every save goes to
// node-local storage and every pfs_every-th one, and the newest at finish(), is copied to the run
// directory. Each ends in the commit protocol (write/commit.hpp): a crash at any instant leaves
// the previous committed checkpoint valid. Restores take the newest checkpoint that verifies,
// from the local levels or the run directory (read/restore.hpp).
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "checkpoint/format/catalog.hpp"
#include "checkpoint/write/layout_writer.hpp"
#include "checkpoint/write/pipeline.hpp"
#include "config/settings.hpp"
#include "trainrt/checkpoint.hpp"
#include "trainrt/comm.hpp"
#include "trainrt/config.hpp"
#include "trainrt/context.hpp"

namespace trainrt::checkpoint {

struct CheckpointOptions {
    LayoutOptions layout;
    RetentionPolicy retention;
    bool async = false;
    // With async: the large blocks are copied on the save's thread, beside the next step, and
    // await_snapshot() waits for that copy ([checkpoint] snapshot = background).
    bool background_snapshot = false;
    // Tests: called on the save's thread before it copies the large blocks (background snapshot).
    std::function<void()> before_background_copy;
    bool spread_replicated = true;  // write/write_plan.hpp
    // exchange: a restore sends each rank's replicated parts to the others instead of every rank
    // reading every file for them (read/replicated_exchange.hpp); auto: when the job spans several
    // nodes.
    ReplicatedReads replicated_reads = ReplicatedReads::automatic;
    std::string resume_from;  // a checkpoint directory; "" = the newest valid one
    CheckpointLevels levels = CheckpointLevels::pfs;  // write/local_level.hpp
    std::string local_dir = "/dev/shm";
    std::int64_t pfs_every = 10;
};

CheckpointOptions options_from(const CheckpointSettings& settings);

class CheckpointManager {
public:
    CheckpointManager(CheckpointOptions options, const Context& context, Communicator& comm);
    ~CheckpointManager();
    CheckpointManager(const CheckpointManager&) = delete;
    CheckpointManager& operator=(const CheckpointManager&) = delete;

    // Cleans leftovers, picks the checkpoint to resume from (warnings printed by rank 0).
    std::optional<Checkpoint> restore();
    // Saves `state` as checkpoint_<iteration>. Sync: committed on return. Async: copied to host
    // memory (with background snapshots: the large blocks after it returns, see await_snapshot),
    // written in the background, committed at the next save() or finish().
    SaveReport save(const CheckpointState& state, std::int64_t iteration,
                    const nlohmann::ordered_json& metrics);
    // With background snapshots: waits until the save in flight has copied the state it was
    // given (which may change after that), and returns the seconds waited; 0 at once when no copy
    // is pending. Not collective.
    double await_snapshot();
    // Waits for and commits an async save in flight; with local levels, copies the newest local
    // checkpoint to the run directory if it is not there yet. Safe to call when neither is due.
    void finish();
    // Where restore() found its checkpoint: "pfs" (the run directory), "local" or "partner".
    const std::string& restored_level() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace trainrt::checkpoint
