#include "checkpoint/write_plan.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "checkpoint/validate.hpp"

namespace trainrt::checkpoint {
namespace {

std::uint64_t row_bytes(const TensorPart& part) {
    std::uint64_t elements = 1;
    for (std::size_t d = 1; d < part.global_shape.size(); ++d) elements *= part.global_shape[d];
    return elements * tensor_type_size(part.type);
}

bool splits(const TensorPart& part, int world) {
    return world > 1 && !part.global_shape.empty() && part.global_shape[0] >= static_cast<std::uint64_t>(world) &&
           part.bytes() >= kSplitReplicatedBytes;
}

// Rows [r*n/N, (r+1)*n/N) of the first dimension: rank r's share, contiguous in row-major memory.
TensorPart row_range(const TensorPart& part, int rank, int world) {
    const std::uint64_t rows = part.global_shape[0];
    const std::uint64_t begin = rows * rank / world, end = rows * (rank + 1) / world;
    TensorPart block = part;
    block.offset[0] = begin;
    block.shape[0] = end - begin;
    block.data = static_cast<const std::byte*>(part.data) + begin * row_bytes(part);
    return block;
}

// Whole replicated tensors to ranks, largest first, each to the rank with the fewest bytes so far
// (ties: the lowest rank). `load` holds the split tensors' shares already.
std::vector<int> owners_of_whole(const std::vector<const TensorPart*>& whole, std::vector<std::uint64_t> load) {
    std::vector<std::size_t> order(whole.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return whole[a]->bytes() > whole[b]->bytes(); });
    std::vector<int> owner(whole.size(), 0);
    for (std::size_t i : order) {
        owner[i] = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
        load[owner[i]] += whole[i]->bytes();
    }
    return owner;
}

}  // namespace

std::uint64_t WritePlan::bytes() const {
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < blocks.size(); ++i)
        if (writes[i]) total += blocks[i].bytes();
    return total;
}

WritePlan plan_writes(const CheckpointState& state, int rank, int world, bool spread) {
    const std::vector<const TensorPart*> sorted = sorted_parts(state);
    if (!spread) world = 1;  // everything replicated lands on rank 0
    std::vector<std::uint64_t> load(static_cast<std::size_t>(world), 0);
    std::vector<const TensorPart*> whole;
    for (const TensorPart* part : sorted)
        if (part->replicated && splits(*part, world))
            for (int r = 0; r < world; ++r) load[r] += row_range(*part, r, world).bytes();
        else if (part->replicated)
            whole.push_back(part);
    const std::vector<int> owner = owners_of_whole(whole, load);
    WritePlan plan;
    std::size_t next_whole = 0;
    for (const TensorPart* part : sorted) {
        const bool split = part->replicated && splits(*part, world);
        plan.blocks.push_back(split ? row_range(*part, rank, world) : *part);
        plan.writes.push_back(!part->replicated || split || owner[next_whole] == rank);
        if (part->replicated && !split) ++next_whole;
    }
    return plan;
}

WritePlan copy_blocks(const WritePlan& plan, std::vector<HostBuffer>& buffers) {
    WritePlan copy = plan;
    buffers.resize(copy.blocks.size());
    for (std::size_t i = 0; i < copy.blocks.size(); ++i) {
        TensorPart& block = copy.blocks[i];
        if (!copy.writes[i]) {
            block.data = nullptr;  // another rank's: never read
            continue;
        }
        HostBuffer& buffer = buffers[i];
        if (buffer.capacity < block.bytes()) {
            const std::size_t capacity = std::max<std::uint64_t>(block.bytes() + block.bytes() / 4, 1);  // room to grow
            buffer.data.reset(new std::byte[capacity]);  // no zeroing
            buffer.capacity = capacity;
        }
        if (block.bytes() > 0) std::memcpy(buffer.data.get(), block.data, block.bytes());
        block.data = buffer.data.get();
    }
    return copy;
}

}  // namespace trainrt::checkpoint
