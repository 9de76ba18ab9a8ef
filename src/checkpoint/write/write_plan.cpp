#include "checkpoint/write/write_plan.hpp"

#include <algorithm>
#include <cstring>

#include "checkpoint/format/validate.hpp"

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

}  // namespace

std::uint64_t WritePlan::bytes() const {
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < blocks.size(); ++i)
        if (writes[i]) total += blocks[i].bytes();
    return total;
}

WritePlan plan_writes(const CheckpointState& state, int rank, int world, bool spread) {
    WritePlan plan;
    for (const TensorPart* part : sorted_parts(state)) {
        const bool split = part->replicated && spread && splits(*part, world);
        plan.blocks.push_back(split ? row_range(*part, rank, world) : *part);
        plan.writes.push_back(!part->replicated || split || rank == 0);
    }
    return plan;
}

WritePlan copy_blocks(const WritePlan& plan, std::vector<HostBuffer>& buffers, CopySelect select) {
    WritePlan copy = plan;
    buffers.resize(copy.blocks.size());
    for (std::size_t i = 0; i < copy.blocks.size(); ++i) {
        TensorPart& block = copy.blocks[i];
        if (!copy.writes[i]) {
            block.data = nullptr;  // another rank's: never read
            continue;
        }
        const bool small = block.bytes() < kBackgroundBlockBytes;
        if ((select == CopySelect::small && !small) || (select == CopySelect::large && small)) continue;
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
