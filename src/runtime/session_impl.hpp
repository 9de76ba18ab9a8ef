#pragma once
#include <memory>

#include "checkpoint/manager.hpp"
#include "metrics/result_log.hpp"
#include "trainrt/session.hpp"

namespace trainrt::runtime {

class SessionImpl final : public Session {
public:
    SessionImpl(const JobConfig& config, Context context, std::unique_ptr<Communicator> comm);
    const Context& context() const override { return context_; }
    const JobConfig& config() const override { return config_; }
    Communicator& communicator() override { return *comm_; }
    void report(const Metrics& metrics) override;
    void report(const Metrics& metrics, const CheckpointState& state) override;
    const Checkpoint* checkpoint() const override { return restored_ ? &*restored_ : nullptr; }
    DatasetShard dataset_shard(const std::string& split, std::uint64_t epoch) override;
    const metrics::ResultLog& results() const { return results_; }

    // Collective: finds the checkpoint to resume from (after the run directory exists).
    void restore();
    // Collective: commits an async checkpoint still in flight.
    void finish_checkpoints() { checkpoints_.finish(); }

private:
    const JobConfig& config_;
    Context context_;
    std::unique_ptr<Communicator> comm_;
    metrics::ResultLog results_;
    checkpoint::CheckpointManager checkpoints_;
    std::optional<Checkpoint> restored_;
};

}  // namespace trainrt::runtime
