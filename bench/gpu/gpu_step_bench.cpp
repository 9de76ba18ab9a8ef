// Where a CUDA fashion_mlp step's time goes (built only with CUDA; run where a GPU is visible):
//   mpiexec -n 1 gpu_step_bench
// One JSON line each, medians over 5 timed epochs of 938 steps (batch 64) on random data:
//   gpu_step       the engine's train_step, as fashion_mlp calls it (data resident, then
//                  streamed from pinned host memory); the epoch ends with loss_sum(), which
//                  waits for the GPU, so the time is the GPU's or the host's, whichever is slower
//   gpu_gemm       the step's 8 cuBLAS GEMMs alone (same shapes and order), captured as one graph
//                  and replayed: the GEMMs' share of a step
//   gpu_node_floor a graph of as many 4-byte memsets as the step graph has nodes (21): what the
//                  graph's nodes cost before they compute anything
// Exit 77 (skipped) when no GPU is visible.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
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

constexpr int kBatch = 64;
constexpr int kSteps = 938;
constexpr int kEpochs = 5;
constexpr int kStepNodes = 21;

void cuda(cudaError_t code, const char* call) {
    if (code != cudaSuccess) throw CommError(std::string(call) + ": " + cudaGetErrorString(code));
}
#define CUDA(call) cuda((call), #call)

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

DatasetShard random_shard(std::size_t count) {
    DatasetShard shard;
    shard.split = "train";
    shard.global_count = shard.count = count;
    shard.sample_shape = {28, 28};
    std::mt19937 random(7);
    shard.features.resize(count * kInputs);
    for (auto& pixel : shard.features) pixel = static_cast<std::uint8_t>(random() & 0xff);
    shard.labels.resize(count);
    for (auto& label : shard.labels) label = static_cast<std::uint8_t>(random() % kClasses);
    return shard;
}

double engine_step_us(Communicator& comm, const DatasetShard& shard, bool resident) {
    Mlp model;
    model.init_uniform(0);
    CudaOptions options;
    options.resident_data = resident;
    auto engine = make_cuda_engine(model, comm, options);
    engine->set_data(Split::train, shard);
    for (int step = 0; step < 20; ++step) engine->train_step(StepBatch{std::size_t(step) * kBatch, kBatch, float(kBatch)}, 1e-3f);
    engine->loss_sum();
    std::vector<double> epochs;
    for (int e = 0; e < kEpochs; ++e) {
        auto start = std::chrono::steady_clock::now();
        for (int step = 0; step < kSteps; ++step) engine->train_step(StepBatch{std::size_t(step) * kBatch, kBatch, float(kBatch)}, 1e-3f);
        engine->loss_sum();
        epochs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return median(epochs) / kSteps * 1e6;
}

// Replays `graph` kSteps times per epoch; microseconds per replay, by CUDA events.
double replay_us(cudaGraphExec_t graph, cudaStream_t stream) {
    cudaEvent_t start, stop;
    CUDA(cudaEventCreate(&start));
    CUDA(cudaEventCreate(&stop));
    for (int i = 0; i < 50; ++i) CUDA(cudaGraphLaunch(graph, stream));
    std::vector<double> epochs;
    for (int e = 0; e < kEpochs; ++e) {
        CUDA(cudaEventRecord(start, stream));
        for (int i = 0; i < kSteps; ++i) CUDA(cudaGraphLaunch(graph, stream));
        CUDA(cudaEventRecord(stop, stream));
        CUDA(cudaEventSynchronize(stop));
        float ms = 0;
        CUDA(cudaEventElapsedTime(&ms, start, stop));
        epochs.push_back(ms * 1e3 / kSteps);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return median(epochs);
}

cudaGraphExec_t capture(cudaStream_t stream, const std::function<void()>& body) {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    body();
    CUDA(cudaStreamEndCapture(stream, &graph));
    CUDA(cudaGraphInstantiate(&exec, graph, 0));
    cudaGraphDestroy(graph);
    return exec;
}

float* random_device(std::size_t count, std::mt19937& random) {
    std::vector<float> host(count);
    std::uniform_real_distribution<float> uniform(-0.05f, 0.05f);
    for (float& value : host) value = uniform(random);
    float* device = nullptr;
    CUDA(cudaMalloc(&device, count * sizeof(float)));
    CUDA(cudaMemcpy(device, host.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    return device;
}

// The step's GEMMs, as cuda_engine.cu issues them (column-major view of row-major tensors).
double gemm_us(cudaStream_t stream) {
    cublasHandle_t blas = nullptr;
    if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) throw CommError("cublasCreate failed");
    cublasSetStream(blas, stream);
    void* workspace = nullptr;
    CUDA(cudaMalloc(&workspace, 32u << 20));
    cublasSetWorkspace(blas, workspace, 32u << 20);
    std::mt19937 random(11);
    const int in[3] = {kInputs, kHidden, kHidden}, out[3] = {kHidden, kHidden, kClasses};
    float *w[3], *dw[3], *act[3], *delta[3];
    float* input = random_device(std::size_t(kBatch) * kInputs, random);
    for (int l = 0; l < 3; ++l) {
        w[l] = random_device(std::size_t(in[l]) * out[l], random);
        dw[l] = random_device(std::size_t(in[l]) * out[l], random);
        act[l] = random_device(std::size_t(kBatch) * out[l], random);
        delta[l] = random_device(std::size_t(kBatch) * std::max(in[l], out[l]), random);
    }
    const float one = 1.0f, zero = 0.0f;
    auto body = [&] {
        const float* x = input;
        for (int l = 0; l < 3; ++l) {
            cublasSgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, out[l], kBatch, in[l], &one, w[l], in[l], x, in[l], &zero, act[l], out[l]);
            x = act[l];
        }
        for (int l = 2; l >= 0; --l) {
            const float* below = l == 0 ? input : act[l - 1];
            cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_T, in[l], out[l], kBatch, &one, below, in[l], delta[l], out[l], &zero, dw[l], in[l]);
            if (l > 0)
                cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, in[l], kBatch, out[l], &one, w[l], in[l], delta[l], out[l], &zero, delta[l - 1], in[l]);
        }
    };
    body();  // cuBLAS sets itself up outside the capture
    CUDA(cudaStreamSynchronize(stream));
    cudaGraphExec_t graph = capture(stream, body);
    double us = replay_us(graph, stream);
    cudaGraphExecDestroy(graph);
    cublasDestroy(blas);
    return us;
}

