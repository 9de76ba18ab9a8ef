// `trainrt data import KIND ...` and `trainrt data info FILE`. Usage errors are ConfigErrors
// (exit 2); input that cannot be imported is a DataError (exit 6), with nothing written.
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "data/import/importers.hpp"
#include "trainrt/error.hpp"

namespace po = boost::program_options;

namespace trainrt::cli {
namespace {

constexpr const char* kUsage =
    "usage: trainrt data import csv|npy|hdf5|fashion-mnist|mnist INPUT... --out DATA.h5 [options], or trainrt data "
    "info DATA.h5 (options: docs/guides/data.md)";

[[noreturn]] void usage_error(const std::string& what) {
    throw ConfigError(fmt::format("data: {}; {}", what, kUsage));
}

po::options_description common_options() {
    po::options_description desc("import options");
    desc.add_options()("out", po::value<std::string>(), "dataset file to write")(
        "split", po::value<std::string>()->default_value(""), "train=0.8,test=0.2 or train=A,test=B")(
        "seed", po::value<std::uint64_t>()->default_value(0), "seed of the split by fractions")(
        "compress", po::value<int>()->default_value(0), "gzip level 0-9 (0: none)")(
        "name", po::value<std::string>()->default_value(""), "the dataset's name")(
        "label", po::value<std::string>()->default_value(""), "the label column");
    return desc;
}

po::variables_map parse(int argc, const char* const argv[], const po::options_description& desc,
                        std::vector<std::string>& inputs) {
    po::options_description all(desc);
    all.add_options()("input", po::value<std::vector<std::string>>(&inputs));
    po::positional_options_description positional;
    positional.add("input", -1);
    po::variables_map options;
    try {
        po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), options);
        po::notify(options);
    } catch (const po::error& error) {
        usage_error(error.what());
    }
    return options;
}

data::ImportOptions import_options(const po::variables_map& options, const std::string& default_out) {
    data::ImportOptions common;
    if (options.count("out")) common.out = options["out"].as<std::string>();
    else if (default_out.empty()) usage_error("--out DATA.h5 is required");
    else common.out = default_out;
    common.split = options["split"].as<std::string>();
    common.seed = options["seed"].as<std::uint64_t>();
    common.compression = options["compress"].as<int>();
    if (common.compression < 0 || common.compression > 9) usage_error("--compress takes a gzip level 0-9");
    common.name = options["name"].as<std::string>();
    common.label = options["label"].as<std::string>();
    return common;
}

char delimiter_of(const std::string& text) {
    if (text == "tab" || text == "\\t" || text == "\t") return '\t';
    if (text == "space" || text == " ") return ' ';
    if (text.size() != 1) usage_error(fmt::format("--delimiter '{}' is not one character (or tab, space)", text));
    return text[0];
}

data::ImportReport import_csv(int argc, const char* const argv[]) {
    po::options_description desc = common_options();
    desc.add_options()("delimiter", po::value<std::string>()->default_value(","), "field separator")(
        "skip-rows", po::value<std::size_t>()->default_value(0), "lines to skip before the header")(
        "no-header", po::bool_switch(), "the first line is data; columns are c0, c1, ...")(
        "columns", po::value<std::string>()->default_value(""), "feature columns")(
        "label-file", po::value<std::string>()->default_value(""), "labels from this one-column file")(
        "dtype", po::value<std::string>()->default_value("f32"), "feature type")(
        "label-type", po::value<std::string>()->default_value("auto"), "label type");
    std::vector<std::string> files;
    po::variables_map options = parse(argc, argv, desc, files);
    data::CsvOptions csv;
    csv.common = import_options(options, "");
    csv.format.delimiter = delimiter_of(options["delimiter"].as<std::string>());
    csv.format.skip_rows = options["skip-rows"].as<std::size_t>();
    csv.format.header = !options["no-header"].as<bool>();
    csv.columns = options["columns"].as<std::string>();
    csv.label_file = options["label-file"].as<std::string>();
    csv.dtype = options["dtype"].as<std::string>();
    csv.label_type = options["label-type"].as<std::string>();
    if (files.empty()) usage_error("no CSV files given");
    data::ImportReport report = data::import_csv(files, csv);
    report.out = csv.common.out;
    return report;
}

