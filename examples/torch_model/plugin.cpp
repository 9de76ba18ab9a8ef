// Your own LibTorch model on trainrt: a residual MLP (a custom torch::nn::Module with layer norm
// and dropout) trained data-parallel on FashionMNIST with AdamW. It is what a training function
// needs to do for trainrt to take care of the rest: DDP with prepare_model, the rank's data with
// ShardLoader, state dict checkpoints with report(), resume with get_checkpoint(), and a clean stop
// when Slurm asks (should_stop). Selected with run.workload = plugin:/path/libtorch_model.so.
#include <torch/torch.h>
#include <trainrt/error.hpp>
#include <trainrt/plugin.hpp>
#include <trainrt/torch.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>

namespace nn = torch::nn;
namespace tt = trainrt::torch;

// x + dropout(relu(norm(linear(x)))): a block whose output has its input's width.
struct ResidualBlockImpl : nn::Module {
    ResidualBlockImpl(int64_t width, double dropout)
        : linear(register_module("linear", nn::Linear(width, width))),
          norm(register_module("norm", nn::LayerNorm(nn::LayerNormOptions({width})))),
          drop(register_module("drop", nn::Dropout(dropout))) {}
    torch::Tensor forward(const torch::Tensor& x) { return x + drop(torch::relu(norm(linear(x)))); }
    nn::Linear linear;
    nn::LayerNorm norm;
    nn::Dropout drop;
};
TORCH_MODULE(ResidualBlock);

struct ResidualMlpImpl : nn::Module {
    ResidualMlpImpl(int64_t width, int64_t blocks, double dropout)
        : stem(register_module("stem", nn::Linear(28 * 28, width))),
          head(register_module("head", nn::Linear(width, 10))) {
        for (int64_t b = 0; b < blocks; ++b) body->push_back(ResidualBlock(width, dropout));
        register_module("body", body);
    }
    torch::Tensor forward(const torch::Tensor& images) {
        return head(body->forward(torch::relu(stem(images.flatten(1)))));
    }
    nn::Linear stem, head;
    nn::Sequential body;
};
TORCH_MODULE(ResidualMlp);

namespace {

// The test set's accuracy over every rank's real (not padded) samples.
double accuracy(trainrt::Session& session, ResidualMlp& model, const trainrt::DatasetShard& test) {
    torch::NoGradGuard no_grad;
    model->eval();
    const tt::ShardLoader loader(test, 1000);
    double counts[2] = {0, static_cast<double>(test.count - test.padded)};
    int64_t seen = 0;
    for (int64_t b = 0; b < loader.size(); ++b) {
        tt::Batch batch = loader.batch(b);
        const int64_t real = std::min<int64_t>(batch.labels.size(0), static_cast<int64_t>(counts[1]) - seen);
        torch::Tensor right = model(batch.features).argmax(1).eq(batch.labels).narrow(0, 0, real);
        counts[0] += right.sum().item<double>(), seen += real;
    }
    session.communicator().allreduce(counts, 2, trainrt::DType::f64, trainrt::ReduceOp::sum);
    model->train();
    return counts[0] / counts[1];
}

// FNV-1a over every parameter's bytes: equal digests mean bitwise equal models.
std::string digest(ResidualMlp& model) {
    std::uint64_t hash = 1469598103934665603ull;
    for (const torch::Tensor& p : model->parameters()) {
        const torch::Tensor flat = p.detach().contiguous();
        const auto* bytes = static_cast<const unsigned char*>(flat.data_ptr());
        for (size_t i = 0; i < flat.nbytes(); ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
    }
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
    return text;
}

// Checked on every rank before anything starts: one line and exit 2 instead of a failed run.
void preflight(const trainrt::JobConfig& config, const trainrt::Context& context) {
    const int64_t batch = config.get_int("train.batch_size");
    if (batch % context.world_size != 0)
        throw trainrt::ConfigError("torch_model: train.batch_size=" + std::to_string(batch) + " does not divide by the " +
                                   std::to_string(context.world_size) + " ranks; use a multiple of the rank count");
}

void train(trainrt::Session& session) {
    const trainrt::JobConfig& config = session.config();
    tt::set_compute_threads(session);
    torch::manual_seed(static_cast<uint64_t>(config.get_int("run.seed")));  // equal init on every rank
    ResidualMlp model(config.get_int("train.width"), config.get_int("train.blocks"), config.get_double("train.dropout"));
    torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(config.get_double("train.lr")));
    const int64_t epochs = config.get_int("train.epochs");
    const int64_t batch = config.get_int("train.batch_size") / session.context().world_size;
    const int64_t report_every = config.get_int("train.report_every");  // batches

    int64_t epoch = 0, next_batch = 0;
    if (const trainrt::Checkpoint* checkpoint = session.checkpoint()) {  // a requeue, a stop or a crash
        tt::load_module(*checkpoint, *model);
        tt::load_optimizer(*checkpoint, optimizer);
        tt::load_rng(*checkpoint);  // dropout continues with the same masks
        epoch = checkpoint->attribute_int("epoch");
        next_batch = checkpoint->attribute_int("next_batch");
    }
    tt::DistributedModule ddp = tt::prepare_model(model.ptr(), session);  // rank 0's weights, averaged gradients
    const trainrt::DatasetShard test = session.dataset_shard("test", 0);
    // A checkpoint says where to go on: the epoch and the next batch of its shard.
    auto save = [&](const trainrt::Metrics& metrics, int64_t at_epoch, int64_t at_batch) {
        tt::StateDict state;
        state.module(*model).optimizer(optimizer).rng().attribute("epoch", at_epoch).attribute("next_batch", at_batch);
        session.report(metrics, state.state());
    };
    for (; epoch < epochs; ++epoch, next_batch = 0) {
        const trainrt::DatasetShard shard = session.dataset_shard("train", static_cast<uint64_t>(epoch));
        const tt::ShardLoader loader(shard, batch);
        double loss_sum = 0;
        for (int64_t b = next_batch; b < loader.size(); ++b) {
            tt::Batch data = loader.batch(b);
            optimizer.zero_grad();
            torch::Tensor loss = torch::nn::functional::cross_entropy(model(data.features), data.labels);
            loss.backward();
            optimizer.step();
            loss_sum += loss.item<double>();
            if (report_every > 0 && (b + 1) % report_every == 0 && b + 1 < loader.size()) {  // progress, no checkpoint
                const double running = loss_sum / static_cast<double>(b + 1 - next_batch);
                session.report(trainrt::Metrics().set("epoch", epoch).set("batch", b + 1).set(
                    "running_loss", session.communicator().allreduce_value(running, trainrt::ReduceOp::mean)));
            }
            if (b + 1 < loader.size() && session.should_stop()) {  // Slurm's time limit or preemption
                save(trainrt::Metrics().set("epoch", epoch).set("batch", b + 1), epoch, b + 1);
                return;  // trainrt commits the checkpoint, requeues the job and exits
            }
        }
        const double loss = session.communicator().allreduce_value(loss_sum / static_cast<double>(loader.size() - next_batch),
                                                                   trainrt::ReduceOp::mean);
        save(trainrt::Metrics().set("epoch", epoch + 1).set("loss", loss).set("test_accuracy", accuracy(session, model, test)),
             epoch + 1, 0);
        if (epoch + 1 < epochs && session.should_stop()) return;
    }
    if (session.context().world_rank == 0) std::cout << "torch_model_digest=" << digest(model) << std::endl;
}

}  // namespace

TRAINRT_WORKLOAD_WITH(torch_model, "a residual MLP in LibTorch on FashionMNIST, AdamW", train, nullptr, preflight);
