#pragma once
// `trainrt supervise [--launcher=srun|mpiexec] [LAUNCHER_OPTIONS...] -- PROGRAM [ARGS...]`: runs
// PROGRAM's steps under the supervisor (supervisor.hpp) until the job is done, given up or
// requeued; returns the exit code for the batch script (docs/reference/exit-codes.md). Options before
// "--" go to srun (inside an allocation) or mpiexec (outside one, or --launcher=mpiexec).
namespace trainrt::supervise {

int supervise_main(int argc, const char* const argv[]);

}  // namespace trainrt::supervise
