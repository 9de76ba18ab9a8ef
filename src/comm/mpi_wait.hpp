#pragma once
// How a rank waits for an MPI request. MPICH's blocking calls spin on their core until the peers
// arrive; on a node with more ranks than cores (tests, shared or oversubscribed nodes) a spinning
// rank keeps the core from the very rank it waits for until the scheduler's time slice ends, so
// every round of a collective costs milliseconds (4 ranks on 2 cores: fashion_mlp's epoch took
// 11.6 s blocking, 4.4 s waiting here).
#include <mpi.h>

namespace trainrt::comm {

// Completes `request` (TRAINRT_MPI_CHECK on MPI_Test), yielding the core between polls: a rank
// with a core of its own gets it back at once (no added latency), a rank sharing one hands it to
// the peer it waits for. Never sleeps: a nonblocking collective only progresses while its ranks
// poll, so a sleeping rank would delay every round after it.
void wait_politely(MPI_Request& request);

}  // namespace trainrt::comm
