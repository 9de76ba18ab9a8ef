#pragma once
// A restore from the run directory: the ranks verify a checkpoint together (verify.hpp), each a
// share, then open it (reader.hpp), with the replicated parts sent between the ranks
// (replicated_exchange.hpp) where that spares the filesystem or where it cannot be trusted.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/format/manifest.hpp"
#include "checkpoint/read/verify.hpp"
#include "config/settings.hpp"
#include "trainrt/checkpoint.hpp"
#include "trainrt/comm.hpp"
#include "trainrt/context.hpp"

namespace trainrt::checkpoint {

class RunRestore {
public:
    // `reads`: [checkpoint] replicated_reads.
    RunRestore(ReplicatedReads reads, const Context& context, Communicator& comm);
    // Collective: the first of `candidates` (checkpoint directories, newest first) that verifies,
    // opened; nothing when none does, each one skipped named in a warning by rank 0. `resume_from`:
    // the candidates are the one [checkpoint] resume_from names, and when it does not verify
    // every rank throws the same CheckpointError.
    std::optional<Checkpoint> first_valid(const std::vector<std::string>& candidates, bool resume_from);

private:
    std::string verify_together(const std::string& path, Manifest& manifest, KeptImage& kept);
    bool exchanges_replicated(const std::string& path);
    Checkpoint open(const std::string& path, Manifest manifest, KeptImage kept, std::uint64_t budget);

    ReplicatedReads reads_;
    const Context& context_;
    Communicator& comm_;
};

}  // namespace trainrt::checkpoint
