#pragma once
// The synchronous save (pipeline.hpp): report() writes this rank's blocks into the pending
// directory and the checkpoint is committed (commit.hpp) before it returns.
#include <cstdint>

#include <nlohmann/json.hpp>

#include "checkpoint/write/commit.hpp"
#include "checkpoint/write/pipeline.hpp"
#include "trainrt/checkpoint.hpp"
#include "trainrt/comm.hpp"
#include "trainrt/context.hpp"

namespace trainrt::checkpoint {

class SyncSave final : public SavePipeline {
public:
    // `spread_replicated`: write_plan.hpp.
    SyncSave(CommitProtocol& commit, bool spread_replicated, const Context& context, Communicator& comm);
    SaveReport save(const CheckpointState& state, std::int64_t iteration,
                    const nlohmann::ordered_json& metrics) override;

private:
    CommitProtocol& commit_;
    bool spread_replicated_;
    const Context& context_;
    Communicator& comm_;
};

}  // namespace trainrt::checkpoint
