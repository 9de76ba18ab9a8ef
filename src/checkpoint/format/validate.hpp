#pragma once
// The one validation of a checkpoint's tensors before any layout writes a byte (both layouts
// rely on it): every rank's parts are well formed, every rank describes the same tensors, and
// the sharded blocks cover every element.
#include <cstdint>
#include <vector>

#include "trainrt/checkpoint.hpp"
#include "trainrt/comm.hpp"

namespace trainrt::checkpoint {

// The state's parts sorted by tensor name: the order every rank and every layout uses.
std::vector<const TensorPart*> sorted_parts(const CheckpointState& state);

// The product of the extents (1 for a scalar's empty shape).
std::uint64_t element_count(const Shape& shape);

// Collective (two collectives when all is well). Throws the same CheckpointError on every rank
// when a rank's parts are malformed (a name twice or with '/', a block outside its global shape,
// a replicated tensor not given whole, no data: that rank's problem, agreed), when the ranks
// describe different tensors (names, types, replicated flags, global shapes), or when the
// sharded blocks together hold fewer elements than the tensor (a hole would be written as
// garbage the manifest vouches for; the same block on several ranks is allowed).
void validate_state(const CheckpointState& state, Communicator& comm);

}  // namespace trainrt::checkpoint
