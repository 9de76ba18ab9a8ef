#pragma once
// Built-in workloads that live in an optional component library (libtrainrt_torch), so that a
// job that does not name one never loads that library. Their names and train.* keys are known
// here (--help lists them, the config is checked before anything starts); their code is loaded
// with the library when a job names one.
#include <optional>
#include <string>
#include <vector>

#include "trainrt/config.hpp"

namespace trainrt::workloads {

struct ComponentWorkload {
    std::string name;         // run.workload
    std::string description;
    std::string component;    // "LibTorch"
    std::string build_with;   // what builds the component: "TRAINRT_WITH_TORCH, libtorch-dev"
    std::string library;      // the component's file name, e.g. "libtrainrt_torch.so.0.1"
    bool built;               // this build has the component
    std::vector<OptionSpec> train_keys;
};

const std::vector<ComponentWorkload>& component_workloads();
std::optional<ComponentWorkload> component_workload(const std::string& name);

// "python:FILE.py:FUNC" (and "python:package.module:FUNC") name the Python component's workload.
bool is_python_workload(const std::string& name);

// The absolute path of the component library next to libtrainrt; ConfigError (one line) when this
// build lacks the component or its file is missing.
std::string component_library_path(const ComponentWorkload& workload);

// train.* keys of the LibTorch FashionMNIST workloads (declared here, used by their descriptors).
std::vector<OptionSpec> torch_fashion_keys();

}  // namespace trainrt::workloads
