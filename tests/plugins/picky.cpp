// A plugin whose preflight fails on rank 1 only (say, a node without the dataset): every rank must
// learn it and end cleanly before the run directory exists, instead of rank 0 waiting forever.
#include <stdexcept>

#include <trainrt/plugin.hpp>

namespace {

void preflight(const trainrt::JobConfig&, const trainrt::Context& context) {
    if (context.world_rank == 1) throw std::runtime_error("/scratch/data missing on this node");
}

void train(trainrt::Session&) {}

}  // namespace

TRAINRT_WORKLOAD_WITH(picky, "preflight fails on rank 1", train, nullptr, preflight);
