#pragma once
// What `trainrt plot` draws, computed from a run's rows and events: a table of numeric columns
// over `_training_iteration`, the panels' series, and where each attempt after the first began.
// No gnuplot here (plot_script.hpp writes the script; plot_command.cpp runs it).
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "metrics/rows_file.hpp"
#include "runlog/history.hpp"

namespace trainrt::cli::plot {

// The numeric columns of the rows with a `_training_iteration` (the others are skipped), in
// column_union order. A cell is empty where the row lacks the column or holds a non-number
// (a string tag such as "phase": "warmup", a bool, null).
struct Table {
    std::vector<double> iterations;                       // x, one per kept row
    std::vector<std::string> columns;                     // data-file column k + 2 (1 is x)
    std::vector<std::vector<std::optional<double>>> cells;  // [row][column]
    std::set<std::string> rank_summaries;                 // columns from `_ranks` ("loss/max")

    // Data-file column number of `name` (1-based, x is 1); 0 when absent.
    int column_number(const std::string& name) const;
};

// For rows without `_ranks` (no cross-rank summaries), this column holds rank 0's
// `_time_this_iter_s`, so the step-time panel still shows those rows; present only when such
// rows exist.
inline constexpr const char* kRank0StepColumn = "rank 0 _time_this_iter_s";

Table build_table(const std::vector<metrics::Row>& rows);

// A vertical line at the first iteration of an attempt after the first.
struct RestartMark {
    double iteration = 0;
    int number = 0;       // the attempt's index: 1 for the first restart
    std::string reason;   // the attempt's `start` event "reason"; empty when unknown
};

// Attempts are told apart two ways, and either one marks a boundary between consecutive rows:
//  - the run record's attempts (runlog::fold: every launch writes a start event, also a rerun of
//    the same run name outside Slurm): a row belongs to the last attempt whose start time is not
//    after the row's `_timestamp` (rank 0's clocks across relaunches are assumed to agree to
//    within the time a relaunch takes);
//  - `restart_count` (SLURM_RESTART_COUNT, 0 outside Slurm) grows between consecutive rows.
// The first row is marked too when the attempts before it reported nothing.
std::vector<RestartMark> find_restarts(const std::vector<metrics::Row>& rows, const runlog::History& history);

}  // namespace trainrt::cli::plot
