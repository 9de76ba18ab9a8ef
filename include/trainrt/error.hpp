#pragma once
// trainrt's exceptions: one base, one subclass per domain. Each carries the process exit code the
// CLI uses when it ends a run (documented in docs/reference/exit-codes.md).
#include <stdexcept>
#include <string>
#include <vector>

namespace trainrt {

// The process exit codes (docs/reference/exit-codes.md): the one table. The error classes below carry
// theirs; exit_code_table() names them for scripts (`trainrt --exit-codes`) and Python
// (trainrt.exit_codes).
namespace exit_codes {
inline constexpr int finished = 0;
inline constexpr int internal = 1;        // a bug
inline constexpr int config = 2;          // usage or configuration
inline constexpr int launch = 3;
inline constexpr int comm = 4;
inline constexpr int storage = 5;
inline constexpr int data = 6;
inline constexpr int workload = 7;
inline constexpr int checkpoint = 8;
inline constexpr int stopped = 9;         // stopped on request, checkpoint committed: resumable
inline constexpr int failure_limit = 10;  // more failures than [failure] max_failures
inline constexpr int requeue_needed = 75; // stopped; the job needs a requeue its caller must do
inline constexpr int interrupted = 130;   // Ctrl-C (SIGINT): stopped at the next step boundary, not requeued
}  // namespace exit_codes

// `trainrt results`'s own exit codes: the status of the run it reads (finished, running, stopped,
// failed), a separate table that never reuses a training code; its errors (a bad RUN_DIR, an
// unreadable file) are the table's config (2) and storage (5).
namespace results_codes {
inline constexpr int finished = 0;
inline constexpr int running = 20;
inline constexpr int stopped = 21;
inline constexpr int failed = 22;
}  // namespace results_codes

struct ExitCodeName {
    const char* table;    // "exit" or "results"
    const char* name;     // "stopped"
    int code;
    const char* meaning;
};
// Both tables, in order, with their meanings.
const std::vector<ExitCodeName>& exit_code_table();

class Error : public std::runtime_error {
public:
    static constexpr int kExitCode = exit_codes::internal;
    static constexpr const char* kDomain = "error";
    explicit Error(const std::string& message) : std::runtime_error(message) {}
    virtual int exit_code() const noexcept { return kExitCode; }
    virtual const char* domain() const noexcept { return kDomain; }
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
        static constexpr int kExitCode = code;                                    \
        static constexpr const char* kDomain = name;                              \
        explicit Name(const std::string& message) : Base(message) {}              \
        int exit_code() const noexcept override { return kExitCode; }            \
        const char* domain() const noexcept override { return kDomain; }         \
    };

TRAINRT_ERROR_CLASS(ConfigError, Error, exit_codes::config, "config")          // bad key/value/file: usage error
TRAINRT_ERROR_CLASS(LaunchError, Error, exit_codes::launch, "launch")          // rank discovery, world mismatch
TRAINRT_ERROR_CLASS(CommError, Error, exit_codes::comm, "comm")                // MPI/NCCL collective failures
TRAINRT_ERROR_CLASS(StorageError, Error, exit_codes::storage, "storage")       // run directory, POSIX IO
TRAINRT_ERROR_CLASS(H5Error, StorageError, exit_codes::storage, "hdf5")        // HDF5 calls, with HDF5's error stack
TRAINRT_ERROR_CLASS(DataError, Error, exit_codes::data, "data")                // missing or malformed datasets
TRAINRT_ERROR_CLASS(WorkloadError, Error, exit_codes::workload, "workload")    // the training function failed
TRAINRT_ERROR_CLASS(CheckpointError, Error, exit_codes::checkpoint, "checkpoint")  // save, verify or restore failed
TRAINRT_ERROR_CLASS(FailureLimitError, Error, exit_codes::failure_limit, "failure")  // [failure] max_failures used up

#undef TRAINRT_ERROR_CLASS

}  // namespace trainrt
