#pragma once
// The save to the node-local levels ([checkpoint] levels; pipeline.hpp): every checkpoint is
// written and committed on the nodes (local_level.hpp) at their storage's speed; every
// pfs_every-th one, and the newest at finish(), is copied to the run directory on a thread (file
// copies only: no MPI, no HDF5) and published there through the commit protocol (commit.hpp) by
// the next save or finish(): the level a requeued job, on other nodes, restores.
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "checkpoint/format/manifest.hpp"
#include "checkpoint/write/commit.hpp"
#include "checkpoint/write/local_level.hpp"
#include "checkpoint/write/pipeline.hpp"
#include "trainrt/checkpoint.hpp"
#include "trainrt/comm.hpp"
#include "trainrt/context.hpp"

namespace trainrt::checkpoint {

class LocalSave final : public SavePipeline {
public:
    // `spread_replicated`: write_plan.hpp.
    LocalSave(CommitProtocol& commit, LocalLevel& level, std::int64_t pfs_every, bool spread_replicated,
              const Context& context, Communicator& comm);
    ~LocalSave() override;  // joins the copy to the run directory in flight (not published)
    LocalSave(const LocalSave&) = delete;
    LocalSave& operator=(const LocalSave&) = delete;

    SaveReport save(const CheckpointState& state, std::int64_t iteration,
                    const nlohmann::ordered_json& metrics) override;
    // Publishes the copy in flight; copies the newest local checkpoint to the run directory if it
    // is not there yet.
    void finish() override;

private:
    struct Flush;
    // Collective: every rank starts copying its file of local checkpoint `manifest` to the run
    // directory in the background; settle_flush() waits for the copies and rank 0 publishes it
    // there as any checkpoint.
    void start_flush(Manifest manifest);
    void settle_flush();
    // Collective: agree on a step of local save `name`; when any rank failed, every rank removes
    // its pending directory of the level and throws the agreed CheckpointError.
    void agree_local(const std::exception_ptr& failure, const std::string& name, const std::string& what);

    CommitProtocol& commit_;
    LocalLevel& level_;
    std::int64_t pfs_every_;
    bool spread_replicated_;
    const Context& context_;
    Communicator& comm_;
    std::int64_t saves_ = 0;
    std::optional<Manifest> newest_;  // the newest local checkpoint, until it is in the run directory
    std::unique_ptr<Flush> flushing_;
};

}  // namespace trainrt::checkpoint
