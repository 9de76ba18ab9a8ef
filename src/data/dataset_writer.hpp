#pragma once
// Writes a dataset file (hdf5_schemas/dataset.md, version 2) for the importers: columns chunked
// for batch reads (about 1 MiB of rows per chunk), optionally gzip-compressed, appended in row
// order. The file is built under a temporary name next to the output and renamed into place by
// commit(); a writer destroyed without commit() removes it, so an import never leaves a
// half-written dataset.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "h5/h5.hpp"
#include "trainrt/data.hpp"

namespace trainrt::data {

struct NewColumn {
    std::string name;
    ColumnType type = ColumnType::f32;
    std::vector<std::size_t> sample_shape;
    std::uint64_t rows = 0;
    std::string source;
};

// Rows per chunk for a column: about 1 MiB of samples, at least 1, at most `rows`.
std::uint64_t chunk_rows_for(std::size_t sample_bytes, std::uint64_t rows);

class ColumnWriter {
public:
    ColumnWriter(hid_t group, const NewColumn& column, int compression);
    // Appends `count` rows, native values of the column's type, row-major.
    void append(const void* rows, std::uint64_t count);
    void attribute(const std::string& name, const std::string& value);
    void attribute(const std::string& name, const std::vector<double>& values);
    void attribute(const std::string& name, std::int64_t value);
    // Writes what is buffered and the per-element mean and std attributes; DataError-free:
    // an incomplete column is an internal error (the importer counted wrong).
    void finish();
    const NewColumn& spec() const { return spec_; }

private:
    void flush();
    void add_statistics(const std::byte* row_bytes, std::uint64_t count);

    NewColumn spec_;
    h5::Dataset dataset_;
    h5::Datatype memory_type_;
    std::size_t sample_bytes_;
    std::uint64_t chunk_rows_;
    std::uint64_t written_ = 0;
    std::vector<std::byte> buffer_;   // up to one chunk of rows
    std::uint64_t buffered_ = 0;
    std::vector<double> mean_, m2_;   // per sample element (Welford), for small samples only
};

class DatasetWriter {
public:
    DatasetWriter(std::string out, int compression);
    ~DatasetWriter();
    DatasetWriter(const DatasetWriter&) = delete;
    DatasetWriter& operator=(const DatasetWriter&) = delete;

    ColumnWriter& add_column(const std::string& split, const NewColumn& column);
    void split_attribute(const std::string& split, const std::string& name, const std::string& value);
    void root_attribute(const std::string& name, const std::string& value);
    // The root's attributes: format, version, name, source, default feature and label columns.
    void describe(const std::string& name, const std::string& source, const std::string& feature_column,
                  const std::string& label_column);
    // Finishes every column, closes the file (checked), fsyncs and renames it to the output.
    void commit();
    const std::string& out() const { return out_; }

private:
    hid_t split_group(const std::string& split);

    std::string out_;
    std::string temporary_;
    int compression_;
    h5::File file_;
    std::vector<std::pair<std::string, h5::Group>> splits_;
    std::vector<std::unique_ptr<ColumnWriter>> columns_;
    std::vector<std::string> column_splits_;  // the split of each column
    bool committed_ = false;
};

}  // namespace trainrt::data
