#include "regression.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <trainrt/error.hpp>
#include <trainrt/keys.hpp>

namespace regression {
namespace {

constexpr int dims = 16;

#define REGRESSION_TRAIN_KEYS(KEY)                                                                    \
    KEY(epochs, std::int64_t, "20", trainrt::at_least(1), "passes over the data")                        \
    KEY(samples, std::int64_t, "65536", trainrt::at_least(1), "synthetic samples, dealt over the ranks") \
    KEY(batch_size, std::int64_t, "64", trainrt::at_least(1), "global batch, divisible by the ranks")     \
    KEY(lr, double, "0.05", trainrt::between(0, 10), "SGD learning rate")                                \
    KEY(step_delay_ms, std::int64_t, "0", trainrt::at_least(0), "sleep after each step (tests: a slow job)")
TRAINRT_KEYS(RegressionKeys, "train", REGRESSION_TRAIN_KEYS);

struct Settings {
    std::int64_t epochs, samples, batch, delay_ms;
    std::uint64_t seed;
    double lr;
};

Settings read_settings(const trainrt::Session& session) {
    const RegressionKeys keys = RegressionKeys::read(session.config());
    if (keys.batch_size.value % session.context().world_size != 0)
        throw trainrt::ConfigError("regression: " + keys.batch_size.where() + " must be divisible by the " +
                                   std::to_string(session.context().world_size) + " ranks");
    return {keys.epochs.value, keys.samples.value, keys.batch_size.value, keys.step_delay_ms.value,
            trainrt::run_seed(session.config()), keys.lr.value};
}

// This rank's samples (every world_size-th), the same on every run with the same seed:
// y = x . w_true + 0.5 + noise.
struct Shard {
    std::vector<float> x, y;
    std::int64_t count = 0;
};

Shard make_shard(const Settings& settings, int rank, int ranks) {
    std::mt19937_64 generator(settings.seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::normal_distribution<float> noise(0.0f, 0.01f);
    Shard shard;
    for (std::int64_t i = 0; i < settings.samples; ++i) {
        float x[dims], y = 0.5f;
        for (int d = 0; d < dims; ++d) x[d] = uniform(generator), y += x[d] * static_cast<float>(d + 1) / dims;
        y += noise(generator);
        if (i % ranks != rank) continue;
        shard.x.insert(shard.x.end(), x, x + dims);
        shard.y.push_back(y);
        ++shard.count;
    }
    return shard;
}

struct Model {
    std::vector<float> w = std::vector<float>(dims + 1, 0.0f);  // weights, then the bias
};

// One SGD step on rows [first, first + count): mean-squared-error gradient averaged over ranks.
double step(trainrt::Session& session, Model& model, const Shard& shard, std::int64_t first,
            std::int64_t count, double lr) {
    std::vector<float> gradient(dims + 1, 0.0f);
    double loss = 0;
    for (std::int64_t i = first; i < first + count; ++i) {
        const float* x = &shard.x[static_cast<std::size_t>(i) * dims];
        float error = model.w[dims];
        for (int d = 0; d < dims; ++d) error += model.w[d] * x[d];
        error -= shard.y[static_cast<std::size_t>(i)];
        loss += 0.5 * error * error;
        for (int d = 0; d < dims; ++d) gradient[d] += error * x[d] / static_cast<float>(count);
        gradient[dims] += error / static_cast<float>(count);
    }
    session.communicator().allreduce(std::span<float>(gradient), trainrt::ReduceOp::mean);
    for (int d = 0; d <= dims; ++d) model.w[d] -= static_cast<float>(lr) * gradient[d];
    return loss;
}

trainrt::CheckpointState state_of(const Model& model, std::int64_t epoch) {
    trainrt::CheckpointState state;
    state.replicated("w", std::span<const float>(model.w), trainrt::Shape{dims + 1});
    state.attribute("epoch", epoch);
    return state;
}

std::uint64_t digest(const Model& model) {  // FNV-1a over the weights' bytes
    std::uint64_t hash = 1469598103934665603ull;
    for (float value : model.w) {
        const auto* bytes = reinterpret_cast<const unsigned char*>(&value);
        for (std::size_t i = 0; i < sizeof value; ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
    }
    return hash;
}

}  // namespace

std::vector<trainrt::OptionSpec> train_keys() { return RegressionKeys::specs(); }

void train(trainrt::Session& session) {
    const Settings settings = read_settings(session);
    const trainrt::Context& context = session.context();
    const Shard shard = make_shard(settings, context.world_rank, context.world_size);
    Model model;
    std::int64_t epoch = 0;
    if (const trainrt::Checkpoint* checkpoint = session.checkpoint()) {
        model.w = checkpoint->read_all<float>("w");
        epoch = checkpoint->attribute_int("epoch");
    }
    const std::int64_t local_batch = settings.batch / context.world_size;
    for (; epoch < settings.epochs; ++epoch) {
        double loss = 0;
        for (std::int64_t first = 0; first < shard.count; first += local_batch) {
            loss += step(session, model, shard, first, std::min(local_batch, shard.count - first), settings.lr);
            if (settings.delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(settings.delay_ms));
        }
        loss = session.communicator().allreduce_value(loss, trainrt::ReduceOp::sum) / static_cast<double>(settings.samples);
        trainrt::Metrics metrics;
        metrics.set("epoch", epoch + 1).set("loss", loss).set("bias", static_cast<double>(model.w[dims]));
        session.report(metrics, state_of(model, epoch + 1));
        if (epoch + 1 < settings.epochs && session.should_stop()) return;  // checkpoint just saved
    }
    if (context.world_rank == 0) std::printf("regression_digest=%016llx\n", static_cast<unsigned long long>(digest(model)));
}

}  // namespace regression
