#pragma once
// What a built-in workload reads from its config, once: its declared [train] keys (TrainKeys,
// a TRAINRT_KEYS struct with a batch_size key), the job's built-in settings, and the global batch
// that batch_size gives on this many ranks (ConfigError when it is smaller than the world).
#include <cstddef>

#include "config/settings.hpp"
#include "data/configured.hpp"

namespace trainrt::workloads {

template <class TrainKeys> struct WorkloadSettings {
    TrainKeys train;
    Settings job;
    std::size_t global_batch = 0;

    WorkloadSettings(const JobConfig& config, int ranks)
        : train(TrainKeys::read(config)), job(Settings::read(config)),
          global_batch(data::global_batch(train.batch_size, ranks)) {}
};

}  // namespace trainrt::workloads
