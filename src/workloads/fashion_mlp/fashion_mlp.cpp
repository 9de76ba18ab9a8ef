#include "trainrt/plugin.hpp"

#include <chrono>
#include <tuple>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "data/global_batch.hpp"
#include "data/shard.hpp"
#include "trainrt/error.hpp"
#include "workloads/fashion_mlp/engine.hpp"
#include "workloads/fashion_mlp/mlp.hpp"
#include "workloads/fashion_mlp/weights_file.hpp"

namespace trainrt::workloads::fashion_mlp {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Settings {
    std::int64_t epochs;
    std::size_t global_batch;  // split over the ranks by trainrt::batch_part
    float lr;
    bool shuffle;
    std::uint64_t seed;
};

void preflight(const JobConfig& config, const Context& context) {
    data::configured_global_batch(config, context.world_size);
    data::check_split(config.get("data.path"), "train");
    data::check_split(config.get("data.path"), "test");
    std::string init_file = config.get_or("train.init_weights", "");
    if (!init_file.empty()) {
        Mlp probe;
        load_weights(init_file, probe);
    }
}

Settings read_settings(Session& session) {
    const JobConfig& config = session.config();
    return {config.get_int("train.epochs"), data::configured_global_batch(config, session.context().world_size),
            static_cast<float>(config.get_double("train.lr")), config.get_bool("data.shuffle"),
            static_cast<std::uint64_t>(config.get_int("run.seed"))};
}

// Ranks start from identical weights: rank 0's, as DDP broadcasts them.
void initialise(Session& session, Mlp& model, std::uint64_t seed) {
    std::string init_file = session.config().get_or("train.init_weights", "");
    if (init_file.empty())
        model.init_uniform(seed);
    else if (session.context().world_rank == 0)
        load_weights(init_file, model);
    for (Layer& layer : model.layers()) {
        session.communicator().broadcast(layer.weight.data(), layer.weight.size() * sizeof(float), 0);
        session.communicator().broadcast(layer.bias.data(), layer.bias.size() * sizeof(float), 0);
    }
}

struct Evaluation {
    double loss;
    double accuracy;
};

Evaluation evaluate(Session& session, Engine& engine, const DatasetShard& shard) {
    constexpr int kEvalBatch = 1000;
    const std::size_t real = shard.count - shard.padded;  // padded samples are not counted
    double totals[3] = {0.0, 0.0, static_cast<double>(real)};  // loss sum, correct, samples
    std::int64_t correct = 0;
    engine.evaluate(real, kEvalBatch, totals[0], correct);
    totals[1] = static_cast<double>(correct);
    session.communicator().allreduce(totals, 3, DType::f64, ReduceOp::sum);
    return {totals[0] / totals[2], totals[1] / totals[2]};
}

// Where training stands: what a checkpoint must hold to continue bitwise-exactly.
struct Progress {
    std::int64_t epoch = 0;       // the epoch in progress (0-based)
    std::int64_t next_batch = 0;  // its next local batch
    double loss_sum = 0.0;        // this rank's sum of batch losses so far in the epoch
    std::int64_t batches = 0;     // batches summed into loss_sum
    std::int64_t step = 0;        // training steps done in the whole run
};

CheckpointState make_state(const Mlp& model, const Progress& progress, const Context& context) {
    CheckpointState state;
    for (int l = 0; l < kLayers; ++l) {
        const Layer& layer = model.layers()[l];
        const std::uint64_t outputs = layer.outputs, inputs = layer.inputs;
        state.replicated<float>(fmt::format("fc{}.weight", l + 1), layer.weight, {outputs, inputs});
        state.replicated<float>(fmt::format("fc{}.bias", l + 1), layer.bias, {outputs});
    }
    // Each rank's partial loss sum differs: a sharded tensor, one element per rank.
    const auto ranks = static_cast<std::uint64_t>(context.world_size);
    const auto rank = static_cast<std::uint64_t>(context.world_rank);
    state.sharded<double>("loss_sum", std::span<const double>(&progress.loss_sum, 1), {ranks},
                          {rank}, {1});
    state.attribute("epoch", progress.epoch).attribute("next_batch", progress.next_batch)
        .attribute("batches", progress.batches).attribute("step", progress.step);
    return state;
}

void check_shape(const Checkpoint& checkpoint, const std::string& name, const Shape& expected) {
    Shape stored = checkpoint.global_shape(name);
    if (stored != expected)
        throw CheckpointError(fmt::format(
            "checkpoint {}: tensor '{}' has shape [{}], fashion_mlp needs [{}]; it was written by "
            "another model", checkpoint.path(), name, fmt::join(stored, ", "), fmt::join(expected, ", ")));
}

Progress restore(const Checkpoint& checkpoint, Mlp& model, const Context& context) {
    for (int l = 0; l < kLayers; ++l) {
        Layer& layer = model.layers()[l];
        const std::uint64_t outputs = layer.outputs, inputs = layer.inputs;
        for (auto [name, shape, values] :
             {std::tuple{fmt::format("fc{}.weight", l + 1), Shape{outputs, inputs}, &layer.weight},
              std::tuple{fmt::format("fc{}.bias", l + 1), Shape{outputs}, &layer.bias}}) {
            check_shape(checkpoint, name, shape);
            checkpoint.read(name, TensorType::f32, Shape(shape.size(), 0), shape, values->data());
        }
    }
    Progress progress{checkpoint.attribute_int("epoch"), checkpoint.attribute_int("next_batch"), 0.0,
                      checkpoint.attribute_int("batches"), checkpoint.attribute_int("step")};
    std::vector<double> sums = checkpoint.read_all<double>("loss_sum");
    if (checkpoint.world_size() == context.world_size)
        progress.loss_sum = sums.at(static_cast<std::size_t>(context.world_rank));
    else  // other rank count: the epoch's mean loss so far carries over, not each rank's sum
        for (double sum : sums) progress.loss_sum += sum / static_cast<double>(sums.size());
    return progress;
}

double mean_over_ranks(Session& session, const Progress& progress) {
    double mean = progress.batches > 0 ? progress.loss_sum / progress.batches : 0.0;
    return session.communicator().allreduce_value(mean, ReduceOp::mean);
}

Metrics running_metrics(Session& session, const Progress& progress) {
    Metrics metrics;
    metrics.set("epoch", progress.epoch + 1).set("step", progress.step)
        .set("running_loss", mean_over_ranks(session, progress));
    return metrics;
}

// Runs the rest of the current epoch's batches; checkpoints every `every_steps` steps and when a
// stop is agreed (then returns false: the run ends here and resumes from that checkpoint).
// The state to checkpoint, with the engine's weights brought to the host model first.
CheckpointState snapshot(Engine& engine, const Mlp& model, const Progress& progress, const Context& context) {
    engine.sync_to_host();
    return make_state(model, progress, context);
}

// The state to report with a checkpoint: the engine's running loss sum and weights brought to
// the host first.
void report_progress(Session& session, Engine& engine, const Mlp& model, Progress& progress) {
    progress.loss_sum = engine.loss_sum();
    session.report(running_metrics(session, progress), snapshot(engine, model, progress, session.context()));
}

bool train_epoch(Session& session, const Mlp& model, Engine& engine, const DatasetShard& shard,
                 const Settings& settings, Progress& progress) {
    const std::int64_t every = session.config().get_int("checkpoint.every_steps");
    const auto batches = static_cast<std::int64_t>(global_batches(shard.global_count, settings.global_batch));
    const Context& context = session.context();
    engine.set_loss_sum(progress.loss_sum);
    for (std::int64_t b = progress.next_batch; b < batches; ++b) {
        const BatchPart part = batch_part(static_cast<std::size_t>(b), shard.global_count, settings.global_batch,
                                          context.world_size, context.world_rank);
        engine.train_step(part.first, static_cast<int>(part.count), static_cast<float>(part.mean_over), settings.lr);
        ++progress.batches;
        ++progress.step;
        progress.next_batch = b + 1;
        const bool periodic = every > 0 && progress.step % every == 0 && b + 1 < batches;
        if (periodic) report_progress(session, engine, model, progress);
        if (session.should_stop()) {
            if (!periodic) report_progress(session, engine, model, progress);
            return false;
        }
    }
    progress.loss_sum = engine.loss_sum();
    return true;
}

Progress start(Session& session, Mlp& model, const Settings& settings) {
    if (const Checkpoint* checkpoint = session.checkpoint())
        return restore(*checkpoint, model, session.context());
    initialise(session, model, settings.seed);
    return {};
}

void run(Session& session) {
    const Settings settings = read_settings(session);
    Mlp model;
    Progress progress = start(session, model, settings);
    auto bucket_bytes = static_cast<std::size_t>(session.config().get_double("scaling.bucket_mb") * 1048576.0);
    CudaOptions cuda;
    cuda.resident_data = session.config().get_bool("train.gpu_resident_data");
    std::unique_ptr<Engine> engine = session.config().get_bool("scaling.use_gpu")
                                         ? make_cuda_engine(model, session.communicator(), cuda)
                                         : make_cpu_engine(model, session.communicator(), bucket_bytes);
    const DatasetShard test = session.dataset_shard("test", 0);
    engine->set_data(Split::test, test);
    DatasetShard train;
    for (bool first = true; progress.epoch < settings.epochs; first = false) {
        if (first || settings.shuffle) {
            train = session.dataset_shard("train", static_cast<std::uint64_t>(progress.epoch));
            engine->set_data(Split::train, train);
        }
        auto started = Clock::now();
        if (!train_epoch(session, model, *engine, train, settings, progress)) return;
        double loss = mean_over_ranks(session, progress);
        double train_time = seconds_since(started);
        auto eval_start = Clock::now();
        Evaluation evaluation = evaluate(session, *engine, test);
        double eval_time = seconds_since(eval_start);
        Metrics metrics;
        metrics.set("epoch", progress.epoch + 1).set("loss", loss).set("test_loss", evaluation.loss)
            .set("test_accuracy", evaluation.accuracy).set("train_time_s", train_time)
            .set("eval_time_s", eval_time).set("epoch_time_s", train_time + eval_time)
            .set("samples_per_s", static_cast<double>(train.global_count) / train_time);
        progress = {progress.epoch + 1, 0, 0.0, 0, progress.step};
        session.report(metrics, snapshot(*engine, model, progress, session.context()));
        if (progress.epoch < settings.epochs && session.should_stop()) return;
    }
    engine->sync_to_host();
    std::string save = session.config().get_or("train.save_weights", "");
    if (!save.empty() && session.context().world_rank == 0) save_weights(save, model);
    if (session.context().world_rank == 0)
        std::cout << "weights_digest=" << weights_digest(model) << std::endl;
}

std::vector<OptionSpec> train_keys() {
    OptionSpec epochs{"train.epochs", "20", ValueKind::integer, "passes over the training set"};
    epochs.min = 1;
    OptionSpec batch{"train.batch_size", "64", ValueKind::integer,
                     "global batch, split over the ranks (local batches differ by at most one sample; "
                     "gradients weighted by sample count)"};
    batch.min = 1;
    OptionSpec lr{"train.lr", "0.001", ValueKind::real, "SGD learning rate"};
    lr.min = 1e-12;
    return {epochs, batch, lr,
            {"train.init_weights", "", ValueKind::path,
             "HDF5 weights to start from instead of the random init (hdf5_schemas/mlp_weights.md)"},
            {"train.save_weights", "", ValueKind::path, "write the final weights here (rank 0)"},
            {"train.gpu_resident_data", "true", ValueKind::boolean,
             "scaling.use_gpu: copy the rank's shards to the GPU once and build batches there (false: "
             "scale each batch on the host and copy it)"}};
}

}  // namespace

// Registered like any user workload (trainrt/plugin.hpp), from inside libtrainrt.
TRAINRT_WORKLOAD_WITH(fashion_mlp, "Ray Train's FashionMNIST recipe: MLP 784-512-512-10, SGD, cross-entropy",
                      run, train_keys, preflight);

}  // namespace trainrt::workloads::fashion_mlp
