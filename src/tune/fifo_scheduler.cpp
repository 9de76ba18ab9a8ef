// FIFO (Ray Tune's FIFOScheduler): every trial runs the base job in one step to its own end; the
// sweep decides nothing on the way.
#include <fmt/format.h>

#include "tune/scheduler.hpp"

namespace trainrt::tune {
namespace {

class FifoScheduler final : public Scheduler {
public:
    void add_definition(std::map<std::string, std::string>&) const override {}

    std::int64_t first_target(std::size_t) const override { return 0; }

    // A FIFO trial's target is 0 (the base job's train.epochs); one recorded with a target, kept
    // from another scheduler's sweep by --resume-changed, runs to it.
    std::vector<std::string> step_args(const runlog::TrialRecord& trial) const override {
        if (trial.target > 0) return {fmt::format("--train.epochs={}", trial.target)};
        return {};
    }

    bool step_ended(SchedulerContext&, runlog::TrialRecord& trial, TrialEnd end) override {
        if (end != TrialEnd::done) return false;
        trial.status = runlog::TrialStatus::terminated;
        return true;
    }
};

}  // namespace

std::unique_ptr<Scheduler> make_fifo_scheduler(const SweepConfig&) { return std::make_unique<FifoScheduler>(); }

}  // namespace trainrt::tune
