#include "metrics/metrics_h5.hpp"

#include <unistd.h>

#include <cmath>
#include <algorithm>
#include <cstring>
#include <memory>

#include "h5/file.hpp"
#include "h5/h5.hpp"
#include "h5/io.hpp"
#include "h5/props.hpp"
#include "h5/space.hpp"
#include "h5/types.hpp"
#include "storage/posix.hpp"
#include "runlog/run_files.hpp"
#include "trainrt/error.hpp"

namespace trainrt::metrics {
namespace {

constexpr hsize_t chunk_rows = 64;
constexpr const char* table_name = "metrics";

std::size_t width(ColumnKind kind) { return kind == ColumnKind::text ? tag_bytes : 8; }

// The compound type, the same in memory and in the file (little-endian x86/ARM hosts).
std::size_t row_bytes(const TableSchema& schema) {
    std::size_t bytes = 0;
    for (const Column& column : schema.columns()) bytes += width(column.kind);
    return bytes;
}

h5::Datatype row_type(const TableSchema& schema) {
    const std::size_t size = row_bytes(schema);
    h5::Datatype text = h5::string_type(tag_bytes, "metrics text column");
    std::vector<h5::CompoundMember> members;
    std::size_t offset = 0;
    for (const Column& column : schema.columns()) {
        hid_t member = column.kind == ColumnKind::text ? text.get()
                       : column.kind == ColumnKind::integer ? H5T_STD_I64LE : H5T_IEEE_F64LE;
        members.push_back({column.name, offset, member});
        offset += width(column.kind);
    }
    return h5::compound_type(size > 0 ? size : 1, members, "metrics row");
}

void put(char* at, ColumnKind kind, const nlohmann::ordered_json* value) {
    if (kind == ColumnKind::text) {
        std::string text = value == nullptr || value->is_null() ? "" : value->is_string() ? value->get<std::string>() : value->dump();
        std::memcpy(at, text.data(), std::min(text.size(), tag_bytes - 1));
    } else if (kind == ColumnKind::integer) {
        std::int64_t number = value != nullptr && value->is_number() ? value->get<std::int64_t>() : -1;
        std::memcpy(at, &number, 8);
    } else {
        double number = value != nullptr && (value->is_number() || value->is_boolean()) ? value->get<double>() : NAN;
        std::memcpy(at, &number, 8);
    }
}

// Rows packed in the compound layout; missing values: NaN, -1 or "".
void pack_into(char* at, const TableSchema& schema, const Arranged& values) {
    for (std::size_t c = 0; c < values.size(); ++c) {
        put(at, schema.columns()[c].kind, values[c]);
        at += width(schema.columns()[c].kind);
    }
}

std::vector<char> pack(const TableSchema& schema, const std::vector<FlatRow>& rows) {
    const std::size_t row_size = row_bytes(schema);
    std::vector<char> buffer(row_size * rows.size(), 0);
    for (std::size_t r = 0; r < rows.size(); ++r) pack_into(buffer.data() + r * row_size, schema, schema.arrange(rows[r]));
    return buffer;
}

ColumnKind kind_of_member(hid_t type, unsigned index) {
    h5::Datatype member = h5::member_type(type, index, "metrics column");
    const H5T_class_t type_class = h5::type_class(member.get(), "metrics column");
    if (type_class == H5T_STRING) return ColumnKind::text;
    return type_class == H5T_INTEGER ? ColumnKind::integer : ColumnKind::real;
}

TableSchema schema_of(hid_t dataset) {
    h5::Datatype type = h5::dataset_type(dataset, "metrics");
    std::vector<Column> columns;
    const unsigned members = h5::member_count(type.get(), "metrics");
    for (unsigned i = 0; i < members; ++i)
        columns.push_back({h5::member_name(type.get(), i, "metrics column"), kind_of_member(type.get(), i)});
    return TableSchema(std::move(columns));
}

}  // namespace

struct MetricsH5::Handles {
    h5::File file;
    h5::Dataset dataset;
    h5::Datatype type;
    std::size_t row_bytes = 0;
    std::vector<char> chunk;  // the last chunk's rows as in the file: appended whole, unconverted
};

namespace {

// The rows already in the last, partly filled chunk, so that rewriting it keeps them.
void load_last_chunk(MetricsH5::Handles& handles, std::uint64_t rows) {
    handles.chunk.assign(handles.row_bytes * chunk_rows, 0);
    const hsize_t start = rows - rows % chunk_rows, count = rows % chunk_rows;
    if (count == 0) return;
    h5::read_block(handles.dataset.get(), handles.type.get(), {{start}, {count}}, handles.chunk.data(),
                   "metrics.h5: last rows");
}

}  // namespace

MetricsH5::MetricsH5(std::unique_ptr<Handles> handles, TableSchema schema, std::uint64_t rows)
    : handles_(std::move(handles)), schema_(std::move(schema)), rows_(rows) {}

MetricsH5::~MetricsH5() = default;

// The row goes into the last chunk, written whole with H5Dwrite_chunk: the packed layout is the
// file's, so HDF5's type conversion and selection machinery (most of a row's cost) is skipped.
void MetricsH5::append(const Arranged& row) {
    std::vector<char>& chunk = handles_->chunk;
    pack_into(chunk.data() + (rows_ % chunk_rows) * handles_->row_bytes, schema_, row);
    const hsize_t extent = rows_ + 1, offset = rows_ - rows_ % chunk_rows;
    h5::set_extent(handles_->dataset.get(), {extent}, "metrics.h5: grow /metrics");
    h5::write_chunk(handles_->dataset.get(), {offset}, chunk.data(), chunk.size(), "metrics.h5: row");
    h5::flush(handles_->file.get(), H5F_SCOPE_LOCAL, "metrics.h5: flush");
    rows_ = extent;
    if (rows_ % chunk_rows == 0) std::fill(chunk.begin(), chunk.end(), 0);
}

std::unique_ptr<MetricsH5> MetricsH5::open_matching(const std::string& path, const TableSchema& schema,
                                                    std::size_t rows, std::string& problem) {
    problem.clear();
    if (!storage::path_exists(path)) return nullptr;
    try {
        auto handles = std::make_unique<Handles>();
        h5::PropertyList fapl = h5::latest_format_file_access();
        handles->file = h5::open_file_with(path, H5F_ACC_RDWR | H5F_ACC_SWMR_WRITE, fapl.get());
        handles->dataset = h5::open_dataset(handles->file.get(), table_name);
        if (!(schema_of(handles->dataset.get()) == schema) ||
            h5::dataset_shape(handles->dataset.get()).at(0) != rows)
            return nullptr;
        handles->type = row_type(schema);
        handles->row_bytes = row_bytes(schema);
        load_last_chunk(*handles, rows);
        return std::unique_ptr<MetricsH5>(new MetricsH5(std::move(handles), schema, rows));
    } catch (const Error& error) {
        problem = error.what();
        return nullptr;
    }
}

namespace {

void write_table(hid_t file, const TableSchema& schema, const std::vector<Row>& rows) {
    std::vector<FlatRow> flat;
    flat.reserve(rows.size());
    for (const Row& row : rows) flat.push_back(flatten(row));
    const hsize_t count = rows.size();
    h5::Dataspace space = h5::extendible_space({count}, {H5S_UNLIMITED}, "metrics.h5: /metrics");
    h5::PropertyList dcpl = h5::dataset_create_props({{chunk_rows}}, "metrics.h5: /metrics");
    h5::Datatype type = row_type(schema);
    h5::Dataset dataset =
        h5::create_dataset(file, table_name, type.get(), space.get(), dcpl.get(), "metrics.h5: /metrics");
    const std::vector<char> packed = pack(schema, flat);
    if (count > 0) h5::write_all(dataset.get(), type.get(), packed.data(), "metrics.h5: rows");
    h5::write_attribute(dataset.get(), "schema", std::string("trainrt metrics (hdf5_schemas/metrics.md)"));
    h5::write_attribute(dataset.get(), "version", std::int64_t{metrics_h5_version});
    h5::write_attribute(dataset.get(), "source", std::string(runlog::kResults));
}

}  // namespace

std::unique_ptr<MetricsH5> MetricsH5::rebuild(const std::string& path, const TableSchema& schema,
                                              const std::vector<Row>& rows) {
    const std::string temporary = path + ".rebuild";
    {
        h5::PropertyList fapl = h5::latest_format_file_access();
        h5::File file = h5::create_file_with(temporary, fapl.get());
        write_table(file.get(), schema, rows);
        h5::close_file(file, temporary);
    }
    storage::fsync_path(temporary);
    storage::rename_durable(temporary, path);
    std::string problem;
    std::unique_ptr<MetricsH5> opened = open_matching(path, schema, rows.size(), problem);
    if (!opened) throw StorageError(path + ": cannot reopen the metrics table just written: " + problem);
    return opened;
}

std::string metrics_h5_problem(const std::string& path) {
    if (!storage::path_exists(path)) return path + " does not exist";
    try {
        h5::PropertyList fapl = h5::file_access_props();
        h5::File file = h5::open_file_with(path, H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, fapl.get());
        h5::Dataset dataset = h5::open_dataset(file.get(), table_name);
        schema_of(dataset.get());
        return "";
    } catch (const Error& error) {
        return error.what();
    }
}

}  // namespace trainrt::metrics
