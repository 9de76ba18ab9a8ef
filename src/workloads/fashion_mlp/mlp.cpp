#include "workloads/fashion_mlp/mlp.hpp"

#include <cblas.h>
#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

namespace trainrt::workloads::fashion_mlp {
namespace {

std::size_t weight_index(int layer) { return static_cast<std::size_t>(2 * (kLayers - 1 - layer)); }
std::size_t bias_index(int layer) { return weight_index(layer) + 1; }

// out[batch, outputs] = relu(bias + in * weight^T), bias broadcast first as addmm does.
void linear_relu(const Layer& layer, const float* in, int batch, float* out) {
    for (int i = 0; i < batch; ++i)
        std::copy(layer.bias.begin(), layer.bias.end(), out + std::size_t(i) * layer.outputs);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, batch, layer.outputs, layer.inputs, 1.0f,
                in, layer.inputs, layer.weight.data(), layer.inputs, 1.0f, out, layer.outputs);
    std::size_t count = std::size_t(batch) * layer.outputs;
    for (std::size_t k = 0; k < count; ++k) out[k] = std::max(out[k], 0.0f);
}

// Softmax cross-entropy of one row: returns the loss, writes d(loss)/d(logits) into `grad`.
float cross_entropy_row(const float* logits, int label, float* grad) {
    float top = *std::max_element(logits, logits + kClasses);
    float sum = 0.0f;
    for (int j = 0; j < kClasses; ++j) sum += std::exp(logits[j] - top);
    if (grad != nullptr)
        for (int j = 0; j < kClasses; ++j)
            grad[j] = std::exp(logits[j] - top) / sum - (j == label ? 1.0f : 0.0f);
    return top + std::log(sum) - logits[label];
}

}  // namespace

Mlp::Mlp() {
    const int sizes[kLayers + 1] = {kInputs, kHidden, kHidden, kClasses};
    for (int l = 0; l < kLayers; ++l) {
        layers_[l].inputs = sizes[l];
        layers_[l].outputs = sizes[l + 1];
        layers_[l].weight.assign(std::size_t(sizes[l]) * sizes[l + 1], 0.0f);
        layers_[l].bias.assign(sizes[l + 1], 0.0f);
    }
}

void Mlp::init_uniform(std::uint64_t seed) {
    std::mt19937_64 engine(seed);
    auto uniform = [&engine](float bound) {
        float unit = static_cast<float>(engine() >> 40) * (1.0f / 16777216.0f);  // [0, 1)
        return (2.0f * unit - 1.0f) * bound;
    };
    for (Layer& layer : layers_) {
        float bound = 1.0f / std::sqrt(static_cast<float>(layer.inputs));
        for (float& w : layer.weight) w = uniform(bound);
        for (float& b : layer.bias) b = uniform(bound);
    }
}

std::vector<ParamRef> Mlp::params_in_ready_order() {
    std::vector<ParamRef> params;
    for (int l = kLayers - 1; l >= 0; --l) {
        params.push_back({fmt::format("fc{}.weight", l + 1), layers_[l].weight});
        params.push_back({fmt::format("fc{}.bias", l + 1), layers_[l].bias});
    }
    return params;
}

std::vector<std::size_t> Mlp::param_sizes_in_ready_order() {
    std::vector<std::size_t> sizes;
    for (const ParamRef& param : params_in_ready_order()) sizes.push_back(param.values.size());
    return sizes;
}

void Mlp::forward(const float* images, int batch) {
    const float* in = images;
    for (int l = 0; l < kLayers; ++l) {
        activations_[l].resize(std::size_t(batch) * layers_[l].outputs);
        linear_relu(layers_[l], in, batch, activations_[l].data());
        in = activations_[l].data();
    }
}

