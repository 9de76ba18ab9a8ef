#pragma once
// Where fashion_mlp's math runs. The host Mlp stays the weights of record (init, checkpoints,
// digest); an engine trains from it and writes its weights back on sync_to_host().
//  - CPU: OpenBLAS on the host Mlp, gradients averaged by the MPI GradientReducer.
//  - CUDA (scaling.use_gpu = true): cuBLAS GEMMs and small kernels on the NCCL communicator's
//    stream, each layer's gradients averaged with NCCL as soon as backward produced them.
#include <cstdint>
#include <memory>

#include "trainrt/comm.hpp"
#include "workloads/fashion_mlp/mlp.hpp"

namespace trainrt::workloads::fashion_mlp {

class Engine {
public:
    virtual ~Engine() = default;
    // One SGD step on a batch (pixels scaled to [0, 1]); returns this rank's batch-mean loss.
    virtual float train_step(const float* images, const std::uint8_t* labels, int batch, float lr) = 0;
    // Forward only: adds the batch's summed loss and correct predictions to the totals.
    virtual void evaluate(const float* images, const std::uint8_t* labels, int batch, double& loss_sum,
                          std::int64_t& correct) = 0;
    // Makes the host Mlp hold the current weights (before a checkpoint, a digest or the end).
    virtual void sync_to_host() = 0;
};

std::unique_ptr<Engine> make_cpu_engine(Mlp& model, Communicator& comm, std::size_t bucket_bytes);

// `comm` must carry an NCCL communicator (comm::collective_stream). The CUDA-less build's version
// throws ConfigError.
std::unique_ptr<Engine> make_cuda_engine(Mlp& model, Communicator& comm);

}  // namespace trainrt::workloads::fashion_mlp
