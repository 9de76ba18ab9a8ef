// linear_model: softmax or least-squares regression on any table imported with `trainrt data
// import` (a feature vector column and a scalar label column), data-parallel over the streaming
// reader: features standardised on the reader's thread from the importer's mean/std, one
// allreduce per step for gradients and loss together, exact resume mid-epoch.
#include <chrono>
#include <cmath>
#include <iostream>

#include <fmt/format.h>

#include "config/settings.hpp"
#include "data/configured.hpp"
#include "data/stream.hpp"
#include "trainrt/error.hpp"
#include "trainrt/plugin.hpp"
#include "workloads/fashion_mlp/mlp.hpp"
#include "workloads/linear_model/model.hpp"
#include "workloads/workload_settings.hpp"

namespace trainrt::workloads::linear_model {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kEvalBatch = 256;

enum class TaskSetting { automatic, classify, regress };

}  // namespace
}  // namespace trainrt::workloads::linear_model

template <> struct trainrt::EnumNames<trainrt::workloads::linear_model::TaskSetting> {
    using TaskSetting = trainrt::workloads::linear_model::TaskSetting;
    static const std::vector<std::pair<std::string, TaskSetting>>& get() {
        static const std::vector<std::pair<std::string, TaskSetting>> names = {
            {"auto", TaskSetting::automatic}, {"classify", TaskSetting::classify}, {"regress", TaskSetting::regress}};
        return names;
    }
};

