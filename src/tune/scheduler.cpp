#include "tune/scheduler.hpp"

#include <fmt/format.h>

namespace trainrt::tune {

// A scheduler that decides nothing before a start or while a step runs (FIFO, PBT), and whose
// trials never wait for each other (all but HyperBand).
bool Scheduler::ended_before_start(SchedulerContext&, runlog::TrialRecord&) { return false; }
bool Scheduler::waits(SchedulerContext&, runlog::TrialRecord&) { return false; }
void Scheduler::watch_running(SchedulerContext&, runlog::TrialRecord&) {}

// The one place that maps tune.scheduler to a scheduler.
std::unique_ptr<Scheduler> make_scheduler(const SweepConfig& sweep) {
    switch (sweep.tune.scheduler.value) {
    case SchedulerKind::asha: return make_asha_scheduler(sweep);
    case SchedulerKind::pbt: case SchedulerKind::pb2: return make_pbt_scheduler(sweep);
    case SchedulerKind::hyperband: return make_hyperband_scheduler(sweep);
    case SchedulerKind::median_stopping: return make_median_scheduler(sweep);
    case SchedulerKind::fifo: break;
    }
    return make_fifo_scheduler(sweep);
}

std::string values_text(const runlog::TrialValues& values) {
    std::string text;
    for (const auto& [key, value] : values) text += fmt::format("{}{}={}", text.empty() ? "" : " ", key, value);
    return text;
}

}  // namespace trainrt::tune
