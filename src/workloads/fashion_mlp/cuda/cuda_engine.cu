// fashion_mlp on a GPU: the same recipe as mlp.cpp (addmm order, ReLU after every layer,
// softmax cross-entropy mean over the batch, plain SGD), with cuBLAS GEMMs and small kernels, all
// on the NCCL communicator's stream so each layer's gradient allreduce is ordered after the
// kernels that produce it and before the SGD update that consumes it.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "comm/gpu.hpp"
#include "trainrt/error.hpp"
#include "workloads/fashion_mlp/engine.hpp"

namespace trainrt::workloads::fashion_mlp {
namespace {

void cuda_check(cudaError_t code, const char* call) {
    if (code != cudaSuccess)
        throw CommError(std::string("cuda: ") + call + " failed: " + cudaGetErrorString(code));
}
void cublas_check(cublasStatus_t code, const char* call) {
    if (code != CUBLAS_STATUS_SUCCESS)
        throw CommError(std::string("cublas: ") + call + " failed: " + cublasGetStatusString(code));
}
#define CUDA_DO(call) cuda_check((call), #call)
// Kernel launches report bad configurations or a missing kernel image (a GPU older than the
// built architectures) only through cudaGetLastError.
#define LAUNCHED(kernel) cuda_check(cudaGetLastError(), "launching " #kernel)
#define CUBLAS_DO(call) cublas_check((call), #call)

constexpr int kThreads = 256;
unsigned blocks(std::size_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

__global__ void fill_bias(float* out, const float* bias, int batch, int outputs) {
    std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (k < std::size_t(batch) * outputs) out[k] = bias[k % outputs];
}

__global__ void relu(float* values, std::size_t n) {
    std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (k < n) values[k] = fmaxf(values[k], 0.0f);
}

__global__ void relu_mask(float* delta, const float* below, std::size_t n) {
    std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (k < n) delta[k] = below[k] > 0.0f ? delta[k] : 0.0f;
}

// One thread per row: loss, and d(mean loss)/d(logits) masked by the final ReLU (as mlp.cpp).
__global__ void cross_entropy(const float* logits, const unsigned char* labels, int batch,
                              float* grad, float* row_loss) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= batch) return;
    const float* row = logits + std::size_t(i) * kClasses;
    float top = row[0];
    for (int j = 1; j < kClasses; ++j) top = fmaxf(top, row[j]);
    float sum = 0.0f;
    for (int j = 0; j < kClasses; ++j) sum += expf(row[j] - top);
    row_loss[i] = top + logf(sum) - row[labels[i]];
    if (grad == nullptr) return;
    for (int j = 0; j < kClasses; ++j) {
        float g = expf(row[j] - top) / sum - (j == labels[i] ? 1.0f : 0.0f);
        grad[std::size_t(i) * kClasses + j] = row[j] > 0.0f ? g / static_cast<float>(batch) : 0.0f;
    }
}

// 1 when the row's first maximum is the label (torch.argmax's tie rule).
__global__ void correct_rows(const float* logits, const unsigned char* labels, int batch, int* correct) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= batch) return;
    const float* row = logits + std::size_t(i) * kClasses;
    int best = 0;
    for (int j = 1; j < kClasses; ++j) best = row[j] > row[best] ? j : best;
    correct[i] = best == labels[i] ? 1 : 0;
}

__global__ void column_sum(const float* delta, int batch, int outputs, float* sums) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= outputs) return;
    float sum = 0.0f;
    for (int i = 0; i < batch; ++i) sum += delta[std::size_t(i) * outputs + j];
    sums[j] = sum;
}

__global__ void sgd(float* weights, const float* grads, float lr, std::size_t n) {
    std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (k < n) weights[k] -= lr * grads[k];
}

// A device array; freed on destruction (never throws).
template <class T>
class DeviceArray {
public:
    DeviceArray() = default;
    explicit DeviceArray(std::size_t count) : count_(count) {
        CUDA_DO(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T)));
    }
    ~DeviceArray() { if (data_ != nullptr) cudaFree(data_); }
    DeviceArray(DeviceArray&& other) noexcept
        : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
    DeviceArray& operator=(DeviceArray&& other) noexcept {
        std::swap(data_, other.data_);
        std::swap(count_, other.count_);
        return *this;
    }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;
    T* get() const { return data_; }
    std::size_t size() const { return count_; }

private:
    T* data_ = nullptr;
    std::size_t count_ = 0;
};

