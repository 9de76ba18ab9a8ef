#include "workloads/components.hpp"

#include <dlfcn.h>

#include <filesystem>

#include <fmt/format.h>

#include "trainrt/build_config.hpp"
#include "trainrt/error.hpp"

namespace trainrt::workloads {
namespace {

// "libtrainrt_torch.so.0.1": the SONAME an in-tree or installed component has.
std::string versioned(const std::string& base) {
    const std::string version = TRAINRT_VERSION;
    return base + ".so." + version.substr(0, version.find('.', version.find('.') + 1));
}

// The directory libtrainrt was loaded from (the components are installed beside it).
std::string library_dir() {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&components), &info) == 0 || info.dli_fname == nullptr) return ".";
    return std::filesystem::path(info.dli_fname).parent_path().string();
}

}  // namespace

const std::vector<Component>& components() {
    static const std::vector<Component> all = {
        {"LibTorch", "TRAINRT_WITH_TORCH, libtorch-dev", versioned("libtrainrt_torch"), TRAINRT_HAS_TORCH == 1, ""},
        {"Python", "TRAINRT_WITH_PYTHON, python3-dev and pybind11-dev", versioned("libtrainrt_python"),
         TRAINRT_HAS_PYTHON == 1, "python:"},
    };
    return all;
}

std::optional<Component> component_for_prefix(const std::string& workload) {
    for (const Component& component : components())
        if (!component.prefix.empty() && workload.rfind(component.prefix, 0) == 0) return component;
    return std::nullopt;
}

std::string component_library_path(const Component& component) {
    if (!component.built)
        throw ConfigError(fmt::format("config: this workload is in trainrt's {} component, which this trainrt was built "
                                      "without ({}); use a trainrt built with it (`trainrt --version` lists its "
                                      "components)", component.name, component.build_with));
    const std::string path = library_dir() + "/" + component.library;
    if (!std::filesystem::exists(path))
        throw ConfigError(fmt::format("config: trainrt's {} component ({}) is not beside libtrainrt ({}); reinstall "
                                      "trainrt with its {} component", component.name, path, library_dir(),
                                      component.name));
    return path;
}

}  // namespace trainrt::workloads
