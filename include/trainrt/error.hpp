#pragma once
// trainrt's exceptions: one base, one subclass per domain. Each carries the process exit code the
// CLI uses when it ends a run (documented in README.md, "Exit codes").
#include <stdexcept>
#include <string>

namespace trainrt {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
    virtual int exit_code() const noexcept { return 1; }
    virtual const char* domain() const noexcept { return "error"; }
    // True when every rank raised this same error after agreeing on it: the runtime prints it
    // once and ends the job cleanly instead of aborting it.
    bool on_all_ranks() const noexcept { return on_all_ranks_; }
    void set_on_all_ranks() noexcept { on_all_ranks_ = true; }

private:
    bool on_all_ranks_ = false;
};

#define TRAINRT_ERROR_CLASS(Name, Base, code, name)                              \
    class Name : public Base {                                                    \
    public:                                                                       \
        explicit Name(const std::string& message) : Base(message) {}              \
        int exit_code() const noexcept override { return code; }                 \
        const char* domain() const noexcept override { return name; }             \
    };

TRAINRT_ERROR_CLASS(ConfigError, Error, 2, "config")     // bad key/value/file: usage error
TRAINRT_ERROR_CLASS(LaunchError, Error, 3, "launch")     // rank discovery, world mismatch
TRAINRT_ERROR_CLASS(CommError, Error, 4, "comm")         // MPI/NCCL collective failures
TRAINRT_ERROR_CLASS(StorageError, Error, 5, "storage")   // run directory, POSIX IO
TRAINRT_ERROR_CLASS(H5Error, StorageError, 5, "hdf5")    // HDF5 calls, with HDF5's error stack
TRAINRT_ERROR_CLASS(DataError, Error, 6, "data")         // missing or malformed datasets
TRAINRT_ERROR_CLASS(WorkloadError, Error, 7, "workload") // the training function failed
TRAINRT_ERROR_CLASS(CheckpointError, Error, 8, "checkpoint")  // save, verify or restore failed
TRAINRT_ERROR_CLASS(FailureLimitError, Error, 10, "failure")  // [failure] max_failures used up

#undef TRAINRT_ERROR_CLASS

}  // namespace trainrt