class CublasHandle {
public:
    explicit CublasHandle(cudaStream_t stream) {
        CUBLAS_DO(cublasCreate(&handle_));
        CUBLAS_DO(cublasSetStream(handle_, stream));
    }
    ~CublasHandle() { cublasDestroy(handle_); }
    CublasHandle(const CublasHandle&) = delete;
    CublasHandle& operator=(const CublasHandle&) = delete;
    cublasHandle_t get() const { return handle_; }

private:
    cublasHandle_t handle_ = nullptr;
};

// Per layer: weight then bias in one device buffer, and their gradients likewise, so one NCCL
// allreduce averages a layer's gradients.
struct DeviceLayer {
    int inputs = 0, outputs = 0;
    DeviceArray<float> params, grads;
    float* weight() const { return params.get(); }
    float* bias() const { return params.get() + std::size_t(inputs) * outputs; }
    float* grad_weight() const { return grads.get(); }
    float* grad_bias() const { return grads.get() + std::size_t(inputs) * outputs; }
};

class CudaEngine final : public Engine {
public:
    CudaEngine(Mlp& model, Communicator& comm)
        : model_(model), comm_(comm), stream_(static_cast<cudaStream_t>(comm::collective_stream(comm))),
          blas_(stream_) {
        for (int l = 0; l < kLayers; ++l) {
            const Layer& host = model.layers()[l];
            DeviceLayer& layer = layers_[l];
            layer.inputs = host.inputs;
            layer.outputs = host.outputs;
            const std::size_t count = host.weight.size() + host.bias.size();
            layer.params = DeviceArray<float>(count);
            layer.grads = DeviceArray<float>(count);
            // On the engine's stream (non-blocking: it would not wait for the default stream).
            CUDA_DO(cudaMemcpyAsync(layer.weight(), host.weight.data(), host.weight.size() * sizeof(float),
                                    cudaMemcpyHostToDevice, stream_));
            CUDA_DO(cudaMemcpyAsync(layer.bias(), host.bias.data(), host.bias.size() * sizeof(float),
                                    cudaMemcpyHostToDevice, stream_));
        }
        CUDA_DO(cudaStreamSynchronize(stream_));
    }

    float train_step(const float* images, const std::uint8_t* labels, int batch, float lr) override {
        upload(images, labels, batch);
        forward(batch);
        cross_entropy<<<blocks(batch), kThreads, 0, stream_>>>(activations_[kLayers - 1].get(), labels_.get(),
                                                              batch, delta_.get(), row_loss_.get());
        LAUNCHED(cross_entropy);
        std::vector<std::unique_ptr<Work>> pending = backward(batch);
        for (auto& work : pending) work->wait();
        for (DeviceLayer& layer : layers_)
            sgd<<<blocks(layer.params.size()), kThreads, 0, stream_>>>(layer.params.get(), layer.grads.get(), lr,
                                                                       layer.params.size());
            LAUNCHED(sgd);
        std::vector<float> losses = download(row_loss_, batch);
        double sum = 0.0;
        for (float loss : losses) sum += loss;
        return static_cast<float>(sum / batch);
    }

    void evaluate(const float* images, const std::uint8_t* labels, int batch, double& loss_sum,
                  std::int64_t& correct) override {
        upload(images, labels, batch);
        forward(batch);
        const float* logits = activations_[kLayers - 1].get();
        cross_entropy<<<blocks(batch), kThreads, 0, stream_>>>(logits, labels_.get(), batch, nullptr, row_loss_.get());
        LAUNCHED(cross_entropy);
        correct_rows<<<blocks(batch), kThreads, 0, stream_>>>(logits, labels_.get(), batch, correct_.get());
        LAUNCHED(correct_rows);
        for (float loss : download(row_loss_, batch)) loss_sum += loss;
        for (int hit : download(correct_, batch)) correct += hit;
    }

    void sync_to_host() override {
        CUDA_DO(cudaStreamSynchronize(stream_));
        for (int l = 0; l < kLayers; ++l) {
            Layer& host = model_.layers()[l];
            CUDA_DO(cudaMemcpy(host.weight.data(), layers_[l].weight(), host.weight.size() * sizeof(float), cudaMemcpyDeviceToHost));
            CUDA_DO(cudaMemcpy(host.bias.data(), layers_[l].bias(), host.bias.size() * sizeof(float), cudaMemcpyDeviceToHost));
        }
    }

private:
    void reserve(int batch) {
        if (batch <= capacity_) return;
        capacity_ = batch;
        input_ = DeviceArray<float>(std::size_t(batch) * kInputs);
        labels_ = DeviceArray<std::uint8_t>(batch);
        for (int l = 0; l < kLayers; ++l) activations_[l] = DeviceArray<float>(std::size_t(batch) * layers_[l].outputs);
        delta_ = DeviceArray<float>(std::size_t(batch) * kHidden);
        delta_next_ = DeviceArray<float>(std::size_t(batch) * kInputs);
        row_loss_ = DeviceArray<float>(batch);
        correct_ = DeviceArray<int>(batch);
    }

