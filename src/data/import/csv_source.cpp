#include "data/import/csv_source.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::data {
namespace {

std::string trimmed(const std::string& text) {
    std::size_t begin = 0, end = text.size();
    while (begin < end && (text[begin] == ' ' || text[begin] == '\t')) ++begin;
    while (end > begin && (text[end - 1] == ' ' || text[end - 1] == '\t')) --end;
    return text.substr(begin, end - begin);
}

bool is_blank(char c) { return c == ' ' || c == '\t'; }

}  // namespace

CsvSource::CsvSource(std::string path, const CsvFormat& format)
    : path_(std::move(path)), format_(format), buffer_(1 << 16) {
    file_ = gzopen(path_.c_str(), "rb");
    if (!file_)
        throw DataError(fmt::format("data import: cannot open {}: {}", path_,
                                    std::strerror(errno ? errno : ENOENT)));
}

CsvSource::~CsvSource() {
    if (file_) gzclose(file_);
}

std::string CsvSource::where() const { return fmt::format("{}:{}", path_, line_); }

bool CsvSource::next_line(std::string& line) {
    line.clear();
    while (true) {
        char* got = gzgets(file_, buffer_.data(), static_cast<int>(buffer_.size()));
        if (!got) {
            int code = 0;
            const char* message = gzerror(file_, &code);
            if (code != Z_OK && code != Z_STREAM_END)
                throw DataError(fmt::format("data import: {}:{}: cannot read it: {}", path_, line_ + 1, message));
            if (line.empty()) return false;
            ++line_;
            return true;
        }
        line.append(got);
        if (line_ == 0 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a UTF-8 byte order mark
        if (!line.empty() && line.back() == '\n') {
            line.pop_back();
            if (!line.empty() && line.back() == '\r') line.pop_back();
            ++line_;
            return true;
        }
    }
}

// Blanks around fields are dropped, except the delimiter itself (a tab delimiter keeps tabs as
// separators, so an empty cell stays a field).
void CsvSource::split(const std::string& line, std::vector<std::string>& fields) const {
    fields.clear();
    const char delimiter = format_.delimiter;
    const bool blanks = delimiter == ' ';
    auto padding = [&](char c) { return (c == ' ' || c == '\t') && c != delimiter; };
    std::size_t i = 0;
    if (blanks)
        while (i < line.size() && is_blank(line[i])) ++i;
    while (true) {
        std::string field;
        while (!blanks && i < line.size() && padding(line[i])) ++i;
        if (i < line.size() && line[i] == '"') {
            for (++i;; ++i) {
                if (i >= line.size())
                    throw DataError(fmt::format("data import: {}:{}: a quoted field is not closed (quoted fields "
                                                "may not span lines)", path_, line_));
                if (line[i] == '"' && i + 1 < line.size() && line[i + 1] == '"') field += '"', ++i;
                else if (line[i] == '"') break;
                else field += line[i];
            }
            ++i;
            while (!blanks && i < line.size() && padding(line[i])) ++i;
        } else {
            while (i < line.size() && line[i] != delimiter && !(blanks && is_blank(line[i]))) field += line[i++];
            if (!blanks)
                while (!field.empty() && padding(field.back())) field.pop_back();
        }
        fields.push_back(std::move(field));
        if (i >= line.size()) return;
        if (blanks) {
            while (i < line.size() && is_blank(line[i])) ++i;
            if (i >= line.size()) return;
        } else if (line[i] == delimiter) {
            ++i;
        } else {
            throw DataError(fmt::format("data import: {}:{}: text after a quoted field; quote the whole field",
                                        path_, line_));
        }
    }
}

std::vector<std::string> CsvSource::read_header() {
    std::string line;
    for (std::size_t skipped = 0; skipped < format_.skip_rows; ++skipped)
        if (!next_line(line))
            throw DataError(fmt::format("data import: {}: the file has fewer than --skip-rows {} lines", path_,
                                        format_.skip_rows));
    std::vector<std::string> fields;
    while (next_line(line)) {
        if (trimmed(line).empty()) continue;
        split(line, fields);
        if (format_.header) return fields;
        pending_ = fields;
        has_pending_ = true;
        return std::vector<std::string>(fields.size());
    }
    throw DataError(fmt::format("data import: {}: no {} (the file is empty{})", path_,
                                format_.header ? "header line" : "data rows",
                                format_.skip_rows ? " after the skipped rows" : ""));
}

bool CsvSource::next_row(std::vector<std::string>& fields) {
    if (has_pending_) {
        fields = std::move(pending_);
        has_pending_ = false;
        return true;
    }
    std::string line;
    while (next_line(line)) {
        if (trimmed(line).empty()) continue;
        split(line, fields);
        return true;
    }
    return false;
}

CellNumber read_number(const std::string& cell, double& value) {
    if (cell.empty()) return CellNumber::not_a_number;
    const char* begin = cell.data();
    const char* end = begin + cell.size();
    if (*begin == '+') ++begin;  // from_chars takes no leading '+'
    double parsed = 0;
    auto [ptr, ec] = std::from_chars(begin, end, parsed);
    if (ptr != end || begin == end) return CellNumber::not_a_number;
    if (ec == std::errc::result_out_of_range) return CellNumber::out_of_range;
    if (ec != std::errc()) return CellNumber::not_a_number;
    if (!std::isfinite(parsed)) return CellNumber::not_finite;
    value = parsed;
    return CellNumber::ok;
}

bool parse_number(const std::string& cell, double& value) { return read_number(cell, value) == CellNumber::ok; }

bool is_integer_literal(const std::string& cell) {
    std::size_t i = (!cell.empty() && (cell[0] == '-' || cell[0] == '+')) ? 1 : 0;
    if (i >= cell.size()) return false;
    for (; i < cell.size(); ++i)
        if (cell[i] < '0' || cell[i] > '9') return false;
    return true;
}

}  // namespace trainrt::data
