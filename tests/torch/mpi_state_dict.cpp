// trainrt::torch::StateDict and load_*: LibTorch state through real checkpoints (CheckpointManager
// on disk): a run resumed from a checkpoint of its module, optimizer (SGD with momentum, Adam)
// and RNG continues bitwise like the uninterrupted run; a module of another shape is refused
// naming the tensor and both shapes; a per-rank tensor comes back to its own rank.
#include <torch/torch.h>
#undef CHECK  // glog's; Catch2's below (test_process_group.cpp says why)

#include <catch2/catch.hpp>
#include <mpi.h>

#include "checkpoint/manager.hpp"
#include "comm/mpi_communicator.hpp"
#include "mpi_support.hpp"
#include "trainrt/error.hpp"
#include "torch/device.hpp"
#include "trainrt/torch.hpp"

using namespace trainrt;

namespace {

struct NetImpl : ::torch::nn::Module {
    explicit NetImpl(int hidden) {
        fc1 = register_module("fc1", ::torch::nn::Linear(8, hidden));
        norm = register_module("norm", ::torch::nn::BatchNorm1d(hidden));  // buffers: running stats
        fc2 = register_module("fc2", ::torch::nn::Linear(hidden, 3));
        drop = register_module("drop", ::torch::nn::Dropout(0.3));       // draws from the RNG
    }
    at::Tensor forward(const at::Tensor& x) { return fc2->forward(drop->forward(::torch::relu(norm->forward(fc1->forward(x))))); }
    ::torch::nn::Linear fc1{nullptr}, fc2{nullptr};
    ::torch::nn::BatchNorm1d norm{nullptr};
    ::torch::nn::Dropout drop{nullptr};
};

std::unique_ptr<::torch::optim::Optimizer> make_optimizer(const std::string& kind, std::vector<at::Tensor> params) {
    if (kind == "sgd") return std::make_unique<::torch::optim::SGD>(params, ::torch::optim::SGDOptions(0.05).momentum(0.9));
    return std::make_unique<::torch::optim::Adam>(params, ::torch::optim::AdamOptions(0.01));
}

void train_steps(NetImpl& net, ::torch::optim::Optimizer& optimizer, int first, int count) {
    net.train();
    for (int step = first; step < first + count; ++step) {
        const at::Tensor x = ::torch::arange(64, at::kFloat).reshape({8, 8}).sin() * (step + 1);
        optimizer.zero_grad();
        net.forward(x).pow(2).mean().backward();
        optimizer.step();
    }
}

checkpoint::CheckpointOptions options() {
    checkpoint::CheckpointOptions options;
    options.layout.layout = "file_per_rank";
    return options;
}

}  // namespace

TEST_CASE("StateDict: a resumed run continues bitwise like the uninterrupted one", "[torch][checkpoint]") {
    const std::string kind = GENERATE(as<std::string>{}, "sgd", "adam");
    INFO("optimizer " << kind);
    testing::SharedDir run("trainrt-torch-ckpt");
    auto comm = comm::make_world_communicator();
    const Context context = testing::world_context(run.path());
    std::vector<at::Tensor> uninterrupted;
    {
        ::torch::manual_seed(7);
        auto net = std::make_shared<NetImpl>(16);
        auto optimizer = make_optimizer(kind, net->parameters());
        train_steps(*net, *optimizer, 0, 3);
        checkpoint::CheckpointManager manager(options(), context, *comm);
        trainrt::torch::StateDict dict;
        dict.module(*net).optimizer(*optimizer).rng();
        manager.save(dict.state(), 3, nlohmann::ordered_json::object());
        train_steps(*net, *optimizer, 3, 3);
        for (const at::Tensor& p : net->parameters()) uninterrupted.push_back(p.detach().clone());
        for (const at::Tensor& b : net->buffers()) uninterrupted.push_back(b.detach().clone());
    }
    ::torch::manual_seed(12345);  // a fresh process: other weights, other RNG state
    auto net = std::make_shared<NetImpl>(16);
    auto optimizer = make_optimizer(kind, net->parameters());
    checkpoint::CheckpointManager manager(options(), context, *comm);
    const std::optional<Checkpoint> restored = manager.restore();
    REQUIRE(restored.has_value());
    trainrt::torch::load_module(*restored, *net);
    trainrt::torch::load_optimizer(*restored, *optimizer);
    trainrt::torch::load_rng(*restored);
    train_steps(*net, *optimizer, 3, 3);
    std::vector<at::Tensor> resumed;
    for (const at::Tensor& p : net->parameters()) resumed.push_back(p.detach());
    for (const at::Tensor& b : net->buffers()) resumed.push_back(b.detach());
    REQUIRE(resumed.size() == uninterrupted.size());
    for (std::size_t k = 0; k < resumed.size(); ++k) CHECK(at::equal(resumed[k], uninterrupted[k]));
}

