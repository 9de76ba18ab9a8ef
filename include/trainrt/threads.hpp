#pragma once
// Compute threads per rank. Ranks that share a node's cores must not each start one thread per
// core (OpenBLAS and torch would oversubscribe and steps turn bimodal), and results are bitwise
// reproducible only with a fixed thread count.
#include "trainrt/context.hpp"

namespace trainrt {

// OMP_NUM_THREADS when set (the user's choice), else SLURM_CPUS_PER_TASK, else the CPUs this
// process may run on divided by the ranks on its node; at least 1.
int compute_threads(const Context& context);

// The CPUs this process may run on (its affinity mask), at least 1.
int usable_cpus();

// Sets OpenBLAS's thread count to compute_threads(context) and returns that count (frameworks on
// top, LibTorch or Python's torch, set their own intra-op threads to it).
int set_blas_threads(const Context& context);

}  // namespace trainrt
