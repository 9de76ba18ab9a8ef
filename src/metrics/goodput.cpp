#include "metrics/goodput.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>
#include <vector>


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

// An attempt on the clock, cut at its records and rows.
struct Timeline {
    AttemptRecords records;
    std::vector<Iteration> kept, redone;  // its rows in result.jsonl and result.superseded.jsonl
    double work_from = 0;   // the restore record, else the start record
    double last_row = 0;    // its last row's end (work_from when none)
    double tail_stall = 0;  // stalls of checkpoints committed after its last row
    bool failed = false;
    double failed_at = 0;   // its failure record (at most its end), when it failed
};

// An attempt without an end record that a later one followed ended without a record (SIGKILL, a
// node lost): failed, as the failure budget counts it.
Timeline timeline_of(const RunRecords& run, const TimedAttempt& attempt, double next_begin, bool followed) {
    Timeline t{records_of(run.history, attempt), iterations_between(run.rows, attempt.begin, next_begin),
               iterations_between(run.superseded, attempt.begin, next_begin)};
    t.work_from = t.records.restored.value_or(t.records.start);
    t.last_row = t.work_from;
    for (const auto* rows : {&t.kept, &t.redone})
        if (!rows->empty()) t.last_row = std::max(t.last_row, rows->back().end);
    t.tail_stall = stalls_within(t.records, t.last_row, std::numeric_limits<double>::infinity());
    const runlog::Event* end = t.records.end_record;
    t.failed = end != nullptr ? end->as<runlog::FailureEvent>() != nullptr : followed;
    if (t.failed) t.failed_at = end != nullptr ? std::min(*end->time, attempt.end) : attempt.end;
    return t;
}

// One attempt's parts, in wall seconds (Goodput's, before times the world size).
struct AttemptSeconds {
    double allocated = 0, useful = 0, start_up = 0, restore = 0, checkpoint_stall = 0, lost_work = 0,
           detection = 0, relaunch = 0, stop = 0;
    double accounted() const {
        return useful + start_up + restore + checkpoint_stall + lost_work + detection + relaunch + stop;
    }
};

AttemptSeconds attempt_parts(const Timeline& t, const TimedAttempt& attempt) {
    AttemptSeconds parts;
    parts.allocated = attempt.end - attempt.begin;
    parts.useful = work_seconds(t.kept, t.work_from, t.records);
    parts.lost_work = work_seconds(t.redone, t.work_from, t.records);
    parts.start_up = t.records.launched ? std::max(0.0, t.records.start - *t.records.launched) : 0.0;
    parts.restore = t.records.restored ? std::max(0.0, *t.records.restored - t.records.start) : 0.0;
    for (const auto& stall : t.records.stalls) parts.checkpoint_stall += stall.second;
    const runlog::Event* end = t.records.end_record;
    if (t.failed) {
        parts.detection = std::max(0.0, t.failed_at - t.last_row - t.tail_stall);
        if (attempt.relaunched_here) parts.relaunch = std::max(0.0, attempt.end - std::max(t.failed_at, t.last_row));
    } else if (end != nullptr && end->as<runlog::StopEvent>() != nullptr) {
        parts.stop = std::max(0.0, attempt.end - t.last_row - t.tail_stall);
    }
    return parts;
}

std::vector<Timeline> timelines_of(const RunRecords& records, const std::vector<TimedAttempt>& attempts) {
    std::vector<Timeline> timelines;
    for (std::size_t i = 0; i < attempts.size(); ++i) {
        const bool last = i + 1 == attempts.size();
        const double next_begin = last ? std::numeric_limits<double>::infinity() : attempts[i + 1].begin;
        timelines.push_back(timeline_of(records, attempts[i], next_begin, !last));
    }
    return timelines;
}

// The recovery from failed attempt `failed` to the attempt `next` after it.
Json recovery_json(const Timeline& failed, const Timeline& next, std::size_t next_number) {
    const double launched = next.records.launched.value_or(next.records.start);
    // Seconds from `from` to the next attempt's first kept row; null until it reported.
    const auto until_first_row = [&](double from) {
        return next.kept.empty() ? Json(nullptr) : Json(std::max(0.0, next.kept.front().end - from));
    };
    return {{"attempt", next_number},
            {"detection_s", std::max(0.0, failed.failed_at - failed.last_row - failed.tail_stall)},
            {"relaunch_s", std::max(0.0, launched - failed.failed_at)},
            {"start_up_s", std::max(0.0, next.records.start - launched)},
            {"restore_s", next.records.restored ? *next.records.restored - next.records.start : 0.0},
            {"first_iteration_s", until_first_row(next.work_from)},
            {"training_again_s", until_first_row(failed.last_row)}};
}

void add_scaled(Goodput& total, const AttemptSeconds& parts, double world) {
    const double accounted = parts.accounted();
    total.allocated_rank_s += world * std::max(parts.allocated, accounted);
    total.useful_rank_s += world * parts.useful;
    total.start_up_rank_s += world * parts.start_up;
    total.restore_rank_s += world * parts.restore;
    total.checkpoint_stall_rank_s += world * parts.checkpoint_stall;
    total.lost_work_rank_s += world * parts.lost_work;
    total.detection_rank_s += world * parts.detection;
    total.relaunch_rank_s += world * parts.relaunch;
    total.stop_rank_s += world * parts.stop;
    total.other_rank_s += world * std::max(0.0, parts.allocated - accounted);
}

}  // namespace

TimeAccount account_time(const RunRecords& records, const std::vector<TimedAttempt>& attempts) {
    const std::vector<Timeline> timelines = timelines_of(records, attempts);
    TimeAccount account;
    Goodput& total = account.goodput;
    total.attempts = static_cast<int>(attempts.size());
    for (std::size_t i = 0; i < attempts.size(); ++i) {
        const runlog::Event& start = start_of(records.history, attempts[i]);
        add_scaled(total, attempt_parts(timelines[i], attempts[i]), start.world_size.value_or(1));
        if (i + 1 == attempts.size()) continue;
        if (!attempts[i].relaunched_here)
            total.between_allocations_s += std::max(0.0, attempts[i + 1].begin - attempts[i].end);
        if (timelines[i].failed)
            account.recoveries.push_back(recovery_json(timelines[i], timelines[i + 1], attempts[i + 1].attempt + 1));
    }
    return account;
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
