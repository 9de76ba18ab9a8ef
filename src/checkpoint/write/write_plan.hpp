#pragma once
// Which block of each tensor a rank writes into a checkpoint. A sharded tensor: its own block. A
// large replicated tensor (DDP weights and optimizer moments, identical on every rank) is written
// once in all, spread over the ranks as torch DCP's deduplicating planner does: rank r writes rows
// [r*n/N, (r+1)*n/N) of its first dimension. So no rank writes the whole model while the others
// wait. The manifest lists every rank's block; readers read the overlaps as for sharded tensors,
// so any rank count restores it. Small replicated tensors stay rank 0's, whole: batch-norm
// statistics and the like are "replicated" by convention but differ between ranks after a
// forward pass (DDP broadcasts rank 0's before the next one), so rank 0's copy is the one to keep.
// Pure: the same on every rank (name order, sizes), unit-tested.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "trainrt/checkpoint.hpp"

namespace trainrt::checkpoint {

// A replicated tensor of at least this many bytes with at least as many rows as ranks is split
// in row ranges; smaller ones are rank 0's (see above), and hardly worth a dataset per rank.
inline constexpr std::uint64_t kSplitReplicatedBytes = 1 << 20;

struct WritePlan {
    // One per tensor of the state, in name order (the order collective writes need): the block
    // this rank writes (offset, shape, data at its first element), replicated flag kept.
    std::vector<TensorPart> blocks;
    // Whether this rank writes blocks[i]; false: rank 0 writes that (small) replicated tensor.
    std::vector<bool> writes;
    std::uint64_t bytes() const;  // of the blocks this rank writes
};

// `spread` false: rank 0 writes every replicated tensor whole (trainrt before 2026-11; for
// comparison: [checkpoint] spread_replicated).
WritePlan plan_writes(const CheckpointState& state, int rank, int world, bool spread);

// Host memory for async copies, kept between saves: after the first save the copy touches no
// new pages (page faults on a fresh 1 GiB buffer cost as much as the copy itself).
// Grows, never shrinks: a tensor that grows a little at every save (an XGBoost model, a round
// more each time) reuses its pages instead of faulting in a new allocation per save.
struct HostBuffer {
    std::unique_ptr<std::byte[]> data;
    std::size_t capacity = 0;
};

// Which of a plan's blocks copy_blocks copies: a background snapshot copies the small ones (under
// kBackgroundBlockBytes: metrics-like tensors a workload rewrites at once, and temporaries) before
// report() returns and the large ones (weights, optimizer moments) on the save's thread.
enum class CopySelect { all, small, large };
inline constexpr std::uint64_t kBackgroundBlockBytes = 1 << 20;

// `plan` with the data of the blocks this rank writes (those `select` picks) copied into
// `buffers` (resized and reused): an async save copies only its own share of the replicated
// state. Blocks not picked keep their data pointers.
WritePlan copy_blocks(const WritePlan& plan, std::vector<HostBuffer>& buffers, CopySelect select = CopySelect::all);

}  // namespace trainrt::checkpoint
