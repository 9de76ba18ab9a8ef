#include "data/dataset_writer.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "data/dataset_file.hpp"
#include "data/h5_types.hpp"
#include "h5/io.hpp"
#include "h5/props.hpp"
#include "h5/space.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace trainrt::data {
namespace {

constexpr std::size_t kChunkBytes = 1u << 20;
constexpr std::size_t kMaxStatisticElements = 4096;  // mean/std attributes for samples this small

std::vector<hsize_t> dims_of(std::uint64_t rows, const std::vector<std::size_t>& sample_shape) {
    std::vector<hsize_t> dims{rows};
    dims.insert(dims.end(), sample_shape.begin(), sample_shape.end());
    return dims;
}

template <class T> double element(const std::byte* at) {
    T value;
    std::memcpy(&value, at, sizeof(T));
    if constexpr (std::is_same_v<T, float16>) return value.to_float();
    else return static_cast<double>(value);
}

double element_as_double(ColumnType type, const std::byte* at) {
    switch (type) {
        case ColumnType::u8: return element<std::uint8_t>(at);
        case ColumnType::i8: return element<std::int8_t>(at);
        case ColumnType::i16: return element<std::int16_t>(at);
        case ColumnType::i32: return element<std::int32_t>(at);
        case ColumnType::i64: return element<std::int64_t>(at);
        case ColumnType::f16: return element<float16>(at);
        case ColumnType::f32: return element<float>(at);
        case ColumnType::f64: return element<double>(at);
    }
    return 0.0;
}

h5::PropertyList creation_props(const NewColumn& column, std::uint64_t chunk_rows, int compression) {
    if (compression > 0 && !h5::deflate_available())
        throw DataError("data: this HDF5 has no gzip (deflate) filter; import without --compress");
    h5::DatasetLayout layout;
    layout.chunk_dims = dims_of(chunk_rows, column.sample_shape);
    layout.deflate_level = compression > 0 ? static_cast<unsigned>(compression) : 0;
    return h5::dataset_create_props(layout, column.name);
}

}  // namespace

std::uint64_t chunk_rows_for(std::size_t sample_bytes, std::uint64_t rows) {
    const std::uint64_t rows_per_chunk = std::max<std::uint64_t>(1, kChunkBytes / std::max<std::size_t>(1, sample_bytes));
    return std::max<std::uint64_t>(1, std::min(rows_per_chunk, rows));
}

ColumnWriter::ColumnWriter(hid_t group, const NewColumn& column, int compression)
    : spec_(column), memory_type_(memory_type(column.type)) {
    ColumnInfo info{column.name, column.type, column.sample_shape};
    sample_bytes_ = info.sample_bytes();
    chunk_rows_ = chunk_rows_for(sample_bytes_, column.rows);
    std::vector<hsize_t> dims = dims_of(column.rows, column.sample_shape);
    h5::Dataspace space = h5::simple_space(dims, column.name);
    h5::PropertyList dcpl = creation_props(column, chunk_rows_, compression);
    h5::Datatype stored = file_type(column.type);
    dataset_ = h5::create_dataset(group, column.name, stored.get(), space.get(), dcpl.get(), column.name);
    if (!column.source.empty()) h5::write_attribute(dataset_.get(), "source", column.source);
    buffer_.resize(chunk_rows_ * sample_bytes_);
    const std::size_t elements = sample_bytes_ / column_type_size(column.type);
    if (elements <= kMaxStatisticElements) mean_.assign(elements, 0.0), m2_.assign(elements, 0.0);
}

void ColumnWriter::add_statistics(const std::byte* row_bytes, std::uint64_t count) {
    if (mean_.empty()) return;
    const std::size_t size = column_type_size(spec_.type);
    for (std::uint64_t r = 0; r < count; ++r) {
        const double n = static_cast<double>(written_ + buffered_ + r + 1);
        const std::byte* row = row_bytes + r * sample_bytes_;
        for (std::size_t e = 0; e < mean_.size(); ++e) {
            const double x = element_as_double(spec_.type, row + e * size);
            const double delta = x - mean_[e];
            mean_[e] += delta / n;
            m2_[e] += delta * (x - mean_[e]);
        }
    }
}

void ColumnWriter::append(const void* rows, std::uint64_t count) {
    const auto* bytes = static_cast<const std::byte*>(rows);
    if (written_ + buffered_ + count > spec_.rows)
        throw Error(fmt::format("data import: column '{}' got more than its {} rows", spec_.name, spec_.rows));
    while (count > 0) {
        const std::uint64_t take = std::min(count, chunk_rows_ - buffered_);
        add_statistics(bytes, take);
        std::memcpy(buffer_.data() + buffered_ * sample_bytes_, bytes, take * sample_bytes_);
        buffered_ += take, bytes += take * sample_bytes_, count -= take;
        if (buffered_ == chunk_rows_) flush();
    }
}

