#pragma once
// trainrt's LibTorch component (libtrainrt_torch; CMake: find_package(trainrt COMPONENTS torch),
// target trainrt::torch). Only code that uses LibTorch includes this header and links it: a job
// that does not never loads LibTorch. In namespace trainrt::torch; LibTorch itself is ::torch.
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/nn/module.h>
#include <torch/data/samplers/base.h>
#include <torch/optim/optimizer.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "trainrt/checkpoint.hpp"
#include "trainrt/data.hpp"
#include "trainrt/session.hpp"

namespace trainrt::torch {

// Ray's train.torch.get_device(): the CUDA device trainrt bound for this rank (scaling.use_gpu:
// by local rank, docs/guides/gpus.md), else the CPU. Put the batches there; prepare_model puts the model
// there. With use_gpu and a LibTorch that has no CUDA (Debian's libtorch is CPU-only) a
// ConfigError saying so (exit 2).
at::Device device(const Session& session);

// Ray's enable_reproducibility() without the seeding (run.seed seeds): deterministic algorithms
// from here on, so that a GPU run and its resume are bitwise equal. cuDNN's deterministic
// convolutions without autotuning, LibTorch's deterministic algorithms (an operation that has
// none is a c10::Error naming it), and CUBLAS_WORKSPACE_CONFIG=:4096:8 unless set (cuBLAS's
// deterministic GEMMs). Call it before the model's first step; slower on a GPU, nothing changes
// on the CPU's usual operations.
void enable_reproducibility();

// A c10d process group over every rank of the job, backed by trainrt's MPI communicator: what
// DDP's machinery (and, from Python, torch.distributed) talks to. Collectives: allreduce (sum,
// avg, max, min; float32, float64, int64, int32, uint8), broadcast, allgather, all_gather_into_tensor,
// reduce_scatter_tensor (DeepSpeed's ZeRO, FSDP2), gather, scatter (torch.distributed.checkpoint's
// plans), barrier; on CPU tensors, and on
// CUDA tensors through a host copy (MPI, not NCCL: Debian's MPICH is not CUDA-aware). They run
// on a communication thread (when MPI allows threads), so a gradient allreduce overlaps the rest
// of backward. Work::wait() rethrows a failure as trainrt::CommError with MPI's text, and a wait
// that blocks is seen by the collective watchdog. Backend name: "trainrt". Collective: every rank
// creates it, in the same order as its other collectives.
c10::intrusive_ptr<c10d::ProcessGroup> make_process_group();

// The same collectives as a c10d::Backend, for torch.distributed to wrap in its own process group
// (trainrt's Python backend, torch.distributed.Backend.register_backend). Collective, as above.
c10::intrusive_ptr<c10d::Backend> make_backend();

struct DistributedOptions {
    double bucket_mb = 2;                 // gradients are averaged in buckets of about this size
    bool find_unused_parameters = false;  // a parameter without a gradient in a backward pass is
                                          // averaged as zeros instead of being an error
    bool broadcast_buffers = true;  // after every backward, rank 0's buffers (batch-norm statistics)
                                    // on every rank, as PyTorch DDP's broadcast before each forward:
                                    // every rank evaluates with the same statistics, and a checkpoint
                                    // of rank 0's module holds them all; false: each rank keeps its own
};

// PyTorch's DistributedDataParallel (Ray's prepare_model) for a LibTorch module. Construction
// (collective) broadcasts rank 0's parameters and buffers to every rank. Then, in every
// loss.backward(), each parameter's gradient, divided by the world size, is copied into its bucket
// as soon as autograd has accumulated it (a post-hook on its gradient accumulator); a full
// bucket's allreduce (sum) starts at once on the process group's communication thread, overlapping
// the rest of backward; when backward ends (an autograd final callback) every bucket is waited for
// and each parameter's .grad() is its averaged gradient, a view into its bucket (PyTorch DDP's
// gradient_as_bucket_view: no copy back). The training loop is unchanged: forward,
// loss.backward(), optimizer.step(). Buckets follow the reverse order of module->parameters()
// (the order backward usually produces them). A parameter that got no gradient in a backward is
// a WorkloadError naming it, unless find_unused_parameters. Every rank must run the same graph.
// On one rank it does nothing (no hooks, no buckets: bucket_count() is 0), as Ray's prepare_model
// does not wrap a single worker: its gradients already are the average.
class DistributedModule {
public:
    DistributedModule(std::shared_ptr<::torch::nn::Module> module, c10::intrusive_ptr<c10d::ProcessGroup> group,
                      DistributedOptions options = {});
    ~DistributedModule();
    DistributedModule(DistributedModule&&) noexcept;
    DistributedModule& operator=(DistributedModule&&) noexcept;
    DistributedModule(const DistributedModule&) = delete;
    DistributedModule& operator=(const DistributedModule&) = delete;

