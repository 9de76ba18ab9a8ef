#pragma once
// Point-to-point byte transfers over an MPI communicator, for what collectives do not fit: one
// rank's file to one other rank (multi-level checkpoints' partner copies and restore views).
// Blocking for the two ranks involved, through wait_politely (mpi_wait.hpp). Any size: the bytes
// go in messages of at most 256 MiB after their count.
#include <mpi.h>

#include <cstdint>
#include <vector>

namespace trainrt::comm {

void send_bytes(MPI_Comm comm, int to, int tag, const std::vector<char>& bytes);
std::vector<char> recv_bytes(MPI_Comm comm, int from, int tag);

}  // namespace trainrt::comm
