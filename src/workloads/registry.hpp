#pragma once
// The training functions trainrt can run, by name (run.workload): those registered inside
// libtrainrt with TRAINRT_WORKLOAD (fashion_mlp) and plugins, plugin:PATH[:NAME], loaded on
// demand. Each declares the train.* keys it accepts (validated before anything starts).
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

// The built-in workloads (registered in libtrainrt), by name.
const std::map<std::string, Workload>& builtin();
config::WorkloadKeys keys_by_workload();

// A built-in by name, or a plugin for "plugin:PATH[:NAME]" (loaded once, kept loaded).
// ConfigError (one line) for an unknown name, a missing or unloadable library, a missing
// workload symbol, or a library built against another trainrt version or plugin ABI.
const Workload& find(const std::string& name);

}  // namespace trainrt::workloads
