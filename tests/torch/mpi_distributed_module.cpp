// trainrt::torch::DistributedModule under mpiexec: rank 0's weights everywhere at the start, the
// gradients after backward equal to the average of every rank's own gradients (computed apart
// and averaged with plain MPI), identical weights after optimizer steps, buckets of any size,
// and unused parameters.
#include <torch/torch.h>
#undef CHECK  // glog's; Catch2's below (test_process_group.cpp says why)

#include <catch2/catch.hpp>
#include <mpi.h>

#include "trainrt/error.hpp"
#include "trainrt/torch.hpp"

using namespace trainrt;

namespace {

int rank() {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}
int size() {
    int n = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

struct NetImpl : ::torch::nn::Module {
    NetImpl(bool with_unused) {
        fc1 = register_module("fc1", ::torch::nn::Linear(8, 16));
        fc2 = register_module("fc2", ::torch::nn::Linear(16, 4));
        if (with_unused) spare = register_module("spare", ::torch::nn::Linear(4, 4));
    }
    at::Tensor forward(const at::Tensor& x) { return fc2->forward(::torch::relu(fc1->forward(x))); }
    ::torch::nn::Linear fc1{nullptr}, fc2{nullptr}, spare{nullptr};
};

std::shared_ptr<NetImpl> make_net(int seed, bool with_unused = false) {
    ::torch::manual_seed(seed);
    return std::make_shared<NetImpl>(with_unused);
}

at::Tensor batch_of(int r) {
    ::torch::manual_seed(1000 + r);
    return ::torch::randn({5, 8}, at::kDouble).to(at::kFloat);
}

// The element-wise average of `local` over the ranks, by plain MPI.
at::Tensor mpi_average(const at::Tensor& local) {
    at::Tensor sum = at::empty_like(local);
    MPI_Allreduce(local.data_ptr(), sum.data_ptr(), static_cast<int>(local.numel()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    return sum / size();
}

// Largest difference of `t` between any two ranks.
double spread(const at::Tensor& t) {
    at::Tensor high = t.clone(), low = t.clone();
    MPI_Allreduce(MPI_IN_PLACE, high.data_ptr(), static_cast<int>(t.numel()), MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, low.data_ptr(), static_cast<int>(t.numel()), MPI_FLOAT, MPI_MIN, MPI_COMM_WORLD);
    return (high - low).abs().max().item<double>();
}

}  // namespace

TEST_CASE("DistributedModule: rank 0's weights, averaged gradients, identical steps", "[torch][ddp]") {
    const double bucket_mb = GENERATE(2.0, 1e-9);  // one bucket; one per parameter
    INFO("bucket_mb " << bucket_mb);
    auto net = make_net(rank());  // every rank starts from other weights
    auto rank0 = make_net(0);
    trainrt::torch::DistributedOptions options;
    options.bucket_mb = bucket_mb;
    trainrt::torch::DistributedModule ddp(net, trainrt::torch::make_process_group(), options);
    CHECK(ddp.bucket_count() == (bucket_mb > 1 ? 1u : 4u));
    for (std::size_t k = 0; k < net->parameters().size(); ++k)
        CHECK(at::equal(net->parameters()[k], rank0->parameters()[k]));

    ::torch::optim::SGD sgd(net->parameters(), ::torch::optim::SGDOptions(0.1).momentum(0.9));
    for (int step = 0; step < 3; ++step) {
        const at::Tensor x = batch_of(rank() + 10 * step);
        // This rank's own gradients, on a copy without hooks.
        auto alone = make_net(0);
        {
            ::torch::NoGradGuard no_grad;
            for (std::size_t k = 0; k < net->parameters().size(); ++k) alone->parameters()[k].copy_(net->parameters()[k]);
        }
        alone->forward(x).pow(2).mean().backward();
        sgd.zero_grad();
        net->forward(x).pow(2).mean().backward();
        for (std::size_t k = 0; k < net->parameters().size(); ++k)
            CHECK(at::allclose(net->parameters()[k].grad(), mpi_average(alone->parameters()[k].grad()), 1e-6, 1e-7));
        sgd.step();
    }
    for (const at::Tensor& p : net->parameters()) CHECK(spread(p.detach()) == 0.0);
}

// The averaged gradients are views into the buckets: they must behave as ordinary gradients when
// the loop zeroes them in place or does not zero them at all (accumulation over backward passes).
TEST_CASE("DistributedModule: gradients accumulate and zero as without it", "[torch][ddp]") {
    const bool set_to_none = GENERATE(true, false);
    INFO("zero_grad(set_to_none = " << set_to_none << ")");
    auto net = make_net(rank());
    trainrt::torch::DistributedModule ddp(net, trainrt::torch::make_process_group());
    ::torch::optim::SGD sgd(net->parameters(), ::torch::optim::SGDOptions(0.1));
    auto alone = make_net(0);  // rank 0's start, as DistributedModule broadcast it
    for (int step = 0; step < 2; ++step) {
        sgd.zero_grad(set_to_none);
        std::vector<at::Tensor> expected(net->parameters().size());
        for (int pass = 0; pass < 2; ++pass) {  // two backward passes summed into one step's gradients
            const at::Tensor x = batch_of(rank() + 10 * step + 100 * pass);
            for (auto& p : alone->parameters()) p.mutable_grad() = at::Tensor();
            alone->forward(x).pow(2).mean().backward();
            net->forward(x).pow(2).mean().backward();
            for (std::size_t k = 0; k < expected.size(); ++k) {
                const at::Tensor average = mpi_average(alone->parameters()[k].grad());
                expected[k] = pass == 0 ? average : expected[k] + average;
            }
        }
        for (std::size_t k = 0; k < expected.size(); ++k)
            CHECK(at::allclose(net->parameters()[k].grad(), expected[k], 1e-5, 1e-6));
        sgd.step();
        ::torch::NoGradGuard no_grad;
        for (std::size_t k = 0; k < expected.size(); ++k) alone->parameters()[k].copy_(net->parameters()[k]);
    }
}

TEST_CASE("DistributedModule: a parameter without a gradient is an error naming it, or zeros", "[torch][ddp]") {
    const at::Tensor x = batch_of(rank());
    {
        auto net = make_net(0, true);
        trainrt::torch::DistributedModule ddp(net, trainrt::torch::make_process_group());
        CHECK_THROWS_WITH(net->forward(x).sum().backward(), Catch::Matchers::Contains("parameter 'spare.") &&
                                                                Catch::Matchers::Contains("find_unused_parameters"));
    }
    auto net = make_net(0, true);
    trainrt::torch::DistributedOptions options;
    options.find_unused_parameters = true;
    trainrt::torch::DistributedModule ddp(net, trainrt::torch::make_process_group(), options);
    net->forward(x).sum().backward();
    REQUIRE(net->spare->weight.grad().defined());
    CHECK(net->spare->weight.grad().abs().sum().item<double>() == 0.0);
    CHECK(spread(net->fc1->weight.grad()) == 0.0);
}

namespace {

struct NormNetImpl : ::torch::nn::Module {
    NormNetImpl() {
        fc1 = register_module("fc1", ::torch::nn::Linear(8, 16));
        norm = register_module("norm", ::torch::nn::BatchNorm1d(16));
        fc2 = register_module("fc2", ::torch::nn::Linear(16, 4));
    }
    at::Tensor forward(const at::Tensor& x) { return fc2->forward(::torch::relu(norm->forward(fc1->forward(x)))); }
    ::torch::nn::Linear fc1{nullptr}, fc2{nullptr};
    ::torch::nn::BatchNorm1d norm{nullptr};
};

std::shared_ptr<NormNetImpl> make_norm_net() {
    ::torch::manual_seed(3);
    return std::make_shared<NormNetImpl>();
}

// `steps` SGD steps on this rank's own batches from `first`; each step's loss, then the
// evaluation loss of a batch every rank shares (which reads the running statistics).
std::vector<double> train_steps(NormNetImpl& net, int first, int steps) {
    ::torch::optim::SGD sgd(net.parameters(), ::torch::optim::SGDOptions(0.05));
    std::vector<double> losses;
    for (int step = first; step < first + steps; ++step) {
        net.train();
        sgd.zero_grad();
        at::Tensor loss = net.forward(batch_of(rank() + 10 * step)).pow(2).mean();
        loss.backward();
        sgd.step();
        net.eval();
        ::torch::NoGradGuard no_grad;
        losses.push_back(net.forward(batch_of(99)).pow(2).mean().item<double>());
    }
    return losses;
}

}  // namespace

TEST_CASE("DistributedModule: buffers follow rank 0 after every backward, so rank 0's state resumes exactly",
          "[torch][ddp]") {
    SECTION("broadcast_buffers = false: each rank's batch-norm statistics are its own") {
        auto net = make_norm_net();
        trainrt::torch::DistributedOptions options;
        options.broadcast_buffers = false;
        trainrt::torch::DistributedModule ddp(net, trainrt::torch::make_process_group(), options);
        train_steps(*net, 0, 2);
        CHECK(spread(net->norm->running_mean) > 0.0);
    }
    auto net = make_norm_net();
    trainrt::torch::DistributedModule ddp(net, trainrt::torch::make_process_group());
    train_steps(*net, 0, 3);
    CHECK(spread(net->norm->running_mean) == 0.0);
    CHECK(spread(net->norm->running_var) == 0.0);
    // Rank 0's module as a checkpoint holds it: a fresh model loaded from it and prepared again
    // reports the uninterrupted run's losses (every rank's evaluation included).
    std::vector<at::Tensor> saved;
    for (const at::Tensor& t : net->parameters()) saved.push_back(t.detach().clone());
    for (const at::Tensor& t : net->buffers()) saved.push_back(t.clone());
    const std::string digest = trainrt::torch::weights_digest(*net);
    const std::vector<double> uninterrupted = train_steps(*net, 3, 3);

    auto resumed = make_norm_net();
    {
        ::torch::NoGradGuard no_grad;
        std::size_t k = 0;
        for (at::Tensor& t : resumed->parameters()) t.copy_(saved[k++]);
        for (at::Tensor& t : resumed->buffers()) t.copy_(saved[k++]);
    }
    CHECK(trainrt::torch::weights_digest(*resumed) == digest);
    trainrt::torch::DistributedModule again(resumed, trainrt::torch::make_process_group());
    CHECK(train_steps(*resumed, 3, 3) == uninterrupted);
    CHECK(trainrt::torch::weights_digest(*resumed) == trainrt::torch::weights_digest(*net));
}
