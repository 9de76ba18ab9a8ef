// Benchmark plugin (make bench, part "torch"): Ray's FashionMNIST MLP in LibTorch, trained for
// train.steps steps after train.warmup steps, with its gradients averaged either by prepare_model
// (train.mode = overlap: buckets whose allreduce starts while backward runs) or by one blocking
// allreduce of all gradients, flattened, after backward (train.mode = flat), or not averaged at all
// (train.mode = none: each rank keeps its own, the compute floor the other two add to). Rank 0
// prints one JSON line with the median step time. Same model, data, batch and threads in all modes.
#include <torch/torch.h>
#include <trainrt/keys.hpp>
#include <trainrt/plugin.hpp>
#include <trainrt/torch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace {

namespace tt = trainrt::torch;

struct MlpImpl : torch::nn::Module {
    MlpImpl()
        : fc1(register_module("fc1", torch::nn::Linear(784, 512))),
          fc2(register_module("fc2", torch::nn::Linear(512, 512))),
          fc3(register_module("fc3", torch::nn::Linear(512, 10))) {}
    torch::Tensor forward(const torch::Tensor& x) {
        return torch::relu(fc3(torch::relu(fc2(torch::relu(fc1(x.flatten(1)))))));
    }
    torch::nn::Linear fc1, fc2, fc3;
};
TORCH_MODULE(Mlp);

#define DDP_BENCH_TRAIN_KEYS(KEY)                                                                      \
    KEY(mode, std::string, "overlap", trainrt::one_of({"overlap", "flat", "none"}), "how gradients are averaged") \
    KEY(batch_size, std::int64_t, "64", trainrt::at_least(1), "global batch, split over the ranks")       \
    KEY(warmup, std::int64_t, "30", trainrt::at_least(0), "steps not timed")                               \
    KEY(steps, std::int64_t, "200", trainrt::at_least(1), "steps timed")
TRAINRT_KEYS(BenchKeys, "train", DDP_BENCH_TRAIN_KEYS);

// One blocking allreduce (mean) of every gradient, flattened into one buffer, after backward.
void flat_average(trainrt::Session& session, Mlp& model) {
    std::vector<torch::Tensor> grads;
    for (const torch::Tensor& p : model->parameters()) grads.push_back(p.grad().view({-1}));
    torch::Tensor flat = torch::cat(grads);
    session.communicator().allreduce(flat.data_ptr<float>(), static_cast<std::size_t>(flat.numel()),
                                     trainrt::DType::f32, trainrt::ReduceOp::mean);
    std::int64_t offset = 0;
    for (const torch::Tensor& p : model->parameters()) {
        p.grad().view({-1}).copy_(flat.narrow(0, offset, p.numel()));
        offset += p.numel();
    }
}

void train(trainrt::Session& session) {
    const BenchKeys keys = BenchKeys::read(session.config());
    const bool overlap = keys.mode.value == "overlap";
    tt::set_compute_threads(session);
    torch::manual_seed(0);
    Mlp model;
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(1e-3));
    std::unique_ptr<tt::DistributedModule> ddp;
    if (overlap) ddp = std::make_unique<tt::DistributedModule>(tt::prepare_model(model.ptr(), session));
    const trainrt::DatasetShard shard = session.dataset_shard("train", 0);
    const tt::ShardLoader loader(shard, keys.batch_size.value / session.context().world_size);
    const std::int64_t warmup = keys.warmup.value, steps = keys.steps.value;
    std::vector<double> times;
    for (std::int64_t s = 0; s < warmup + steps; ++s) {
        tt::Batch batch = loader.batch(s % loader.size());
        const auto start = std::chrono::steady_clock::now();
        optimizer.zero_grad();
        torch::nn::functional::cross_entropy(model(batch.features), batch.labels).backward();
        if (keys.mode.value == "flat") flat_average(session, model);
        optimizer.step();
        if (s >= warmup) times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    const double median = session.communicator().allreduce_value(times[times.size() / 2], trainrt::ReduceOp::max);
    if (session.context().world_rank == 0)
        std::printf("{\"bench\":\"torch_ddp\",\"mode\":\"%s\",\"ranks\":%d,\"steps\":%lld,\"step_ms\":%.4f}\n",
                    keys.mode.value.c_str(), session.context().world_size, static_cast<long long>(steps), median * 1e3);
}

}  // namespace

TRAINRT_WORKLOAD_WITH(torch_ddp_bench, "DDP overlap vs flat allreduce", train, BenchKeys::specs, nullptr);
