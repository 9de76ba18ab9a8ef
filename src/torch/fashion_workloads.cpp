// torch_fashion_mlp and torch_fashion_cnn: FashionMNIST in LibTorch, data-parallel with
// DistributedModule, checkpointed with StateDict, resumable mid-epoch. Registered like any plugin
// workload, by libtrainrt_torch, which is loaded only when a job names one (workloads/components.hpp).
//  - torch_fashion_mlp: Ray Train's recipe, as fashion_mlp (Flatten, Linear 784-512-512-10, a ReLU
//    after each, cross-entropy, SGD lr 1e-3, global batch 64, pixels/255), from train.init_weights
//    when given, so its losses compare with PyTorch's step for step.
//  - torch_fashion_cnn: pixels standardised, conv(1->32, 3x3)/ReLU/maxpool 2, conv(32->64, 3x3)/
//    ReLU/maxpool 2, fc(1600->128)/ReLU, fc(128->10); Adam lr 1e-3.
#include <torch/torch.h>

#include <chrono>
#include <span>
#include <iostream>

#include <fmt/format.h>

#include "config/settings.hpp"
#include "data/configured.hpp"
#include "data/stream.hpp"
#include "trainrt/error.hpp"
#include "trainrt/plugin.hpp"
#include "trainrt/torch.hpp"
#include "workloads/fashion_mlp/mlp.hpp"
#include "workloads/fashion_mlp/weights_file.hpp"
#include "workloads/workload_settings.hpp"

namespace trainrt::torch {
namespace {

namespace nn = ::torch::nn;
using HostMlp = workloads::fashion_mlp::Mlp;

struct MlpNetImpl : nn::Module {
    MlpNetImpl() {
        fc1 = register_module("fc1", nn::Linear(784, 512));
        fc2 = register_module("fc2", nn::Linear(512, 512));
        fc3 = register_module("fc3", nn::Linear(512, 10));
    }
    at::Tensor forward(const at::Tensor& x) {
        at::Tensor h = ::torch::relu(fc1->forward(x.flatten(1)));
        return ::torch::relu(fc3->forward(::torch::relu(fc2->forward(h))));  // Ray's model ends in a ReLU
    }
    nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};

struct CnnNetImpl : nn::Module {
    CnnNetImpl() {
        conv1 = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(1, 32, 3)));
        conv2 = register_module("conv2", nn::Conv2d(nn::Conv2dOptions(32, 64, 3)));
        fc1 = register_module("fc1", nn::Linear(64 * 5 * 5, 128));
        fc2 = register_module("fc2", nn::Linear(128, 10));
    }
    at::Tensor forward(const at::Tensor& pixels) {
        const at::Tensor x = (pixels - 0.2860f) / 0.3530f;  // FashionMNIST's pixel mean and deviation
        at::Tensor h = ::torch::max_pool2d(::torch::relu(conv1->forward(x)), 2);
        h = ::torch::max_pool2d(::torch::relu(conv2->forward(h)), 2);
        return fc2->forward(::torch::relu(fc1->forward(h.flatten(1))));
    }
    nn::Conv2d conv1{nullptr}, conv2{nullptr};
    nn::Linear fc1{nullptr}, fc2{nullptr};
};

enum class Kind { mlp, cnn };

#define TORCH_FASHION_TRAIN_KEYS(KEY)                                                                           \
    KEY(epochs, std::int64_t, "3", at_least(1), "passes over the training set")                                \
    KEY(batch_size, std::int64_t, "64", at_least(1), "global batch, split over the ranks")                     \
    KEY(lr, std::optional<double>, "", at_least(1e-12),                                                        \
        "learning rate (unset: the workload's recipe: SGD 0.001, Adam 0.001)")                                 \
    KEY(init_weights, std::string, "", a_path(),                                                               \
        "torch_fashion_mlp: HDF5 weights to start from (hdf5_schemas/mlp_weights.md)")                         \
    KEY(save_weights, std::string, "", a_path(), "torch_fashion_mlp: write the final weights here (rank 0)") \
    KEY(deterministic, bool, "false", any_value(),                                                             \
        "deterministic algorithms (trainrt::torch::enable_reproducibility): on a GPU a run and its resume "     \
        "are then bitwise equal (cuDNN's convolutions are not otherwise); slower")
TRAINRT_KEYS(TrainKeys, "train", TORCH_FASHION_TRAIN_KEYS);

using Settings = workloads::WorkloadSettings<TrainKeys>;

