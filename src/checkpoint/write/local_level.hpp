#pragma once
// The node-local levels of multi-level checkpoints ([checkpoint] levels; SCR's model):
//   local:   every checkpoint's files are written to a node-local directory (local_dir: memory or
//            a local disk) at its speed, each rank its own file in
//            <local_dir>/trainrt-<run key>/rank_<r>/<name>/, with the checkpoint's manifest;
//   partner: each rank also keeps the file of the rank with its local index on the node before
//            its own (sent over MPI), so the files of a lost node survive on the next one.
// The local save (local_save.hpp) copies every pfs_every-th checkpoint (in the background,
// published at the next save), and the newest one when the run ends or stops, to the run
// directory: the level a requeued job, on other nodes, restores.
//
// Commit: every rank writes into .pending_<name>, the ranks agree that every file (and partner
// copy) is written, then each renames its own directory; a crash in between leaves a checkpoint
// that some nodes lack, which restore does not take.
//
// Restore: the first rank of each node lists the local checkpoints found on its node, each file
// checked against the manifest's size and checksum (a damaged one is not offered); the newest
// checkpoint whose every needed file is held by some node is assembled on each node in a view
// directory (files on the node linked, the others sent over MPI from a node that holds them) and
// opened from there: the parallel filesystem is not read. Every node gets every file (a workload
// may read any rank's block).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/format/layout.hpp"
#include "checkpoint/format/manifest.hpp"
#include "config/settings.hpp"
#include "trainrt/checkpoint.hpp"
#include "trainrt/comm.hpp"
#include "trainrt/context.hpp"

namespace trainrt::checkpoint {

struct LocalRestore {
    Checkpoint checkpoint;
    std::string level;  // "local": every file from its writer's directory; "partner": some from partner copies
};

class LocalLevel {
public:
    // Collective (learns every rank's node).
    LocalLevel(CheckpointLevels levels, const std::string& local_dir, const Context& context, Communicator& comm);
    ~LocalLevel();
    LocalLevel(const LocalLevel&) = delete;
    LocalLevel& operator=(const LocalLevel&) = delete;

    // This rank's directory of the level, and the pending directory of checkpoint `name` in it.
    std::string own_dir() const;
    std::string pending(const std::string& name) const { return own_dir() + "/" + runlog::kPendingPrefix + name; }
    // Makes this rank's empty pending directory of `name`.
    void begin(const std::string& name) const;
    // Collective: sends this rank's file of `name` (in its pending directory) to its partner and
    // receives the files of the ranks whose partner it is. Nothing without the partner level.
    void exchange(const std::string& name);
    // Writes the manifest into this rank's pending directory, commits it by rename, keeps the two
    // newest local checkpoints of this rank and removes old restore views. Every rank calls it
    // after the ranks agreed that every file is written.
    void commit(const Manifest& manifest) const;
    void discard(const std::string& name) const noexcept;
    // This rank's file of committed local checkpoint `name`, for the copy to the run directory.
    std::string own_file(const std::string& name) const;
    // Collective: the newest complete local checkpoint whose iteration is at least `at_least`.
    std::optional<LocalRestore> restore(std::int64_t at_least);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace trainrt::checkpoint
