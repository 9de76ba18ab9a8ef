#include "storage/run_dir.hpp"

#include <unistd.h>

#include <chrono>
#include <ctime>

#include <fmt/format.h>

#include "storage/posix.hpp"
#include "trainrt/build_config.hpp"
#include "trainrt/error.hpp"

namespace trainrt::storage {

std::string run_dir_path(const JobConfig& config) {
    return config.get("run.storage_path") + "/" + config.get("run.name");
}

std::string iso_time_now() {
    auto now = std::chrono::system_clock::now();
    std::time_t seconds = std::chrono::system_clock::to_time_t(now);
    auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
    return fmt::format("{}.{:03d}Z", text, static_cast<int>(millis.count()));
}

void prepare_run_dir(const std::string& run_dir, const JobConfig& config, const Context& context) {
    try {
        make_dirs(run_dir);
    } catch (const StorageError& error) {
        throw StorageError(fmt::format("{}; set run.storage_path to a writable directory", error.what()));
    }
    if (::access(run_dir.c_str(), W_OK) != 0)
        throw StorageError(fmt::format("storage: run directory {} is not writable; set "
                                       "run.storage_path to a writable directory", run_dir));
    const std::string snapshot = run_dir + "/run.json";
    if (path_exists(snapshot)) return;
    nlohmann::json config_json = nlohmann::json::object();
    for (const auto& [key, value] : config.values()) config_json[key] = value.value;
    nlohmann::json run = {{"trainrt_version", TRAINRT_VERSION},
                          {"created", iso_time_now()},
                          {"workload", config.get("run.workload")},
                          {"world_size", context.world_size},
                          {"job_id", context.job_id},
                          {"config", config_json}};
    write_file_atomic(snapshot, run.dump(2) + "\n");
}

void append_event(const std::string& run_dir, const std::string& event, const Context& context,
                  nlohmann::json fields) {
    nlohmann::json line = {{"event", event},
                           {"time", iso_time_now()},
                           {"job_id", context.job_id},
                           {"restart_count", context.restart_count},
                           {"world_size", context.world_size}};
    line.update(fields);
    append_line(run_dir + "/events.jsonl", line.dump());
}

}  // namespace trainrt::storage
