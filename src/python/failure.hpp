#pragma once
// Shared by the extension module and the embedding: a Python training function's failure comes
// back from trainrt/_entry.py as (exit code, one line); this raises the trainrt error that carries
// that exit code, so the runtime records and ends the run as for a C++ training function.
#include <string>

#include <pybind11/pybind11.h>

#include "trainrt/error.hpp"

namespace trainrt::python {

// `on_all_ranks`: every rank raised this same failure after agreeing on it (trainrt's own refusal
// of what the ranks share, e.g. a Trainer's datasets=): the runtime says it once and ends the job
// cleanly.
template <class E>
[[noreturn]] void raise_failure(const std::string& message, bool on_all_ranks) {
    E error(message);
    if (on_all_ranks) error.set_on_all_ranks();
    throw error;
}

[[noreturn]] inline void throw_for_exit_code(int code, const std::string& message, bool on_all_ranks = false) {
    switch (code) {
        case exit_codes::config: raise_failure<ConfigError>(message, on_all_ranks);
        case exit_codes::launch: raise_failure<LaunchError>(message, on_all_ranks);
        case exit_codes::comm: raise_failure<CommError>(message, on_all_ranks);
        case exit_codes::storage: raise_failure<StorageError>(message, on_all_ranks);
        case exit_codes::data: raise_failure<DataError>(message, on_all_ranks);
        case exit_codes::checkpoint: raise_failure<CheckpointError>(message, on_all_ranks);
        default: raise_failure<WorkloadError>(message, on_all_ranks);
    }
}

// `verdict` is run_function's (exit code, one line[, on all ranks]): returns on 0, raises otherwise.
inline void throw_on_failure(const pybind11::handle& verdict) {
    const auto parts = pybind11::cast<pybind11::tuple>(verdict);
    const int code = pybind11::cast<int>(parts[0]);
    const bool on_all_ranks = parts.size() > 2 && pybind11::cast<bool>(parts[2]);
    if (code != 0) throw_for_exit_code(code, pybind11::cast<std::string>(parts[1]), on_all_ranks);
}

}  // namespace trainrt::python