struct Model {
    std::shared_ptr<nn::Module> module;
    at::Device device = at::kCPU;  // where the module and its batches are (prepare_model's device)
    std::function<at::Tensor(const at::Tensor&)> forward;
    std::unique_ptr<::torch::optim::Optimizer> optimizer;
};

void preflight(const JobConfig& config, const Context& context) {
    const Settings settings(config, context.world_size);
    for (const char* split : {"train", "test"}) {
        const Dataset dataset = data::open_dataset(data::configured_path(settings.job.data), split, context.world_rank,
                                                   context.world_size, 0);
        (void)dataset.column("images"), (void)dataset.column("labels");  // DataError naming the columns it has
    }
    const std::string& init = settings.train.init_weights.value;
    if (!init.empty()) {
        HostMlp probe;
        workloads::fashion_mlp::load_weights(init, probe);
    }
}

// Copies between the host Mlp (the weights file's and the digest's format) and the module.
void copy_weights(HostMlp& host, MlpNetImpl& net, bool to_module) {
    ::torch::NoGradGuard no_grad;
    nn::Linear* layers[] = {&net.fc1, &net.fc2, &net.fc3};
    for (int l = 0; l < 3; ++l) {
        auto& layer = host.layers()[static_cast<std::size_t>(l)];
        at::Tensor weight = at::from_blob(layer.weight.data(), {layer.outputs, layer.inputs}, at::kFloat);
        at::Tensor bias = at::from_blob(layer.bias.data(), {layer.outputs}, at::kFloat);
        if (to_module) (*layers[l])->weight.copy_(weight), (*layers[l])->bias.copy_(bias);
        else weight.copy_((*layers[l])->weight), bias.copy_((*layers[l])->bias);
    }
}

Model make_model(Kind kind, const Settings& settings) {
    ::torch::manual_seed(static_cast<std::uint64_t>(settings.job.run.seed.value));
    const double lr = settings.train.lr.value.value_or(1e-3);
    Model model;
    if (kind == Kind::mlp) {
        auto net = std::make_shared<MlpNetImpl>();
        const std::string& init = settings.train.init_weights.value;
        if (!init.empty()) {
            HostMlp host;
            workloads::fashion_mlp::load_weights(init, host);
            copy_weights(host, *net, true);
        }
        model.forward = [net](const at::Tensor& x) { return net->forward(x); };
        model.optimizer = std::make_unique<::torch::optim::SGD>(net->parameters(), ::torch::optim::SGDOptions(lr));
        model.module = net;
    } else {
        auto net = std::make_shared<CnnNetImpl>();
        model.forward = [net](const at::Tensor& x) { return net->forward(x); };
        model.optimizer = std::make_unique<::torch::optim::Adam>(net->parameters(), ::torch::optim::AdamOptions(lr));
        model.module = net;
    }
    return model;
}

// Where training stands: what a checkpoint holds besides the state dict and the stream position.
struct Progress {
    std::int64_t epoch = 0, next_batch = 0, batches = 0, step = 0;
    double loss_sum = 0;
};

// The train split as the reader streams it: pixels scaled to [0, 1] (ToTensor) and labels widened
// to int64 on the reader's thread. A checkpoint's position is only valid under these options.
struct TrainStream {
    Dataset dataset;
    BatchOptions options;
};

constexpr std::size_t kEvalBatch = 1000;

// On the reader's thread: "pixels" float32 [n, 1, H, W] and "targets" int64 [n] from the uint8
// "images" and "labels" (set() may move the columns: read them after it).
void to_model_inputs(trainrt::Batch& batch) {
    std::vector<std::size_t> shape{batch.count, 1};
    const std::vector<std::size_t>& image = batch.column("images").shape();
    shape.insert(shape.end(), image.begin() + 1, image.end());
    float* pixels = batch.set<float>("pixels", shape).data();
    std::int64_t* targets = batch.set<std::int64_t>("targets", {batch.count}).data();
    const std::span<const std::uint8_t> raw = batch.view<std::uint8_t>("images");
    for (std::size_t i = 0; i < raw.size(); ++i) pixels[i] = static_cast<float>(raw[i]) / 255.0f;
    const std::span<const std::uint8_t> labels = batch.view<std::uint8_t>("labels");
    for (std::size_t i = 0; i < labels.size(); ++i) targets[i] = labels[i];
}

BatchOptions stream_options(const Settings& settings, const std::string& split, std::size_t batch) {
    BatchOptions options = data::batch_options(settings.job.data, split, batch);
    options.columns = std::vector<std::string>{"images", "labels"};
    options.transform = to_model_inputs;
    return options;
}