float Mlp::train_step(const float* images, const std::uint8_t* labels, int batch, float mean_over,
                      GradientReducer& reducer, float lr) {
    if (batch == 0) return empty_step(reducer, lr);
    forward(images, batch);
    const float* logits = activations_[kLayers - 1].data();
    delta_.resize(std::size_t(batch) * kClasses);
    double loss_sum = 0.0;
    for (int i = 0; i < batch; ++i) {
        float* grad = delta_.data() + std::size_t(i) * kClasses;
        loss_sum += cross_entropy_row(logits + std::size_t(i) * kClasses, labels[i], grad);
        for (int j = 0; j < kClasses; ++j)  // mean over the batch, then the final ReLU's mask
            grad[j] = logits[i * kClasses + j] > 0.0f ? grad[j] / mean_over : 0.0f;
    }
    for (int l = kLayers - 1; l >= 0; --l) {
        const Layer& layer = layers_[l];
        const float* in = l == 0 ? images : activations_[l - 1].data();
        std::span<float> grad_w = reducer.gradient(weight_index(l));
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, layer.outputs, layer.inputs, batch,
                    1.0f, delta_.data(), layer.outputs, in, layer.inputs, 0.0f, grad_w.data(),
                    layer.inputs);
        reducer.mark_ready(weight_index(l));
        std::span<float> grad_b = reducer.gradient(bias_index(l));
        std::fill(grad_b.begin(), grad_b.end(), 0.0f);
        for (int i = 0; i < batch; ++i)
            for (int j = 0; j < layer.outputs; ++j) grad_b[j] += delta_[std::size_t(i) * layer.outputs + j];
        reducer.mark_ready(bias_index(l));
        if (l == 0) break;  // no gradient for the input images
        delta_next_.resize(std::size_t(batch) * layer.inputs);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, batch, layer.inputs, layer.outputs,
                    1.0f, delta_.data(), layer.outputs, layer.weight.data(), layer.inputs, 0.0f,
                    delta_next_.data(), layer.inputs);
        const std::vector<float>& below = activations_[l - 1];
        for (std::size_t k = 0; k < delta_next_.size(); ++k)  // branch-free, so it vectorises
            delta_next_[k] = below[k] > 0.0f ? delta_next_[k] : 0.0f;
        std::swap(delta_, delta_next_);
    }
    finish_step(reducer, lr);
    return static_cast<float>(loss_sum / mean_over);
}

float Mlp::empty_step(GradientReducer& reducer, float lr) {
    for (int l = kLayers - 1; l >= 0; --l)
        for (std::size_t index : {weight_index(l), bias_index(l)}) {
            std::span<float> grad = reducer.gradient(index);
            std::fill(grad.begin(), grad.end(), 0.0f);
            reducer.mark_ready(index);
        }
    finish_step(reducer, lr);
    return 0.0f;
}

void Mlp::finish_step(GradientReducer& reducer, float lr) {
    reducer.finish();
    for (int l = 0; l < kLayers; ++l) {
        auto update = [lr](std::vector<float>& values, std::span<const float> grads) {
            for (std::size_t k = 0; k < values.size(); ++k) values[k] -= lr * grads[k];
        };
        update(layers_[l].weight, reducer.gradient(weight_index(l)));
        update(layers_[l].bias, reducer.gradient(bias_index(l)));
    }
}

void Mlp::evaluate(const float* images, const std::uint8_t* labels, int batch, double& loss_sum,
                   std::int64_t& correct) {
    forward(images, batch);
    const float* logits = activations_[kLayers - 1].data();
    for (int i = 0; i < batch; ++i) {
        const float* row = logits + std::size_t(i) * kClasses;
        loss_sum += cross_entropy_row(row, labels[i], nullptr);
        // The first maximum wins ties, as torch.argmax does (ReLU outputs tie at 0 often).
        if (std::max_element(row, row + kClasses) - row == labels[i]) ++correct;
    }
}

void scale_pixels(const std::uint8_t* pixels, std::size_t values, float* out) {
    for (std::size_t k = 0; k < values; ++k) out[k] = static_cast<float>(pixels[k]) / 255.0f;
}

void scale_pixels(const DatasetShard& shard, std::size_t first, int count, float* out) {
    const std::size_t sample = shard.sample_size();
    scale_pixels(shard.features.data() + first * sample, static_cast<std::size_t>(count) * sample, out);
}

void scale_pixels(const DatasetShard& shard, std::size_t first, int count, std::vector<float>& out) {
    out.resize(static_cast<std::size_t>(count) * shard.sample_size());
    scale_pixels(shard, first, count, out.data());
}

std::string floats_digest(std::span<const float> values) {
    return fmt::format("{:016x}", XXH3_64bits(values.data(), values.size() * sizeof(float)));
}

std::string weights_digest(const Mlp& model) {
    XXH3_state_t* state = XXH3_createState();
    XXH3_64bits_reset(state);
    for (const Layer& layer : model.layers()) {
        XXH3_64bits_update(state, layer.weight.data(), layer.weight.size() * sizeof(float));
        XXH3_64bits_update(state, layer.bias.data(), layer.bias.size() * sizeof(float));
    }
    XXH64_hash_t hash = XXH3_64bits_digest(state);
    XXH3_freeState(state);
    return fmt::format("{:016x}", hash);
}

}  // namespace trainrt::workloads::fashion_mlp
