#include "runlog/failure_budget.hpp"

#include <optional>

#include <fmt/format.h>

#include "runlog/events.hpp"
#include "storage/posix.hpp"
#include "log/log.hpp"

namespace trainrt::runlog {

History read_history(const std::string& run_dir) {
    EventLog records = read_events(run_dir);
    for (const std::string& warning : records.warnings) log::warn("{}", warning);
    return fold(std::move(records.events));
}

bool budget_exhausted(const History& history, int max_failures) {
    return max_failures >= 0 && history.failures > max_failures;
}

std::string record_give_up(const std::string& run_dir, const Context& context, const History& history,
                           int max_failures) {
    const std::string message = fmt::format(
        "giving up: {} failure(s), more than [failure] max_failures = {}; last: {}. Fix the cause, then "
        "resubmit (the run resumes from its latest checkpoint)", history.failures, max_failures, history.last_end);
    append(run_dir, context, FailureEvent{std::nullopt, message, "max_failures", std::nullopt, "", true, history.failures});
    return message;
}

}  // namespace trainrt::runlog
