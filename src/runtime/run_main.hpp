#pragma once
// `trainrt --config FILE [--section.key=value ...]` and trainrt::run(): loads the config, answers
// --help / --version / --print-config, then runs the job. Never throws: errors are one line on
// stderr and the exit code (docs/reference/exit-codes.md).
#include <functional>
#include <string>

#include "config/loader.hpp"
#include "workloads/registry.hpp"

namespace trainrt::runtime {

// The one top-level error handler (trainrt's main, run_main, every subcommand): runs `body` and
// returns its exit code; an Error becomes one line "trainrt: <message>" on stderr and its exit
// code, anything else "trainrt: internal error: ..." and exit 1.
int guarded(const std::function<int()>& body) noexcept;

// `embedded`: the program's own training function (trainrt::run); nullptr: run.workload.
// `program_settings`: the program's own settings (config/loader.hpp's precedence).
int run_main(int argc, const char* const argv[], const workloads::Workload* embedded,
             const config::ProgramSettings& program_settings = {});

// trainrt::run's body: `train` as workload `name` (`train_keys` nullptr: any train.* key).
int run_embedded(int argc, const char* const argv[], std::function<void(Session&)> train, const char* name,
                 std::vector<OptionSpec> (*train_keys)(), const config::ProgramSettings& program_settings = {});

std::string version_line();

}  // namespace trainrt::runtime
