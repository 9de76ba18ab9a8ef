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
// A row's values in a schema's column order; nullptr where the row has none.
using Arranged = std::vector<const nlohmann::ordered_json*>;

class TableSchema {
public:
    TableSchema() = default;
    explicit TableSchema(const std::vector<Row>& rows);
    explicit TableSchema(std::vector<Column> columns);
    const std::vector<Column>& columns() const { return columns_; }
    std::optional<std::size_t> index_of(const std::string& name) const;
    // True when every value of `row` has a column of a kind that holds it.
    bool fits(const FlatRow& row) const;
    // `row`'s values by column (pointing into `row`); assumes fits(row).
    Arranged arrange(const FlatRow& row) const;
    bool operator==(const TableSchema& other) const;

private:
    std::vector<Column> columns_;
    std::unordered_map<std::string, std::size_t> index_;
};

// arrange() for the rows of one run, which mostly repeat the previous row's keys: the mapping from
// the row's values to columns is kept and reused while the keys repeat (no column names are built
// and looked up then), so a report's row reaches the tables without copies.
class RowArranger {
public:
    // False when a value of `row` has no column, or one whose kind does not hold it.
    bool arrange(const TableSchema& schema, const Row& row, Arranged& out);
    void forget() { keys_.clear(); }

private:
    bool same_keys(const Row& row);
    bool learn(const TableSchema& schema, const Row& row);
    std::vector<std::pair<int, std::string>> keys_;  // (depth, key) of the last row, depth first
    std::vector<std::size_t> columns_;               // its leaves' columns, in the same order
    std::vector<const nlohmann::ordered_json*> leaves_;
};

// Autofilled counters and the ranks of maxima are integers; strings are tags; other values real.
ColumnKind kind_of(const std::string& column, const nlohmann::ordered_json& value);

}  // namespace trainrt::metrics
