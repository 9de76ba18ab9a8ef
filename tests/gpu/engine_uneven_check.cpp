// The CUDA engine on parts of a global batch that are not the batch split evenly (label gpu;
// exit 77 = skipped where no GPU is visible), against the CPU engine on the same steps:
//   mpiexec -n 1 engine_uneven_check
// One rank sees what a rank of an uneven world sees: parts whose sample count differs from
// `mean_over` (trainrt::batch_part of a 64-sample batch over 3 ranks: 21 or 22 samples for a mean
// over 21.33; the epoch's last block, 10 or 11 over 10.67) and empty parts (a block with fewer
// samples than ranks), each shape run often enough to be run plainly, captured and replayed.
// After every round the two engines' weights and loss sums must agree within float tolerance,
// and an empty part must leave the weights as they were.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "comm/device_select.hpp"
#include "comm/gpu.hpp"
#include "comm/mpi_communicator.hpp"
#include "comm/mpi_world.hpp"
#include "launch/launcher.hpp"
#include "trainrt/error.hpp"
#include "workloads/fashion_mlp/engine.hpp"

using namespace trainrt;
using namespace trainrt::workloads::fashion_mlp;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
    std::printf("%s: %s\n", ok ? "ok" : "FAIL", what.c_str());
    if (!ok) ++failures;
}

DatasetShard random_shard(std::size_t count) {
    DatasetShard shard;
    shard.split = "train";
    shard.global_count = shard.count = count;
    shard.sample_shape = {28, 28};
    std::mt19937 random(3);
    shard.features.resize(count * kInputs);
    for (auto& pixel : shard.features) pixel = static_cast<std::uint8_t>(random() & 0xff);
    shard.labels.resize(count);
    for (auto& label : shard.labels) label = static_cast<std::uint8_t>(random() % kClasses);
    return shard;
}

struct Part {
    std::size_t first;
    int count;
    float mean_over;
};

// Largest |a - b| / (|b| + 1e-3) over every weight and bias.
double weights_gap(const Mlp& a, const Mlp& b) {
    double gap = 0.0;
    for (int l = 0; l < kLayers; ++l) {
        const Layer &x = a.layers()[l], &y = b.layers()[l];
        for (std::size_t i = 0; i < x.weight.size(); ++i)
            gap = std::max(gap, std::abs(double(x.weight[i]) - y.weight[i]) / (std::abs(double(y.weight[i])) + 1e-3));
        for (std::size_t i = 0; i < x.bias.size(); ++i)
            gap = std::max(gap, std::abs(double(x.bias[i]) - y.bias[i]) / (std::abs(double(y.bias[i])) + 1e-3));
    }
    return gap;
}

bool same_weights(const Mlp& a, const Mlp& b) {
    for (int l = 0; l < kLayers; ++l)
        if (a.layers()[l].weight != b.layers()[l].weight || a.layers()[l].bias != b.layers()[l].bias) return false;
    return true;
}

void check(Communicator& comm) {
    const DatasetShard shard = random_shard(512);
    const std::vector<Part> parts = {{0, 21, 64.0f / 3}, {21, 22, 64.0f / 3}, {43, 10, 32.0f / 3},
                                     {53, 11, 32.0f / 3}, {64, 64, 64.0f}};
    Mlp on_cpu, on_gpu;
    on_cpu.init_uniform(0);
    on_gpu.init_uniform(0);
    auto cpu = make_cpu_engine(on_cpu, comm, std::size_t(1) << 20);
    auto gpu = make_cuda_engine(on_gpu, comm, CudaOptions{});
    gpu->set_data(Split::train, shard);
    std::vector<float> pixels;
    for (int round = 0; round < 3; ++round) {  // plain, captured, replayed
        for (const Part& part : parts) {
            const std::size_t first = part.first + round * 7;
            StepBatch batch{first, part.count, part.mean_over};
            gpu->train_step(batch, 0.05f);
            scale_pixels(shard, first, part.count, pixels);  // the CPU engine takes the batch's data
            batch.pixels = pixels.data();
            batch.labels = shard.labels.data() + first;
            cpu->train_step(batch, 0.05f);
        }
        cpu->sync_to_host();
        gpu->sync_to_host();
        const double gap = weights_gap(on_gpu, on_cpu);
        const double loss_cpu = cpu->loss_sum(), loss_gpu = gpu->loss_sum();
        const double loss_gap = std::abs(loss_gpu - loss_cpu) / std::abs(loss_cpu);
        expect(gap < 1e-3, "round " + std::to_string(round) + ": weights within 1e-3 of the CPU engine's (largest " +
                               std::to_string(gap) + ")");
        expect(loss_gap < 1e-5, "round " + std::to_string(round) + ": loss sum " + std::to_string(loss_gpu) +
                                    " vs CPU " + std::to_string(loss_cpu));
    }
    const Mlp before = on_gpu;
    for (int round = 0; round < 3; ++round) gpu->train_step(StepBatch{0, 0, 1.0f / 3}, 0.05f);  // a block of 1 over 3 ranks
    gpu->sync_to_host();
    expect(same_weights(on_gpu, before), "empty parts (plain, captured, replayed) leave the weights unchanged");
    expect(std::isfinite(gpu->loss_sum()), "loss sum finite after empty parts");
}

}  // namespace

int main() {
    try {
        auto launcher = launch::discover(launch::process_env());
        comm::MpiRuntime mpi(*launcher);
        Context context = comm::build_context(launcher->info());
        comm::DeviceRequest request;
        request.world_rank = context.world_rank;
        request.local_rank = context.local_rank;
        request.local_size = context.local_size;
        request.visible_devices = comm::visible_gpu_count(&request.why_none);
        if (request.visible_devices == 0) {
            std::printf("SKIP: no GPU visible (%s)\n", request.why_none.c_str());
            return 77;
        }
        comm::bind_device(comm::select_device(request));
        auto world = comm::make_mpi_communicator(MPI_COMM_WORLD);
        auto nccl = comm::make_nccl_communicator(*world);
        auto dispatch = comm::make_dispatch_communicator(std::move(world), std::move(nccl));
        check(*dispatch);
    } catch (const Error& error) {
        std::printf("FAIL: %s\n", error.what());
        return 1;
    }
    return failures == 0 ? 0 : 1;
}
