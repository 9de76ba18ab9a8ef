#pragma once
// Reading CSV files for `trainrt data import csv`: lines of a plain or gzip-compressed file
// (zlib reads both), fields split by one delimiter with RFC 4180 quotes (a quoted field may hold
// the delimiter and "" for a quote; it may not span lines), numbers parsed exactly
// (std::from_chars). Errors name FILE:LINE[:COLUMN].
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

namespace trainrt::data {

struct CsvFormat {
    char delimiter = ',';     // ' ' splits on runs of blanks (spaces and tabs)
    bool header = true;       // the first line after skip_rows names the columns
    std::size_t skip_rows = 0;
};

class CsvSource {
public:
    CsvSource(std::string path, const CsvFormat& format);
    ~CsvSource();
    CsvSource(const CsvSource&) = delete;
    CsvSource& operator=(const CsvSource&) = delete;

    // The header's names (format.header), or "" for each field of the first data row otherwise.
    // Call once, before next_row.
    std::vector<std::string> read_header();
    // The next non-blank line's fields; false at the end of the file.
    bool next_row(std::vector<std::string>& fields);
    const std::string& path() const { return path_; }
    std::uint64_t line() const { return line_; }
    // "FILE:LINE" of the row last read.
    std::string where() const;

private:
    bool next_line(std::string& line);
    void split(const std::string& line, std::vector<std::string>& fields) const;

    std::string path_;
    CsvFormat format_;
    gzFile file_ = nullptr;
    std::uint64_t line_ = 0;
    std::vector<char> buffer_;
    std::vector<std::string> pending_;  // the first data row, when there is no header
    bool has_pending_ = false;
};

// What a cell holds, read as a float64.
enum class CellNumber {
    ok,            // a finite number
    not_a_number,  // empty, text, trailing characters
    not_finite,    // nan, inf, infinity (any case, signed): missing or infinite values
    out_of_range,  // a number whose magnitude float64 cannot hold (1e999, 1e-400)
};
CellNumber read_number(const std::string& cell, double& value);
// True when read_number gives ok (then `value` is set).
bool parse_number(const std::string& cell, double& value);
// True when the cell is written as an integer: an optional sign and digits only.
bool is_integer_literal(const std::string& cell);

}  // namespace trainrt::data
