// A stream's position in a checkpoint, and the one rule for resuming it.
#include <fmt/format.h>

#include "config/settings.hpp"
#include "data/stream.hpp"
#include "trainrt/error.hpp"

namespace trainrt {

void data::check_same_order(const std::string& position, const std::string& saved, const std::string& wanted) {
    if (saved == wanted) return;
    throw CheckpointError(fmt::format(
        "{} was saved in the order '{}', this run reads it in the order '{}': its batches would be other samples; "
        "resume with the same batch size, shuffle, shuffle_buffer, columns, seed and data file, or start a new run "
        "(another {})", position, saved, wanted, RunSettings::name_key()));
}

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
    data::check_same_order(fmt::format("checkpoint {}: the '{}' stream", checkpoint.path(), split),
                           saved_order(checkpoint, split, dataset, options), dataset.order_key(options));
    return DataPosition{checkpoint.attribute_int(key(split, "epoch")), checkpoint.attribute_int(key(split, "next_batch"))};
}

}  // namespace trainrt
