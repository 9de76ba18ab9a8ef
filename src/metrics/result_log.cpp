#include "metrics/result_log.hpp"

#include <chrono>
#include <fstream>
#include <vector>
#include <iostream>
#include <variant>

#include <fmt/format.h>

#include "storage/posix.hpp"

namespace trainrt::metrics {

nlohmann::ordered_json to_json(const Metrics& metrics) {
    nlohmann::ordered_json row = nlohmann::ordered_json::object();
    for (const auto& [key, value] : metrics.items())
        std::visit([&row, &key](const auto& v) { row[key] = v; }, value);
    return row;
}

ResultLog::ResultLog(std::string run_dir, const Context& context)
    : path_(run_dir + "/result.jsonl"), context_(context) {}

std::int64_t ResultLog::resume_after(std::int64_t iteration) {
    iteration_ = iteration;
    if (context_.world_rank != 0 || !storage::path_exists(path_)) return 0;
    std::ifstream in(path_);
    std::string line, kept;
    std::vector<std::string> superseded;
    while (std::getline(in, line)) {
        auto row = nlohmann::ordered_json::parse(line, nullptr, false);
        bool keep = !row.is_discarded() && row.is_object() &&
                    row.value("_training_iteration", std::int64_t{0}) <= iteration &&
                    row.value("_training_iteration", std::int64_t{0}) > 0;
        if (keep) kept += line + "\n";
        else superseded.push_back(line);
    }
    if (superseded.empty()) return 0;
    const std::string aside = path_.substr(0, path_.size() - 6) + ".superseded.jsonl";
    for (const std::string& row : superseded) storage::append_line(aside, row);
    storage::write_file_atomic(path_, kept);
    return static_cast<std::int64_t>(superseded.size());
}

double ResultLog::total_seconds() const {
    return std::chrono::duration<double>(Clock::now() - started_).count();
}

nlohmann::ordered_json ResultLog::record(const Metrics& metrics) {
    auto now = Clock::now();
    nlohmann::ordered_json row = to_json(metrics);
    row["_training_iteration"] = ++iteration_;
    row["_timestamp"] = std::chrono::duration<double>(
        std::chrono::system_clock::now().time_since_epoch()).count();
    row["_time_this_iter_s"] = std::chrono::duration<double>(now - last_report_).count();
    row["_time_total_s"] = std::chrono::duration<double>(now - started_).count();
    row["world_size"] = context_.world_size;
    row["restart_count"] = context_.restart_count;
    last_report_ = now;
    last_ = row;
    if (context_.world_rank == 0) {
        storage::append_line(path_, row.dump());
        std::cout << progress_line(row) << std::endl;
    }
    return row;
}

std::string progress_line(const nlohmann::ordered_json& row) {
    std::string line = fmt::format("[trainrt] iter {}", row.value("_training_iteration", 0));
    for (const auto& [key, value] : row.items()) {
        if (key.empty() || key[0] == '_' || key == "world_size" || key == "restart_count") continue;
        if (value.is_number_float()) line += fmt::format(" | {} {:.4f}", key, value.get<double>());
        else line += fmt::format(" | {} {}", key, value.dump());
    }
    return line + fmt::format(" | {:.2f} s", row.value("_time_this_iter_s", 0.0));
}

}  // namespace trainrt::metrics
