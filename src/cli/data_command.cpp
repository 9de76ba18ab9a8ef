#include <iostream>
#include <string>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "data/import.hpp"
#include "trainrt/error.hpp"

namespace po = boost::program_options;

namespace trainrt::cli {

int data_command(int argc, const char* const argv[]) {
    const std::string usage =
        "usage: trainrt data import fashion-mnist [--from DIR] [--out FILE]";
    if (argc < 3 || std::string(argv[1]) != "import" || std::string(argv[2]) != "fashion-mnist")
        throw ConfigError(fmt::format("data: unknown data command; {}", usage));
    po::options_description desc("trainrt data import fashion-mnist");
    desc.add_options()("from", po::value<std::string>()->default_value(data::kFashionMnistDir),
                       "directory with the IDX .gz files")(
        "out", po::value<std::string>()->default_value("data/fashion-mnist.h5"), "HDF5 file to write");
    po::variables_map options;
    try {
        po::store(po::command_line_parser(argc - 2, argv + 2).options(desc).run(), options);
    } catch (const po::error& error) {
        throw ConfigError(fmt::format("data: {}; {}", error.what(), usage));
    }
    const std::string from = options["from"].as<std::string>();
    const std::string out = options["out"].as<std::string>();
    data::ImportSummary summary = data::import_fashion_mnist(from, out);
    std::cout << fmt::format("imported fashion-mnist from {}: {} train and {} test samples -> {}",
                             from, summary.train_count, summary.test_count, out)
              << std::endl;
    return 0;
}

}  // namespace trainrt::cli
