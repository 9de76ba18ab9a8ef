#pragma once
// The model: Flatten -> Linear(784,512) -> ReLU -> Linear(512,512) -> ReLU -> Linear(512,10)
// -> ReLU, cross-entropy loss, plain SGD. Weights in PyTorch's [out, in] row-major layout.
// Math through OpenBLAS (cblas_sgemm), single precision like PyTorch's float32.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "trainrt/comm.hpp"
#include "trainrt/data.hpp"

namespace trainrt::workloads::fashion_mlp {

inline constexpr int kInputs = 784;
inline constexpr int kHidden = 512;
inline constexpr int kClasses = 10;
inline constexpr int kLayers = 3;

struct Layer {
    int inputs;
    int outputs;
    std::vector<float> weight;  // [outputs, inputs]
    std::vector<float> bias;    // [outputs]
};

// Parameter tensors in the order backward finishes their gradients (fc3 first).
struct ParamRef {
    std::string name;  // "fc3.weight", ...
    std::span<float> values;
};

class Mlp {
public:
    Mlp();
    // PyTorch's default Linear init: weight and bias uniform in +-1/sqrt(fan_in).
    void init_uniform(std::uint64_t seed);
    std::vector<ParamRef> params_in_ready_order();
    std::vector<std::size_t> param_sizes_in_ready_order();

    // One training step on a batch (pixels already scaled, labels 0..9). Gradients of the loss
    // summed over the batch, divided by `mean_over` (trainrt::BatchPart: the batch size when the
    // ranks' batches are equal), are written into the reducer's buckets, averaged across ranks,
    // then SGD updates the weights. An empty batch contributes zero gradients. Returns this rank's
    // summed loss divided by `mean_over`.
    float train_step(const float* images, const std::uint8_t* labels, int batch, float mean_over,
                     GradientReducer& reducer, float lr);

    // Forward only: adds this batch's summed loss and correct predictions to the totals.
    void evaluate(const float* images, const std::uint8_t* labels, int batch, double& loss_sum,
                  std::int64_t& correct);

    std::array<Layer, kLayers>& layers() { return layers_; }
    const std::array<Layer, kLayers>& layers() const { return layers_; }

private:
    void forward(const float* images, int batch);
    float empty_step(GradientReducer& reducer, float lr);     // zero gradients, still reduced
    void finish_step(GradientReducer& reducer, float lr);     // wait for the averages, SGD update
    std::array<Layer, kLayers> layers_;
    std::array<std::vector<float>, kLayers> activations_;  // post-ReLU outputs per layer
    std::vector<float> delta_, delta_next_;                 // scratch for backward
};

// Samples [first, first + count) of `shard` as float32 pixels/255 (torchvision's ToTensor) into
// `out` (resized to count * sample size).
void scale_pixels(const std::uint8_t* pixels, std::size_t values, float* out);  // / 255, as ToTensor
void scale_pixels(const DatasetShard& shard, std::size_t first, int count, std::vector<float>& out);
void scale_pixels(const DatasetShard& shard, std::size_t first, int count, float* out);  // count * sample size

// xxHash3-64 of `values`, as 16 hex digits (weights_digest's hash of the weights in a row).
std::string floats_digest(std::span<const float> values);

// xxHash3-64 of all weights in the fixed order fc1.weight, fc1.bias, ..., fc3.bias.
std::string weights_digest(const Mlp& model);

}  // namespace trainrt::workloads::fashion_mlp
