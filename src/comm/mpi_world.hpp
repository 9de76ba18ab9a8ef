#pragma once
// MPI's lifetime in this process, and the check that MPI's world is the launcher's.
#include "launch/launcher.hpp"
#include "trainrt/context.hpp"

namespace trainrt::comm {

// Initialises MPI after the launcher has prepared it, finalizes on destruction (never throws).
class MpiRuntime {
public:
    explicit MpiRuntime(launch::Launcher& launcher);
    ~MpiRuntime();
    MpiRuntime(const MpiRuntime&) = delete;
    MpiRuntime& operator=(const MpiRuntime&) = delete;

private:
    launch::Launcher& launcher_;
};

// Throws LaunchError (one line: what disagrees, and how to launch instead) when MPI's rank/size
// differ from what the launcher promised.
void verify_world(const launch::LaunchInfo& info, int mpi_rank, int mpi_size);

// Fills world/local/node fields of `context` from MPI (hostnames gathered, node-local
// communicator split) and checks local rank/size against the launcher's where it gave them.
Context build_context(const launch::LaunchInfo& info);

// True when MPI was initialised with MPI_THREAD_MULTIPLE: two threads may call MPI at once.
bool threads_supported();

// Ends every rank of the job with `exit_code` (MPI_Abort on the world): for an error one rank
// raised alone, so that no rank waits forever in a collective. Never returns.
[[noreturn]] void abort_job(int exit_code);

}  // namespace trainrt::comm
