#include "workloads/python_environment.hpp"

#include <algorithm>
#include <filesystem>
#include <vector>

namespace trainrt::workloads {
namespace fs = std::filesystem;

namespace {

// The root of the environment an interpreter path belongs to: /env for /env/bin/python3. The path
// is taken as given, not resolved: a venv's bin/python3 links to the base interpreter.
std::string prefix_of_interpreter(const std::string& interpreter) {
    return fs::path(interpreter).lexically_normal().parent_path().parent_path().string();
}

}  // namespace

std::optional<PythonEnvironment> job_python_environment(const launch::EnvLookup& lookup) {
    if (auto interpreter = lookup("TRAINRT_PYTHON"); interpreter && !interpreter->empty())
        return PythonEnvironment{prefix_of_interpreter(*interpreter), "TRAINRT_PYTHON=" + *interpreter};
    for (const char* name : {"VIRTUAL_ENV", "CONDA_PREFIX"})
        if (auto prefix = lookup(name); prefix && !prefix->empty())
            return PythonEnvironment{fs::path(*prefix).lexically_normal().string(), std::string(name) + "=" + *prefix};
    return std::nullopt;
}

std::optional<std::string> environment_component(const PythonEnvironment& environment, const std::string& library) {
    std::error_code error;
    std::vector<fs::path> versions;
    for (const auto& entry : fs::directory_iterator(fs::path(environment.prefix) / "lib", error))
        if (entry.path().filename().string().rfind("python3.", 0) == 0) versions.push_back(entry.path());
    std::sort(versions.begin(), versions.end());
    for (const fs::path& version : versions) {
        const fs::path candidate = version / "site-packages" / "trainrt" / library;
        if (fs::exists(candidate, error)) return candidate.string();
    }
    return std::nullopt;
}

std::optional<std::string> job_environment_component(const std::string& library) {
    const auto environment = job_python_environment(launch::process_env());
    return environment ? environment_component(*environment, library) : std::nullopt;
}

}  // namespace trainrt::workloads
