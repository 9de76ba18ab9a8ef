#pragma once
// <run dir>/progress.csv: result.jsonl's rows for spreadsheets (header + one line per row, RFC
// 4180 quoting, flattened columns, missing values empty). Rank 0 appends one line per report;
// when a row brings a column the header lacks, the file is rewritten from result.jsonl
// atomically (temporary file + rename), so a reader never sees a header that does not match.
#include <string>
#include <vector>

#include "metrics/table_schema.hpp"
#include "storage/posix.hpp"

namespace trainrt::metrics {

std::string csv_header(const TableSchema& schema);
std::string csv_line(const TableSchema& schema, const FlatRow& row);
std::string csv_line(const Arranged& row);

class ProgressCsv {
public:
    explicit ProgressCsv(std::string path) : path_(path), lines_(std::move(path)) {}
    // Makes the file hold exactly `rows` under `schema`; rewrites it only when it does not.
    // Returns true when it was rewritten.
    bool reconcile(const TableSchema& schema, const std::vector<Row>& rows);
    void rewrite(const TableSchema& schema, const std::vector<Row>& rows);
    // One line: the row arranged in the columns of the schema given last.
    void append(const Arranged& row);

private:
    std::string path_;
    storage::LineAppender lines_;
    TableSchema schema_;
};

}  // namespace trainrt::metrics
