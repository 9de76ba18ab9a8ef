#pragma once
// The two text forms of `trainrt results`: the human summary of a report (results_report.hpp)
// and the metrics table as CSV.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "metrics/rows_file.hpp"

namespace trainrt::cli {

// About a dozen lines: status, path, workload, world size, rows, last metrics, latest and top-3
// best checkpoints, restarts, error, total and useful time (h:mm:ss), then any warnings.
std::string human_summary(const nlohmann::ordered_json& report);

// Header (metrics::column_union) and one line per row (metrics::flatten); RFC 4180 quoting for
// fields with a comma, quote, CR or LF; a missing or null value is an empty field; strings as
// they are, other values as JSON. Lines end in LF. No rows: nothing at all.
std::string metrics_csv(const std::vector<metrics::Row>& rows);

}  // namespace trainrt::cli
