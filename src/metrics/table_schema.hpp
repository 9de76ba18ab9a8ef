#pragma once
// The columns of the flat metrics tables (progress.csv, metrics.h5) and their kinds, taken from
// the rows of result.jsonl. A table is rebuilt from result.jsonl when a row does not fit it (a key
// that appears later in a run, or a number where a tag was), so appending never needs to change
// a table's layout in place.
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "metrics/rows_file.hpp"

namespace trainrt::metrics {

enum class ColumnKind { integer, real, text };

struct Column {
    std::string name;
    ColumnKind kind = ColumnKind::real;
};

using FlatRow = std::vector<std::pair<std::string, nlohmann::ordered_json>>;

class TableSchema {
public:
    TableSchema() = default;
    explicit TableSchema(const std::vector<Row>& rows);
    explicit TableSchema(std::vector<Column> columns);
    const std::vector<Column>& columns() const { return columns_; }
    std::optional<std::size_t> index_of(const std::string& name) const;
    // True when every value of `row` has a column of a kind that holds it.
    bool fits(const FlatRow& row) const;
    bool operator==(const TableSchema& other) const;

private:
    std::vector<Column> columns_;
    std::unordered_map<std::string, std::size_t> index_;
};

// Autofilled counters and the ranks of maxima are integers; strings are tags; other values real.
ColumnKind kind_of(const std::string& column, const nlohmann::ordered_json& value);

}  // namespace trainrt::metrics
