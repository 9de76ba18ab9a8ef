#pragma once
#include <memory>

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
    DatasetShard dataset_shard(const std::string& split, std::uint64_t epoch) override;
    const metrics::ResultLog& results() const { return results_; }

private:
    const JobConfig& config_;
    Context context_;
    std::unique_ptr<Communicator> comm_;
    metrics::ResultLog results_;
};

}  // namespace trainrt::runtime
