#pragma once
// fashion_mlp's own CUDA kernels (everything but the GEMMs, which are cuBLAS's). Each launcher
// enqueues on `stream` and checks the launch (bad configuration, no kernel image for this GPU);
// all are legal while the stream is captured into a graph. Row-major activations [batch, width].
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace trainrt::workloads::fashion_mlp::kernels {

// input[i, :] = pixels[first + i, :] / 255 (float32, as the host's scale_pixels) and
// labels_out[i] = labels[first + i], for i < count.
void scale_batch(const std::uint8_t* pixels, const std::uint8_t* labels, std::size_t first, int count,
                 int sample_size, float* input, std::uint8_t* labels_out, cudaStream_t stream);

// out[i, j] = max(out[i, j] + bias[j], 0).
void bias_relu(float* out, const float* bias, int batch, int outputs, cudaStream_t stream);

// Softmax cross-entropy of logits [batch, 10] in one block, rows summed in a fixed order (the same
// bits every run). Training (grad != nullptr): grad = d(loss sum / mean_over)/d(logits), masked by
// the final ReLU, and *loss_sum += float(loss sum / mean_over) (trainrt::BatchPart's mean_over:
// the batch when the ranks' parts are equal). Evaluation (grad == nullptr; mean_over unused):
// *loss_sum += the rows' summed loss and *correct += rows whose first maximum is the label.
// `batch` may be 0.
void softmax_cross_entropy(const float* logits, const std::uint8_t* labels, int batch, float mean_over,
                           float* grad, double* loss_sum, unsigned long long* correct, cudaStream_t stream);

// sums[j] = sum over rows of delta[i, j] (the bias gradient).
void column_sum(const float* delta, int batch, int outputs, float* sums, cudaStream_t stream);

// delta[k] = 0 where below[k] <= 0 (ReLU's derivative).
void relu_mask(float* delta, const float* below, std::size_t n, cudaStream_t stream);

// weights[k] -= lr * grads[k].
void sgd(float* weights, const float* grads, float lr, std::size_t n, cudaStream_t stream);

}  // namespace trainrt::workloads::fashion_mlp::kernels
