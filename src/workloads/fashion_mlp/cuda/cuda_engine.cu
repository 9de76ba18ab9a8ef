// fashion_mlp on a GPU: the same recipe as mlp.cpp (addmm order, ReLU after every layer,
// softmax cross-entropy mean over the batch, plain SGD), with cuBLAS GEMMs and the kernels of
// kernels.cu, all on the NCCL communicator's stream, so each layer's gradient allreduce is
// ordered after the kernels that produce it and before the SGD update that consumes it.
//
// A training step (forward, loss, backward with the allreduces, SGD) is captured once per step
// shape (sample count, mean_over, learning rate) as a CUDA graph and replayed: one launch per step instead of ~20. Only the batch's staging
// (a kernel over the resident shard, or a copy from pinned host memory) is launched separately.
// The host runs ahead of the GPU by at most kInFlight steps; every wait polls NCCL's async error
// (comm::cuda::wait_collective_event), so a dead peer still ends in a CommError, never a hang.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <array>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "comm/cuda/cuda_check.hpp"
#include "comm/cuda/cuda_owners.hpp"
#include "comm/cuda/gpu_impl.hpp"
#include "comm/gpu_component.hpp"
#include "trainrt/error.hpp"
#include "workloads/fashion_mlp/cuda/kernels.cuh"
#include "workloads/fashion_mlp/engine.hpp"

namespace trainrt::workloads::fashion_mlp {
namespace {

constexpr std::size_t kInFlight = 4;               // steps the host may enqueue ahead of the GPU
constexpr int kFirstCapacity = 1000;               // fashion_mlp's evaluation batch
constexpr std::size_t kBlasWorkspace = 32u << 20;  // cuBLAS's advice for Hopper

// A failed GEMM is the workload's failure (exit 7); CUDA memory and stream calls are comm's.
void cublas_check(cublasStatus_t code, const char* call) {
    if (code != CUBLAS_STATUS_SUCCESS)
        throw WorkloadError(std::string("cublas: ") + call + " failed: " + cublasGetStatusString(code));
}
#define CUBLAS_DO(call) cublas_check((call), #call)

std::uint32_t bits_of(float value) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}
float float_of(std::uint32_t bits) {
    float value = 0.0f;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}

// What a captured step bakes in: its sample count and the floats its kernels take (as bits, so
// equal keys mean bitwise-equal arguments).
struct StepShape {
    int count = 0;
    std::uint32_t mean_over_bits = 0;
    std::uint32_t lr_bits = 0;
    bool operator<(const StepShape& other) const {
        return std::tie(count, mean_over_bits, lr_bits) < std::tie(other.count, other.mean_over_bits, other.lr_bits);
    }
};

// Typed views over comm's move-only owners (destructors never throw).
template <class T>
class DeviceArray {
public:
    DeviceArray() = default;
    explicit DeviceArray(std::size_t count) : memory_(comm::device_alloc(count * sizeof(T))), count_(count) {}
    T* get() const { return static_cast<T*>(memory_.get()); }
    std::size_t size() const { return count_; }

private:
    comm::DeviceMemory memory_;
    std::size_t count_ = 0;
};

template <class T>
class PinnedArray {
public:
    PinnedArray() = default;
    explicit PinnedArray(std::size_t count) : memory_(comm::pinned_alloc(count * sizeof(T))) {}
    T* get() const { return static_cast<T*>(memory_.get()); }

private:
    comm::PinnedMemory memory_;
};

class CublasHandle {
public:
    explicit CublasHandle(cudaStream_t stream) : workspace_(kBlasWorkspace) {
        CUBLAS_DO(cublasCreate(&handle_));
        CUBLAS_DO(cublasSetStream(handle_, stream));
        // Its own workspace: cuBLAS allocates nothing while a graph is being captured.
        CUBLAS_DO(cublasSetWorkspace(handle_, workspace_.get(), workspace_.size()));
    }
    ~CublasHandle() { cublasDestroy(handle_); }
    CublasHandle(const CublasHandle&) = delete;
    CublasHandle& operator=(const CublasHandle&) = delete;
    cublasHandle_t get() const { return handle_; }

private:
    DeviceArray<unsigned char> workspace_;
    cublasHandle_t handle_ = nullptr;
};

// A split's samples: the host shard, and its copy on the device when data are resident.
struct DeviceSplit {
    const DatasetShard* host = nullptr;
    DeviceArray<std::uint8_t> pixels, labels;
};

// Batch-sized buffers; graphs hold their addresses, so they are replaced only with the graphs.
struct BatchBuffers {
    int capacity = 0;
    DeviceArray<float> input;
    DeviceArray<std::uint8_t> labels;
    std::array<DeviceArray<float>, kLayers> activations;
    DeviceArray<float> delta, delta_next;
    std::array<PinnedArray<float>, kInFlight> staged_pixels;  // streamed data only
    std::array<PinnedArray<std::uint8_t>, kInFlight> staged_labels;

