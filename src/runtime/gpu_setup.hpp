#pragma once
// scaling.use_gpu = true: each rank takes a GPU by local rank (comm/device_select.hpp) and the
// session communicator becomes NCCL for device buffers, MPI for host ones (backend auto or nccl).
#include <memory>

#include "config/settings.hpp"
#include "trainrt/comm.hpp"
#include "trainrt/context.hpp"

namespace trainrt::runtime {

// This rank's part, before the start-up agreement: checks the backend, picks and binds the GPU.
// ConfigError (one line) when there is none or too few. Returns the bound device; -1 (nothing
// bound) for CPU runs.
int bind_gpu(const ScalingSettings& settings, const Context& context);

// Collective, once every rank bound its GPU: checks no two ranks share one, then the
// communicator the session hands out.
std::unique_ptr<Communicator> session_communicator(const ScalingSettings& settings, const Context& context,
                                                   std::unique_ptr<Communicator> mpi);

}  // namespace trainrt::runtime
