#pragma once
// progress.csv and metrics.h5 kept equal to result.jsonl, the run's log of record (rank 0 only).
// Each report appends its row to both; a row with a column the tables lack (a key that appears
// later in a run) rebuilds both from result.jsonl, atomically. At a start they are checked
// against result.jsonl and rebuilt when they differ: rows of lost work that result.jsonl moved
// aside, a row a kill left out, a metrics.h5 that a killed attempt left open for writing (a note:
// every failure leaves it so, intact), or a damaged or truncated file (then with a warning).
#include <memory>
#include <string>
#include <vector>

#include "metrics/metrics_h5.hpp"
#include "metrics/progress_csv.hpp"

namespace trainrt::metrics {

class MetricsTables {
public:
    explicit MetricsTables(const std::string& run_dir);
    ~MetricsTables();
    // What a start's check found worth saying, one line each.
    struct Notices {
        std::vector<std::string> warnings;  // a damaged file, rebuilt
        std::vector<std::string> notes;     // a file left open by a killed attempt, rebuilt
    };
    Notices reconcile(const std::vector<Row>& rows);
    // `row` is already in result.jsonl.
    void append(const Row& row);

private:
    void rebuild_from_log();
    std::string run_dir_;
    TableSchema schema_;
    RowArranger arranger_;
    Arranged arranged_;  // the row being appended, by column (reused)
    ProgressCsv csv_;
    std::unique_ptr<MetricsH5> h5_;
};

}  // namespace trainrt::metrics