void ColumnWriter::flush() {
    if (buffered_ == 0) return;
    h5::Block block{std::vector<hsize_t>(spec_.sample_shape.size() + 1, 0),
                    dims_of(buffered_, spec_.sample_shape)};
    block.start[0] = written_;
    h5::write_block(dataset_.get(), memory_type_.get(), block, buffer_.data(), spec_.name);
    written_ += buffered_;
    buffered_ = 0;
}

void ColumnWriter::attribute(const std::string& name, const std::string& value) {
    h5::write_attribute(dataset_.get(), name, value);
}

void ColumnWriter::attribute(const std::string& name, const std::vector<double>& values) {
    h5::write_attribute(dataset_.get(), name, values);
}

void ColumnWriter::attribute(const std::string& name, std::int64_t value) {
    h5::write_attribute(dataset_.get(), name, value);
}

void ColumnWriter::finish() {
    flush();
    if (written_ != spec_.rows)
        throw Error(fmt::format("data import: column '{}' got {} of its {} rows", spec_.name, written_, spec_.rows));
    if (mean_.empty() || written_ == 0) return;
    std::vector<double> std_dev(m2_.size());
    for (std::size_t e = 0; e < m2_.size(); ++e) std_dev[e] = std::sqrt(m2_[e] / static_cast<double>(written_));
    attribute("mean", mean_);
    attribute("std", std_dev);
}

DatasetWriter::DatasetWriter(std::string out, int compression)
    : out_(std::move(out)), temporary_(fmt::format("{}.tmp.{}", out_, ::getpid())), compression_(compression) {
    const std::string parent = std::filesystem::path(out_).parent_path().string();
    if (!parent.empty()) storage::make_dirs(parent);
    file_ = h5::create_file(temporary_);
}

DatasetWriter::~DatasetWriter() {
    if (committed_) return;
    columns_.clear();
    splits_.clear();
    file_.reset();
    std::error_code ignored;
    std::filesystem::remove(temporary_, ignored);
}

hid_t DatasetWriter::split_group(const std::string& split) {
    for (auto& [name, group] : splits_)
        if (name == split) return group.get();
    splits_.emplace_back(split, h5::create_group(file_.get(), split));
    return splits_.back().second.get();
}

ColumnWriter& DatasetWriter::add_column(const std::string& split, const NewColumn& column) {
    for (std::size_t d : column.sample_shape)
        if (d == 0)
            throw DataError(fmt::format("data import: {}column '{}' has an empty sample dimension (shape [N, {}]); a "
                                        "sample needs at least one value",
                                        column.source.empty() ? "" : column.source + ": ", column.name,
                                        fmt::join(column.sample_shape, ", ")));
    columns_.push_back(std::make_unique<ColumnWriter>(split_group(split), column, compression_));
    column_splits_.push_back(split);
    return *columns_.back();
}

void DatasetWriter::split_attribute(const std::string& split, const std::string& name, const std::string& value) {
    h5::write_attribute(split_group(split), name, value);
}

void DatasetWriter::root_attribute(const std::string& name, const std::string& value) {
    h5::write_attribute(file_.get(), name, value);
}

void DatasetWriter::describe(const std::string& name, const std::string& source, const std::string& feature_column,
                             const std::string& label_column) {
    h5::write_attribute(file_.get(), "format", kDatasetFormat);
    h5::write_attribute(file_.get(), "format_version", kDatasetFormatVersion);
    h5::write_attribute(file_.get(), "name", name);
    h5::write_attribute(file_.get(), "source", source);
    if (!feature_column.empty()) h5::write_attribute(file_.get(), "feature_column", feature_column);
    if (!label_column.empty()) h5::write_attribute(file_.get(), "label_column", label_column);
}

void DatasetWriter::commit() {
    for (auto& column : columns_) column->finish();
    for (auto& [name, group] : splits_) {
        std::int64_t rows = 0;
        for (std::size_t c = 0; c < columns_.size(); ++c)
            if (column_splits_[c] == name) rows = static_cast<std::int64_t>(columns_[c]->spec().rows);
        h5::write_attribute(group.get(), "count", rows);
    }
    columns_.clear();
    splits_.clear();
    h5::close_file(file_, temporary_);
    storage::fsync_path(temporary_);
    storage::rename_durable(temporary_, out_);
    committed_ = true;
}

}  // namespace trainrt::data
