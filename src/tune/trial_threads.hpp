#pragma once
// The compute threads of a sweep's trials outside Slurm. mpiexec binds nothing, so every rank of
// every trial running at once would see all of the node's CPUs and start a thread per CPU
// (threads.hpp's rule divides by the trial's own ranks only): two one-rank trials on two cores
// would each run two threads and slow each other several-fold. The sweep gives each rank its share
// of the CPUs through OMP_NUM_THREADS, as Ray gives a trial its CPUs; a user's OMP_NUM_THREADS
// stays theirs. Inside an allocation Slurm's own binding (srun --exact) sets the share.
#include <cstddef>
#include <string>
#include <vector>

namespace trainrt::tune {

// Threads per rank when `ranks_at_once` ranks share `cpus`: at least 1.
int trial_threads(int cpus, std::size_t ranks_at_once);

// The environment entries ("NAME=value") a trial's launcher gets: OMP_NUM_THREADS from
// trial_threads(this process's CPUs, ranks_at_once) unless `user_threads` (the sweep's own
// OMP_NUM_THREADS, null when unset) or `inside_slurm`.
std::vector<std::string> trial_environment(std::size_t ranks_at_once, const char* user_threads, bool inside_slurm);

}  // namespace trainrt::tune