    BatchBuffers() = default;
    BatchBuffers(int batch, const std::array<int, kLayers>& widths, bool pinned)
        : capacity(batch), input(std::size_t(batch) * kInputs), labels(batch),
          delta(std::size_t(batch) * kHidden), delta_next(std::size_t(batch) * kInputs) {
        for (int l = 0; l < kLayers; ++l) activations[l] = DeviceArray<float>(std::size_t(batch) * widths[l]);
        for (std::size_t s = 0; pinned && s < kInFlight; ++s) {
            staged_pixels[s] = PinnedArray<float>(std::size_t(batch) * kInputs);
            staged_labels[s] = PinnedArray<std::uint8_t>(batch);
        }
    }
};

class CudaEngine final : public Engine {
public:
    CudaEngine(Mlp& model, Communicator& comm, const CudaOptions& options)
        : model_(model), comm_(comm), options_(options),
          stream_(static_cast<cudaStream_t>(comm::cuda::collective_stream(comm))), blas_(stream_) {
        std::size_t total = 0;
        for (int l = 0; l < kLayers; ++l) {
            const Layer& layer = model.layers()[l];
            offset_[l] = total;
            total += layer.weight.size() + layer.bias.size();
            widths_[l] = layer.outputs;
        }
        params_ = DeviceArray<float>(total);
        grads_ = DeviceArray<float>(total);
        loss_sum_ = DeviceArray<double>(1);
        eval_loss_ = DeviceArray<double>(1);
        eval_correct_ = DeviceArray<unsigned long long>(1);
        for (auto& event : window_) event = comm::make_event();
        upload_weights();
        reserve(kFirstCapacity);
    }
    ~CudaEngine() override { cudaStreamSynchronize(stream_); }  // nothing of ours may run on after

    bool reads_shards() const override { return true; }

    void set_data(Split split, const DatasetShard& shard) override {
        DeviceSplit& target = split == Split::train ? train_ : test_;
        target.host = &shard;
        if (!options_.resident_data) return;
        drain();  // steps in flight may still read the previous shard
        if (target.pixels.size() != shard.features.size()) target.pixels = DeviceArray<std::uint8_t>(shard.features.size());
        if (target.labels.size() != shard.labels.size()) target.labels = DeviceArray<std::uint8_t>(shard.labels.size());
        copy_to_device(target.pixels.get(), shard.features.data(), shard.features.size());
        copy_to_device(target.labels.get(), shard.labels.data(), shard.labels.size());
    }

    // Any part of a global batch, an empty one too (its step still joins every allreduce).
    void train_step(const StepBatch& batch, float lr) override {
        reserve(batch.count);
        const std::size_t slot = claim_slot();
        stage(train_, batch.first, batch.count, slot);
        run_step(StepShape{batch.count, bits_of(batch.mean_over), bits_of(lr)});
        release_slot(slot);
    }

    void set_loss_sum(double sum) override { copy_to_device(loss_sum_.get(), &sum, sizeof sum); }

    double loss_sum() override {
        double sum = 0.0;
        copy_to_host(&sum, loss_sum_.get(), sizeof sum);
        return sum;
    }

    // One evaluation batch: rank positions [first, first + count) of the test shard.
    void evaluate(const StepBatch& batch, double& loss_sum, std::int64_t& correct) override {
        if (batch.count == 0) return;
        reserve(batch.count);
        TRAINRT_CUDA_CHECK(cudaMemsetAsync(eval_loss_.get(), 0, sizeof(double), stream_));
        TRAINRT_CUDA_CHECK(cudaMemsetAsync(eval_correct_.get(), 0, sizeof(unsigned long long), stream_));
        const std::size_t slot = claim_slot();
        stage(test_, batch.first, batch.count, slot);
        forward(batch.count);
        kernels::softmax_cross_entropy(buffers_.activations[kLayers - 1].get(), buffers_.labels.get(), batch.count,
                                       1.0f, nullptr, eval_loss_.get(), eval_correct_.get(), stream_);
        release_slot(slot);
        double eval_loss = 0.0;
        unsigned long long hits = 0;
        copy_to_host(&eval_loss, eval_loss_.get(), sizeof eval_loss);
        copy_to_host(&hits, eval_correct_.get(), sizeof hits);
        loss_sum += eval_loss;
        correct += static_cast<std::int64_t>(hits);
    }

