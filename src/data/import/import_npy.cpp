// `trainrt data import npy`: headers of every array first (types, shapes, names, lengths checked
// before anything is written), then each array streamed in blocks of rows into its split(s).
#include <algorithm>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "data/dataset_writer.hpp"
#include "data/import/importers.hpp"
#include "data/import/npy.hpp"
#include "trainrt/error.hpp"

namespace trainrt::data {
namespace {

constexpr std::size_t kBlockBytes = 4u << 20;

// One input array: a .npy file, or a member of an .npz.
struct NpyInput {
    std::string name;                   // the column it becomes
    std::string file;
    std::optional<std::size_t> member;  // in the .npz
    std::size_t input = 0;              // which command-line input it came from
    NpyArray array;
};

bool ends_with(const std::string& text, const std::string& suffix) {
    return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::unique_ptr<ByteSource> open_input(const NpyInput& input, std::unique_ptr<NpzArchive>& archive) {
    if (!input.member) return open_npy_file(input.file);
    archive = std::make_unique<NpzArchive>(input.file);
    return archive->open(*input.member);
}

void add_inputs(const std::string& argument, std::size_t index, std::vector<NpyInput>& inputs) {
    // A file whose own name holds '=' is that file, not NAME=FILE.
    const NamedValue named = std::filesystem::exists(argument) ? NamedValue{"", argument} : split_named(argument);
    const std::string& file = named.value;
    if (ends_with(file, ".npz")) {
        if (!named.name.empty())
            throw DataError(fmt::format("data import: {}: name the arrays inside an .npz by their keys", argument));
        NpzArchive archive(file);
        for (std::size_t m = 0; m < archive.members().size(); ++m) {
            auto source = archive.open(m);
            inputs.push_back({archive.members()[m], file, m, index, read_npy_header(*source)});
        }
        return;
    }
    auto source = open_npy_file(file);
    const std::string name = named.name.empty() ? std::filesystem::path(file).stem().string() : named.name;
    inputs.push_back({name, file, std::nullopt, index, read_npy_header(*source)});
}

std::string where(const NpyInput& input) {
    return input.member ? fmt::format("{}[{}]", input.file, input.name) : input.file;
}

std::size_t split_of(const NpyInput& input, const SplitPlan& plan) {
    return plan.by_file() ? plan.file_split[input.input] : 0;
}

// Names unique within a split, valid, and one length per split.
void check_inputs(const std::vector<NpyInput>& inputs, const SplitPlan& plan) {
    std::vector<PlannedColumn> planned;
    for (const NpyInput& input : inputs)
        planned.push_back({input.name, where(input),
                           input.member ? "save it under another key (np.savez(FILE, NAME=array))"
                                        : fmt::format("NAME={}", input.file),
                           input.array.shape[0], split_of(input, plan)});
    check_columns(planned);
}

// Rows per input (for split_counts): in file mode each input's arrays have its length.
std::vector<std::uint64_t> input_rows(const std::vector<NpyInput>& inputs, std::size_t input_count) {
    std::vector<std::uint64_t> rows(input_count, 0);
    for (const NpyInput& input : inputs) rows[input.input] = input.array.shape[0];
    return rows;
}

std::vector<std::string> names_in(const std::vector<NpyInput>& inputs, const SplitPlan& plan, std::size_t split) {
    std::vector<std::string> names;
    for (const NpyInput& input : inputs)
        if (split_of(input, plan) == split) names.push_back(input.name);
    std::sort(names.begin(), names.end());
    return names;
}

// Streams one array into the writers of its split(s).
void copy_array(const NpyInput& input, const std::vector<ColumnWriter*>& writers, const RowAssigner* assigner,
                std::size_t split) {
    std::unique_ptr<NpzArchive> archive;
    std::unique_ptr<ByteSource> source = open_input(input, archive);
    read_npy_header(*source);
    const NpyArray& array = input.array;
    const std::size_t elements = array.sample_elements();
    const std::size_t in_row = elements * array.item_bytes, out_row = elements * column_type_size(array.type);
    const std::size_t block = std::max<std::size_t>(1, kBlockBytes / std::max<std::size_t>(1, in_row));
    std::vector<std::byte> raw(block * in_row), converted(block * out_row);
    for (std::uint64_t row = 0; row < array.shape[0];) {
        const std::size_t count = static_cast<std::size_t>(std::min<std::uint64_t>(block, array.shape[0] - row));
        source->read(raw.data(), count * in_row, "data");
        convert_elements(array, raw.data(), count * elements, converted.data());
        if (assigner) append_rows(writers, *assigner, row, converted.data(), count, out_row);
        else writers[split]->append(converted.data(), count);
        row += count;
    }
    source->finish();
}

std::string feature_column(const NpyOptions& options, const std::vector<std::string>& names) {
    if (!options.features.empty()) {
        if (std::find(names.begin(), names.end(), options.features) == names.end())
            throw DataError(fmt::format("data import: --features {} is not one of the arrays ({})", options.features,
                                        fmt::join(names, ", ")));
        return options.features;
    }
    if (names.size() == 2 && !options.common.label.empty())
        return names[0] == options.common.label ? names[1] : names[0];
    return "";
}

// The columns every split has (by file: the same in each), and --label among them.
std::vector<std::string> check_names(const std::vector<NpyInput>& inputs, const SplitPlan& plan,
                                     const NpyOptions& options) {
    const std::vector<std::string> names = names_in(inputs, plan, 0);
    for (std::size_t s = 1; s < plan.names.size() && plan.by_file(); ++s)
        if (names_in(inputs, plan, s) != names)
            throw DataError(fmt::format("data import: split '{}' has arrays {}, split '{}' has {}: every split needs "
                                        "the same columns", plan.names[0], fmt::join(names, ", "), plan.names[s],
                                        fmt::join(names_in(inputs, plan, s), ", ")));
    if (!options.common.label.empty() && std::find(names.begin(), names.end(), options.common.label) == names.end())
        throw DataError(fmt::format("data import: --label {} is not one of the arrays ({})", options.common.label,
                                    fmt::join(names, ", ")));
    return names;
}

void write_columns(DatasetWriter& writer, const std::vector<NpyInput>& inputs, const SplitPlan& plan,
                   const std::vector<std::uint64_t>& counts, std::uint64_t seed) {
    std::optional<RowAssigner> assigner;
    if (!plan.by_file()) assigner.emplace(plan, inputs[0].array.shape[0], seed);
    for (const NpyInput& input : inputs) {
        std::vector<ColumnWriter*> writers(plan.names.size(), nullptr);
        const std::size_t home = split_of(input, plan);
        std::vector<std::size_t> sample(input.array.shape.begin() + 1, input.array.shape.end());
        for (std::size_t s = 0; s < plan.names.size(); ++s)
            if (!plan.by_file() || s == home)
                writers[s] = &writer.add_column(plan.names[s], {input.name, input.array.type, sample, counts[s],
                                                                where(input)});
        copy_array(input, writers, assigner ? &*assigner : nullptr, home);
    }
}

std::string describe(const std::vector<NpyInput>& inputs, const SplitPlan& plan) {
    std::vector<std::string> described;
    for (const NpyInput& input : inputs) {
        if (split_of(input, plan) != 0) continue;
        const std::vector<std::size_t> sample(input.array.shape.begin() + 1, input.array.shape.end());
        const char* type = column_type_name(input.array.type);
        described.push_back(sample.empty() ? fmt::format("{} ({})", input.name, type)
                                           : fmt::format("{} ({} {})", input.name, type, fmt::join(sample, "x")));
    }
    return fmt::format("columns {}", fmt::join(described, ", "));
}

}  // namespace

ImportReport import_npy(const std::vector<std::string>& files, const NpyOptions& options) {
    if (files.empty()) throw DataError("data import npy: no input files");
    const SplitPlan plan = parse_split(options.common.split, files);
    std::vector<NpyInput> inputs;
    for (std::size_t i = 0; i < files.size(); ++i) add_inputs(files[i], i, inputs);
    check_inputs(inputs, plan);
    const std::string features = feature_column(options, check_names(inputs, plan, options));
    const std::vector<std::uint64_t> rows =
        plan.by_file() ? input_rows(inputs, files.size()) : std::vector<std::uint64_t>{inputs[0].array.shape[0]};
    const std::vector<std::uint64_t> counts = split_counts(plan, rows, options.common.seed);

    DatasetWriter writer(options.common.out, options.common.compression);
    writer.describe(dataset_name(options.common), fmt::format("npy: {}", fmt::join(files, ", ")), features,
                    options.common.label);
    write_columns(writer, inputs, plan, counts, options.common.seed);
    writer.commit();

    ImportReport report;
    report.what = describe(inputs, plan);
    for (std::size_t s = 0; s < plan.names.size(); ++s) report.splits.emplace_back(plan.names[s], counts[s]);
    return report;
}

}  // namespace trainrt::data