    ::torch::nn::Module& module() const;
    std::size_t bucket_count() const;

private:
    // Sets the session whose await_snapshot() ends every backward (and the module's life).
    friend DistributedModule prepare_model(std::shared_ptr<::torch::nn::Module>, Session&, bool, bool);
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// The session's DistributedModule: the module moved to device(session) (its parameters keep
// their identity, so an optimizer made before still holds them; load optimizer state after this
// call, so that it is made on the device), a process group over the job's ranks, buckets of
// scaling.bucket_mb. Every backward ends with session.await_snapshot(), so a background snapshot
// ([checkpoint] snapshot) is taken before the optimizer's step changes the weights; so does the
// module's destruction.
DistributedModule prepare_model(std::shared_ptr<::torch::nn::Module> module, Session& session,
                                bool find_unused_parameters = false, bool broadcast_buffers = true);

// 16 hex digits of XXH3-64 over every parameter's and buffer's bytes, in registration order:
// equal digests mean bitwise-equal models (rank 0 prints `weights_digest=` as trainrt's own
// workloads do, for tests that compare an interrupted run with an uninterrupted one).
std::string weights_digest(const ::torch::nn::Module& module);

// Sets LibTorch's intra-op threads, and those of the BLAS it calls (OpenBLAS ignores
// at::set_num_threads), to this rank's share of its node: OMP_NUM_THREADS when the user set it,
// else SLURM_CPUS_PER_TASK when Slurm gave one, else the CPUs this process may run on divided by the ranks
// on its node (at least 1). Returns the count. Left unset, every rank's BLAS starts a thread per
// core and ranks sharing a node fight over them (steps of 1 ms or 8 ms, at random).
int set_compute_threads(const Session& session);

// A streamed batch's column (session.dataset(split).iter_batches, data.hpp) as a tensor of its own
// type and shape: u8 -> kByte, i8 -> kChar, i16 -> kShort, i32 -> kInt, i64 -> kLong, f16 -> kHalf,
// f32 -> kFloat, f64 -> kDouble. A copy: the batch is recycled by the iterator's next call. The
// streaming reader is how LibTorch code reads any imported dataset; heavy preprocessing belongs in
// BatchOptions::transform, which runs on the reader's thread.
at::Tensor to_tensor(const BatchColumn& column);

// A rank's shard (session.dataset_shard(split, epoch)) as batches of tensors, in the shard's order:
// PyTorch's DistributedSampler — every rank gets the same number of samples (the shard marks
// padding), and with data.shuffle the shard is a new permutation each epoch, drawn from
// (run.seed, epoch) alike for every world size. A batch's position is its index: save the next
// index in a checkpoint and resume from it. The shard must outlive the loader.
struct Batch {
    at::Tensor features;  // float32 [n, 1, sample shape...], pixels scaled to [0, 1] (ToTensor)
    at::Tensor labels;    // int64 [n]
};
class ShardLoader {
public:
    ShardLoader(const DatasetShard& shard, std::int64_t batch_size, bool drop_last = false);
    std::int64_t size() const;                // batches in the shard
    Batch batch(std::int64_t index) const;    // 0 <= index < size()

private:
    Batch slice(std::size_t first, std::int64_t count) const;
    const DatasetShard& shard_;
    std::int64_t batch_size_;
    bool drop_last_;
};

// A rank's shard batched by global batch, for a global batch the ranks need not divide: part k
// holds this rank's samples of global batch k (trainrt::batch_part; local parts differ by at most
// one sample, and may be empty when a block has fewer samples than there are ranks). Divide the
// part's summed loss by `mean_over` (loss = sum / mean_over): DDP's average over the ranks is then
// the global batch's mean, the same mathematics as one big batch. Part k covers the same samples
// for every world size: save the next k in a checkpoint and resume from it on any number of ranks.
struct BatchPartTensors {
    Batch batch;
    double mean_over = 0.0;
};
class GlobalBatchLoader {
public:
    GlobalBatchLoader(const DatasetShard& shard, std::int64_t global_batch, int rank, int ranks);
    std::int64_t size() const;                      // global batches per epoch
    BatchPartTensors part(std::int64_t k) const;    // 0 <= k < size()

private:
    const DatasetShard& shard_;
    std::size_t global_batch_;
    int rank_, ranks_;
};

// LibTorch's data API over trainrt's split contract (data.hpp): a sampler for any
// `torch::data` dataset of `dataset_size` samples, for torch::data::make_data_loader. Rank r of
// n takes positions r, r + n, ... of the epoch's order, padded to equal counts; with `shuffle`
// the order is the permutation session.dataset_shard draws from (run.seed, epoch): the same for
// every world size, unlike LibTorch's DistributedRandomSampler, which draws from the epoch alone.
// A loader holds its own copy of the sampler: set the epoch (and a resume position) on the
// sampler, then make the epoch's loader from it.
class DistributedSampler : public ::torch::data::samplers::Sampler<> {
public:
    DistributedSampler(const Session& session, std::size_t dataset_size, bool shuffle);  // rank, size, run.seed
    DistributedSampler(std::size_t dataset_size, int rank, int ranks, bool shuffle, std::uint64_t seed);
    void set_epoch(std::uint64_t epoch);
    // The next reset() starts after this rank's first `samples` samples of the epoch: resume
    // mid-epoch from a position saved in a checkpoint (batches done x batch size).
    void start_at(std::size_t samples);
    std::size_t size() const;  // this rank's samples per epoch, padding included

