// [data] keys -> BatchOptions, and a stream's position in a checkpoint.
#include <fmt/format.h>

#include "data/stream.hpp"
#include "trainrt/error.hpp"

namespace trainrt {
namespace data {

Shuffle parse_shuffle(const std::string& value) {
    if (value == "none" || value == "false") return Shuffle::none;
    if (value == "global" || value == "true") return Shuffle::global;
    if (value == "blocks") return Shuffle::blocks;
    throw ConfigError(fmt::format("config: bad value '{}' for data.shuffle: expected none, global or blocks", value));
}

BatchOptions configured_batch_options(const JobConfig& config, const std::string& split, std::size_t batch_size) {
    BatchOptions options;
    options.batch_size = batch_size;
    options.prefetch_batches = static_cast<std::size_t>(config.get_int("data.prefetch_batches"));
    options.shuffle = split == "train" ? parse_shuffle(config.get("data.shuffle")) : Shuffle::none;
    options.shuffle_buffer = static_cast<std::size_t>(config.get_int("data.shuffle_buffer"));
    return options;
}

}  // namespace data

namespace {

std::string key(const std::string& split, const char* name) { return fmt::format("data.{}.{}", split, name); }

std::string string_attribute(const Checkpoint& checkpoint, const std::string& name) {
    const auto* value = std::get_if<std::string>(&checkpoint.attribute(name));
    if (value == nullptr)
        throw CheckpointError(fmt::format("checkpoint {}: attribute '{}' is not a string; the checkpoint was not "
                                          "written by save_position", checkpoint.path(), name));
    return *value;
}

}  // namespace

void save_position(CheckpointState& state, const Dataset& dataset, const DataPosition& position,
                   const BatchOptions& options) {
    const std::string& split = dataset.split();
    state.attribute(key(split, "epoch"), position.epoch)
        .attribute(key(split, "next_batch"), position.next_batch)
        .attribute(key(split, "batch_size"), static_cast<std::int64_t>(options.batch_size))
        .attribute(key(split, "shuffle"), std::string(shuffle_name(options.shuffle)))
        .attribute(key(split, "order"), dataset.order_key(options));
}

namespace {

// The order a position was saved in. Positions saved before order keys existed hold only their
// batch size and shuffle: they match when those two do.
std::string saved_order(const Checkpoint& checkpoint, const std::string& split, const Dataset& dataset,
                        const BatchOptions& options) {
    if (checkpoint.has_attribute(key(split, "order"))) return string_attribute(checkpoint, key(split, "order"));
    const std::string shuffle = string_attribute(checkpoint, key(split, "shuffle"));
    const std::int64_t batch = checkpoint.attribute_int(key(split, "batch_size"));
    if (shuffle == shuffle_name(options.shuffle) && batch == static_cast<std::int64_t>(options.batch_size))
        return dataset.order_key(options);
    return fmt::format("{} batch={} (saved before order keys)", shuffle, batch);
}

}  // namespace

std::optional<DataPosition> load_position(const Checkpoint& checkpoint, const Dataset& dataset,
                                          const BatchOptions& options) {
    const std::string& split = dataset.split();
    if (!checkpoint.has_attribute(key(split, "next_batch"))) return std::nullopt;
    const std::string wanted = dataset.order_key(options);
    const std::string saved = saved_order(checkpoint, split, dataset, options);
    if (saved != wanted)
        throw CheckpointError(fmt::format(
            "checkpoint {}: the '{}' stream was saved in the order '{}', this run reads it in the order '{}': its "
            "batches would be other samples; resume with the same batch size, shuffle, shuffle_buffer, columns, "
            "seed and data file, or start a new run (another run.name)", checkpoint.path(), split, saved, wanted));
    return DataPosition{checkpoint.attribute_int(key(split, "epoch")), checkpoint.attribute_int(key(split, "next_batch"))};
}

}  // namespace trainrt
