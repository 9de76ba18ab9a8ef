#pragma once
// Replicated state read once in all at restore: a checkpoint written by as many ranks as restore
// it (file_per_rank) holds each replicated tensor's parts in the writers' own files
// (write/write_plan.hpp spreads the large ones, a share per rank). Each rank has verified its own
// file into memory (KeptImage); here each sends the replicated parts stored there to every other
// rank (MPI broadcasts), so no rank reads another rank's file for them: the parallel filesystem
// serves the replicated state once, 1/N per rank, instead of N times.
#include <cstdint>

#include "checkpoint/read/reader.hpp"
#include "trainrt/comm.hpp"
#include "trainrt/context.hpp"

namespace trainrt::checkpoint {

// Collective (every rank, same checkpoint). Fills impl.received with the replicated parts other
// ranks stored, when the checkpoint's world size and layout match and every rank can send its
// own parts from its verified bytes and hold the others' within `budget` bytes; otherwise
// (decided together) nothing changes and reads go to the files as before. The bytes sent are
// the ones their owner verified. Returns the bytes this rank received (0: no exchange).
std::uint64_t exchange_replicated(Checkpoint::Impl& impl, Communicator& comm, const Context& context, std::uint64_t budget);

}  // namespace trainrt::checkpoint
