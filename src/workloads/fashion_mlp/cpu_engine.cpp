#include "workloads/fashion_mlp/engine.hpp"

#include <cblas.h>

#include <algorithm>

namespace trainrt::workloads::fashion_mlp {
namespace {

class CpuEngine final : public Engine {
public:
    CpuEngine(Mlp& model, Communicator& comm, std::size_t bucket_bytes)
        : model_(model), sizes_(model.param_sizes_in_ready_order()), reducer_(comm, sizes_, bucket_bytes) {}
    void set_data(Split split, const DatasetShard& shard) override {
        (split == Split::train ? train_ : test_) = &shard;
    }
    void train_step(std::size_t first, int count, float mean_over, float lr) override {
        scale_pixels(*train_, first, count, images_);
        loss_sum_ += model_.train_step(images_.data(), train_->labels.data() + first, count, mean_over, reducer_, lr);
    }
    void set_loss_sum(double sum) override { loss_sum_ = sum; }
    double loss_sum() override { return loss_sum_; }
    void evaluate(std::size_t real, int batch, double& loss_sum, std::int64_t& correct) override {
        for (std::size_t first = 0; first < real; first += static_cast<std::size_t>(batch)) {
            int count = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(batch), real - first));
            scale_pixels(*test_, first, count, images_);
            model_.evaluate(images_.data(), test_->labels.data() + first, count, loss_sum, correct);
        }
    }
    void sync_to_host() override {}  // the host model is the one trained

private:
    Mlp& model_;
    std::vector<std::size_t> sizes_;
    GradientReducer reducer_;
    const DatasetShard* train_ = nullptr;
    const DatasetShard* test_ = nullptr;
    std::vector<float> images_;
    double loss_sum_ = 0.0;
};

}  // namespace

std::unique_ptr<Engine> make_cpu_engine(Mlp& model, Communicator& comm, std::size_t bucket_bytes) {
    openblas_set_num_threads(1);  // one core per rank, like PyTorch's default here
    return std::make_unique<CpuEngine>(model, comm, bucket_bytes);
}

}  // namespace trainrt::workloads::fashion_mlp
