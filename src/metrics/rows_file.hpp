#pragma once
// Reading result.jsonl, the run's log of record, and the flat column view that progress.csv,
// metrics.h5, `trainrt results --csv` and `trainrt plot` share.
//
// A row is one report: the metrics of rank 0, the autofilled fields (_training_iteration,
// _timestamp, _time_this_iter_s, _time_total_s, restart_count, world_size) and `_ranks`, the
// cross-rank summaries: {"<metric>": {"min", "mean", "max", "max_rank"}, ...} for every numeric
// metric and for _time_this_iter_s and _time_compute_s (the iteration less the time blocked in
// trainrt's collectives, which is what tells a straggler apart).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainrt::metrics {

using Row = nlohmann::ordered_json;

struct RowsRead {
    std::vector<Row> rows;        // complete rows, in file order
    std::int64_t torn_lines = 0;  // lines that are not a JSON object (a crash mid-append)
};

// A numeric field of a row; nullopt when absent or not a number.
std::optional<double> number_in(const Row& row, const std::string& key);

// Missing file: no rows. A file that cannot be read: StorageError naming it.
RowsRead read_rows(const std::string& path);

// The row as named columns: `_ranks.<metric>.<stat>` becomes "<metric>/<stat>"; other nested
// objects are flattened the same way (Ray's progress.csv convention). Order: the autofilled
// fields first, then the row's own order.
std::vector<std::pair<std::string, nlohmann::ordered_json>> flatten(const Row& row);

// Union of the rows' columns in first-seen order (autofilled first).
std::vector<std::string> column_union(const std::vector<Row>& rows);

}  // namespace trainrt::metrics