namespace trainrt::workloads::linear_model {
namespace {

#define LINEAR_MODEL_TRAIN_KEYS(KEY)                                                                          \
    KEY(epochs, std::int64_t, "20", at_least(1), "passes over the training split")                            \
    KEY(batch_size, std::int64_t, "32", at_least(1), "global batch, split over the ranks")                    \
    KEY(lr, double, "0.1", at_least(1e-12), "SGD learning rate (on standardised features)")                   \
    KEY(task, TaskSetting, "auto", any_value(),                                                                \
        "classify (softmax regression) or regress (least squares); auto: classify integer labels")
TRAINRT_KEYS(TrainKeys, "train", LINEAR_MODEL_TRAIN_KEYS);

using Settings = WorkloadSettings<TrainKeys>;

// What the dataset gives the model.
struct Table {
    std::string features, label;
    Task task = Task::classify;
    std::size_t inputs = 0, outputs = 1;
    std::vector<float> mean, inv_std;          // feature standardisation, from the train split
    double target_mean = 0.0, target_std = 1.0; // regress: the target's
};

std::string column_name(const Setting<std::string>& setting, const std::string& file_default, const char* what) {
    const std::string name = setting.value.empty() ? file_default : setting.value;
    if (name.empty())
        throw ConfigError(fmt::format("config: linear_model needs a {} column: set {} or import the data with "
                                      "--label (the file names none)", what, setting.key));
    return name;
}

Task task_of(TaskSetting task, const ColumnInfo& label) {
    if (task == TaskSetting::classify) return Task::classify;
    if (task == TaskSetting::regress) return Task::regress;
    const bool integers = label.type != ColumnType::f16 && label.type != ColumnType::f32 && label.type != ColumnType::f64;
    return integers ? Task::classify : Task::regress;
}

void standardisation(const ColumnInfo& column, std::size_t inputs, Table& table) {
    table.mean.assign(inputs, 0.0f);
    table.inv_std.assign(inputs, 1.0f);
    if (column.mean.size() != inputs) return;  // not recorded: the features are used as they are
    for (std::size_t f = 0; f < inputs; ++f) {
        table.mean[f] = static_cast<float>(column.mean[f]);
        table.inv_std[f] = column.std[f] > 0 ? static_cast<float>(1.0 / column.std[f]) : 1.0f;
    }
}

Table describe(const Settings& settings, const Dataset& train) {
    Table table;
    table.features = column_name(settings.job.data.features, train.feature_column(), "feature");
    table.label = column_name(settings.job.data.label, train.label_column(), "label");
    const ColumnInfo& features = train.column(table.features);
    const ColumnInfo& label = train.column(table.label);
    if (features.sample_shape.size() != 1 || !label.sample_shape.empty())
        throw DataError(fmt::format("data: linear_model needs a feature vector per sample and a scalar label; {} "
                                    "has column '{}' with {} dimension(s) per sample and '{}' with {}", train.path(),
                                    table.features, features.sample_shape.size(), table.label, label.sample_shape.size()));
    table.inputs = features.sample_shape[0];
    table.task = task_of(settings.train.task.value, label);
    if (table.task == Task::classify) {
        if (label.num_classes < 2)
            throw DataError(fmt::format("data: {}: label column '{}' records no class count (num_classes) of 2 or "
                                        "more; import it with integer labels 0..C-1, or set train.task = regress",
                                        train.path(), table.label));
        table.outputs = static_cast<std::size_t>(label.num_classes);
    } else if (label.mean.size() == 1 && label.std[0] > 0) {
        table.target_mean = label.mean[0], table.target_std = label.std[0];
    }
    standardisation(features, table.inputs, table);
    return table;
}

void check_classes(const Table& table, const Batch& batch, const std::int64_t* classes) {
    for (std::size_t i = 0; i < batch.count; ++i)
        if (classes[i] < 0 || classes[i] >= static_cast<std::int64_t>(table.outputs))
            throw DataError(fmt::format("data: label {} of row {} is outside 0..{} (num_classes {})", classes[i],
                                        batch.rows[i], table.outputs - 1, table.outputs));
}

// On the reader's thread: x = standardised float32 features, y = classes or standardised targets.
void prepare(const Table& table, Batch& batch) {
    float* x = batch.set<float>("x", {batch.count, table.inputs}).data();
    batch.column(table.features).copy_to(x);
    for (std::size_t i = 0; i < batch.count; ++i)
        for (std::size_t f = 0; f < table.inputs; ++f)
            x[i * table.inputs + f] = (x[i * table.inputs + f] - table.mean[f]) * table.inv_std[f];
    if (table.task == Task::classify) {
        std::int64_t* y = batch.set<std::int64_t>("y", {batch.count}).data();
        batch.column(table.label).copy_to(y);
        check_classes(table, batch, y);
        return;
    }
    std::vector<double> raw(batch.count);
    batch.column(table.label).copy_to(raw.data());
    float* y = batch.set<float>("y", {batch.count}).data();
    for (std::size_t i = 0; i < batch.count; ++i)
        y[i] = static_cast<float>((raw[i] - table.target_mean) / table.target_std);
}

BatchOptions stream_options(const Settings& settings, const Table& table, const std::string& split,
                            std::size_t batch) {
    BatchOptions options = data::batch_options(settings.job.data, split, batch);
    options.columns = std::vector<std::string>{table.features, table.label};
    options.transform = [table](Batch& b) { prepare(table, b); };
    return options;
}

// The train split and how it is read: a checkpoint's position is only valid under both.
struct TrainStream {
    Dataset dataset;
    BatchOptions options;
};

struct Progress {
    std::int64_t epoch = 0, next_batch = 0;
    double loss_sum = 0.0;     // sum of the epoch's batch losses (the same on every rank)
    std::int64_t batches = 0;
    std::int64_t step = 0;
};

CheckpointState make_state(const LinearModel& model, const Progress& progress, const TrainStream& stream) {
    CheckpointState state;
    const Shape shape{model.outputs(), model.features()};
    state.replicated<float>("weight", model.weight(), shape).replicated<float>("bias", model.bias(), {model.outputs()});
    save_position(state, stream.dataset, {progress.epoch, progress.next_batch}, stream.options);
    state.attribute("loss_sum", progress.loss_sum).attribute("batches", progress.batches).attribute("step", progress.step);
    return state;
}

Progress restore(const Checkpoint& checkpoint, LinearModel& model, const TrainStream& stream) {
    const Shape shape{model.outputs(), model.features()};
    if (checkpoint.global_shape("weight") != shape)
        throw CheckpointError(fmt::format("checkpoint {}: its weight is not [{}, {}]: it belongs to another table or "
                                          "task", checkpoint.path(), shape[0], shape[1]));
    checkpoint.read("weight", TensorType::f32, {0, 0}, shape, model.weight().data());
    checkpoint.read("bias", TensorType::f32, {0}, {model.outputs()}, model.bias().data());
    const auto position = load_position(checkpoint, stream.dataset, stream.options);
    if (!position) throw CheckpointError(fmt::format("checkpoint {} holds no train stream position", checkpoint.path()));
    return {position->epoch, position->next_batch, checkpoint.attribute_double("loss_sum"),
            checkpoint.attribute_int("batches"), checkpoint.attribute_int("step")};
}

struct Evaluation {
    double loss = 0, accuracy = 0, rmse = 0, r2 = 0;
};

Evaluation evaluate(Session& session, const Settings& settings, const LinearModel& model, const Table& table,
                    const std::string& split) {
    BatchOptions options = stream_options(settings, table, split, kEvalBatch);
    // loss sum, correct or squared error (original units), samples, target sum, target square sum
    double totals[5] = {0, 0, 0, 0, 0};
    std::vector<float> out(model.outputs());
    BatchIterator batches = session.dataset(split).iter_batches(options, 0);
    while (const Batch* batch = batches.next()) {
        const float* x = batch->view<float>("x").data();
        for (std::size_t i = 0; i < batch->count; ++i) {
            model.predict(x + i * model.features(), out.data());
            if (table.task == Task::classify) {
                const std::int64_t label = batch->view<std::int64_t>("y")[i];
                const float top = *std::max_element(out.begin(), out.end());
                double total = 0;
                for (float value : out) total += std::exp(value - top);
                totals[0] -= (out[label] - top) - std::log(total);
                totals[1] += std::max_element(out.begin(), out.end()) - out.begin() == label;
            } else {
                const double target = batch->view<float>("y")[i] * table.target_std + table.target_mean;
                const double error = out[0] * table.target_std + table.target_mean - target;
                totals[0] += 0.5 * error * error / (table.target_std * table.target_std);
                totals[1] += error * error, totals[3] += target, totals[4] += target * target;
            }
        }
        totals[2] += static_cast<double>(batch->count);
    }
    session.communicator().allreduce(totals, 5, DType::f64, ReduceOp::sum);
    Evaluation result{totals[0] / totals[2]};
    if (table.task == Task::classify) result.accuracy = totals[1] / totals[2];
    else {
        const double variance = totals[4] / totals[2] - std::pow(totals[3] / totals[2], 2);
        result.rmse = std::sqrt(totals[1] / totals[2]);
        result.r2 = variance > 0 ? 1.0 - totals[1] / totals[2] / variance : 0.0;
    }
    return result;
}

// A checkpoint inside an epoch: reported with the running loss, or at a stop the stop's own
// checkpoint, without a row (Session::save_at_stop).
void save_running(Session& session, const LinearModel& model, const Progress& progress, const TrainStream& stream,
                  bool stop) {
    if (stop) return session.save_at_stop(make_state(model, progress, stream));
    Metrics metrics;
    metrics.set("epoch", progress.epoch + 1).set("step", progress.step)
        .set("running_loss", progress.loss_sum / static_cast<double>(progress.batches));
    session.report(metrics, make_state(model, progress, stream));
}

// The rest of the epoch; a checkpoint every checkpoint.every_steps steps, when checkpoint.interval
// says one is due and at an agreed stop (then false: the run ends there and resumes from it).
bool train_epoch(Session& session, LinearModel& model, const TrainStream& stream, const Settings& settings,
                 Progress& progress) {
    const std::int64_t every = settings.job.checkpoint.every_steps.value;
    const auto lr = static_cast<float>(settings.train.lr.value);
    BatchIterator batches = stream.dataset.iter_batches(stream.options, {progress.epoch, progress.next_batch});
    const auto last = static_cast<std::int64_t>(batches.batches());
    std::vector<float> packed;
    while (const Batch* batch = batches.next()) {
        const bool classify = model.task() == Task::classify;
        model.gradients(batch->view<float>("x").data(), classify ? batch->view<std::int64_t>("y").data() : nullptr,
                        classify ? nullptr : batch->view<float>("y").data(), batch->count, batch->mean_over, packed);
        session.communicator().allreduce(std::span<float>(packed), ReduceOp::mean);
        session.await_snapshot();  // apply() changes the weights a background snapshot may be copying
        progress.loss_sum += model.apply(packed, lr);
        ++progress.batches, ++progress.step;
        progress.next_batch = static_cast<std::int64_t>(batch->index) + 1;
        const StepBoundary boundary = at_step_boundary(session, progress.step, every, progress.next_batch >= last);
        if (boundary.save) save_running(session, model, progress, stream, boundary.stop);
        if (boundary.stop) return false;
    }
    return true;
}

std::string eval_split(Session& session) {
    try {
        session.dataset("test");
        return "test";
    } catch (const DataError&) {
        return "train";  // a file with one split: evaluate on what it trains on
    }
}

void run(Session& session) {
    const Settings settings(session.config(), session.context().world_size);
    const Dataset train = session.dataset("train");
    const Table table = describe(settings, train);
    const TrainStream stream{train, stream_options(settings, table, "train", settings.global_batch)};
    LinearModel model(table.task, table.inputs, table.outputs);
    Progress progress;
    if (const Checkpoint* checkpoint = session.checkpoint()) progress = restore(*checkpoint, model, stream);
    const std::string test = eval_split(session);
    const std::int64_t epochs = settings.train.epochs.value;
    for (; progress.epoch < epochs;) {
        const auto started = Clock::now();
        if (!train_epoch(session, model, stream, settings, progress)) return;
        const double train_time = std::chrono::duration<double>(Clock::now() - started).count();
        const Evaluation evaluation = evaluate(session, settings, model, table, test);
        Metrics metrics;
        metrics.set("epoch", progress.epoch + 1).set("loss", progress.loss_sum / static_cast<double>(progress.batches))
            .set("test_loss", evaluation.loss).set("train_time_s", train_time);
        if (table.task == Task::classify) metrics.set("test_accuracy", evaluation.accuracy);
        else metrics.set("test_rmse", evaluation.rmse).set("test_r2", evaluation.r2);
        progress = {progress.epoch + 1, 0, 0.0, 0, progress.step};
        session.report(metrics, make_state(model, progress, stream));
        if (progress.epoch < epochs && session.should_stop()) return;
    }
    session.await_snapshot();  // the model goes when this returns
    if (session.context().world_rank == 0) {
        std::vector<float> all(model.weight());
        all.insert(all.end(), model.bias().begin(), model.bias().end());
        std::cout << "weights_digest=" << fashion_mlp::floats_digest(all) << std::endl;
    }
}

void preflight(const JobConfig& config, const Context& context) {
    const Settings settings(config, context.world_size);
    describe(settings, data::open_dataset(data::configured_path(settings.job.data), "train", context.world_rank,
                                          context.world_size, 0));
}

}  // namespace

TRAINRT_WORKLOAD_WITH(linear_model, "softmax or linear regression on an imported table (trainrt data import csv)",
                      run, TrainKeys::specs, preflight);

}  // namespace trainrt::workloads::linear_model
