#pragma once
// The Python environment a job's Python code runs in, and trainrt's Python component built for it.
//
// The environment is named by TRAINRT_PYTHON (an interpreter's path: for a job that names it where
// no environment is activated, an sbatch script say), else by the active VIRTUAL_ENV, else by
// CONDA_PREFIX. (A script run by the environment's own interpreter, `srun python3 train.py`, loads
// that environment's trainrt package itself.) An environment holds its own build of the Python component (and of the torch backend,
// against its own torch) when `pip install --no-build-isolation $TRAINRT_ROOT/share/trainrt/python`
// ran in it: site-packages/trainrt/<library>. Such a build embeds that environment's interpreter,
// whatever its Python version; without one, the job runs trainrt's own component (the interpreter
// trainrt was built for), which adds a same-version environment's site-packages itself.
#include <optional>
#include <string>

#include "launch/launcher.hpp"

namespace trainrt::workloads {

struct PythonEnvironment {
    std::string prefix;    // the environment's root (sys.prefix of its interpreter)
    std::string named_by;  // "VIRTUAL_ENV=/home/u/env": what named it, for messages
};

// The job's Python environment, or none when no variable names one.
std::optional<PythonEnvironment> job_python_environment(const launch::EnvLookup& lookup);

// <prefix>/lib/python3.N/site-packages/trainrt/<library> when the environment has that file.
std::optional<std::string> environment_component(const PythonEnvironment& environment, const std::string& library);

// The component library the job's environment built for itself, if any (the process's variables).
std::optional<std::string> job_environment_component(const std::string& library);

}  // namespace trainrt::workloads
