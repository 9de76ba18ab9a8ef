#pragma once
// The run's attempts on the clock: when each began and ended, from the run record (events.jsonl)
// and the rows (result.jsonl and result.superseded.jsonl). `trainrt results`' times and goodput
// both read the attempts through this. Pure.
#include <cstddef>
#include <optional>
#include <vector>

#include "metrics/rows_file.hpp"
#include "runlog/history.hpp"

namespace trainrt::metrics {

struct TimedAttempt {
    std::size_t attempt = 0;  // its index in History::attempts
    // From its process launch (the start record's `launched`), else its start record, else its
    // first row's iteration start, whichever is earliest; to its last own record or last row.
    double begin = 0, end = 0;
    // The next attempt ran in the same allocation (a relaunch): this one lasts until the next
    // one's begin, as the allocation was held all along and the time since its last record (a
    // dead rank or node being noticed, the step torn down and started again) was lost, not idle.
    bool relaunched_here = false;
};

// The attempts whose start time is known, oldest first.
std::vector<TimedAttempt> timed_attempts(const runlog::History& history, const std::vector<Row>& rows,
                                         const std::vector<Row>& superseded);

// Without start records: the span of the rows, from the first row's iteration start to the last row.
double rows_span(const std::vector<Row>& rows);

// A numeric field of a row, or `fallback` when absent or not a number.
double number_of(const Row& row, const char* key, double fallback);

// The attempt's start record and the index one past its last record in History::events.
const runlog::Event& start_of(const runlog::History& history, const TimedAttempt& attempt);
std::size_t records_end(const runlog::History& history, const TimedAttempt& attempt);

}  // namespace trainrt::metrics
