// A plugin that declares its train.* keys (TRAINRT_WORKLOAD_WITH): trainrt checks them like a
// built-in's once the plugin is loaded (unknown key, type, bounds) and fills in defaults.
#include <cstdio>

#include <trainrt/plugin.hpp>

namespace {

std::vector<trainrt::OptionSpec> keys() {
    trainrt::OptionSpec steps{"train.steps", "3", trainrt::ValueKind::integer, "steps to run"};
    steps.min = 1;
    return {steps};
}

void train(trainrt::Session& session) {
    const std::int64_t steps = session.config().get_int("train.steps");
    for (std::int64_t step = 1; step <= steps; ++step) {
        trainrt::Metrics metrics;
        metrics.set("step", step);
        session.report(metrics);
    }
    if (session.context().world_rank == 0) std::printf("keyed_steps=%lld\n", static_cast<long long>(steps));
}

}  // namespace

TRAINRT_WORKLOAD_WITH(keyed, "declares train.steps", train, keys, nullptr);
