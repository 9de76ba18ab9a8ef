#pragma once
// Where fashion_mlp's math runs. The host Mlp stays the weights of record (init, checkpoints,
// digest); an engine trains from it and writes its weights back on sync_to_host().
//  - CPU: OpenBLAS on the host Mlp, gradients averaged by the MPI GradientReducer.
//  - CUDA (scaling.use_gpu = true): cuBLAS GEMMs and small kernels on the NCCL communicator's
//    stream, each layer's gradients averaged with NCCL as soon as backward produced them; a
//    training step is captured once as a CUDA graph and replayed, and steps are enqueued ahead
//    of the GPU (a bounded window) instead of waiting for each.
// Engines read batches straight from the rank's shards (pixels scaled to [0, 1] as float32 as
// torchvision's ToTensor does); the running sum of batch losses lives in the engine, so a step
// never waits for the device.
#include <cstdint>
#include <memory>

#include "trainrt/comm.hpp"
#include "trainrt/data.hpp"
#include "workloads/fashion_mlp/mlp.hpp"

namespace trainrt::workloads::fashion_mlp {

enum class Split { train, test };

class Engine {
public:
    virtual ~Engine() = default;
    // The rank's shard of a split for the calls that follow; it must outlive them (the CPU engine
    // reads it in place, the CUDA engine copies it to the device when its data are resident).
    virtual void set_data(Split split, const DatasetShard& shard) = 0;
    // One SGD step on train samples [first, first + count), the loss's sum over them divided by
    // `mean_over` (trainrt::BatchPart: count when the ranks' batches are equal); adds that loss
    // to the running loss sum.
    virtual void train_step(std::size_t first, int count, float mean_over, float lr) = 0;
    virtual void set_loss_sum(double sum) = 0;
    // The running loss sum; waits for the steps enqueued so far.
    virtual double loss_sum() = 0;
    // Forward only over test samples [0, real) in batches of `batch`: adds their summed loss and
    // correct predictions to the totals.
    virtual void evaluate(std::size_t real, int batch, double& loss_sum, std::int64_t& correct) = 0;
    // Makes the host Mlp hold the current weights (before a checkpoint, a digest or the end).
    virtual void sync_to_host() = 0;
};

struct CudaOptions {
    bool resident_data = true;  // copy each shard to the GPU once and build batches there
};

std::unique_ptr<Engine> make_cpu_engine(Mlp& model, Communicator& comm, std::size_t bucket_bytes);

// `comm` must carry an NCCL communicator (comm::collective_stream). The CUDA-less build's version
// throws ConfigError.
std::unique_ptr<Engine> make_cuda_engine(Mlp& model, Communicator& comm, const CudaOptions& options);

}  // namespace trainrt::workloads::fashion_mlp
