#include "metrics/metrics_tables.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "runlog/run_files.hpp"
#include "storage/posix.hpp"

namespace trainrt::metrics {

MetricsTables::MetricsTables(const std::string& run_dir)
    : run_dir_(run_dir), csv_(runlog::path_in(run_dir, runlog::kProgressCsv)) {}

MetricsTables::~MetricsTables() = default;

MetricsTables::Notices MetricsTables::reconcile(const std::vector<Row>& rows) {
    Notices notices;
    schema_ = TableSchema(rows);
    arranger_.forget();
    csv_.reconcile(schema_, rows);
    const std::string path = runlog::path_in(run_dir_, runlog::kMetricsH5);
    h5_.reset();
    if (rows.empty()) {
        ::unlink(path.c_str());  // rows of a start that never got past its first report
        return notices;
    }
    std::string problem;
    h5_ = MetricsH5::open_matching(path, schema_, rows.size(), problem);
    if (h5_) return notices;
    // A writer that never closed the file (killed, or ended by the watchdog's _Exit) leaves HDF5's
    // "open for writing" mark, which refuses a writer's open but not a reader's.
    if (!problem.empty()) {  // "" when the file merely differs from result.jsonl: rebuilt quietly
        if (metrics_h5_problem(path).empty())
            notices.notes.push_back(fmt::format("{} was left open for writing by an attempt that did not end "
                                                "cleanly; rebuilt from result.jsonl with its {} complete row(s)",
                                                path, rows.size()));
        else
            notices.warnings.push_back(fmt::format("{} could not be opened for appending ({}); rebuilt from "
                                                   "result.jsonl with its {} complete row(s)", path, problem, rows.size()));
    }
    h5_ = MetricsH5::rebuild(path, schema_, rows);
    return notices;
}

void MetricsTables::append(const Row& row) {
    if (!h5_ || !arranger_.arrange(schema_, row, arranged_)) return rebuild_from_log();
    csv_.append(arranged_);
    h5_->append(arranged_);
}

void MetricsTables::rebuild_from_log() {
    const std::vector<Row> rows = read_rows(runlog::path_in(run_dir_, runlog::kResults)).rows;
    schema_ = TableSchema(rows);
    arranger_.forget();
    csv_.rewrite(schema_, rows);
    h5_.reset();
    h5_ = MetricsH5::rebuild(runlog::path_in(run_dir_, runlog::kMetricsH5), schema_, rows);
}

}  // namespace trainrt::metrics
