#include "runlog/history.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace trainrt::runlog {
namespace {

struct Folder {
    History& h;

    void on(std::size_t index, const StartEvent&) {
        const Event& event = h.events[index];
        if (h.open) {
            ++h.failures;
            ++h.failures_recorded;
            h.last_end = "ended without a record (node failure, SIGKILL or time limit)";
        }
        h.open = true;
        h.launch_failures = 0;
        h.last_attempt_job = event.job_id;
        h.last_attempt_restart = event.restart_count;
        h.attempts.push_back({index, std::nullopt, event.time, event.time});
        h.last_lifecycle = index;
    }
    void on(std::size_t index, const FailureEvent& failure) {
        // Several ranks may record the same failed attempt: only the first record counts.
        const bool launch = failure.phase == "launch" && !h.open;
        const bool counts = h.open || launch;
        if (launch && !failure.final) ++h.launch_failures;
        if (h.open && !failure.final) {
            ++h.failures;
            ++h.failures_recorded;
        }
        if (counts || failure.final) h.last_end = "failure: " + failure.message;
        h.open = false;
        if (failure.final) h.failures = h.launch_failures = 0;  // a new series begins
        h.last_lifecycle = index;
    }
    void on(std::size_t index, const StopEvent& stop) {
        h.open = false;
        h.last_end = fmt::format("stop ({}{})", stop.reason, stop.signal ? " " + *stop.signal : "");
        h.last_lifecycle = index;
    }
    void on(std::size_t index, const FinishEvent&) {
        h.failures = h.launch_failures = 0;
        h.open = false;
        h.last_attempt_job.clear();
        h.last_attempt_restart = 0;
        h.last_end = "finish";
        h.last_lifecycle = index;
    }
    void on(std::size_t index, const RestoreEvent&) {
        if (!h.attempts.empty() && !h.attempts.back().restore) h.attempts.back().restore = index;
    }
    template <class Other> void on(std::size_t, const Other&) {}

    // Records written on the attempt's behalf by others, later, say nothing of when it ended.
    static bool own_record(const Event& event) {
        if (event.as<RelaunchEvent>() != nullptr) return false;
        const FailureEvent* failure = event.as<FailureEvent>();
        return failure == nullptr || failure->rank.has_value();
    }
    void extend_end(const Event& event) {
        if (h.attempts.empty() || event.as<StartEvent>() != nullptr || !event.time || !own_record(event)) return;
        Attempt& attempt = h.attempts.back();
        if (attempt.begin) attempt.end = std::max(attempt.end.value_or(*event.time), *event.time);
    }
};

}  // namespace

History fold(std::vector<Event> events) {
    History history;
    history.events = std::move(events);
    Folder folder{history};
    for (std::size_t i = 0; i < history.events.size(); ++i) {
        std::visit([&](const auto& typed) { folder.on(i, typed); }, history.events[i].body);
        folder.extend_end(history.events[i]);
    }
    return history;
}

double attempts_seconds(const History& history) {
    double seconds = 0;
    for (const Attempt& attempt : history.attempts)
        if (attempt.begin && attempt.end) seconds += std::max(0.0, *attempt.end - *attempt.begin);
    return seconds;
}

}  // namespace trainrt::runlog