double node_floor_us(cudaStream_t stream) {
    int* scratch = nullptr;
    CUDA(cudaMalloc(&scratch, kStepNodes * sizeof(int)));
    cudaGraphExec_t graph = capture(stream, [&] {
        for (int i = 0; i < kStepNodes; ++i) CUDA(cudaMemsetAsync(scratch + i, i, sizeof(int), stream));
    });
    double us = replay_us(graph, stream);
    cudaGraphExecDestroy(graph);
    cudaFree(scratch);
    return us;
}

}  // namespace

int main() {
    auto launcher = launch::discover(launch::process_env());
    comm::MpiRuntime mpi(*launcher);
    Context context = comm::build_context(launcher->info());
    comm::DeviceRequest request;
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
    const DatasetShard shard = random_shard(std::size_t(kSteps) * kBatch);
    const double resident = engine_step_us(*dispatch, shard, true);
    const double streamed = engine_step_us(*dispatch, shard, false);
    auto stream = static_cast<cudaStream_t>(comm::collective_stream(*dispatch));
    const double gemms = gemm_us(stream);
    const double floor = node_floor_us(stream);
    std::printf("{\"bench\":\"gpu_step\",\"mode\":\"resident\",\"batch\":%d,\"step_us\":%.2f}\n", kBatch, resident);
    std::printf("{\"bench\":\"gpu_step\",\"mode\":\"stream\",\"batch\":%d,\"step_us\":%.2f}\n", kBatch, streamed);
    std::printf("{\"bench\":\"gpu_gemm\",\"gemms\":8,\"us_per_step\":%.2f,\"share_of_resident_step\":%.3f}\n", gemms,
                gemms / resident);
    std::printf("{\"bench\":\"gpu_node_floor\",\"nodes\":%d,\"us_per_step\":%.2f,\"share_of_resident_step\":%.3f}\n",
                kStepNodes, floor, floor / resident);
    return 0;
}
