#include "runlog/run_dir.hpp"

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runlog/clock.hpp"
#include "runlog/run_files.hpp"
#include "storage/posix.hpp"
#include "trainrt/version.hpp"
#include "trainrt/error.hpp"

namespace trainrt::runlog {

std::string run_dir_path(const RunSettings& settings) {
    return settings.storage_path.value + "/" + settings.name.value;
}

void prepare_run_dir(const std::string& run_dir, const JobConfig& config, const RunSettings& settings,
                     const Context& context) {
    try {
        storage::make_dirs(run_dir);
    } catch (const StorageError& error) {
        throw StorageError(fmt::format("{}; set {} to a writable directory", error.what(), settings.storage_path.key));
    }
    if (::access(run_dir.c_str(), W_OK) != 0)
        throw StorageError(fmt::format("storage: run directory {} is not writable; set {} to a writable directory",
                                       run_dir, settings.storage_path.key));
    const std::string snapshot = path_in(run_dir, kRunJson);
    if (storage::path_exists(snapshot)) return;
    nlohmann::json config_json = nlohmann::json::object();
    for (const auto& [key, value] : config.values()) config_json[key] = value.value;
    nlohmann::json run = {{"trainrt_version", TRAINRT_VERSION},
                          {"created", time_now()},
                          {"workload", settings.workload.value},
                          {"world_size", context.world_size},
                          {"job_id", context.job_id},
                          {"config", config_json}};
    storage::write_file_atomic(snapshot, run.dump(2) + "\n");
}

}  // namespace trainrt::runlog
