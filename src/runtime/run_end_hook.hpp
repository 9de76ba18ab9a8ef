#pragma once
// What the layers above the runtime do on rank 0 once a job step has ended (finished, stopped or
// failed) and its records are written: the CLI's [tracking] exports. Registered once per process
// before the job runs; a process that registers none does nothing.
#include <functional>
#include <string>

#include "config/settings.hpp"

namespace trainrt::runtime {

// Called with the job's settings and its run directory. It reports its own failures (a warning):
// an export that fails must not change the run's exit code.
using RunEndHook = std::function<void(const Settings& settings, const std::string& run_dir)>;

void set_run_end_hook(RunEndHook hook);

// The registered hook, if any; an exception escaping it is logged as a warning.
void call_run_end_hook(const Settings& settings, const std::string& run_dir) noexcept;

}  // namespace trainrt::runtime
