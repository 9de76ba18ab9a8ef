#pragma once
// How a rank waits for an MPI request. MPICH's blocking calls spin on their core until the peers
// arrive; on a node with more ranks than cores (tests, shared or oversubscribed nodes) a spinning
// rank keeps the core from the very rank it waits for until the scheduler's time slice ends, so
// every round of a collective costs milliseconds (4 ranks on 2 cores: fashion_mlp's epoch took
// 11.6 s blocking, 4.4 s waiting here).
#include <mpi.h>

#include <chrono>

namespace trainrt::comm {

// Completes `request` (TRAINRT_MPI_CHECK on MPI_Test), yielding the core between polls: a rank
// with a core of its own gets it back at once (no added latency), a rank sharing one hands it to
// the peer it waits for. A nonblocking collective only progresses while its ranks poll, so the
// rank polls without sleeping for kSpinBeforeSleep, which covers every round of a collective whose
// peers are there; a rank still waiting after that waits for a peer that is elsewhere (computing,
// writing a checkpoint, importing its modules) and polls between sleeps growing to kLongestSleep,
// the most it adds to the wait, instead of taking a shared core's time from that peer.
inline constexpr std::chrono::microseconds kSpinBeforeSleep{2000};
inline constexpr std::chrono::microseconds kFirstSleep{20};
inline constexpr std::chrono::microseconds kLongestSleep{500};
void wait_politely(MPI_Request& request);

}  // namespace trainrt::comm
