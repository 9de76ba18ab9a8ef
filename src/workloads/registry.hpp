#pragma once
// The training functions trainrt can run, by name (run.workload), with the train.* keys each
// accepts (validated before anything starts).
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "config/loader.hpp"
#include "trainrt/session.hpp"

namespace trainrt::workloads {

struct Workload {
    std::string name;
    std::string description;
    std::vector<OptionSpec> train_keys;
    std::function<void(Session&)> run;
    // Checks inputs (data files, shapes, divisibility) before the run directory is touched.
    // Every rank runs it and must reach the same verdict, so a failure ends the job cleanly.
    std::function<void(const JobConfig&, const Context&)> preflight;
};

const std::map<std::string, Workload>& builtin();
config::WorkloadKeys keys_by_workload();
const Workload& find(const std::string& name);  // ConfigError when unknown

}  // namespace trainrt::workloads
