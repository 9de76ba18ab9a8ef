#include "workloads/fashion_mlp/engine.hpp"

namespace trainrt::workloads::fashion_mlp {
namespace {

class CpuEngine final : public Engine {
public:
    CpuEngine(Mlp& model, Communicator& comm, std::size_t bucket_bytes)
        : model_(model), sizes_(model.param_sizes_in_ready_order()), reducer_(comm, sizes_, bucket_bytes) {}
    float train_step(const float* images, const std::uint8_t* labels, int batch, float lr) override {
        return model_.train_step(images, labels, batch, reducer_, lr);
    }
    void evaluate(const float* images, const std::uint8_t* labels, int batch, double& loss_sum,
                  std::int64_t& correct) override {
        model_.evaluate(images, labels, batch, loss_sum, correct);
    }
    void sync_to_host() override {}  // the host model is the one trained

private:
    Mlp& model_;
    std::vector<std::size_t> sizes_;
    GradientReducer reducer_;
};

}  // namespace

std::unique_ptr<Engine> make_cpu_engine(Mlp& model, Communicator& comm, std::size_t bucket_bytes) {
    return std::make_unique<CpuEngine>(model, comm, bucket_bytes);
}

}  // namespace trainrt::workloads::fashion_mlp