data::ImportReport import_npy(int argc, const char* const argv[]) {
    po::options_description desc = common_options();
    desc.add_options()("features", po::value<std::string>()->default_value(""), "the feature column");
    std::vector<std::string> files;
    po::variables_map options = parse(argc, argv, desc, files);
    data::NpyOptions npy{import_options(options, ""), options["features"].as<std::string>()};
    if (files.empty()) usage_error("no .npy/.npz files given");
    data::ImportReport report = data::import_npy(files, npy);
    report.out = npy.common.out;
    return report;
}

data::ImportReport import_hdf5(int argc, const char* const argv[]) {
    po::options_description desc = common_options();
    desc.add_options()("columns", po::value<std::string>()->default_value(""), "datasets to import")(
        "features", po::value<std::string>()->default_value(""), "the feature column");
    std::vector<std::string> files;
    po::variables_map options = parse(argc, argv, desc, files);
    data::Hdf5Options hdf5{import_options(options, ""), options["columns"].as<std::string>(),
                           options["features"].as<std::string>()};
    if (files.size() != 1) usage_error("give one HDF5 file");
    data::ImportReport report = data::import_hdf5(files[0], hdf5);
    report.out = hdf5.common.out;
    return report;
}

data::ImportReport import_idx(const std::string& kind, int argc, const char* const argv[]) {
    po::options_description desc = common_options();
    const bool fashion = kind == "fashion-mnist";
    desc.add_options()("from", po::value<std::string>()->default_value(fashion ? data::kFashionMnistDir : ""),
                       "directory with the IDX files");
    std::vector<std::string> inputs;
    po::variables_map options = parse(argc, argv, desc, inputs);
    if (!inputs.empty()) usage_error(fmt::format("unexpected argument '{}'", inputs[0]));
    const std::string from = options["from"].as<std::string>();
    if (from.empty()) usage_error("mnist: give the directory of its IDX files with --from DIR");
    const data::ImportOptions common = import_options(options, fmt::format("data/{}.h5", kind));
    data::ImportReport report = data::import_idx(kind, from, common);
    report.out = common.out;
    return report;
}

int import_command(int argc, const char* const argv[]) {
    if (argc < 2) usage_error("name what to import");
    const std::string kind = argv[1];
    data::ImportReport report;
    if (kind == "csv") report = import_csv(argc - 1, argv + 1);
    else if (kind == "npy") report = import_npy(argc - 1, argv + 1);
    else if (kind == "hdf5") report = import_hdf5(argc - 1, argv + 1);
    else if (kind == "fashion-mnist" || kind == "mnist") report = import_idx(kind, argc - 1, argv + 1);
    else usage_error(fmt::format("unknown import '{}' (csv, npy, hdf5, fashion-mnist, mnist)", kind));
    std::vector<std::string> splits;
    for (const auto& [name, rows] : report.splits) splits.push_back(fmt::format("{} {}", name, rows));
    std::cout << fmt::format("imported {}: {}; {} -> {}", kind, report.what, fmt::join(splits, ", "), report.out)
              << std::endl;
    return 0;
}

}  // namespace

int data_command(int argc, const char* const argv[]) {
    const std::string sub = argc > 1 ? argv[1] : "";
    if (sub == "import") return import_command(argc - 1, argv + 1);
    if (sub == "info") {
        if (argc != 3) usage_error("data info takes one file");
        std::cout << data::describe_dataset(argv[2]);
        return 0;
    }
    usage_error(sub.empty() ? "name a data command" : fmt::format("unknown data command '{}'", sub));
}

}  // namespace trainrt::cli
