#pragma once
#include <atomic>
#include <memory>
#include <optional>
#include <utility>

#include "checkpoint/manager.hpp"
#include "config/settings.hpp"
#include "metrics/result_log.hpp"
#include "runtime/resume.hpp"
#include "runtime/scheduler_pause.hpp"
#include "runtime/stop_criteria.hpp"
#include "runtime/stop_coordinator.hpp"
#include "trainrt/session.hpp"

namespace trainrt::runtime {

class SessionImpl final : public Session {
public:
    SessionImpl(const JobConfig& config, const Settings& settings, Context context,
                std::unique_ptr<Communicator> comm);
    const Context& context() const override { return context_; }
    const JobConfig& config() const override { return config_; }
    Communicator& communicator() override { return *comm_; }
    void report(const Metrics& metrics) override;
    void report(const Metrics& metrics, const CheckpointState& state) override;
    void save_at_stop(const CheckpointState& state) override;
    bool should_stop() override;
    bool checkpoint_due() override { return stops_.checkpoint_due(); }
    const Checkpoint* checkpoint() const override { return resume_.take(); }
    DatasetShard dataset_shard(const std::string& split, std::uint64_t epoch) override;
    Dataset dataset(const std::string& split) override;
    void await_snapshot() override;
    bool may_end_at(const Metrics& metrics) override;
    const metrics::ResultLog& results() const { return results_; }
    void end_progress() { results_.end_progress(); }

    // Collective: finds the checkpoint to resume from (after the run directory exists).
    void restore();
    // After the workload returned: a restored checkpoint it never took is given up (resume.hpp).
    void end_resume();
    // Collective: commits an async checkpoint still in flight.
    void finish_checkpoints() {
        await_snapshot();
        checkpoints_.finish();
    }

    StopCoordinator& stops() { return stops_; }
    // True when the workload saw should_stop() return true (it returned because of the stop).
    bool stopped() const { return stop_seen_; }
    // The checkpoint saved after the stop was agreed ("" when the workload saved none).
    const std::string& stop_checkpoint() const { return stop_checkpoint_; }
    // "step boundary 517, iteration 3": readable from the watchdog thread.
    std::string where() const;

private:
    void before_report();
    void record_row(const Metrics& metrics);
    void settle_save(const checkpoint::SaveReport& saved, std::int64_t iteration);
    void end_early_if_due(const Metrics& metrics);
    StopReason early_end_on_rank0(const Metrics& metrics);
    [[noreturn]] void fail_nonfinite(const std::string& mine);
    void first_boundary();
    void log_resume_latency();
    // The checkpoint event and stall of a save, recorded once its snapshot is taken (at once
    // unless its large blocks are copied in the background: then by await_snapshot()).
    void record_save(const checkpoint::SaveReport& saved, std::int64_t iteration);

    const JobConfig& config_;
    const Settings settings_;
    Context context_;
    std::unique_ptr<Communicator> comm_;
    metrics::ResultLog results_;
    checkpoint::CheckpointManager checkpoints_;
    StopCoordinator stops_;
    SchedulerPause pause_;  // a sweep trial's ([stop] pause_by)
    std::vector<StopCriterion> criteria_;  // [stop] criteria
    Resume resume_;
    bool stop_seen_ = false;
    bool reported_since_check_ = false;
    bool agreed_since_report_ = false;  // should_stop() agreed afresh; no report() since
    std::string stop_checkpoint_;
    // A background snapshot's save, recorded when its copy is awaited: its stall includes the wait.
    std::optional<std::pair<checkpoint::SaveReport, std::int64_t>> unrecorded_save_;
    std::atomic<std::int64_t> boundary_seen_{0};
    std::atomic<std::int64_t> iteration_seen_{0};
};

}  // namespace trainrt::runtime
