// Your own LibTorch model on trainrt: a residual MLP (a custom torch::nn::Module with layer norm
// and dropout) trained data-parallel with AdamW on any table imported with `trainrt data import`
// (a CSV's features and label, FashionMNIST's images and labels: the file's own feature and label
// columns). It is what a training function needs to do for trainrt to take care of the rest: its
// keys declared (trainrt/keys.hpp), DDP with prepare_model, the rank's part of each batch from the
// streaming reader (session.dataset), state dict checkpoints with report() that hold the stream's
// position, resume with checkpoint(), and a clean stop when Slurm asks (should_stop). Selected with
// run.workload = plugin:/path/libtorch_model.so.
#include <torch/torch.h>
#include <trainrt/error.hpp>
#include <trainrt/keys.hpp>
#include <trainrt/plugin.hpp>
#include <trainrt/torch.hpp>

#include <algorithm>
#include <cstdint>
#include <iostream>

namespace nn = torch::nn;
namespace tt = trainrt::torch;

// x + dropout(relu(norm(linear(x)))): a block whose output has its input's width. The norm is a
// layer norm, or a batch norm (running statistics: buffers that prepare_model keeps equal on
// every rank and StateDict saves, so a resumed run reports the uninterrupted run's numbers).
struct ResidualBlockImpl : nn::Module {
    ResidualBlockImpl(int64_t width, double dropout, bool batch_norm)
        : linear(register_module("linear", nn::Linear(width, width))),
          norm(batch_norm ? nn::AnyModule(nn::BatchNorm1d(width)) : nn::AnyModule(nn::LayerNorm(nn::LayerNormOptions({width})))),
          drop(register_module("drop", nn::Dropout(dropout))) {
        register_module("norm", norm.ptr());
    }
    torch::Tensor forward(const torch::Tensor& x) { return x + drop(torch::relu(norm.forward(linear(x)))); }
    nn::Linear linear;
    nn::AnyModule norm;
    nn::Dropout drop;
};
TORCH_MODULE(ResidualBlock);

struct ResidualMlpImpl : nn::Module {
    ResidualMlpImpl(int64_t inputs, int64_t width, int64_t blocks, double dropout, bool batch_norm, int64_t classes)
        : stem(register_module("stem", nn::Linear(inputs, width))),
          head(register_module("head", nn::Linear(width, classes))) {
        for (int64_t b = 0; b < blocks; ++b) body->push_back(ResidualBlock(width, dropout, batch_norm));
        register_module("body", body);
    }
    torch::Tensor forward(const torch::Tensor& features) {
        return head(body->forward(torch::relu(stem(features.flatten(1)))));
    }
    nn::Linear stem, head;
    nn::Sequential body;
};
TORCH_MODULE(ResidualMlp);

// The [train] keys, declared once: checked before anything starts, listed by --help.
#define TORCH_MODEL_TRAIN_KEYS(KEY)                                                                   \
    KEY(epochs, int64_t, "3", trainrt::at_least(1), "passes over the training split")                 \
    KEY(batch_size, int64_t, "128", trainrt::at_least(1), "global batch, split over the ranks")       \
    KEY(lr, double, "0.001", trainrt::between(1e-12, 10), "AdamW learning rate")                      \
    KEY(width, int64_t, "256", trainrt::at_least(1), "the residual blocks' width")                    \
    KEY(blocks, int64_t, "2", trainrt::at_least(0), "residual blocks")                                \
    KEY(dropout, double, "0.1", trainrt::between(0, 1), "dropout after each block's norm")            \
    KEY(norm, std::string, "layer", trainrt::one_of({"layer", "batch"}), "each block's norm")        \
    KEY(report_every, int64_t, "100", trainrt::at_least(0), "steps between progress rows (0: none)")
TRAINRT_KEYS(TorchModelKeys, "train", TORCH_MODEL_TRAIN_KEYS);

