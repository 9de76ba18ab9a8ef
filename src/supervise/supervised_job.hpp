#pragma once
// The job a supervisor keeps alive, found from the command it launches: the run directory and
// [failure] settings exactly as the job's ranks will load them.
#include <string>
#include <vector>

#include "config/settings.hpp"

namespace trainrt::supervise {

struct SupervisedJob {
    std::string run_dir;
    FailureSettings failure;
    LogSettings log;
};

// `run_args`: the program's arguments (--config FILE, --section.key=value ...). Keys of the
// training function ([train]) are left to the step to check: the program may be a plugin's or an
// embedded one whose keys only it knows. ConfigError (one line) on anything else that is wrong.
SupervisedJob load_supervised_job(const std::vector<std::string>& run_args);

// The program's trainrt arguments in `command` (PROGRAM ARGS...): ARGS, except that a Python
// interpreter's own options and script are the interpreter's (`python3 -u train.py --run.name=x`
// gives --run.name=x): a script whose fit() or trainrt.run() reads the same arguments.
std::vector<std::string> program_arguments(const std::vector<std::string>& command);

}  // namespace trainrt::supervise
