#pragma once
// trainrt's optional component libraries (libtrainrt_torch, libtrainrt_python): plugins that ship
// with trainrt, installed beside libtrainrt and loaded only when a job needs one, so a job that
// does not never loads LibTorch or CPython. The core knows the components, not their workloads:
// a component registers its workloads (TRAINRT_WORKLOAD) when it is loaded, like any plugin.
#include <optional>
#include <string>
#include <vector>

namespace trainrt::workloads {

struct Component {
    std::string name;        // "LibTorch"
    std::string build_with;  // what builds it: "TRAINRT_WITH_TORCH, the torch wheel of tools/requirements.txt"
    std::string library;     // its file name, e.g. "libtrainrt_torch.so.0.1"
    bool built;              // this build has it
    std::string prefix;      // run.workload prefix it serves ("python:"), "" for named workloads
    // Named workloads its prefix workload runs (run.workload = xgboost: a function shipped in
    // trainrt's Python package): the name routes the job to this component without loading others.
    std::vector<std::string> names;
};

const std::vector<Component>& components();

// The component serving `workload` by its prefix ("python:FILE.py:FUNC") or one of its names
// ("xgboost"), if any.
std::optional<Component> component_for_prefix(const std::string& workload);

// The absolute path of the component's library: for the Python component, the job's environment's
// own build when it has one (python_environment.hpp); else the one beside libtrainrt. ConfigError
// (one line) when this build lacks the component or its file is missing.
std::string component_library_path(const Component& component);

}  // namespace trainrt::workloads
