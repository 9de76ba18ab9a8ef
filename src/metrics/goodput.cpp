#include "metrics/goodput.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "metrics/attempt_times.hpp"

namespace trainrt::metrics {
namespace {

using Json = nlohmann::ordered_json;

struct Iteration {  // one row's iteration on the clock
    double begin = 0, end = 0;
};

// The rows reported in [from, to), oldest first.
std::vector<Iteration> iterations_between(const std::vector<Row>& rows, double from, double to) {
    std::vector<Iteration> found;
    for (const Row& row : rows) {
        const double end = number_of(row, "_timestamp", -1);
        if (end >= from && end < to) found.push_back({end - number_of(row, "_time_this_iter_s", 0), end});
    }
    std::sort(found.begin(), found.end(), [](const Iteration& a, const Iteration& b) { return a.end < b.end; });
    return found;
}

// What an attempt's own records say on the clock.
struct AttemptRecords {
    double start = 0;
    std::optional<double> launched, restored;
    std::vector<std::pair<double, double>> stalls;  // (commit time, stall_s) of each checkpoint
    const runlog::Event* end_record = nullptr;     // its first failure, stop or finish record
};

AttemptRecords records_of(const runlog::History& history, const TimedAttempt& attempt) {
    const runlog::Event& start = start_of(history, attempt);
    AttemptRecords records{start.time.value_or(attempt.begin), start.as<runlog::StartEvent>()->launched};
    for (std::size_t i = history.attempts[attempt.attempt].start + 1; i < records_end(history, attempt); ++i) {
        const runlog::Event& event = history.event(i);
        if (!event.time) continue;
        if (event.as<runlog::RestoreEvent>() != nullptr && !records.restored) records.restored = event.time;
        if (const auto* saved = event.as<runlog::CheckpointEvent>()) records.stalls.emplace_back(*event.time, saved->stall_s);
        const bool ends = event.as<runlog::FailureEvent>() || event.as<runlog::StopEvent>() || event.as<runlog::FinishEvent>();
        if (ends && records.end_record == nullptr) records.end_record = &event;
    }
    return records;
}

double stalls_within(const AttemptRecords& records, double after, double until) {
    double total = 0;
    for (const auto& [time, stall] : records.stalls)
        if (time > after && time <= until) total += stall;
    return total;
}

// Seconds of `iterations` from `from` on, less the checkpoint stalls committed within them.
double work_seconds(const std::vector<Iteration>& iterations, double from, const AttemptRecords& records) {
    double total = 0;
    for (const Iteration& it : iterations) total += std::max(0.0, it.end - std::max(it.begin, from));
    if (iterations.empty()) return 0;
    const double first = std::max(iterations.front().begin, from);
    return std::max(0.0, total - stalls_within(records, first, iterations.back().end));
}

// One attempt's parts, in seconds (not yet times its world size).
// An attempt without an end record that a later one followed ended without a record (SIGKILL, a
// node lost): failed, as the failure budget counts it.
Goodput attempt_parts(const RunRecords& run, const TimedAttempt& attempt, double next_begin, bool followed) {
    const AttemptRecords records = records_of(run.history, attempt);
    const std::vector<Iteration> kept = iterations_between(run.rows, attempt.begin, next_begin);
    const std::vector<Iteration> redone = iterations_between(run.superseded, attempt.begin, next_begin);
    const double work_from = records.restored.value_or(records.start);
    Goodput parts;
    parts.allocated_rank_s = attempt.end - attempt.begin;
    parts.useful_rank_s = work_seconds(kept, work_from, records);
    parts.lost_work_rank_s = work_seconds(redone, work_from, records);
    parts.start_up_rank_s = records.launched ? std::max(0.0, records.start - *records.launched) : 0.0;
    parts.restore_rank_s = records.restored ? std::max(0.0, *records.restored - records.start) : 0.0;
    for (const auto& stall : records.stalls) parts.checkpoint_stall_rank_s += stall.second;
    double last_row = work_from;
    for (const auto* rows : {&kept, &redone})
        if (!rows->empty()) last_row = std::max(last_row, rows->back().end);
    const double tail_stall = stalls_within(records, last_row, std::numeric_limits<double>::infinity());
    const runlog::Event* end = records.end_record;
    const bool failed = end != nullptr ? end->as<runlog::FailureEvent>() != nullptr : followed;
    if (failed) {
        const double failed_at = end != nullptr ? std::min(*end->time, attempt.end) : attempt.end;
        parts.detection_rank_s = std::max(0.0, failed_at - last_row - tail_stall);
        if (attempt.relaunched_here) parts.relaunch_rank_s = std::max(0.0, attempt.end - std::max(failed_at, last_row));
    } else if (end != nullptr && end->as<runlog::StopEvent>() != nullptr) {
        parts.stop_rank_s = std::max(0.0, attempt.end - last_row - tail_stall);
    }
    return parts;
}

void add_scaled(Goodput& total, const Goodput& parts, double world) {
    const double accounted = parts.useful_rank_s + parts.start_up_rank_s + parts.restore_rank_s +
                             parts.checkpoint_stall_rank_s + parts.lost_work_rank_s + parts.detection_rank_s +
                             parts.relaunch_rank_s + parts.stop_rank_s;
    total.allocated_rank_s += world * std::max(parts.allocated_rank_s, accounted);
    total.useful_rank_s += world * parts.useful_rank_s;
    total.start_up_rank_s += world * parts.start_up_rank_s;
    total.restore_rank_s += world * parts.restore_rank_s;
    total.checkpoint_stall_rank_s += world * parts.checkpoint_stall_rank_s;
    total.lost_work_rank_s += world * parts.lost_work_rank_s;
    total.detection_rank_s += world * parts.detection_rank_s;
    total.relaunch_rank_s += world * parts.relaunch_rank_s;
    total.stop_rank_s += world * parts.stop_rank_s;
    total.other_rank_s += world * std::max(0.0, parts.allocated_rank_s - accounted);
}

}  // namespace

Goodput goodput(const RunRecords& records) {
    const std::vector<TimedAttempt> attempts = timed_attempts(records.history, records.rows, records.superseded);
    Goodput total;
    total.attempts = static_cast<int>(attempts.size());
    for (std::size_t i = 0; i < attempts.size(); ++i) {
        const bool last = i + 1 == attempts.size();
        const double next_begin = last ? std::numeric_limits<double>::infinity() : attempts[i + 1].begin;
        const runlog::Event& start = start_of(records.history, attempts[i]);
        add_scaled(total, attempt_parts(records, attempts[i], next_begin, !last), start.world_size.value_or(1));
        if (!last && !attempts[i].relaunched_here)
            total.between_allocations_s += std::max(0.0, next_begin - attempts[i].end);
    }
    return total;
}

Json goodput_json(const Goodput& g) {
    return {{"ratio", g.allocated_rank_s > 0 ? Json(g.useful_rank_s / g.allocated_rank_s) : Json(nullptr)},
            {"allocated_rank_s", g.allocated_rank_s},
            {"useful_rank_s", g.useful_rank_s},
            {"lost_rank_s",
             {{"start_up", g.start_up_rank_s}, {"restore", g.restore_rank_s},
              {"checkpoint_stall", g.checkpoint_stall_rank_s}, {"lost_work", g.lost_work_rank_s},
              {"detection", g.detection_rank_s}, {"relaunch", g.relaunch_rank_s}, {"stop", g.stop_rank_s},
              {"other", g.other_rank_s}}},
            {"between_allocations_s", g.between_allocations_s}};
}

}  // namespace trainrt::metrics
