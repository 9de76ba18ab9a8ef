#pragma once
// trainrt's LibTorch component (libtrainrt_torch; CMake: find_package(trainrt COMPONENTS torch),
// target trainrt::torch). Only code that uses LibTorch includes this header and links it: a job
// that does not never loads LibTorch. In namespace trainrt::torch; LibTorch itself is ::torch.
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

namespace trainrt::torch {

// A c10d process group over every rank of the job, backed by trainrt's MPI communicator: what
// DDP's machinery (and, from Python, torch.distributed) talks to. Collectives on CPU tensors:
// allreduce (sum, avg, max, min; float32, float64, int64), broadcast, allgather, barrier; they run
// on a communication thread (when MPI allows threads), so a gradient allreduce overlaps the rest
// of backward. Work::wait() rethrows a failure as trainrt::CommError with MPI's text, and a wait
// that blocks is seen by the collective watchdog. Backend name: "trainrt". Collective: every rank
// creates it, in the same order as its other collectives.
c10::intrusive_ptr<c10d::ProcessGroup> make_process_group();

}  // namespace trainrt::torch