namespace {

// What the table gives the model: its feature and label columns, the features per sample and the
// classes (the importer records num_classes for integer labels).
struct Table {
    std::string features, label;
    int64_t inputs = 1, classes = 0;
    bool bytes = false;  // u8 features (images): scaled to [0, 1]
};

Table describe(const trainrt::Dataset& train) {
    Table table{train.feature_column(), train.label_column()};
    if (table.features.empty() || table.label.empty())
        throw trainrt::DataError("torch_model: " + train.path() + " names no feature or label column; import it "
                                 "with --features and --label");
    const trainrt::ColumnInfo& features = train.column(table.features);
    for (std::size_t d : features.sample_shape) table.inputs *= static_cast<int64_t>(d);
    table.bytes = features.type == trainrt::ColumnType::u8;
    table.classes = train.column(table.label).num_classes;
    if (table.classes < 2)
        throw trainrt::DataError("torch_model: label column '" + table.label + "' of " + train.path() +
                                 " records no class count: import integer labels 0..C-1");
    return table;
}

// The split's stream: the job's [data] options for this global batch, and on the reader's thread
// float32 features "x" and int64 labels "y" (the training thread only makes tensors of them).
trainrt::BatchOptions stream_options(const trainrt::JobConfig& config, const std::string& split, std::size_t batch,
                                     const Table& table) {
    trainrt::BatchOptions options = trainrt::configured_batch_options(config, split, batch);
    options.columns = std::vector<std::string>{table.features, table.label};
    options.transform = [table](trainrt::Batch& b) {
        float* x = b.set<float>("x", {b.count, static_cast<std::size_t>(table.inputs)}).data();
        b.column(table.features).copy_to(x);
        if (table.bytes)
            for (std::size_t i = 0; i < b.count * static_cast<std::size_t>(table.inputs); ++i) x[i] /= 255.0f;
        b.column(table.label).copy_to(b.set<int64_t>("y", {b.count}).data());
    };
    return options;
}

// The accuracy over every rank's part of the split (the test split, else the training one).
double accuracy(trainrt::Session& session, ResidualMlp& model, const Table& table) {
    std::string split = "test";
    try {
        session.dataset(split);
    } catch (const trainrt::DataError&) {
        split = "train";
    }
    torch::NoGradGuard no_grad;
    model->eval();
    double counts[2] = {0, 0};
    trainrt::BatchIterator batches =
        session.dataset(split).iter_batches(stream_options(session.config(), split, 1000, table), 0);
    const torch::Device device = tt::device(session);
    while (const trainrt::Batch* b = batches.next()) {
        if (b->count == 0) continue;
        torch::Tensor right = model(tt::to_tensor(b->column("x")).to(device)).argmax(1).eq(tt::to_tensor(b->column("y")).to(device));
        counts[0] += right.sum().item<double>(), counts[1] += static_cast<double>(b->count);
    }
    session.communicator().allreduce(counts, 2, trainrt::DType::f64, trainrt::ReduceOp::sum);
    model->train();
    return counts[0] / counts[1];
}

// Checked on every rank before anything starts: one line and exit 2 instead of a failed run.
void preflight(const trainrt::JobConfig& config, const trainrt::Context& context) {
    const TorchModelKeys keys = TorchModelKeys::read(config);
    if (keys.batch_size.value % context.world_size != 0)
        throw trainrt::ConfigError("torch_model: " + keys.batch_size.stated(std::to_string(keys.batch_size.value)) +
                                   " does not divide by the " + std::to_string(context.world_size) +
                                   " ranks; use a multiple of the rank count");
}

// One step on this rank's part of a global batch, on `device` (tt::device: the rank's GPU with
// scaling.use_gpu): its summed loss over the global batch's mean count, so DDP's average is the
// global batch's mean.
double train_step(ResidualMlp& model, torch::optim::Optimizer& optimizer, const trainrt::Batch& b,
                  const torch::Device& device) {
    optimizer.zero_grad();
    const auto summed = torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum);
    torch::Tensor loss = torch::nn::functional::cross_entropy(model(tt::to_tensor(b.column("x")).to(device)),
                                                              tt::to_tensor(b.column("y")).to(device), summed)
                             .div(b.mean_over);
    loss.backward();
    optimizer.step();
    return loss.item<double>();
}

// The epoch's loss so far on this rank: saved in every checkpoint (its own value on each rank),
// so that a run resumed mid-epoch reports the uninterrupted run's running and epoch losses.
struct EpochLoss {
    double sum = 0;
    int64_t steps = 0;
    double mean(trainrt::Session& session) const {
        return session.communicator().allreduce_value(sum / static_cast<double>(std::max<int64_t>(steps, 1)),
                                                      trainrt::ReduceOp::mean);
    }
    torch::Tensor tensor() const { return torch::tensor({sum, static_cast<double>(steps)}, torch::kFloat64); }
    // On another world size the ranks' sums are not this world's: the epoch's average starts over.
    void load(const trainrt::Checkpoint& checkpoint, const trainrt::Context& context) {
        torch::Tensor saved = tensor();
        if (!tt::load_per_rank(checkpoint, context, "epoch_loss", saved)) return;
        sum = saved[0].item<double>(), steps = static_cast<int64_t>(saved[1].item<double>());
    }
};

