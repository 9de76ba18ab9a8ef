#include "data/configured.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "trainrt/error.hpp"

namespace trainrt::data {

std::string configured_path(const DataSettings& settings) {
    if (settings.path.value.empty())
        throw ConfigError(fmt::format("config: {} is not set ({}); give the HDF5 dataset this workload reads "
                                      "(`trainrt data import` writes one)", settings.path.key, settings.path.source));
    return settings.path.value;
}

BatchOptions batch_options(const DataSettings& settings, const std::string& split, std::size_t batch_size) {
    BatchOptions options;
    options.batch_size = batch_size;
    options.prefetch_batches = static_cast<std::size_t>(settings.prefetch_batches.value);
    options.shuffle = split == "train" ? settings.shuffle.value : Shuffle::none;
    options.shuffle_buffer = static_cast<std::size_t>(settings.shuffle_buffer.value);
    return options;
}

std::size_t global_batch(const Setting<std::int64_t>& batch, int ranks) {
    if (batch.value < ranks)
        throw ConfigError(fmt::format(
            "config: {}={} ({}) is smaller than the {} ranks; give every rank at least one sample per step: a "
            "batch of {} or more, or fewer ranks", batch.key, batch.value, batch.source, ranks, ranks));
    return static_cast<std::size_t>(batch.value);
}

}  // namespace trainrt::data

trainrt::BatchOptions trainrt::configured_batch_options(const JobConfig& config, const std::string& split,
                                                       std::size_t global_batch) {
    return data::batch_options(DataSettings::read(config), split, global_batch);
}

namespace trainrt::data {

Shuffle shuffle_from(const std::string& word, const std::string& where) {
    for (const auto& [name, shuffle] : EnumNames<Shuffle>::get())
        if (name == word) return shuffle;
    std::vector<std::string> words;
    for (const auto& [name, shuffle] : EnumNames<Shuffle>::get()) words.push_back(name);
    throw ConfigError(fmt::format("{}: bad shuffle '{}': expected one of {}", where, word, fmt::join(words, ", ")));
}

}  // namespace trainrt::data
