#include "trainrt/plugin.hpp"

#include <chrono>
#include <tuple>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/settings.hpp"
#include "data/configured.hpp"
#include "data/shard.hpp"
#include "data/stream.hpp"
#include "trainrt/error.hpp"
#include "workloads/fashion_mlp/engine.hpp"
#include "workloads/fashion_mlp/mlp.hpp"
#include "workloads/fashion_mlp/weights_file.hpp"
#include "workloads/workload_settings.hpp"

namespace trainrt::workloads::fashion_mlp {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

#define FASHION_MLP_TRAIN_KEYS(KEY)                                                                           \
    KEY(epochs, std::int64_t, "20", at_least(1), "passes over the training set")                                \
    KEY(batch_size, std::int64_t, "64", at_least(1),                                                           \
        "global batch, split over the ranks (local batches differ by at most one sample; gradients weighted "  \
        "by sample count)")                                                                                     \
    KEY(lr, double, "0.001", at_least(1e-12), "SGD learning rate")                                             \
    KEY(init_weights, std::string, "", a_path(),                                                               \
        "HDF5 weights to start from instead of the random init (hdf5_schemas/mlp_weights.md)")                 \
    KEY(save_weights, std::string, "", a_path(), "write the final weights here (rank 0)")                      \
    KEY(gpu_resident_data, bool, "true", any_value(),                                                           \
        "scaling.use_gpu: copy the rank's shards to the GPU once and build batches there (false: scale each "  \
        "batch on the host and copy it)")
TRAINRT_KEYS(TrainKeys, "train", FASHION_MLP_TRAIN_KEYS);

// The global batch is split over the ranks by trainrt::batch_part.
using Settings = WorkloadSettings<TrainKeys>;

constexpr int kEvalBatch = 1000;  // global evaluation batch
constexpr const char* kImages = "images";
constexpr const char* kLabels = "labels";
constexpr const char* kPixels = "pixels";

void preflight(const JobConfig& config, const Context& context) {
    const Settings settings(config, context.world_size);
    const std::string path = data::configured_path(settings.job.data);
    data::check_split(path, "train");
    data::check_split(path, "test");
    if (settings.job.scaling.use_gpu.value && settings.job.data.shuffle.value == Shuffle::blocks)
        throw ConfigError(fmt::format("config: {} streams from disk, and fashion_mlp on GPUs keeps its data "
                                      "on the device: use none or global", settings.job.data.shuffle.stated("blocks")));
    if (!settings.train.init_weights.value.empty()) {
        Mlp probe;
        load_weights(settings.train.init_weights.value, probe);
    }
}

// Ranks start from identical weights: rank 0's, as DDP broadcasts them.
void initialise(Session& session, Mlp& model, const Settings& settings) {
    const std::string& init_file = settings.train.init_weights.value;
    if (init_file.empty())
        model.init_uniform(static_cast<std::uint64_t>(settings.job.run.seed.value));
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

// uint8 images -> float32 pixels / 255 (torchvision's ToTensor), on the reader's thread.
void scale_batch(Batch& batch) {
    const auto inputs = static_cast<std::size_t>(kInputs);
    float* pixels = batch.set<float>(kPixels, {batch.count, inputs}).data();
    scale_pixels(batch.column(kImages).view<std::uint8_t>().data(), batch.count * inputs, pixels);
}

BatchOptions for_engine(BatchOptions options, const Engine& engine) {
    if (engine.reads_shards()) {
        options.columns = std::vector<std::string>{};
    } else {
        options.columns = std::vector<std::string>{kImages, kLabels};
        options.transform = scale_batch;
    }
    return options;
}

// What the engine reads: positions only when it keeps whole shards, else images and labels,
// scaled by the reader.
BatchOptions stream_options(const Settings& settings, const Engine& engine, const std::string& split,
                            std::size_t batch) {
    return for_engine(data::batch_options(settings.job.data, split, batch), engine);
}

StepBatch step_batch(const Batch& batch, const Engine& engine) {
    StepBatch step{batch.first, static_cast<int>(batch.count), static_cast<float>(batch.mean_over)};
    if (!engine.reads_shards()) {
        step.pixels = batch.view<float>(kPixels).data();
        step.labels = batch.view<std::uint8_t>(kLabels).data();
    }
    return step;
}

Evaluation evaluate(Session& session, const Settings& settings, Engine& engine) {
    const BatchOptions options = stream_options(settings, engine, "test", kEvalBatch);
    double totals[3] = {0.0, 0.0, 0.0};  // loss sum, correct, samples
    std::int64_t correct = 0;
    BatchIterator batches = session.dataset("test").iter_batches(options, 0);
    while (const Batch* batch = batches.next()) {
        engine.evaluate(step_batch(*batch, engine), totals[0], correct);
        totals[2] += static_cast<double>(batch->count);
    }
    totals[1] = static_cast<double>(correct);
    session.communicator().allreduce(totals, 3, DType::f64, ReduceOp::sum);
    return {totals[0] / totals[2], totals[1] / totals[2]};
}

// Where training stands: what a checkpoint must hold to continue bitwise-exactly.
struct Progress {
    std::int64_t epoch = 0;       // the epoch in progress (0-based)
    std::int64_t next_batch = 0;  // its next global batch
    double loss_sum = 0.0;        // this rank's sum of batch losses so far in the epoch
    std::int64_t batches = 0;     // batches summed into loss_sum
    std::int64_t step = 0;        // training steps done in the whole run
    double data_wait_s = 0.0;     // this epoch's time waiting for the reader (not checkpointed)
};

// The training stream's options: its position in a checkpoint is only valid under them.
struct Streams {
    Dataset dataset;  // the train split
    BatchOptions train;
};

CheckpointState make_state(const Mlp& model, const Progress& progress, const Context& context, const Streams& streams) {
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
    save_position(state, streams.dataset, {progress.epoch, progress.next_batch}, streams.train);
    state.attribute("batches", progress.batches).attribute("step", progress.step);
    return state;
}

void check_shape(const Checkpoint& checkpoint, const std::string& name, const Shape& expected) {
    Shape stored = checkpoint.global_shape(name);
    if (stored != expected)
        throw CheckpointError(fmt::format(
            "checkpoint {}: tensor '{}' has shape [{}], fashion_mlp needs [{}]; it was written by "
            "another model", checkpoint.path(), name, fmt::join(stored, ", "), fmt::join(expected, ", ")));
}

// The stream position, from the data.train.* attributes (or, in checkpoints of trainrt before
// the streaming reader, fashion_mlp's own epoch and next_batch).
DataPosition restore_position(const Checkpoint& checkpoint, const Streams& streams) {
    if (auto position = load_position(checkpoint, streams.dataset, streams.train)) return *position;
    return {checkpoint.attribute_int("epoch"), checkpoint.attribute_int("next_batch")};
}

Progress restore(const Checkpoint& checkpoint, Mlp& model, const Context& context, const Streams& streams) {
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
    const DataPosition position = restore_position(checkpoint, streams);
    Progress progress{position.epoch, position.next_batch, 0.0, checkpoint.attribute_int("batches"),
                      checkpoint.attribute_int("step")};
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

// The state to checkpoint, with the engine's weights brought to the host model first.
CheckpointState snapshot(Engine& engine, const Mlp& model, const Progress& progress, const Context& context,
                         const Streams& streams) {
    engine.sync_to_host();
    return make_state(model, progress, context, streams);
}

// Reports with a checkpoint: the engine's running loss sum and weights brought to the host first.
// A checkpoint inside an epoch: reported with the running loss, or at a stop the stop's own
// checkpoint, without a row (Session::save_at_stop).
void save_progress(Session& session, Engine& engine, const Mlp& model, Progress& progress, const Streams& streams,
                   bool stop) {
    progress.loss_sum = engine.loss_sum();
    if (stop) return session.save_at_stop(snapshot(engine, model, progress, session.context(), streams));
    session.report(running_metrics(session, progress), snapshot(engine, model, progress, session.context(), streams));
}

// Runs the rest of the current epoch's batches; checkpoints every `every_steps` steps, when
// checkpoint.interval says one is due and when a stop is agreed (then returns false: the run ends
// here and resumes from that checkpoint).
bool train_epoch(Session& session, const Mlp& model, Engine& engine, const Settings& settings, const Streams& streams,
                 Progress& progress) {
    const std::int64_t every = settings.job.checkpoint.every_steps.value;
    BatchIterator batches = streams.dataset.iter_batches(streams.train, {progress.epoch, progress.next_batch});
    const auto last = static_cast<std::int64_t>(batches.batches());
    engine.set_loss_sum(progress.loss_sum);
    while (const Batch* batch = batches.next()) {
        session.await_snapshot();  // the step changes the weights a background snapshot may be copying
        engine.train_step(step_batch(*batch, engine), static_cast<float>(settings.train.lr.value));
        ++progress.batches;
        ++progress.step;
        progress.next_batch = static_cast<std::int64_t>(batch->index) + 1;
        const StepBoundary boundary = at_step_boundary(session, progress.step, every, progress.next_batch >= last);
        if (boundary.save) save_progress(session, engine, model, progress, streams, boundary.stop);
        if (boundary.stop) return false;
    }
    progress.loss_sum = engine.loss_sum();
    progress.data_wait_s = batches.wait_seconds();
    return true;
}

Progress start(Session& session, Mlp& model, const Settings& settings, const Streams& streams) {
    if (const Checkpoint* checkpoint = session.checkpoint())
        return restore(*checkpoint, model, session.context(), streams);
    initialise(session, model, settings);
    return {};
}

std::unique_ptr<Engine> make_engine(Session& session, const Settings& settings, Mlp& model) {
    const auto bucket_bytes = static_cast<std::size_t>(settings.job.scaling.bucket_mb.value * 1048576.0);
    CudaOptions cuda;
    cuda.resident_data = settings.train.gpu_resident_data.value;
    return settings.job.scaling.use_gpu.value ? make_cuda_engine(model, session.communicator(), cuda)
                                              : make_cpu_engine(model, session.communicator(), bucket_bytes);
}

// An engine that reads whole shards gets the epoch's train shard (a new one when shuffled).
void load_train_shard(Session& session, Engine& engine, const Streams& streams, std::int64_t epoch, bool first,
                      DatasetShard& shard) {
    if (!engine.reads_shards() || (!first && streams.train.shuffle == Shuffle::none)) return;
    shard = session.dataset_shard("train", static_cast<std::uint64_t>(epoch));
    engine.set_data(Split::train, shard);
}

Metrics epoch_metrics(Session& session, const Progress& progress, const Evaluation& evaluation, double train_time,
                      double eval_time, const Streams& streams) {
    const double loss = mean_over_ranks(session, progress);
    const double wait = session.communicator().allreduce_value(progress.data_wait_s, ReduceOp::max);
    const double samples = static_cast<double>(streams.dataset.size());
    Metrics metrics;
    metrics.set("epoch", progress.epoch + 1).set("loss", loss).set("test_loss", evaluation.loss)
        .set("test_accuracy", evaluation.accuracy).set("train_time_s", train_time)
        .set("eval_time_s", eval_time).set("epoch_time_s", train_time + eval_time)
        .set("samples_per_s", samples / train_time).set("data_wait_s", wait);
    return metrics;
}

void run(Session& session) {
    const Settings settings(session.config(), session.context().world_size);
    Mlp model;
    Streams streams{session.dataset("train"), data::batch_options(settings.job.data, "train", settings.global_batch)};
    Progress progress = start(session, model, settings, streams);
    std::unique_ptr<Engine> engine = make_engine(session, settings, model);  // from the started model
    streams.train = for_engine(streams.train, *engine);
    DatasetShard test, train;
    if (engine->reads_shards()) {
        test = session.dataset_shard("test", 0);
        engine->set_data(Split::test, test);
    }
    const std::int64_t epochs = settings.train.epochs.value;
    for (bool first = true; progress.epoch < epochs; first = false) {
        load_train_shard(session, *engine, streams, progress.epoch, first, train);
        auto started = Clock::now();
        if (!train_epoch(session, model, *engine, settings, streams, progress)) return;
        double train_time = seconds_since(started);
        auto eval_start = Clock::now();
        Evaluation evaluation = evaluate(session, settings, *engine);
        Metrics metrics = epoch_metrics(session, progress, evaluation, train_time, seconds_since(eval_start), streams);
        progress = {progress.epoch + 1, 0, 0.0, 0, progress.step, 0.0};
        session.report(metrics, snapshot(*engine, model, progress, session.context(), streams));
        if (progress.epoch < epochs && session.should_stop()) return;
    }
    session.await_snapshot();  // the model goes when this returns
    engine->sync_to_host();
    const std::string& save = settings.train.save_weights.value;
    if (!save.empty() && session.context().world_rank == 0) save_weights(save, model);
    if (session.context().world_rank == 0)
        std::cout << "weights_digest=" << weights_digest(model) << std::endl;
}

}  // namespace

// Registered like any user workload (trainrt/plugin.hpp), from inside libtrainrt.
TRAINRT_WORKLOAD_WITH(fashion_mlp, "Ray Train's FashionMNIST recipe: MLP 784-512-512-10, SGD, cross-entropy",
                      run, TrainKeys::specs, preflight);

}  // namespace trainrt::workloads::fashion_mlp
