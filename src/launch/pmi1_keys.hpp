#pragma once
// Which rank put a key, read from the key's name. PMIx needs the owner of a key to fetch it (Slurm's
// PMIx server does not answer a get for an unknown owner), while PMI-1's get names only the key.
// MPICH 4.0 encodes the owner in every key it puts (src/util/mpir_pmi.c, mpir_nodemap.h, ch3):
//   -bcast-SEQ-ROOT            -allgather-SEQ-RANK          -allgather-shm-SEQ-RANK
//   each optionally followed by -seg-I/N (a long value cut into N segments)
//   hostname[RANK]             PN-businesscard (ch3)
#include <optional>
#include <string_view>

namespace trainrt::launch::pmi1 {

// The owner encoded in `key`, when it follows one of MPICH's patterns and names a rank below
// `world_size`; std::nullopt otherwise.
std::optional<int> mpich_key_owner(std::string_view key, int world_size);

}  // namespace trainrt::launch::pmi1
