// A plugin that declares its train.* keys (TRAINRT_WORKLOAD_WITH): trainrt checks them like a
// built-in's once the plugin is loaded (unknown key, type, bounds) and fills in defaults.
#include <cstdio>

#include <trainrt/keys.hpp>
#include <trainrt/plugin.hpp>

namespace {

#define KEYED_TRAIN_KEYS(KEY) KEY(steps, std::int64_t, "3", trainrt::at_least(1), "steps to run")
TRAINRT_KEYS(KeyedKeys, "train", KEYED_TRAIN_KEYS);

void train(trainrt::Session& session) {
    const std::int64_t steps = KeyedKeys::read(session.config()).steps.value;
    for (std::int64_t step = 1; step <= steps; ++step) {
        trainrt::Metrics metrics;
        metrics.set("step", step);
        session.report(metrics);
    }
    if (session.context().world_rank == 0) std::printf("keyed_steps=%lld\n", static_cast<long long>(steps));
}

}  // namespace

TRAINRT_WORKLOAD_WITH(keyed, "declares train.steps", train, KeyedKeys::specs, nullptr);
