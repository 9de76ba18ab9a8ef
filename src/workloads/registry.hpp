#pragma once
// The training functions trainrt can run, by name (run.workload): those libtrainrt registers with
// TRAINRT_WORKLOAD (fashion_mlp, linear_model), those of trainrt's component libraries
// (components.hpp, loaded when a job names one), and plugins, plugin:PATH[:NAME]. Each declares
// the train.* keys it accepts (trainrt/keys.hpp), checked before anything starts.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "config/loader.hpp"
#include "trainrt/plugin.hpp"
#include "trainrt/session.hpp"

namespace trainrt::workloads {

struct Workload {
    std::string name;
    std::string description;
    std::vector<OptionSpec> train_keys;
    bool any_train_key = false;  // no declared keys: every train.* key is accepted
    std::function<void(Session&)> run;
    // Checks inputs (data files, shapes, divisibility) before the run directory is touched.
    // Every rank runs it and must reach the same verdict, so a failure ends the job cleanly.
    std::function<void(const JobConfig&, const Context&)> preflight;
};

Workload from_descriptor(const WorkloadDescriptor& descriptor);

// The workloads registered inside libtrainrt, by name.
const std::map<std::string, Workload>& builtin();

// Train keys of libtrainrt's workloads (checked when the config is loaded). A component's or a
// plugin's are checked once it is loaded (config::with_train_keys).
config::WorkloadKeys keys_by_workload();

// Every workload a built component library registers (loading them): for --help and messages.
std::vector<Workload> component_workloads();

// keys_by_workload() and the component workloads' keys (loading the components): for --help.
config::WorkloadKeys all_workload_keys();

// A built-in by name, a component's (its library loaded once), or a plugin for
// "plugin:PATH[:NAME]". ConfigError (one line) for an unknown name (with a close one), a missing
// or unloadable library, a missing workload symbol, or a library built against another trainrt
// version or plugin ABI.
const Workload& find(const std::string& name);

}  // namespace trainrt::workloads
