// `trainrt data import hdf5`: datasets picked by path from any HDF5 file, copied in blocks of
// rows (HDF5 converts byte order and widens u16/u32 on read).
#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "data/dataset_writer.hpp"
#include "data/h5_types.hpp"
#include "data/import/importers.hpp"
#include "h5/h5.hpp"
#include "h5/io.hpp"
#include "trainrt/error.hpp"

namespace trainrt::data {
namespace {

constexpr std::size_t kBlockBytes = 4u << 20;

struct Hdf5Input {
    std::string name;
    std::string path;  // inside the file
    ColumnType type;
    std::vector<hsize_t> shape;
};

std::uint64_t rows_of(const Hdf5Input& input) { return input.shape.empty() ? 0 : input.shape[0]; }

// A dataset that exists at `path` (not a group or another object), or DataError.
h5::Dataset open_dataset_at(hid_t file, const std::string& path, const std::string& where) {
    const bool found = h5::path_exists(file, path);
    const bool dataset_there = found && h5::object_type(file, path) == H5O_TYPE_DATASET;
    if (!dataset_there)
        throw DataError(fmt::format("data import: {} has no dataset {}{}", where, path,
                                    found ? " (it is a group or another object: name a dataset inside it)" : ""));
    return h5::open_dataset(file, path);
}

Hdf5Input open_input(hid_t file, const std::string& spec, const std::string& where) {
    if (spec.empty())
        throw DataError("data import: --columns has an empty item (two commas in a row, or one at an end); name "
                        "each dataset once: /path or NAME=/path");
    const NamedValue named = split_named(spec);
    Hdf5Input input;
    input.path = named.value;
    input.name = spec.find('=') == std::string::npos ? input.path.substr(input.path.rfind('/') + 1) : named.name;
    h5::Dataset dataset = open_dataset_at(file, input.path, where);
    h5::Datatype type = h5::dataset_type(dataset.get(), input.path);
    std::string why;
    auto column = column_type_for(type.get(), why);
    if (!column) throw DataError(fmt::format("data import: {}:{}: {}", where, input.path, why));
    input.type = *column;
    input.shape = h5::dataset_shape(dataset.get());
    return input;
}

std::vector<Hdf5Input> open_inputs(hid_t file, const std::string& columns, const std::string& where) {
    std::vector<Hdf5Input> inputs;
    std::vector<PlannedColumn> planned;
    for (const std::string& spec : split_list(columns)) {
        inputs.push_back(open_input(file, spec, where));
        const Hdf5Input& input = inputs.back();
        planned.push_back(
            {input.name, fmt::format("{}:{}", where, input.path), "NAME=" + input.path, rows_of(input), 0});
    }
    check_columns(planned);
    return inputs;
}

void read_block(hid_t dataset, const Hdf5Input& input, hid_t memory_type, std::uint64_t first, std::uint64_t count,
                std::byte* out) {
    h5::Block block{std::vector<hsize_t>(input.shape.size(), 0), input.shape};
    block.start[0] = first, block.count[0] = count;
    h5::read_block(dataset, memory_type, block, out, input.path);
}

void copy_input(hid_t file, const Hdf5Input& input, const std::vector<ColumnWriter*>& writers,
                const RowAssigner& assigner) {
    h5::Dataset dataset = h5::open_dataset(file, input.path);
    h5::Datatype memory = memory_type(input.type);
    std::size_t row_bytes = column_type_size(input.type);
    for (std::size_t d = 1; d < input.shape.size(); ++d) row_bytes *= input.shape[d];
    const std::uint64_t block = std::max<std::uint64_t>(1, kBlockBytes / std::max<std::size_t>(1, row_bytes));
    std::vector<std::byte> buffer(block * row_bytes);
    for (std::uint64_t row = 0; row < input.shape[0];) {
        const std::uint64_t count = std::min<std::uint64_t>(block, input.shape[0] - row);
        read_block(dataset.get(), input, memory.get(), row, count, buffer.data());
        append_rows(writers, assigner, row, buffer.data(), count, row_bytes);
        row += count;
    }
}

void check_defaults(const std::vector<Hdf5Input>& inputs, const Hdf5Options& options) {
    std::vector<std::string> names;
    for (const Hdf5Input& input : inputs) names.push_back(input.name);
    for (const std::string* wanted : {&options.common.label, &options.features})
        if (!wanted->empty() && std::find(names.begin(), names.end(), *wanted) == names.end())
            throw DataError(fmt::format("data import: '{}' is not one of the imported columns ({})", *wanted,
                                        fmt::join(names, ", ")));
}

h5::File open_source(const std::string& path) {
    try {
        return h5::open_file(path, false);
    } catch (const H5Error& error) {
        throw DataError(fmt::format("data import: cannot open {} as HDF5: {}", path, error.what()));
    }
}

void write_columns(DatasetWriter& writer, hid_t file, const std::string& path, const std::vector<Hdf5Input>& inputs,
                   const SplitPlan& plan, const std::vector<std::uint64_t>& counts, const RowAssigner& assigner) {
    for (const Hdf5Input& input : inputs) {
        std::vector<ColumnWriter*> writers;
        std::vector<std::size_t> sample(input.shape.begin() + 1, input.shape.end());
        for (std::size_t s = 0; s < plan.names.size(); ++s)
            writers.push_back(&writer.add_column(plan.names[s], {input.name, input.type, sample, counts[s],
                                                                 fmt::format("{}:{}", path, input.path)}));
        copy_input(file, input, writers, assigner);
    }
}

}  // namespace

ImportReport import_hdf5(const std::string& path, const Hdf5Options& options) {
    if (options.columns.empty())
        throw DataError("data import hdf5: name the datasets to import with --columns /path/a,/path/b");
    const SplitPlan plan = parse_split(options.common.split, {path});
    if (plan.by_file()) throw DataError("data import hdf5: split one file by fractions (--split train=0.8,test=0.2)");
    h5::File file = open_source(path);
    const std::vector<Hdf5Input> inputs = open_inputs(file.get(), options.columns, path);
    check_defaults(inputs, options);
    const std::uint64_t rows = inputs[0].shape[0];
    const std::vector<std::uint64_t> counts = split_counts(plan, {rows}, options.common.seed);
    const RowAssigner assigner(plan, rows, options.common.seed);

    DatasetWriter writer(options.common.out, options.common.compression);
    writer.describe(dataset_name(options.common), fmt::format("hdf5: {}", path), options.features,
                    options.common.label);
    write_columns(writer, file.get(), path, inputs, plan, counts, assigner);
    writer.commit();

    ImportReport report;
    std::vector<std::string> described;
    for (const Hdf5Input& input : inputs)
        described.push_back(fmt::format("{} ({})", input.name, column_type_name(input.type)));
    report.what = fmt::format("{} rows, columns {}", rows, fmt::join(described, ", "));
    for (std::size_t s = 0; s < plan.names.size(); ++s) report.splits.emplace_back(plan.names[s], counts[s]);
    return report;
}

}  // namespace trainrt::data
