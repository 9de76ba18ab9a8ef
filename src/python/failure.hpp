#pragma once
// Shared by the extension module and the embedding: a Python training function's failure comes
// back from trainrt/_entry.py as (exit code, one line); this raises the trainrt error that carries
// that exit code, so the runtime records and ends the run as for a C++ training function.
#include <string>

#include <pybind11/pybind11.h>

#include "trainrt/error.hpp"

namespace trainrt::python {

[[noreturn]] inline void throw_for_exit_code(int code, const std::string& message) {
    switch (code) {
        case exit_codes::config: throw ConfigError(message);
        case exit_codes::launch: throw LaunchError(message);
        case exit_codes::comm: throw CommError(message);
        case exit_codes::storage: throw StorageError(message);
        case exit_codes::data: throw DataError(message);
        case exit_codes::checkpoint: throw CheckpointError(message);
        default: throw WorkloadError(message);
    }
}

// `verdict` is run_function's (exit code, one line): returns on 0, raises otherwise.
inline void throw_on_failure(const pybind11::handle& verdict) {
    const auto parts = pybind11::cast<pybind11::tuple>(verdict);
    const int code = pybind11::cast<int>(parts[0]);
    if (code != 0) throw_for_exit_code(code, pybind11::cast<std::string>(parts[1]));
}

}  // namespace trainrt::python
