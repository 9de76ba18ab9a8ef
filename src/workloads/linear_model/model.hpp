#pragma once
// A linear model on a table's feature vector: softmax regression over `outputs` classes
// (cross-entropy) or least squares on one standardised target. Float32 weights [outputs, features]
// and biases; gradients and the batch's loss packed in one vector, so one allreduce per step
// averages both.
#include <cstdint>
#include <span>
#include <vector>

namespace trainrt::workloads::linear_model {

enum class Task { classify, regress };

class LinearModel {
public:
    LinearModel(Task task, std::size_t features, std::size_t outputs);
    Task task() const { return task_; }
    std::size_t features() const { return features_; }
    std::size_t outputs() const { return outputs_; }
    std::vector<float>& weight() { return weight_; }
    std::vector<float>& bias() { return bias_; }
    const std::vector<float>& weight() const { return weight_; }
    const std::vector<float>& bias() const { return bias_; }

    // Sums the gradients and loss over `count` rows of x into `packed` ([dW, db, loss]), each
    // divided by `mean_over`. Targets: class indices (classify) or standardised values (regress).
    void gradients(const float* x, const std::int64_t* classes, const float* targets, std::size_t count,
                   double mean_over, std::vector<float>& packed) const;
    // Applies averaged gradients (packed as above) and returns their batch loss.
    float apply(const std::vector<float>& packed, float lr);
    std::size_t packed_size() const { return weight_.size() + bias_.size() + 1; }

    // Forward only: the row's outputs (logits, or the standardised prediction).
    void predict(const float* row, float* out) const;

private:
    Task task_;
    std::size_t features_, outputs_;
    std::vector<float> weight_, bias_;
};

}  // namespace trainrt::workloads::linear_model