// The position from the stream's attributes, or from the epoch and next_batch attributes of
// checkpoints written before the torch workloads streamed (the same global batches).
Progress restore(Session& session, Model& model, const TrainStream& stream) {
    const Checkpoint* checkpoint = session.checkpoint();
    if (checkpoint == nullptr) return {};
    load_module(*checkpoint, *model.module);
    load_optimizer(*checkpoint, *model.optimizer);
    load_rng(*checkpoint, session.context());
    DataPosition position{checkpoint->attribute_int("epoch"), checkpoint->attribute_int("next_batch")};
    if (auto saved = load_position(*checkpoint, stream.dataset, stream.options)) position = *saved;
    return {position.epoch, position.next_batch, checkpoint->attribute_int("batches"),
            checkpoint->attribute_int("step"), checkpoint->attribute_double("loss_sum")};
}

StateDict snapshot(const Context& context, Model& model, const Progress& progress, const TrainStream& stream) {
    StateDict dict;
    dict.module(*model.module).optimizer(*model.optimizer).rng(context);
    dict.stream_position(stream.dataset, {progress.epoch, progress.next_batch}, stream.options);
    dict.attribute("epoch", progress.epoch).attribute("next_batch", progress.next_batch)
        .attribute("batches", progress.batches).attribute("step", progress.step).attribute("loss_sum", progress.loss_sum);
    return dict;
}

at::Tensor on_device(const Model& model, const trainrt::Batch& part, const char* column) {
    return to_tensor(part.column(column)).to(model.device);
}

double mean_over_ranks(Session& session, double value) {
    return session.communicator().allreduce_value(value, ReduceOp::mean);
}

// One step on this rank's part of a global batch: the part's summed loss divided by mean_over, so
// DDP's average over the ranks is the global batch's mean (an empty part still joins DDP's
// allreduce, with zero gradients). Returns the divided loss. A background snapshot of the last
// checkpoint is awaited before the optimizer changes the weights (prepare_model's backward does on
// several ranks; one rank has no DDP hooks).
double train_step(Session& session, Model& model, const trainrt::Batch& part) {
    const auto summed = ::torch::nn::functional::CrossEntropyFuncOptions().reduction(::torch::kSum);
    model.optimizer->zero_grad();
    at::Tensor loss = ::torch::nn::functional::cross_entropy(model.forward(on_device(model, part, "pixels")),
                                                             on_device(model, part, "targets"), summed)
                          .div(part.mean_over);
    loss.backward();
    session.await_snapshot();
    model.optimizer->step();
    return loss.item<double>();
}

// Runs the rest of the epoch (checkpoints as at_step_boundary says); false when a stop was agreed
// (its checkpoint reported).
// Batch b is this rank's part of global batch b, so a checkpoint's position means the same
// samples on any number of ranks.
bool train_epoch(Session& session, const Settings& settings, Model& model, const TrainStream& stream,
                 Progress& progress) {
    const std::int64_t every = settings.job.checkpoint.every_steps.value;
    BatchIterator batches = stream.dataset.iter_batches(stream.options, {progress.epoch, progress.next_batch});
    const auto last = static_cast<std::int64_t>(batches.batches());
    model.module->train();
    while (const trainrt::Batch* part = batches.next()) {
        const double loss = train_step(session, model, *part);
        const auto b = static_cast<std::int64_t>(part->index);
        progress = {progress.epoch, b + 1, progress.batches + 1, progress.step + 1, progress.loss_sum + loss};
        const StepBoundary boundary = at_step_boundary(session, progress.step, every, b + 1 >= last);
        if (boundary.stop) {  // the stop's checkpoint, without a row (Session::save_at_stop)
            session.save_at_stop(snapshot(session.context(), model, progress, stream).state());
        } else if (boundary.save) {
            Metrics metrics;
            metrics.set("epoch", progress.epoch + 1).set("step", progress.step)
                .set("running_loss", mean_over_ranks(session, progress.loss_sum / progress.batches));
            session.report(metrics, snapshot(session.context(), model, progress, stream).state());
        }
        if (boundary.stop) return false;
    }
    return true;
}