// Restores what save() below wrote; returns where the stream goes on.
trainrt::DataPosition resume(const trainrt::Checkpoint& checkpoint, const trainrt::Context& context, ResidualMlp& model,
                             torch::optim::Optimizer& optimizer, const trainrt::Dataset& data,
                             const trainrt::BatchOptions& options, EpochLoss& loss) {
    tt::load_module(checkpoint, *model);
    tt::load_optimizer(checkpoint, optimizer);
    tt::load_rng(checkpoint, context);  // each rank's dropout continues with the same masks
    loss.load(checkpoint, context);
    return trainrt::load_position(checkpoint, data, options).value_or(trainrt::DataPosition{0, 0});
}

void train(trainrt::Session& session) {
    const TorchModelKeys keys = TorchModelKeys::read(session.config());
    tt::set_compute_threads(session);
    const trainrt::Dataset data = session.dataset("train");
    const Table table = describe(data);
    const trainrt::BatchOptions options =
        stream_options(session.config(), "train", static_cast<std::size_t>(keys.batch_size.value), table);
    torch::manual_seed(trainrt::run_seed(session.config()));  // equal init on every rank
    ResidualMlp model(table.inputs, keys.width.value, keys.blocks.value, keys.dropout.value,
                      keys.norm.value == "batch", table.classes);
    torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(keys.lr.value));

    // Rank 0's weights on every rank, on the rank's device; gradients averaged. Before resume(), so
    // that the optimizer's state is made on that device.
    tt::DistributedModule ddp = tt::prepare_model(model.ptr(), session);
    const torch::Device device = tt::device(session);
    trainrt::DataPosition at{0, 0};
    EpochLoss loss;
    if (const trainrt::Checkpoint* checkpoint = session.checkpoint())  // a requeue, a stop or a crash
        at = resume(*checkpoint, session.context(), model, optimizer, data, options, loss);
    auto state_at = [&](const trainrt::DataPosition& position) {
        tt::StateDict state;
        state.module(*model).optimizer(optimizer).rng(session.context()).stream_position(data, position, options);
        state.per_rank(session.context(), "epoch_loss", loss.tensor());
        return state;
    };
    for (; at.epoch < keys.epochs.value; ++at.epoch, at.next_batch = 0) {
        trainrt::BatchIterator batches = data.iter_batches(options, at);
        while (const trainrt::Batch* b = batches.next()) {
            loss.sum += train_step(model, optimizer, *b, device), ++loss.steps;
            const trainrt::DataPosition next = batches.position();
            const bool more = next.next_batch < static_cast<int64_t>(batches.batches());
            if (keys.report_every.value > 0 && next.next_batch % keys.report_every.value == 0 && more)  // progress
                session.report(trainrt::Metrics().set("epoch", at.epoch).set("batch", next.next_batch).set(
                    "running_loss", loss.mean(session)));
            if (more && session.should_stop()) {  // Slurm's time limit or preemption
                session.save_at_stop(state_at(next).state());  // no row: the resumed run reports as if never stopped
                return;  // trainrt commits the checkpoint, requeues the job and exits
            }
        }
        const double epoch_loss = loss.mean(session);
        loss = {};  // the checkpoint at the epoch's end starts the next epoch
        session.report(trainrt::Metrics().set("epoch", at.epoch + 1).set("loss", epoch_loss).set(
                           "test_accuracy", accuracy(session, model, table)),
                       state_at({at.epoch + 1, 0}).state());
        if (at.epoch + 1 < keys.epochs.value && session.should_stop()) return;
    }
    if (session.context().world_rank == 0) std::cout << "torch_model_digest=" << tt::weights_digest(*model) << std::endl;
}

}  // namespace

TRAINRT_WORKLOAD_WITH(torch_model, "a residual MLP in LibTorch on any imported table, AdamW", train,
                      TorchModelKeys::specs, preflight);
