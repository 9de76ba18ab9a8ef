#include "workloads/linear_model/model.hpp"

#include <algorithm>
#include <cmath>

namespace trainrt::workloads::linear_model {

LinearModel::LinearModel(Task task, std::size_t features, std::size_t outputs)
    : task_(task), features_(features), outputs_(outputs), weight_(features * outputs, 0.0f), bias_(outputs, 0.0f) {}

void LinearModel::predict(const float* row, float* out) const {
    for (std::size_t o = 0; o < outputs_; ++o) {
        const float* w = weight_.data() + o * features_;
        float sum = bias_[o];
        for (std::size_t f = 0; f < features_; ++f) sum += w[f] * row[f];
        out[o] = sum;
    }
}

void LinearModel::gradients(const float* x, const std::int64_t* classes, const float* targets, std::size_t count,
                            double mean_over, std::vector<float>& packed) const {
    packed.assign(packed_size(), 0.0f);
    float* grad_w = packed.data();
    float* grad_b = packed.data() + weight_.size();
    double loss = 0.0;
    std::vector<float> out(outputs_);
    for (std::size_t i = 0; i < count; ++i) {
        const float* row = x + i * features_;
        predict(row, out.data());
        if (task_ == Task::classify) {  // softmax cross-entropy: d logits = p - onehot
            const float top = *std::max_element(out.begin(), out.end());
            double total = 0.0;
            for (float& value : out) total += (value = std::exp(value - top));
            const auto label = static_cast<std::size_t>(classes[i]);
            loss -= std::log(out[label] / total);
            for (std::size_t o = 0; o < outputs_; ++o) out[o] = static_cast<float>(out[o] / total) - (o == label);
        } else {  // 0.5 * (prediction - target)^2
            out[0] -= targets[i];
            loss += 0.5 * double(out[0]) * out[0];
        }
        for (std::size_t o = 0; o < outputs_; ++o) {
            float* gw = grad_w + o * features_;
            for (std::size_t f = 0; f < features_; ++f) gw[f] += out[o] * row[f];
            grad_b[o] += out[o];
        }
    }
    const float scale = static_cast<float>(1.0 / mean_over);
    for (std::size_t k = 0; k + 1 < packed.size(); ++k) packed[k] *= scale;
    packed.back() = static_cast<float>(loss / mean_over);
}

float LinearModel::apply(const std::vector<float>& packed, float lr) {
    for (std::size_t k = 0; k < weight_.size(); ++k) weight_[k] -= lr * packed[k];
    for (std::size_t o = 0; o < bias_.size(); ++o) bias_[o] -= lr * packed[weight_.size() + o];
    return packed.back();
}

}  // namespace trainrt::workloads::linear_model
