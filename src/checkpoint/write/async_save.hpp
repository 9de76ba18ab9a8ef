#pragma once
// The asynchronous save ([checkpoint] async; pipeline.hpp): report() copies this rank's blocks to
// host memory (with background snapshots, the large blocks after it returns: await_snapshot) and
// a thread writes them into the pending directory. The save is agreed at the next save() or
// finish(); the next save's thread publishes it (commit.hpp) before it writes its own data, so
// the previous save is committed before this one's data is written.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/write/commit.hpp"
#include "checkpoint/write/pipeline.hpp"
#include "checkpoint/write/write_plan.hpp"
#include "trainrt/checkpoint.hpp"
#include "trainrt/comm.hpp"
#include "trainrt/context.hpp"

namespace trainrt::checkpoint {

struct AsyncOptions {
    // The large blocks are copied on the save's thread, beside the next step, and
    // await_snapshot() waits for that copy ([checkpoint] snapshot = background).
    bool background_snapshot = false;
    // Tests: called on the save's thread before it copies the large blocks (background snapshot).
    std::function<void()> before_background_copy;
    bool spread_replicated = true;  // write_plan.hpp
};

class AsyncSave final : public SavePipeline {
public:
    AsyncSave(CommitProtocol& commit, AsyncOptions options, const Context& context, Communicator& comm);
    ~AsyncSave() override;  // joins the thread of the save in flight (not committed)
    AsyncSave(const AsyncSave&) = delete;
    AsyncSave& operator=(const AsyncSave&) = delete;

    SaveReport save(const CheckpointState& state, std::int64_t iteration,
                    const nlohmann::ordered_json& metrics) override;
    double await_snapshot() override;
    // Waits for the save in flight and commits it (publication on this thread).
    void finish() override;

private:
    struct InFlight;
    // Joins the save in flight and agrees that every rank wrote it; rank 0 gets what its
    // manifest is built from (to publish). Nothing when no save is in flight.
    std::optional<Settled> settle_in_flight();
    // Copies this rank's blocks of `plan` and writes them on a thread, after publishing `previous`
    // (rank 0); the thread makes the pending directory on every rank.
    void start_write(const WritePlan& plan, const Attributes& attributes, const std::string& name,
                     std::int64_t iteration, const nlohmann::ordered_json& metrics, std::optional<Settled> previous);
    void take_snapshot(InFlight& flight);

    CommitProtocol& commit_;
    AsyncOptions options_;
    const Context& context_;
    Communicator& comm_;
    std::unique_ptr<InFlight> in_flight_;
    std::vector<HostBuffer> host_copy_;  // reused by every async save; one save in flight at most
};

}  // namespace trainrt::checkpoint