// Test-set loss and accuracy: every sample once, over the ranks' parts of global batches.
std::pair<double, double> evaluate(Session& session, const Settings& settings, Model& model) {
    ::torch::NoGradGuard no_grad;
    model.module->eval();
    double totals[3] = {0.0, 0.0, 0.0};
    BatchIterator batches = session.dataset("test").iter_batches(stream_options(settings, "test", kEvalBatch), 0);
    while (const trainrt::Batch* part = batches.next()) {
        const at::Tensor labels = on_device(model, *part, "targets");
        const at::Tensor logits = model.forward(on_device(model, *part, "pixels"));
        totals[0] += ::torch::nn::functional::cross_entropy(logits, labels,
                         ::torch::nn::functional::CrossEntropyFuncOptions().reduction(::torch::kSum)).item<double>();
        totals[1] += logits.argmax(1).eq(labels).sum().item<double>();
        totals[2] += static_cast<double>(part->count);
    }
    session.communicator().allreduce(totals, 3, DType::f64, ReduceOp::sum);
    return {totals[0] / totals[2], totals[1] / totals[2]};
}

std::string digest_of(Kind kind, Model& model) {
    if (kind == Kind::mlp) {
        HostMlp host;
        copy_weights(host, static_cast<MlpNetImpl&>(*model.module), false);
        return workloads::fashion_mlp::weights_digest(host);
    }
    std::vector<float> all;
    for (const at::Tensor& p : model.module->parameters()) {
        at::Tensor flat = p.detach().to(at::kCPU).contiguous().view({-1});
        all.insert(all.end(), flat.data_ptr<float>(), flat.data_ptr<float>() + flat.numel());
    }
    return workloads::fashion_mlp::floats_digest(all);
}

void finish(Session& session, const Settings& settings, Kind kind, Model& model) {
    const std::string& save = settings.train.save_weights.value;
    if (kind == Kind::mlp && !save.empty() && session.context().world_rank == 0) {
        HostMlp host;
        copy_weights(host, static_cast<MlpNetImpl&>(*model.module), false);
        workloads::fashion_mlp::save_weights(save, host);
    }
    const std::string digest = digest_of(kind, model);
    if (session.context().world_rank == 0) std::cout << "weights_digest=" << digest << std::endl;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Per epoch it reports what fashion_mlp does (train, eval and epoch times included, this rank's).
void run(Session& session, Kind kind) {
    set_compute_threads(session);
    const Settings settings(session.config(), session.context().world_size);
    const std::int64_t epochs = settings.train.epochs.value;
    const TrainStream stream{session.dataset("train"), stream_options(settings, "train", settings.global_batch)};
    if (settings.train.deterministic.value) enable_reproducibility();
    Model model = make_model(kind, settings);
    DistributedModule ddp = prepare_model(model.module, session);  // before the optimizer's state is made
    model.device = device(session);
    Progress progress = restore(session, model, stream);
    while (progress.epoch < epochs) {
        const auto started = std::chrono::steady_clock::now();
        if (!train_epoch(session, settings, model, stream, progress)) return;
        const double train_s = seconds_since(started);
        const double loss = mean_over_ranks(session, progress.batches > 0 ? progress.loss_sum / progress.batches : 0.0);
        const auto evaluated = std::chrono::steady_clock::now();
        const auto [test_loss, accuracy] = evaluate(session, settings, model);
        const double eval_s = seconds_since(evaluated);
        progress = {progress.epoch + 1, 0, 0, progress.step, 0.0};
        Metrics metrics;
        metrics.set("epoch", progress.epoch).set("loss", loss).set("test_loss", test_loss).set("test_accuracy", accuracy)
            .set("train_time_s", train_s).set("eval_time_s", eval_s).set("epoch_time_s", train_s + eval_s);
        session.report(metrics, snapshot(session.context(), model, progress, stream).state());
        if (progress.epoch < epochs && session.should_stop()) return;
    }
    session.await_snapshot();  // the model goes when this returns
    finish(session, settings, kind, model);
}

void run_mlp(Session& session) { run(session, Kind::mlp); }
void run_cnn(Session& session) { run(session, Kind::cnn); }

}  // namespace

TRAINRT_WORKLOAD_WITH(torch_fashion_mlp, "Ray Train's FashionMNIST recipe in LibTorch: MLP 784-512-512-10, SGD, DDP",
                      run_mlp, TrainKeys::specs, preflight);
TRAINRT_WORKLOAD_WITH(torch_fashion_cnn, "a convolutional net on FashionMNIST in LibTorch: conv/pool/conv/pool/fc/fc, Adam, DDP",
                      run_cnn, TrainKeys::specs, preflight);

}  // namespace trainrt::torch
