#include "metrics/metrics_h5.hpp"

#include <unistd.h>

#include <cmath>
#include <algorithm>
#include <cstring>
#include <memory>

#include "h5/h5.hpp"
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
    h5::Datatype type(TRAINRT_H5(H5Tcreate(H5T_COMPOUND, size > 0 ? size : 1), "metrics row"));
    h5::Datatype text(TRAINRT_H5(H5Tcopy(H5T_C_S1), ""));
    TRAINRT_H5(H5Tset_size(text.get(), tag_bytes), "");
    std::size_t offset = 0;
    for (const Column& column : schema.columns()) {
        hid_t member = column.kind == ColumnKind::text ? text.get()
                       : column.kind == ColumnKind::integer ? H5T_STD_I64LE : H5T_IEEE_F64LE;
        TRAINRT_H5(H5Tinsert(type.get(), column.name.c_str(), offset, member), column.name);
        offset += width(column.kind);
    }
    return type;
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

h5::PropertyList latest_format_fapl() {
    h5::PropertyList fapl = h5::file_access_props();
    TRAINRT_H5(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST), "");
    return fapl;
}

ColumnKind kind_of_member(hid_t type, unsigned index) {
    h5::Datatype member(TRAINRT_H5(H5Tget_member_type(type, index), ""));
    const H5T_class_t type_class = h5::locked([&] { return H5Tget_class(member.get()); });
    if (type_class == H5T_STRING) return ColumnKind::text;
    return type_class == H5T_INTEGER ? ColumnKind::integer : ColumnKind::real;
}

// The name of member `index` of a compound type ("" when HDF5 gives none).
std::string member_name(hid_t type, unsigned index) {
    return h5::locked([&] {
        std::unique_ptr<char, herr_t (*)(void*)> name(H5Tget_member_name(type, index), H5free_memory);
        return std::string(name ? name.get() : "");
    });
}

TableSchema schema_of(hid_t dataset) {
    h5::Datatype type(TRAINRT_H5(H5Dget_type(dataset), "metrics"));
    std::vector<Column> columns;
    const int members = TRAINRT_H5(H5Tget_nmembers(type.get()), "metrics");
    for (unsigned i = 0; i < static_cast<unsigned>(members); ++i)
        columns.push_back({member_name(type.get(), i), kind_of_member(type.get(), i)});
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
    h5::Dataspace file_space = h5::dataset_space(handles.dataset.get());
    TRAINRT_H5(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &start, nullptr, &count, nullptr), "");
    h5::Dataspace memory(TRAINRT_H5(H5Screate_simple(1, &count, nullptr), ""));
    TRAINRT_H5(H5Dread(handles.dataset.get(), handles.type.get(), memory.get(), file_space.get(), H5P_DEFAULT,
                       handles.chunk.data()), "metrics.h5: last rows");
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
    TRAINRT_H5(H5Dset_extent(handles_->dataset.get(), &extent), "metrics.h5: grow /metrics");
    TRAINRT_H5(H5Dwrite_chunk(handles_->dataset.get(), H5P_DEFAULT, 0, &offset, chunk.size(), chunk.data()),
               "metrics.h5: row");
    TRAINRT_H5(H5Fflush(handles_->file.get(), H5F_SCOPE_LOCAL), "metrics.h5: flush");
    rows_ = extent;
    if (rows_ % chunk_rows == 0) std::fill(chunk.begin(), chunk.end(), 0);
}

std::unique_ptr<MetricsH5> MetricsH5::open_matching(const std::string& path, const TableSchema& schema,
                                                    std::size_t rows, std::string& problem) {
    problem.clear();
    if (!storage::path_exists(path)) return nullptr;
    try {
        auto handles = std::make_unique<Handles>();
        h5::PropertyList fapl = latest_format_fapl();
        handles->file = h5::File(
            TRAINRT_H5(H5Fopen(path.c_str(), H5F_ACC_RDWR | H5F_ACC_SWMR_WRITE, fapl.get()), path));
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
    const hsize_t count = rows.size(), unlimited = H5S_UNLIMITED;
    h5::Dataspace space(TRAINRT_H5(H5Screate_simple(1, &count, &unlimited), ""));
    h5::PropertyList dcpl(TRAINRT_H5(H5Pcreate(H5P_DATASET_CREATE), ""));
    TRAINRT_H5(H5Pset_chunk(dcpl.get(), 1, &chunk_rows), "");
    h5::Datatype type = row_type(schema);
    h5::Dataset dataset(TRAINRT_H5(H5Dcreate2(file, table_name, type.get(), space.get(), H5P_DEFAULT,
                                              dcpl.get(), H5P_DEFAULT), "metrics.h5: /metrics"));
    const std::vector<char> packed = pack(schema, flat);
    if (count > 0)
        TRAINRT_H5(H5Dwrite(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, packed.data()),
                   "metrics.h5: rows");
    h5::write_attribute(dataset.get(), "schema", std::string("trainrt metrics (hdf5_schemas/metrics.md)"));
    h5::write_attribute(dataset.get(), "version", std::int64_t{metrics_h5_version});
    h5::write_attribute(dataset.get(), "source", std::string(runlog::kResults));
}

}  // namespace

std::unique_ptr<MetricsH5> MetricsH5::rebuild(const std::string& path, const TableSchema& schema,
                                              const std::vector<Row>& rows) {
    const std::string temporary = path + ".rebuild";
    {
        h5::PropertyList fapl = latest_format_fapl();
        h5::File file(
            TRAINRT_H5(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), temporary));
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
        h5::File file(
            TRAINRT_H5(H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, fapl.get()), path));
        h5::Dataset dataset = h5::open_dataset(file.get(), table_name);
        schema_of(dataset.get());
        return "";
    } catch (const Error& error) {
        return error.what();
    }
}

}  // namespace trainrt::metrics
