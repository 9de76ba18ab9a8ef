#pragma once
// A way of saving a run's checkpoints, which the manager (manager.hpp) picks from [checkpoint]:
//   sync_save.hpp:  written and committed before report() returns;
//   async_save.hpp: copied to host memory in report(), written on a thread beside the training,
//                   committed at the next save or finish();
//   local_save.hpp: written to node-local storage (local_level.hpp), every pfs_every-th one
//                   copied to the run directory.
// Each ends in the commit protocol (commit.hpp). All ranks call every method (they are
// collective) unless it says otherwise.
#include <chrono>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "trainrt/checkpoint.hpp"

namespace trainrt::checkpoint {

// One save's outcome, for the events log and the stall measurement.
struct SaveReport {
    std::string name;
    std::uint64_t bytes = 0;   // this rank's bytes
    double stall_s = 0;        // time report() spent on the checkpoint
    double commit_s = 0;       // write to commit, for sync saves
};

inline double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class SavePipeline {
public:
    virtual ~SavePipeline() = default;
    // Saves `state` as checkpoint_<iteration>; when it is committed is the pipeline's own.
    virtual SaveReport save(const CheckpointState& state, std::int64_t iteration,
                            const nlohmann::ordered_json& metrics) = 0;
    // With background snapshots: waits until the save in flight has copied the state it was
    // given (which may change after that), and returns the seconds waited; 0 at once when no copy
    // is pending. Not collective.
    virtual double await_snapshot() { return 0; }
    // Commits what a save left in flight. Safe to call when nothing is due.
    virtual void finish() {}
};

}  // namespace trainrt::checkpoint
