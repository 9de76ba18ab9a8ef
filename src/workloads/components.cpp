#include "workloads/components.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "config/install_layout.hpp"
#include "trainrt/build_config.hpp"
#include "trainrt/error.hpp"
#include "workloads/python_environment.hpp"

namespace trainrt::workloads {
const std::vector<Component>& components() {
    static const std::vector<Component> all = {
        {"LibTorch", "TRAINRT_WITH_TORCH, the torch wheel of tools/requirements.txt", config::versioned_library("libtrainrt_torch"), TRAINRT_HAS_TORCH == 1, "", {}},
        {"Python", "TRAINRT_WITH_PYTHON, python3-dev and the environment's pybind11", config::versioned_library("libtrainrt_python"),
         TRAINRT_HAS_PYTHON == 1, "python:", {"xgboost", "lightgbm"}},
    };
    return all;
}

std::optional<Component> component_for_prefix(const std::string& workload) {
    for (const Component& component : components()) {
        if (!component.prefix.empty() && workload.rfind(component.prefix, 0) == 0) return component;
        if (std::find(component.names.begin(), component.names.end(), workload) != component.names.end())
            return component;
    }
    return std::nullopt;
}

std::string component_library_path(const Component& component) {
    if (component.prefix == "python:")  // the job's environment may hold its own build (python_environment.hpp)
        if (auto own = job_environment_component(component.library)) return *own;
    if (!component.built)
        throw ConfigError(fmt::format("config: this workload is in trainrt's {} component, which this trainrt was built "
                                      "without ({}); use a trainrt built with it (`trainrt --version` lists its "
                                      "components)", component.name, component.build_with));
    const std::string path = config::library_dir() + "/" + component.library;
    if (!std::filesystem::exists(path))
        throw ConfigError(fmt::format("config: trainrt's {} component ({}) is not beside libtrainrt ({}); reinstall "
                                      "trainrt with its {} component", component.name, path, config::library_dir(),
                                      component.name));
    return path;
}

}  // namespace trainrt::workloads
