#pragma once
// What a report leaves behind. Every rank builds the row (Ray's autofilled fields plus the
// cross-rank summaries of one collective); rank 0 appends it to result.jsonl (Ray's result.json,
// the run's log of record), to progress.csv and metrics.h5 (metrics_tables.hpp), and shows
// progress on stdout. When record() returns, the row is in all three files.
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "metrics/metrics_tables.hpp"
#include "metrics/progress_display.hpp"
#include "metrics/rank_summary.hpp"
#include "storage/posix.hpp"
#include "trainrt/comm.hpp"
#include "trainrt/context.hpp"
#include "trainrt/metrics.hpp"

namespace trainrt::metrics {

nlohmann::ordered_json to_json(const Metrics& metrics);

struct ResultLogOptions {
    ProgressOptions progress;
    double straggler_threshold = 1.5;  // 0: off
};

class ResultLog {
public:
    ResultLog(std::string run_dir, const Context& context, ResultLogOptions options);
    // Collective. Returns the row written (also on ranks != 0, which write nothing; valid until
    // the next record). `votes`:
    // this rank's in, the max over the ranks out (see rank_summary.hpp).
    const nlohmann::ordered_json& record(const Metrics& metrics, Communicator& comm, Votes& votes);
    const nlohmann::ordered_json& last() const { return last_; }
    std::int64_t iterations() const { return iteration_; }
    // At start-up, after the restore: the next report is iteration `iteration` + 1 (0: a fresh
    // start). Rank 0 moves rows of later iterations (reported before a crash, after the restored
    // checkpoint) and torn lines from result.jsonl to result.superseded.jsonl, so result.jsonl
    // holds each iteration of the run that continues exactly once, and makes progress.csv and
    // metrics.h5 hold the same rows. Returns the rows moved.
    std::int64_t resume_after(std::int64_t iteration);
    // The workload did not take the restored checkpoint and started over: rank 0 moves every row
    // so far aside as resume_after does; iteration numbers go on. Returns the rows moved.
    std::int64_t start_over();
    double total_seconds() const;
    // Ends the progress display (before the runtime's closing lines).
    void end_progress() { progress_.end(); }
    // Rank 0's own line during the run (not torn into the progress line on a terminal).

private:
    using Clock = std::chrono::steady_clock;
    nlohmann::ordered_json autofilled(const Metrics& metrics, Clock::time_point now) const;
    void write(const nlohmann::ordered_json& row, const RankSummary& summary);
    void note_straggler(const RankSummary& summary);
    // Rank 0 keeps the rows whose iteration `keep` accepts and moves the rest aside.
    std::int64_t keep_rows(const std::function<bool(std::int64_t)>& keep);

    std::string path_;             // result.jsonl
    std::string superseded_path_;  // result.superseded.jsonl
    storage::LineAppender rows_;  // result.jsonl, opened at the first row (after resume_after)
    const Context& context_;
    ResultLogOptions options_;
    MetricsTables tables_;
    ProgressDisplay progress_;
    Clock::time_point started_ = Clock::now();
    Clock::time_point last_report_ = started_;
    double blocked_at_last_report_ = 0;
    double writing_s_ = 0;  // rank 0: time spent writing rows since the start
    double total_before_s_ = 0;  // _time_total_s of the row resumed after
    std::int64_t iteration_ = 0;
    std::optional<Clock::time_point> last_straggler_note_;
    std::int64_t stragglers_unnoted_ = 0;
    bool names_differ_noted_ = false;
    bool reported_this_attempt_ = false;
    nlohmann::ordered_json last_;
};

}  // namespace trainrt::metrics
