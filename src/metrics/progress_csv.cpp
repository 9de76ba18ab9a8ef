#include "metrics/progress_csv.hpp"

#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "storage/posix.hpp"

namespace trainrt::metrics {
namespace {

std::string quoted(const std::string& text) {
    if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
    std::string out(1, '"');
    for (char c : text) {
        if (c == '"') out.push_back('"');  // doubled
        out.push_back(c);
    }
    out.push_back('"');
    return out;
}

// Numbers in their shortest round-trip form (fmt); other values as JSON.
void append_field(std::string& line, const nlohmann::ordered_json& value) {
    if (value.is_number_float()) fmt::format_to(std::back_inserter(line), "{}", value.get<double>());
    else if (value.is_number_integer()) fmt::format_to(std::back_inserter(line), "{}", value.get<std::int64_t>());
    else if (value.is_string()) line += quoted(value.get<std::string>());
    else if (!value.is_null()) line += quoted(value.dump());
}

}  // namespace

std::string csv_header(const TableSchema& schema) {
    std::string line;
    for (const Column& column : schema.columns()) {
        if (!line.empty()) line.push_back(',');
        line += quoted(column.name);
    }
    return line;
}

std::string csv_line(const TableSchema& schema, const FlatRow& row) { return csv_line(schema.arrange(row)); }

std::string csv_line(const Arranged& values) {
    std::string line;
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (i > 0) line += ',';
        if (values[i] != nullptr) append_field(line, *values[i]);
    }
    return line;
}

bool ProgressCsv::reconcile(const TableSchema& schema, const std::vector<Row>& rows) {
    schema_ = schema;
    std::ifstream in(path_);
    std::string line;
    bool same = in && std::getline(in, line) && line == csv_header(schema);
    std::size_t at = 0;
    while (same && std::getline(in, line)) same = at < rows.size() && line == csv_line(schema, flatten(rows[at++]));
    if (same && at == rows.size()) return false;
    rewrite(schema, rows);
    return true;
}

void ProgressCsv::rewrite(const TableSchema& schema, const std::vector<Row>& rows) {
    schema_ = schema;
    std::string content = csv_header(schema) + "\n";
    for (const Row& row : rows) content += csv_line(schema, flatten(row)) + "\n";
    storage::write_file_atomic(path_, content);
    lines_.reopen();
}

void ProgressCsv::append(const Arranged& row) { lines_.append(csv_line(row)); }

}  // namespace trainrt::metrics
