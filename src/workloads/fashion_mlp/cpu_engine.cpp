#include "workloads/fashion_mlp/engine.hpp"

#include <cblas.h>

#include "trainrt/error.hpp"

namespace trainrt::workloads::fashion_mlp {
namespace {

class CpuEngine final : public Engine {
public:
    CpuEngine(Mlp& model, Communicator& comm, std::size_t bucket_bytes)
        : model_(model), sizes_(model.param_sizes_in_ready_order()), reducer_(comm, sizes_, bucket_bytes) {}
    bool reads_shards() const override { return false; }
    void set_data(Split, const DatasetShard&) override {
        throw Error("fashion_mlp: the CPU engine trains on streamed batches, not shards");
    }
    void train_step(const StepBatch& batch, float lr) override {
        loss_sum_ += model_.train_step(batch.pixels, batch.labels, batch.count, batch.mean_over, reducer_, lr);
    }
    void set_loss_sum(double sum) override { loss_sum_ = sum; }
    double loss_sum() override { return loss_sum_; }
    void evaluate(const StepBatch& batch, double& loss_sum, std::int64_t& correct) override {
        if (batch.count > 0) model_.evaluate(batch.pixels, batch.labels, batch.count, loss_sum, correct);
    }
    void sync_to_host() override {}  // the host model is the one trained

private:
    Mlp& model_;
    std::vector<std::size_t> sizes_;
    GradientReducer reducer_;
    double loss_sum_ = 0.0;
};

}  // namespace

std::unique_ptr<Engine> make_cpu_engine(Mlp& model, Communicator& comm, std::size_t bucket_bytes) {
    openblas_set_num_threads(1);  // one core per rank, like PyTorch's default here
    return std::make_unique<CpuEngine>(model, comm, bucket_bytes);
}

}  // namespace trainrt::workloads::fashion_mlp