TEST_CASE("StateDict: a module of another shape is refused naming the tensor and both shapes", "[torch][checkpoint]") {
    testing::SharedDir run("trainrt-torch-ckpt");
    auto comm = comm::make_world_communicator();
    const Context context = testing::world_context(run.path());
    checkpoint::CheckpointManager manager(options(), context, *comm);
    NetImpl saved(16);
    trainrt::torch::StateDict dict;
    dict.module(saved);
    manager.save(dict.state(), 1, nlohmann::ordered_json::object());
    const std::optional<Checkpoint> restored = manager.restore();
    REQUIRE(restored.has_value());
    NetImpl other(32);
    CHECK_THROWS_WITH(trainrt::torch::load_module(*restored, other),
                      Catch::Matchers::Contains("'model.fc1.weight'") && Catch::Matchers::Contains("[16, 8]") &&
                          Catch::Matchers::Contains("[32, 8]"));
    CHECK_THROWS_AS(trainrt::torch::load_module(*restored, other), CheckpointError);
}

TEST_CASE("StateDict: per_rank tensors come back to their own rank, not to another world size", "[torch][checkpoint]") {
    testing::SharedDir run("trainrt-torch-ckpt");
    auto comm = comm::make_world_communicator();
    const Context context = testing::world_context(run.path());
    checkpoint::CheckpointManager manager(options(), context, *comm);
    const at::Tensor mine = ::torch::tensor({10.0 * context.world_rank, 1.0 + context.world_rank}, at::kDouble);
    trainrt::torch::StateDict dict;
    dict.per_rank(context, "loss_sum", mine);
    manager.save(dict.state(), 1, nlohmann::ordered_json::object());
    const std::optional<Checkpoint> restored = manager.restore();
    REQUIRE(restored.has_value());
    CHECK(restored->global_shape("loss_sum") == Shape{static_cast<std::uint64_t>(context.world_size), 2});
    at::Tensor back = ::torch::zeros({2}, at::kDouble);
    REQUIRE(trainrt::torch::load_per_rank(*restored, context, "loss_sum", back));
    CHECK(at::equal(back, mine));
    Context wider = context;
    wider.world_size = context.world_size + 1;
    at::Tensor untouched = ::torch::full({2}, -1.0, at::kDouble);
    CHECK_FALSE(trainrt::torch::load_per_rank(*restored, wider, "loss_sum", untouched));
    CHECK(untouched[0].item<double>() == -1.0);
    CHECK_THROWS_AS(trainrt::torch::load_per_rank(*restored, context, "no_such", back), CheckpointError);
}

TEST_CASE("StateDict: each rank's generator comes back to its rank, and to a rank of another world", "[torch][checkpoint]") {
    testing::SharedDir run("trainrt-torch-ckpt");
    auto comm = comm::make_world_communicator();
    const Context context = testing::world_context(run.path());
    checkpoint::CheckpointManager manager(options(), context, *comm);
    ::torch::manual_seed(100 + context.world_rank);  // generators seeded per rank
    trainrt::torch::StateDict dict;
    dict.rng(context);
    manager.save(dict.state(), 1, nlohmann::ordered_json::object());
    const at::Tensor next = ::torch::rand({4});  // what each rank draws next
    ::torch::manual_seed(7);
    const std::optional<Checkpoint> restored = manager.restore();
    REQUIRE(restored.has_value());
    CHECK(restored->global_shape("rng.cpu").size() == 2);
    trainrt::torch::load_rng(*restored, context);
    CHECK(at::equal(::torch::rand({4}), next));

    Context wider = context;  // a rank of a larger world takes row (rank mod saved world size)
    wider.world_size = context.world_size * 2;
    wider.world_rank = context.world_rank + context.world_size;
    trainrt::torch::load_rng(*restored, wider);
    CHECK(at::equal(::torch::rand({4}), next));
}

TEST_CASE("StateDict: on the CPU no GPU generator; a GPU bound with a LibTorch without CUDA is a ConfigError",
          "[torch][checkpoint]") {
    Context context;
    CHECK(trainrt::torch::device_of(context) == at::Device(at::kCPU));
    trainrt::torch::StateDict dict;
    dict.rng(context);
    std::vector<std::string> names;
    for (const TensorPart& part : dict.state().tensors()) names.push_back(part.name);
    CHECK(names == std::vector<std::string>{"rng.cpu"});
    if (at::hasCUDA()) return;  // the rest is about a LibTorch without CUDA (Debian's)
    context.gpu_device = 0;
    trainrt::torch::StateDict on_gpu;
    CHECK_THROWS_AS(on_gpu.rng(context), ConfigError);
    CHECK_THROWS_WITH(on_gpu.rng(context), Catch::Matchers::Contains("has no CUDA") &&
                                               Catch::Matchers::Contains("use_gpu = false"));
}
