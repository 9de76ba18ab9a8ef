#pragma once
// Calls from trainrt's C++ layers above the workloads (tune's Optuna searcher) into a function of
// trainrt's Python package, through the Python component (libtrainrt_python). The component is
// loaded on the first call: a process that never calls one never loads CPython.
#include <string>

namespace trainrt::workloads {

inline constexpr int kPythonCallsAbi = 1;

// The component's table, found with dlsym as "trainrt_python_calls" (its first member is the ABI).
struct PythonCalls {
    int abi;
    // Returns str(module.function(argument)). The function's LoadError (trainrt._entry) is a
    // ConfigError of its one line; any other exception a WorkloadError with Python's text.
    std::string (*call)(const std::string& module, const std::string& function, const std::string& argument);
};

// trainrt.<module>.<function>(argument) in this process's embedded interpreter (started without
// taking SIGINT from the process). ConfigError of one line when this trainrt has no Python component.
std::string call_python(const std::string& module, const std::string& function, const std::string& argument);

}  // namespace trainrt::workloads