    void reset(c10::optional<std::size_t> new_size = c10::nullopt) override;
    c10::optional<std::vector<std::size_t>> next(std::size_t batch_size) override;
    void save(::torch::serialize::OutputArchive& archive) const override;
    void load(::torch::serialize::InputArchive& archive) override;

private:
    int rank_, ranks_;
    std::uint64_t seed_, epoch_ = 0;
    std::size_t dataset_size_;
    bool shuffle_;
    std::size_t start_ = 0, next_ = 0;
    std::vector<std::size_t> indices_;
};

// LibTorch state as a trainrt checkpoint (readable with h5py, reshardable like any checkpoint):
//   module("model.")        every named parameter and buffer, as "model.<name>"
//   optimizer("optimizer.") SGD's momentum buffers, Adam's / AdamW's step and moments, per
//                           parameter "optimizer.g<group>.p<index>.<field>", and each group's lr
//   rng(context, "rng.cpu") each rank's default CPU generator (dropout, shuffles, init), a row
//                           per rank: ranks seeded alike or apart both come back exactly; on a
//                           GPU (scaling.use_gpu) also the generator of device(session) (dropout
//                           on the GPU), as "rng.cuda" (a name not ending in ".cpu": name + ".cuda")
// The dict keeps what it describes alive until it is gone: pass state() to session.report()
// while it lives. Tensors of type float32, float64, int32, int64 or uint8.
class StateDict {
public:
    StateDict() = default;
    StateDict(StateDict&&) = default;
    StateDict& operator=(StateDict&&) = default;
    // Hands its tensors to a holder that keeps them until the next StateDict with tensors is
    // gone: a background snapshot of its state may still be copying them (a copy it made of a GPU
    // or non-contiguous tensor would be freed under it).
    ~StateDict();
    StateDict& module(const ::torch::nn::Module& module, const std::string& prefix = "model.");
    StateDict& optimizer(::torch::optim::Optimizer& optimizer, const std::string& prefix = "optimizer.");
    StateDict& rng(const Context& context, const std::string& name = "rng.cpu");
    // This rank's generator alone, for every rank (right only when all ranks' generators are alike).
    StateDict& rng(const std::string& name = "rng.cpu");
    // A tensor whose value differs between ranks (a rank's own statistics, loss sums, a generator
    // seeded per rank): stored as rank r's row of a [world size, ...] tensor; load_per_rank.
    StateDict& per_rank(const Context& context, const std::string& name, const at::Tensor& tensor);
    StateDict& attribute(const std::string& name, AttributeValue value);
    // A stream's position (trainrt::save_position): restore it with trainrt::load_position.
    StateDict& stream_position(const Dataset& dataset, const DataPosition& position, const BatchOptions& options);
    const CheckpointState& state() const { return state_; }

private:
    void add(const std::string& name, const at::Tensor& tensor);
    const at::Tensor& keep(const at::Tensor& tensor, const std::string& name);
    std::vector<at::Tensor> kept_;
    CheckpointState state_;
};

// Restores what StateDict saved into `module` / `optimizer` / the CPU generator. A tensor the
// checkpoint lacks, or whose shape or type differs from the module's, is a CheckpointError naming
// it and both shapes (exit 8): the checkpoint belongs to another model.
void load_module(const Checkpoint& checkpoint, ::torch::nn::Module& module, const std::string& prefix = "model.");
void load_optimizer(const Checkpoint& checkpoint, ::torch::optim::Optimizer& optimizer,
                    const std::string& prefix = "optimizer.");
// Each rank's generator from rng(context) (and its GPU's, when both the checkpoint and this run
// have one): its own row; after a change of world size, row (rank mod
// the old world size), as no rank's own stream can go on then. One saved by rng(name) goes to
// every rank.
void load_rng(const Checkpoint& checkpoint, const Context& context, const std::string& name = "rng.cpu");
void load_rng(const Checkpoint& checkpoint, const std::string& name = "rng.cpu");
// This rank's row of a StateDict::per_rank tensor into `target`; false (target untouched) when
// the checkpoint was written by another world size, whose rows are not this world's ranks.
bool load_per_rank(const Checkpoint& checkpoint, const Context& context, const std::string& name, at::Tensor& target);

}  // namespace trainrt::torch
