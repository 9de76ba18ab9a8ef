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
    // After a restore: the next report is iteration `iteration` + 1.
    void resume_after(std::int64_t iteration) { iteration_ = iteration; }
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
