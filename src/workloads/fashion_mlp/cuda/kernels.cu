// fashion_mlp's small kernels (kernels.cuh): the same arithmetic as mlp.cpp, in float32.
#include "workloads/fashion_mlp/cuda/kernels.cuh"

#include <algorithm>
#include <string>

#include "trainrt/error.hpp"
#include "workloads/fashion_mlp/mlp.hpp"

namespace trainrt::workloads::fashion_mlp::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kLossThreads = 256;  // softmax_cross_entropy: one block, a power of two

unsigned blocks(std::size_t n) {
    // At least one block: a rank's part of a global batch may be empty (the kernels' loops then
    // do nothing), and a launch of zero blocks is an error.
    const std::size_t wanted = std::max<std::size_t>(1, (n + kThreads - 1) / kThreads);
    return static_cast<unsigned>(wanted < 65535 * 8 ? wanted : 65535 * 8);  // grid-stride beyond
}

// Kernel launches report errors (bad configuration, no image for this GPU) only this way; a
// kernel that cannot run is the workload's failure (exit 7).
void launched(const char* kernel) {
    cudaError_t code = cudaGetLastError();
    if (code != cudaSuccess)
        throw WorkloadError(std::string("cuda: launching fashion_mlp's ") + kernel + " kernel failed: " +
                            cudaGetErrorString(code) + " (" + cudaGetErrorName(code) + ")");
}

__global__ void scale_batch_kernel(const std::uint8_t* pixels, const std::uint8_t* labels, std::size_t first,
                                   int count, int sample_size, float* input, std::uint8_t* labels_out) {
    const std::size_t n = std::size_t(count) * sample_size;
    const std::uint8_t* source = pixels + first * sample_size;
    for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < n; k += std::size_t(gridDim.x) * blockDim.x) {
        input[k] = static_cast<float>(source[k]) / 255.0f;
        if (k < std::size_t(count)) labels_out[k] = labels[first + k];
    }
}

__global__ void bias_relu_kernel(float* out, const float* bias, int batch, int outputs) {
    const std::size_t n = std::size_t(batch) * outputs;
    for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < n; k += std::size_t(gridDim.x) * blockDim.x)
        out[k] = fmaxf(out[k] + bias[k % outputs], 0.0f);
}

// One row: its loss; with `grad`, d(loss sum / mean_over)/d(logits) masked by the final ReLU (as
// mlp.cpp).
__device__ float row_cross_entropy(const float* row, int label, float mean_over, float* grad_row) {
    float top = row[0];
    for (int j = 1; j < kClasses; ++j) top = fmaxf(top, row[j]);
    float sum = 0.0f;
    for (int j = 0; j < kClasses; ++j) sum += expf(row[j] - top);
    if (grad_row != nullptr)
        for (int j = 0; j < kClasses; ++j) {
            float g = expf(row[j] - top) / sum - (j == label ? 1.0f : 0.0f);
            grad_row[j] = row[j] > 0.0f ? g / mean_over : 0.0f;
        }
    return top + logf(sum) - row[label];
}

__device__ int row_argmax(const float* row) {
    int best = 0;
    for (int j = 1; j < kClasses; ++j) best = row[j] > row[best] ? j : best;  // first maximum wins
    return best;
}

__global__ void softmax_cross_entropy_kernel(const float* logits, const std::uint8_t* labels, int batch,
                                             float mean_over, float* grad, double* loss_sum,
                                             unsigned long long* correct) {
    __shared__ double losses[kLossThreads];
    __shared__ unsigned long long hits[kLossThreads];
    double loss = 0.0;
    unsigned long long hit = 0;
    for (int i = threadIdx.x; i < batch; i += kLossThreads) {
        const float* row = logits + std::size_t(i) * kClasses;
        loss += row_cross_entropy(row, labels[i], mean_over, grad != nullptr ? grad + std::size_t(i) * kClasses : nullptr);
        hit += row_argmax(row) == labels[i] ? 1 : 0;
    }
    losses[threadIdx.x] = loss;
    hits[threadIdx.x] = hit;
    __syncthreads();
    for (int stride = kLossThreads / 2; stride > 0; stride /= 2) {  // a fixed tree: same bits every run
        if (threadIdx.x < stride) {
            losses[threadIdx.x] += losses[threadIdx.x + stride];
            hits[threadIdx.x] += hits[threadIdx.x + stride];
        }
        __syncthreads();
    }
    if (threadIdx.x != 0) return;
    if (grad != nullptr) {
        *loss_sum += static_cast<double>(static_cast<float>(losses[0] / mean_over));
    } else {
        *loss_sum += losses[0];
        *correct += hits[0];
    }
}

__global__ void column_sum_kernel(const float* delta, int batch, int outputs, float* sums) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= outputs) return;
    float sum = 0.0f;
    for (int i = 0; i < batch; ++i) sum += delta[std::size_t(i) * outputs + j];
    sums[j] = sum;
}

__global__ void relu_mask_kernel(float* delta, const float* below, std::size_t n) {
    for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < n; k += std::size_t(gridDim.x) * blockDim.x)
        delta[k] = below[k] > 0.0f ? delta[k] : 0.0f;
}

__global__ void sgd_kernel(float* weights, const float* grads, float lr, std::size_t n) {
    for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < n; k += std::size_t(gridDim.x) * blockDim.x)
        weights[k] -= lr * grads[k];
}

}  // namespace

void scale_batch(const std::uint8_t* pixels, const std::uint8_t* labels, std::size_t first, int count,
                 int sample_size, float* input, std::uint8_t* labels_out, cudaStream_t stream) {
    scale_batch_kernel<<<blocks(std::size_t(count) * sample_size), kThreads, 0, stream>>>(
        pixels, labels, first, count, sample_size, input, labels_out);
    launched("scale_batch");
}

void bias_relu(float* out, const float* bias, int batch, int outputs, cudaStream_t stream) {
    bias_relu_kernel<<<blocks(std::size_t(batch) * outputs), kThreads, 0, stream>>>(out, bias, batch, outputs);
    launched("bias_relu");
}

void softmax_cross_entropy(const float* logits, const std::uint8_t* labels, int batch, float mean_over,
                           float* grad, double* loss_sum, unsigned long long* correct, cudaStream_t stream) {
    softmax_cross_entropy_kernel<<<1, kLossThreads, 0, stream>>>(logits, labels, batch, mean_over, grad, loss_sum,
                                                                 correct);
    launched("softmax_cross_entropy");
}

void column_sum(const float* delta, int batch, int outputs, float* sums, cudaStream_t stream) {
    column_sum_kernel<<<blocks(outputs), kThreads, 0, stream>>>(delta, batch, outputs, sums);
    launched("column_sum");
}

void relu_mask(float* delta, const float* below, std::size_t n, cudaStream_t stream) {
    relu_mask_kernel<<<blocks(n), kThreads, 0, stream>>>(delta, below, n);
    launched("relu_mask");
}

void sgd(float* weights, const float* grads, float lr, std::size_t n, cudaStream_t stream) {
    sgd_kernel<<<blocks(n), kThreads, 0, stream>>>(weights, grads, lr, n);
    launched("sgd");
}

}  // namespace trainrt::workloads::fashion_mlp::kernels
