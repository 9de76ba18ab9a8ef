// A plugin whose preflight fails on rank 1 only (say, a node without the dataset): every rank must
// learn it and end cleanly before the run directory exists, instead of rank 0 waiting forever.
// With TRAINRT_PICKY_DOMAIN=<domain> (config, launch, comm, storage, hdf5, data, workload,
// checkpoint, failure) rank 1 throws that trainrt error class instead: every rank must end with
// that domain's exit code.
#include <cstdlib>
#include <stdexcept>
#include <string>

#include <trainrt/error.hpp>
#include <trainrt/plugin.hpp>

namespace {

template <class E>
void raise_if(const std::string& wanted, const char* message) {
    E error(message);
    if (wanted == error.domain()) throw error;
}

void preflight(const trainrt::JobConfig&, const trainrt::Context& context) {
    if (context.world_rank != 1) return;
    const char* domain = std::getenv("TRAINRT_PICKY_DOMAIN");
    if (domain == nullptr) throw std::runtime_error("/scratch/data missing on this node");
    const std::string wanted = domain;
    const char* message = "picky: raised on rank 1 only";
    raise_if<trainrt::ConfigError>(wanted, message);
    raise_if<trainrt::LaunchError>(wanted, message);
    raise_if<trainrt::CommError>(wanted, message);
    raise_if<trainrt::StorageError>(wanted, message);
    raise_if<trainrt::H5Error>(wanted, message);
    raise_if<trainrt::DataError>(wanted, message);
    raise_if<trainrt::WorkloadError>(wanted, message);
    raise_if<trainrt::CheckpointError>(wanted, message);
    raise_if<trainrt::FailureLimitError>(wanted, message);
    throw std::runtime_error("picky: unknown TRAINRT_PICKY_DOMAIN " + wanted);
}

void train(trainrt::Session&) {}

}  // namespace

TRAINRT_WORKLOAD_WITH(picky, "preflight fails on rank 1", train, nullptr, preflight);
