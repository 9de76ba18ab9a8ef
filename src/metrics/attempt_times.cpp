#include "metrics/attempt_times.hpp"

#include <algorithm>

namespace trainrt::metrics {
namespace {

// True when start records `a` and `b` are of one Slurm allocation: same job, same restart.
bool same_allocation(const runlog::Event& a, const runlog::Event& b) {
    return !a.job_id.empty() && a.job_id == b.job_id && a.restart_count == b.restart_count;
}

double begin_of(const runlog::History& history, const runlog::Attempt& attempt) {
    const auto* start = history.event(attempt.start).as<runlog::StartEvent>();
    return start->launched ? std::min(*attempt.begin, *start->launched) : *attempt.begin;
}

// Extends each attempt over its rows (those reported between its begin and the next begin): to
// its last row, and back to its first row's iteration start (a first iteration is timed from
// before the start record is written, and records have millisecond times).
void extend_by_rows(std::vector<TimedAttempt>& attempts, const std::vector<Row>& rows) {
    for (const Row& row : rows) {
        const double time = number_of(row, "_timestamp", -1);
        if (time < 0) continue;
        auto after = std::upper_bound(attempts.begin(), attempts.end(), time,
                                      [](double t, const TimedAttempt& attempt) { return t < attempt.begin; });
        if (after == attempts.begin()) continue;
        TimedAttempt& attempt = *std::prev(after);
        attempt.end = std::max(attempt.end, time);
        attempt.begin = std::min(attempt.begin, time - number_of(row, "_time_this_iter_s", 0));
    }
}

}  // namespace

double number_of(const Row& row, const char* key, double fallback) {
    return number_in(row, key).value_or(fallback);
}

std::vector<TimedAttempt> timed_attempts(const runlog::History& history, const std::vector<Row>& rows,
                                         const std::vector<Row>& superseded) {
    std::vector<TimedAttempt> attempts;
    const auto& all = history.attempts;
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (!all[i].begin) continue;
        TimedAttempt attempt{i, begin_of(history, all[i]), all[i].end.value_or(*all[i].begin), false};
        if (i + 1 < all.size() && all[i + 1].begin &&
            same_allocation(history.event(all[i].start), history.event(all[i + 1].start))) {
            attempt.end = std::max(attempt.end, begin_of(history, all[i + 1]));
            attempt.relaunched_here = true;
        }
        attempts.push_back(attempt);
    }
    extend_by_rows(attempts, rows);
    extend_by_rows(attempts, superseded);
    return attempts;
}

double rows_span(const std::vector<Row>& rows) {
    double first = 0, last = 0;
    bool any = false;
    for (const Row& row : rows) {
        const double time = number_of(row, "_timestamp", -1);
        if (time < 0) continue;
        const double begin = time - number_of(row, "_time_this_iter_s", 0);
        first = any ? std::min(first, begin) : begin;
        last = any ? std::max(last, time) : time;
        any = true;
    }
    return last - first;
}

const runlog::Event& start_of(const runlog::History& history, const TimedAttempt& attempt) {
    return history.event(history.attempts[attempt.attempt].start);
}

std::size_t records_end(const runlog::History& history, const TimedAttempt& attempt) {
    const std::size_t next = attempt.attempt + 1;
    return next < history.attempts.size() ? history.attempts[next].start : history.events.size();
}

}  // namespace trainrt::metrics
