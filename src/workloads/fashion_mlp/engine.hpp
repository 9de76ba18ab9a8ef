#pragma once
// Where fashion_mlp's math runs. The host Mlp stays the weights of record (init, checkpoints,
// digest); an engine trains from it and writes its weights back on sync_to_host().
//  - CPU: OpenBLAS on the host Mlp, gradients averaged by the MPI GradientReducer.
//  - CUDA (scaling.use_gpu = true): cuBLAS GEMMs and small kernels on the NCCL communicator's
//    stream, each layer's gradients averaged with NCCL as soon as backward produced them; a
//    training step is captured once as a CUDA graph and replayed, and steps are enqueued ahead
//    of the GPU (a bounded window) instead of waiting for each.
// The CPU engine trains on the batches the streaming reader hands out (pixels scaled to [0, 1] as
// float32 on the reader's thread, as torchvision's ToTensor does); the CUDA engine keeps the rank's
// whole shards (resident on the GPU, or pinned on the host) and takes only each batch's position.
// The running sum of batch losses lives in the engine, so a step never waits for the device.
#include <cstdint>
#include <memory>

#include "trainrt/comm.hpp"
#include "trainrt/data.hpp"
#include "workloads/fashion_mlp/mlp.hpp"

namespace trainrt::workloads::fashion_mlp {

enum class Split { train, test };

// One step's samples: their place in the rank's part of the epoch (a Batch's first, count and
// mean_over) and, for engines that do not read shards, the batch's pixels and labels.
struct StepBatch {
    std::size_t first = 0;
    int count = 0;
    float mean_over = 1.0f;
    const float* pixels = nullptr;        // count * kInputs
    const std::uint8_t* labels = nullptr; // count
};

class Engine {
public:
    virtual ~Engine() = default;
    // True: the engine reads samples from whole shards given by set_data (StepBatch positions
    // index them); false: from each StepBatch's pixels and labels.
    virtual bool reads_shards() const = 0;
    // The rank's shard of a split for the calls that follow (reads_shards engines); it must
    // outlive them.
    virtual void set_data(Split split, const DatasetShard& shard) = 0;
    // One SGD step on `batch` (train split), the loss's sum over it divided by its mean_over
    // (trainrt::BatchPart); adds that loss to the running loss sum. An empty batch still joins
    // every gradient allreduce.
    virtual void train_step(const StepBatch& batch, float lr) = 0;
    virtual void set_loss_sum(double sum) = 0;
    // The running loss sum; waits for the steps enqueued so far.
    virtual double loss_sum() = 0;
    // Forward only over `batch` (test split): adds its summed loss and correct predictions.
    virtual void evaluate(const StepBatch& batch, double& loss_sum, std::int64_t& correct) = 0;
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

// The CUDA engine's entry in libtrainrt_cuda (symbol trainrt_cuda_fashion_engine,
// comm/gpu_component.hpp); make_cuda_engine forwards to it.
struct CudaEngineApi {
    int abi;  // comm::kGpuComponentAbi
    std::unique_ptr<Engine> (*make)(Mlp& model, Communicator& comm, const CudaOptions& options);
};

}  // namespace trainrt::workloads::fashion_mlp