    void upload(const float* images, const std::uint8_t* labels, int batch) {
        reserve(batch);
        CUDA_DO(cudaMemcpyAsync(input_.get(), images, std::size_t(batch) * kInputs * sizeof(float), cudaMemcpyHostToDevice, stream_));
        CUDA_DO(cudaMemcpyAsync(labels_.get(), labels, batch, cudaMemcpyHostToDevice, stream_));
    }

    template <class T>
    std::vector<T> download(const DeviceArray<T>& values, int count) {
        std::vector<T> host(count);
        CUDA_DO(cudaMemcpyAsync(host.data(), values.get(), count * sizeof(T), cudaMemcpyDeviceToHost, stream_));
        CUDA_DO(cudaStreamSynchronize(stream_));
        return host;
    }

    // Row-major out[batch, outputs] = relu(bias + in * W^T): in cuBLAS's column-major terms
    // out^T = W * in^T with W stored as its transpose.
    void forward(int batch) {
        const float one = 1.0f;
        const float* in = input_.get();
        for (int l = 0; l < kLayers; ++l) {
            const DeviceLayer& layer = layers_[l];
            float* out = activations_[l].get();
            const std::size_t n = std::size_t(batch) * layer.outputs;
            fill_bias<<<blocks(n), kThreads, 0, stream_>>>(out, layer.bias(), batch, layer.outputs);
            LAUNCHED(fill_bias);
            CUBLAS_DO(cublasSgemm(blas_.get(), CUBLAS_OP_T, CUBLAS_OP_N, layer.outputs, batch, layer.inputs, &one,
                                  layer.weight(), layer.inputs, in, layer.inputs, &one, out, layer.outputs));
            relu<<<blocks(n), kThreads, 0, stream_>>>(out, n);
            LAUNCHED(relu);
            in = out;
        }
    }

    // Gradients layer by layer (fc3 first); each layer's allreduce is enqueued as soon as its
    // gradients are, and overlaps the next layer's backward on the GPU.
    std::vector<std::unique_ptr<Work>> backward(int batch) {
        const float one = 1.0f, zero = 0.0f;
        std::vector<std::unique_ptr<Work>> pending;
        float* delta = delta_.get();
        float* next = delta_next_.get();
        for (int l = kLayers - 1; l >= 0; --l) {
            const DeviceLayer& layer = layers_[l];
            const float* in = l == 0 ? input_.get() : activations_[l - 1].get();
            CUBLAS_DO(cublasSgemm(blas_.get(), CUBLAS_OP_N, CUBLAS_OP_T, layer.inputs, layer.outputs, batch, &one,
                                  in, layer.inputs, delta, layer.outputs, &zero, layer.grad_weight(), layer.inputs));
            column_sum<<<blocks(layer.outputs), kThreads, 0, stream_>>>(delta, batch, layer.outputs, layer.grad_bias());
            LAUNCHED(column_sum);
            pending.push_back(comm_.allreduce_async(layer.grads.get(), layer.grads.size(), DType::f32, ReduceOp::mean));
            if (l == 0) break;
            CUBLAS_DO(cublasSgemm(blas_.get(), CUBLAS_OP_N, CUBLAS_OP_N, layer.inputs, batch, layer.outputs, &one,
                                  layer.weight(), layer.inputs, delta, layer.outputs, &zero, next, layer.inputs));
            const std::size_t n = std::size_t(batch) * layer.inputs;
            relu_mask<<<blocks(n), kThreads, 0, stream_>>>(next, activations_[l - 1].get(), n);
            LAUNCHED(relu_mask);
            std::swap(delta, next);
        }
        return pending;
    }

    Mlp& model_;
    Communicator& comm_;
    cudaStream_t stream_;
    CublasHandle blas_;
    std::array<DeviceLayer, kLayers> layers_;
    int capacity_ = 0;
    DeviceArray<float> input_;
    DeviceArray<std::uint8_t> labels_;
    std::array<DeviceArray<float>, kLayers> activations_;
    DeviceArray<float> delta_, delta_next_, row_loss_;
    DeviceArray<int> correct_;
};

}  // namespace

std::unique_ptr<Engine> make_cuda_engine(Mlp& model, Communicator& comm) {
    return std::make_unique<CudaEngine>(model, comm);
}

}  // namespace trainrt::workloads::fashion_mlp
