#include "checkpoint/format/validate.hpp"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "comm/agreement.hpp"
#include "trainrt/error.hpp"

namespace trainrt::checkpoint {
namespace {

using Parts = std::vector<const TensorPart*>;

std::string shape_text(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

// Why this part cannot be written, or "" when it can.
std::string part_problem(const TensorPart& part) {
    const std::size_t dims = part.global_shape.size();
    if (part.name.empty() || part.name.find('/') != std::string::npos)
        return fmt::format("tensor name '{}' is empty or contains '/'", part.name);
    if (part.offset.size() != dims || part.shape.size() != dims)
        return fmt::format("tensor '{}': offset {} and shape {} do not have the {} dimensions of "
                           "its global shape {}", part.name, shape_text(part.offset),
                           shape_text(part.shape), dims, shape_text(part.global_shape));
    for (std::size_t d = 0; d < dims; ++d)
        if (part.shape[d] > part.global_shape[d] || part.offset[d] > part.global_shape[d] - part.shape[d])
            return fmt::format("tensor '{}': block at offset {} with shape {} lies outside its "
                               "global shape {}", part.name, shape_text(part.offset),
                               shape_text(part.shape), shape_text(part.global_shape));
    if (part.replicated && (part.shape != part.global_shape || part.offset != Shape(dims, 0)))
        return fmt::format("replicated tensor '{}' must be given whole", part.name);
    if (part.data == nullptr && element_count(part.shape) > 0)
        return fmt::format("tensor '{}' has no data", part.name);
    return "";
}

// The first problem with this rank's parts (sorted by name), or "".
std::string local_problem(const Parts& parts) {
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i > 0 && parts[i]->name == parts[i - 1]->name)
            return fmt::format("tensor '{}' is given twice", parts[i]->name);
        std::string problem = part_problem(*parts[i]);
        if (!problem.empty()) return problem;
    }
    return "";
}

// What every rank must agree on, in name order; the name is length-prefixed so that no two
// lists serialise alike.
std::uint64_t tensor_list_hash(const Parts& parts) {
    std::string text;
    for (const TensorPart* part : parts)
        text += fmt::format("{}:{}:{}:{}:{};", part->name.size(), part->name, static_cast<int>(part->type),
                            part->replicated ? 1 : 0, shape_text(part->global_shape));
    return XXH3_64bits(text.data(), text.size());
}

[[noreturn]] void fail_everywhere(const std::string& message) {
    CheckpointError error("checkpoint: " + message);
    error.set_on_all_ranks();
    throw error;
}

// Collective: every rank's {malformed?, tensor count, tensor list hash}.
void agree_on_tensors(const Parts& parts, Communicator& comm) {
    const std::string problem = local_problem(parts);
    const std::array<std::int64_t, 3> mine{problem.empty() ? 0 : 1, static_cast<std::int64_t>(parts.size()),
                                           static_cast<std::int64_t>(tensor_list_hash(parts))};
    std::vector<std::int64_t> all(3 * static_cast<std::size_t>(comm.size()));
    comm.allgather(mine.data(), all.data(), sizeof mine);
    bool malformed = false;
    for (std::size_t r = 0; r < all.size() / 3; ++r) malformed = malformed || all[3 * r] != 0;
    if (malformed)  // the lowest such rank's problem, on every rank
        comm::agree(comm, problem.empty() ? nullptr : std::make_exception_ptr(CheckpointError("checkpoint: " + problem)));
    for (std::size_t r = 1; r < all.size() / 3; ++r)
        if (all[3 * r + 1] != all[1] || all[3 * r + 2] != all[2])
            fail_everywhere(fmt::format("ranks 0 and {} describe different tensors (names, types, replicated "
                                        "flags or global shapes): every rank must pass the same tensors", r));
}

// Collective: the sharded blocks of all ranks hold at least every element of each tensor.
void check_coverage(const Parts& parts, Communicator& comm) {
    std::vector<std::int64_t> held;
    for (const TensorPart* part : parts)
        held.push_back(part->replicated ? 0 : static_cast<std::int64_t>(element_count(part->shape)));
    comm.allreduce(held.data(), held.size(), DType::i64, ReduceOp::sum);
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const TensorPart& part = *parts[i];
        const auto needed = static_cast<std::int64_t>(element_count(part.global_shape));
        if (!part.replicated && held[i] < needed)
            fail_everywhere(fmt::format("the ranks' blocks of sharded tensor '{}' hold {} elements, fewer than "
                                        "the {} of its global shape {}: part of it would be unwritten",
                                        part.name, held[i], needed, shape_text(part.global_shape)));
    }
}

}  // namespace

std::vector<const TensorPart*> sorted_parts(const CheckpointState& state) {
    Parts parts;
    for (const TensorPart& part : state.tensors()) parts.push_back(&part);
    std::sort(parts.begin(), parts.end(), [](const TensorPart* a, const TensorPart* b) { return a->name < b->name; });
    return parts;
}

std::uint64_t element_count(const Shape& shape) {
    std::uint64_t count = 1;
    for (std::uint64_t extent : shape) count *= extent;
    return count;
}

void validate_state(const CheckpointState& state, Communicator& comm) {
    const Parts parts = sorted_parts(state);
    agree_on_tensors(parts, comm);
    check_coverage(parts, comm);
}

}  // namespace trainrt::checkpoint
