#pragma once
// Whether a tensor changed while a background snapshot copied it ([checkpoint] snapshot =
// background): report() samples each large block's bytes (a few words spread over it, cheap on
// the training thread); once the save's thread has copied the block it compares the copy and the
// block with those samples. A copy that differs was taken after the state changed (the function
// went on training before await_snapshot()); a block that differs changed during the copy. Either
// fails the save, naming the tensor, instead of committing a checkpoint mixed of two steps. A
// sample check, not a proof: a change that touches none of the sampled words goes unseen (an
// optimizer step changes them all).
#include <cstdint>
#include <string>
#include <vector>

namespace trainrt::checkpoint {

inline constexpr int kSnapshotSamples = 64;

struct BlockSamples {
    std::vector<std::uint64_t> words;  // up to kSnapshotSamples, evenly spread; the tail bytes too
};

BlockSamples sample_block(const void* data, std::uint64_t bytes);
bool same_samples(const BlockSamples& samples, const void* data, std::uint64_t bytes);

// "" when the copy and the block both match the samples taken at report(); else the
// CheckpointError text naming `tensor`.
std::string snapshot_problem(const std::string& tensor, const BlockSamples& at_report, const void* copy,
                             const void* block, std::uint64_t bytes);

}  // namespace trainrt::checkpoint