    void sync_to_host() override {
        for (int l = 0; l < kLayers; ++l) {
            Layer& host = model_.layers()[l];
            copy_to_host(host.weight.data(), weight(l), host.weight.size() * sizeof(float));
            copy_to_host(host.bias.data(), bias(l), host.bias.size() * sizeof(float));
        }
    }

private:
    float* weight(int l) const { return params_.get() + offset_[l]; }
    float* bias(int l) const { return weight(l) + std::size_t(widths_[l]) * model_.layers()[l].inputs; }
    float* grad_weight(int l) const { return grads_.get() + offset_[l]; }
    float* grad_bias(int l) const { return grad_weight(l) + std::size_t(widths_[l]) * model_.layers()[l].inputs; }
    std::size_t layer_params(int l) const { return (l + 1 < kLayers ? offset_[l + 1] : params_.size()) - offset_[l]; }

    void upload_weights() {
        for (int l = 0; l < kLayers; ++l) {
            const Layer& host = model_.layers()[l];
            copy_to_device(weight(l), host.weight.data(), host.weight.size() * sizeof(float));
            copy_to_device(bias(l), host.bias.data(), host.bias.size() * sizeof(float));
        }
        drain();
    }

    // Ordered on the engine's stream (non-blocking: it would not wait for the default stream).
    void copy_to_device(void* device, const void* host, std::size_t bytes) {
        TRAINRT_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream_));
    }
    void copy_to_host(void* host, const void* device, std::size_t bytes) {
        TRAINRT_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream_));
        drain();
    }

    // Waits for everything enqueued on the stream so far.
    void drain() {
        TRAINRT_CUDA_CHECK(cudaEventRecord(done_.get(), stream_));
        comm::cuda::wait_collective_event(comm_, done_.get(), "fashion_mlp on the GPU");
        in_flight_.fill(false);
    }

    // A window slot for the next step: waits for the step that used it kInFlight steps ago (its
    // staging buffers are then free again).
    std::size_t claim_slot() {
        const std::size_t slot = next_slot_++ % kInFlight;
        if (in_flight_[slot]) comm::cuda::wait_collective_event(comm_, window_[slot].get(), "fashion_mlp step on the GPU");
        in_flight_[slot] = false;
        return slot;
    }
    void release_slot(std::size_t slot) {
        TRAINRT_CUDA_CHECK(cudaEventRecord(window_[slot].get(), stream_));
        in_flight_[slot] = true;
    }

    void reserve(int batch) {
        if (batch <= buffers_.capacity) return;
        drain();
        graphs_.clear();  // they name the old buffers
        buffers_ = BatchBuffers();
        buffers_ = BatchBuffers(batch, widths_, !options_.resident_data);
    }

    // The batch's input and labels into the batch buffers.
    void stage(const DeviceSplit& split, std::size_t first, int count, std::size_t slot) {
        if (split.host == nullptr) throw WorkloadError("fashion_mlp: the GPU engine has no data for this split");
        if (options_.resident_data) {
            kernels::scale_batch(split.pixels.get(), split.labels.get(), first, count, kInputs,
                                 buffers_.input.get(), buffers_.labels.get(), stream_);
            return;
        }
        float* pixels = buffers_.staged_pixels[slot].get();
        std::uint8_t* labels = buffers_.staged_labels[slot].get();
        scale_pixels(*split.host, first, count, pixels);
        std::memcpy(labels, split.host->labels.data() + first, std::size_t(count));
        copy_to_device(buffers_.input.get(), pixels, std::size_t(count) * kInputs * sizeof(float));
        copy_to_device(buffers_.labels.get(), labels, std::size_t(count));
    }

    // The first step of a shape runs as plain launches (NCCL and cuBLAS set themselves up
    // lazily, which a capture must not see); the second is captured; all later ones replay it.
    // An uneven split has a few shapes per epoch (two part sizes, the last block's).
    void run_step(const StepShape& shape) {
        auto found = graphs_.find(shape);
        if (found == graphs_.end()) {
            if (warmed_.insert(shape).second) return enqueue_step(shape);
            found = graphs_.emplace(shape, capture_step(shape)).first;
        }
        TRAINRT_CUDA_CHECK(cudaGraphLaunch(found->second.get(), stream_));
    }

    comm::GraphExec capture_step(const StepShape& shape) {
        cudaGraph_t graph = nullptr;
        TRAINRT_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
        try {
            enqueue_step(shape);
        } catch (...) {
            cudaStreamEndCapture(stream_, &graph);  // leaves the stream usable
            if (graph != nullptr) cudaGraphDestroy(graph);
            throw;
        }
        TRAINRT_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
        cudaGraphExec_t exec = nullptr;
        cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
        cudaGraphDestroy(graph);
        TRAINRT_CUDA_CHECK(instantiated);
        return comm::GraphExec(exec);
    }

    void enqueue_step(const StepShape& shape) {
        const float mean_over = float_of(shape.mean_over_bits), lr = float_of(shape.lr_bits);
        forward(shape.count);
        kernels::softmax_cross_entropy(buffers_.activations[kLayers - 1].get(), buffers_.labels.get(), shape.count,
                                       mean_over, buffers_.delta.get(), loss_sum_.get(), nullptr, stream_);
        if (shape.count == 0)
            empty_backward();
        else
            backward(shape.count);
        kernels::sgd(params_.get(), grads_.get(), lr, params_.size(), stream_);
    }

    // A rank with no samples in this global batch contributes zero gradients to each layer's
    // allreduce, in the same order as backward().
    void empty_backward() {
        for (int l = kLayers - 1; l >= 0; --l) {
            TRAINRT_CUDA_CHECK(cudaMemsetAsync(grad_weight(l), 0, layer_params(l) * sizeof(float), stream_));
            comm::cuda::enqueue_device_allreduce(comm_, grad_weight(l), layer_params(l), DType::f32, ReduceOp::mean);
        }
    }

    // Row-major out[batch, outputs] = relu(in * W^T + bias): in cuBLAS's column-major terms
    // out^T = W * in^T with W stored as its transpose.
    void forward(int batch) {
        const float one = 1.0f, zero = 0.0f;
        const float* in = buffers_.input.get();
        for (int l = 0; l < kLayers; ++l) {
            const int inputs = model_.layers()[l].inputs, outputs = widths_[l];
            float* out = buffers_.activations[l].get();
            CUBLAS_DO(cublasSgemm(blas_.get(), CUBLAS_OP_T, CUBLAS_OP_N, outputs, batch, inputs, &one, weight(l),
                                  inputs, in, inputs, &zero, out, outputs));
            kernels::bias_relu(out, bias(l), batch, outputs, stream_);
            in = out;
        }
    }

    // Gradients layer by layer (fc3 first); each layer's allreduce is enqueued as soon as its
    // gradients are.
    void backward(int batch) {
        const float one = 1.0f, zero = 0.0f;
        float* delta = buffers_.delta.get();
        float* next = buffers_.delta_next.get();
        for (int l = kLayers - 1; l >= 0; --l) {
            const int inputs = model_.layers()[l].inputs, outputs = widths_[l];
            const float* in = l == 0 ? buffers_.input.get() : buffers_.activations[l - 1].get();
            CUBLAS_DO(cublasSgemm(blas_.get(), CUBLAS_OP_N, CUBLAS_OP_T, inputs, outputs, batch, &one, in, inputs,
                                  delta, outputs, &zero, grad_weight(l), inputs));
            kernels::column_sum(delta, batch, outputs, grad_bias(l), stream_);
            comm::cuda::enqueue_device_allreduce(comm_, grad_weight(l), layer_params(l), DType::f32, ReduceOp::mean);
            if (l == 0) break;
            CUBLAS_DO(cublasSgemm(blas_.get(), CUBLAS_OP_N, CUBLAS_OP_N, inputs, batch, outputs, &one, weight(l),
                                  inputs, delta, outputs, &zero, next, inputs));
            kernels::relu_mask(next, buffers_.activations[l - 1].get(), std::size_t(batch) * inputs, stream_);
            std::swap(delta, next);
        }
    }

    Mlp& model_;
    Communicator& comm_;
    CudaOptions options_;
    cudaStream_t stream_;
    CublasHandle blas_;
    std::array<std::size_t, kLayers> offset_{};
    std::array<int, kLayers> widths_{};
    DeviceArray<float> params_, grads_;  // layer by layer: weight [out, in], then bias
    DeviceArray<double> loss_sum_, eval_loss_;
    DeviceArray<unsigned long long> eval_correct_;
    DeviceSplit train_, test_;
    BatchBuffers buffers_;
    std::map<StepShape, comm::GraphExec> graphs_;
    std::set<StepShape> warmed_;  // ran once without a graph
    std::array<comm::CudaEvent, kInFlight> window_;
    std::array<bool, kInFlight> in_flight_{};
    std::size_t next_slot_ = 0;
    comm::CudaEvent done_ = comm::make_event();
};

std::unique_ptr<Engine> make_engine(Mlp& model, Communicator& comm, const CudaOptions& options) {
    return std::make_unique<CudaEngine>(model, comm, options);
}

}  // namespace
}  // namespace trainrt::workloads::fashion_mlp

extern "C" {
extern const trainrt::workloads::fashion_mlp::CudaEngineApi trainrt_cuda_fashion_engine;
const trainrt::workloads::fashion_mlp::CudaEngineApi trainrt_cuda_fashion_engine = {
    trainrt::comm::kGpuComponentAbi, &trainrt::workloads::fashion_mlp::make_engine};
}
