// `trainrt checkpoints RUN_DIR` lists a run's checkpoints; `trainrt checkpoints verify RUN_DIR`
// checks each one (checksums and schema) and exits 8 when the newest one is bad.
#include <filesystem>
#include <iostream>
#include <string>

#include <fmt/format.h>

#include "checkpoint/format/catalog.hpp"
#include "checkpoint/format/manifest.hpp"
#include "checkpoint/read/verify.hpp"
#include "cli/commands.hpp"
#include "trainrt/error.hpp"
#include "log/log.hpp"

namespace fs = std::filesystem;

namespace trainrt::cli {
namespace {

std::string metric_text(const checkpoint::Manifest& manifest, const char* key) {
    auto found = manifest.metrics.find(key);
    if (found == manifest.metrics.end()) return "-";
    return found->is_number_float() ? fmt::format("{:.4f}", found->get<double>()) : found->dump();
}

std::string size_text(std::uint64_t bytes) {
    if (bytes >= (1ull << 30)) return fmt::format("{:.1f} GiB", bytes / double(1ull << 30));
    if (bytes >= (1ull << 20)) return fmt::format("{:.1f} MiB", bytes / double(1ull << 20));
    return fmt::format("{:.1f} KiB", bytes / 1024.0);
}

// "" when good; the first problem otherwise (checksums first, then the schema).
std::string check(const std::string& dir) { return checkpoint::verify(dir); }

int list(const std::string& run_dir) {
    auto names = checkpoint::committed_names(run_dir);
    std::cout << fmt::format("{:<20} {:>9} {:>8} {:>6} {:<14} {:>10} {:>8} {:>9}  {}\n", "CHECKPOINT",
                             "ITERATION", "STEP", "RANKS", "LAYOUT", "SIZE", "LOSS", "TEST_ACC", "STATUS");
    for (const std::string& name : names) {
        const std::string dir = checkpoint::checkpoints_dir(run_dir) + "/" + name;
        std::string problem = check(dir);
        try {
            checkpoint::Manifest m = checkpoint::read_manifest(dir);
            std::uint64_t bytes = 0;
            for (const auto& file : m.files) bytes += file.size;
            std::string step = "-";
            for (const auto& [key, value] : m.attributes)
                if (key == "step" && std::holds_alternative<std::int64_t>(value))
                    step = std::to_string(std::get<std::int64_t>(value));
            std::cout << fmt::format("{:<20} {:>9} {:>8} {:>6} {:<14} {:>10} {:>8} {:>9}  {}{}\n", name,
                                     m.iteration, step, m.world_size, m.layout, size_text(bytes),
                                     metric_text(m, "loss"), metric_text(m, "test_accuracy"),
                                     problem.empty() ? "ok" : "BAD: " + problem,
                                     name == names.back() ? " (latest)" : "");
        } catch (const Error& error) {
            std::cout << fmt::format("{:<20} BAD: {}\n", name, error.what());
        }
    }
    if (names.empty()) std::cout << "no committed checkpoints in " << run_dir << "\n";
    return 0;
}

int verify_all(const std::string& run_dir) {
    auto names = checkpoint::committed_names(run_dir);
    bool newest_ok = true;
    for (const std::string& name : names) {
        const std::string dir = checkpoint::checkpoints_dir(run_dir) + "/" + name;
        std::string problem = check(dir);
        std::cout << (problem.empty() ? "ok   " : "BAD  ") << dir << (problem.empty() ? "" : ": " + problem) << "\n";
        if (name == names.back()) newest_ok = problem.empty();
    }
    if (names.empty()) std::cout << "no committed checkpoints in " << run_dir << "\n";
    if (!newest_ok) log::error("the newest checkpoint of {} is bad", run_dir);
    return newest_ok ? 0 : exit_codes::checkpoint;
}

}  // namespace

int checkpoints_command(int argc, const char* const argv[]) {
    const std::string usage = "usage: trainrt checkpoints [verify] RUN_DIR";
    bool verify = argc == 3 && std::string(argv[1]) == "verify";
    if (!(argc == 2 || verify)) throw ConfigError("checkpoints: " + usage);
    const std::string run_dir = argv[argc - 1];
    if (!fs::is_directory(run_dir))
        throw ConfigError(fmt::format("checkpoints: {} is not a directory; {}", run_dir, usage));
    return verify ? verify_all(run_dir) : list(run_dir);
}

}  // namespace trainrt::cli
