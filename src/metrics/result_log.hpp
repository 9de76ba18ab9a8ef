#pragma once
// Rank 0's record of reports: one JSON line per report in result.jsonl (Ray's result.json),
// with Ray's autofilled fields, and one progress line on stdout.
#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "trainrt/context.hpp"
#include "trainrt/metrics.hpp"

namespace trainrt::metrics {

nlohmann::ordered_json to_json(const Metrics& metrics);

class ResultLog {
public:
    ResultLog(std::string run_dir, const Context& context);
    // Returns the row written (also on ranks != 0, which write nothing).
    nlohmann::ordered_json record(const Metrics& metrics);
    const nlohmann::ordered_json& last() const { return last_; }
    std::int64_t iterations() const { return iteration_; }
    // At start-up, after the restore: the next report is iteration `iteration` + 1 (0: a fresh
    // start). Rank 0 moves rows of later iterations (reported before a crash, after the restored
    // checkpoint) and torn lines from result.jsonl to result.superseded.jsonl, so result.jsonl
    // holds each iteration of the run that continues exactly once. Returns the rows moved.
    std::int64_t resume_after(std::int64_t iteration);
    double total_seconds() const;

private:
    using Clock = std::chrono::steady_clock;
    std::string path_;
    const Context& context_;
    Clock::time_point started_ = Clock::now();
    Clock::time_point last_report_ = started_;
    std::int64_t iteration_ = 0;
    nlohmann::ordered_json last_;
};

std::string progress_line(const nlohmann::ordered_json& row);

}  // namespace trainrt::metrics
