#pragma once
// A committed checkpoint named by a path a user gives outside a run (Python's
// trainrt.Checkpoint.open, Result.checkpoint): a checkpoint directory, verified as a restore
// verifies it, or a run directory, whose newest valid checkpoint it opens.
#include <string>

#include "trainrt/checkpoint.hpp"

namespace trainrt::checkpoint {

// CheckpointError naming the path and what is wrong (no such directory, no valid checkpoint,
// the verification's reason).
Checkpoint open_verified(const std::string& path);

}  // namespace trainrt::checkpoint
