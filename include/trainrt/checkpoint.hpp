#pragma once
// Checkpoints (Ray Train's Checkpoint): named tensors and scalar attributes.
//
// Saving: a training function fills a CheckpointState and passes it to
// session.report(metrics, state). Every rank calls report; each rank writes only its own part:
// replicated tensors (e.g. DDP weights, identical on every rank) are written once in all, each
// rank a share (src/checkpoint/write/write_plan.hpp);
// sharded tensors record their global shape and this rank's block (offset and shape per
// dimension). Data pointers must stay valid until report() returns.
//
// Restoring: session.checkpoint() is the newest committed checkpoint that verified (or the one
// named by [checkpoint] resume_from). Any rank count can read any block of a tensor, whatever
// rank count wrote it: only the overlapping parts of the stored blocks are read.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace trainrt {

enum class TensorType { f32, f64, i32, i64, u8 };
std::size_t tensor_type_size(TensorType type);
const char* tensor_type_name(TensorType type);

template <class T> constexpr TensorType tensor_type_of();
template <> constexpr TensorType tensor_type_of<float>() { return TensorType::f32; }
template <> constexpr TensorType tensor_type_of<double>() { return TensorType::f64; }
template <> constexpr TensorType tensor_type_of<std::int32_t>() { return TensorType::i32; }
template <> constexpr TensorType tensor_type_of<std::int64_t>() { return TensorType::i64; }
template <> constexpr TensorType tensor_type_of<std::uint8_t>() { return TensorType::u8; }

using Shape = std::vector<std::uint64_t>;
using AttributeValue = std::variant<std::int64_t, double, std::string>;

// One tensor as this rank contributes it.
struct TensorPart {
    std::string name;
    TensorType type = TensorType::f32;
    bool replicated = false;
    Shape global_shape;
    Shape offset;  // this rank's block start, per dimension (all zero when replicated)
    Shape shape;   // this rank's block shape (the global shape when replicated)
    const void* data = nullptr;
    std::uint64_t elements() const;
    std::uint64_t bytes() const;
};

class CheckpointState {
public:
    template <class T>
    CheckpointState& replicated(const std::string& name, std::span<const T> data, Shape shape) {
        return add({name, tensor_type_of<T>(), true, shape, Shape(shape.size(), 0), shape,
                    data.data()}, data.size());
    }
    template <class T>
    CheckpointState& sharded(const std::string& name, std::span<const T> block, Shape global_shape,
                             Shape offset, Shape shape) {
        return add({name, tensor_type_of<T>(), false, std::move(global_shape), std::move(offset),
                    std::move(shape), block.data()}, block.size());
    }
    CheckpointState& attribute(const std::string& name, AttributeValue value);

    const std::vector<TensorPart>& tensors() const { return tensors_; }
    const std::vector<std::pair<std::string, AttributeValue>>& attributes() const { return attributes_; }

private:
    // Checks the name (non-empty, no '/'), the shapes and the element count; CheckpointError.
    CheckpointState& add(TensorPart part, std::size_t elements);
    std::vector<TensorPart> tensors_;
    std::vector<std::pair<std::string, AttributeValue>> attributes_;
};

// A committed, verified checkpoint. Cheap to copy (shared, immutable).
class Checkpoint {
public:
    struct Impl;
    explicit Checkpoint(std::shared_ptr<const Impl> impl);

    const std::string& path() const;   // the checkpoint directory
    const std::string& name() const;   // e.g. "checkpoint_000042"
    std::int64_t iteration() const;    // the report iteration that saved it (its name's number)
    // The reports it follows: iteration(), or iteration() - 1 for a stop's checkpoint saved
    // between two reports (it adds no result row; the next report, iteration(), replaces it).
    std::int64_t reported_iterations() const;
    int world_size() const;            // ranks that wrote it

    bool has_tensor(const std::string& name) const;
    std::vector<std::string> tensor_names() const;     // sorted
    std::vector<std::string> attribute_names() const;  // in the order they were saved
    TensorType tensor_type(const std::string& name) const;
    Shape global_shape(const std::string& name) const;  // CheckpointError when absent

    // Reads block [offset, offset + shape) of tensor `name` into `out` (row-major), from the
    // stored blocks that overlap it. CheckpointError naming the tensor on a type or shape mismatch.
    void read(const std::string& name, TensorType type, const Shape& offset, const Shape& shape,
              void* out) const;
    // Seconds spent in read() so far (restart-latency accounting).
    double read_seconds() const;
    template <class T> std::vector<T> read_all(const std::string& name) const {
        Shape shape = global_shape(name);
        std::uint64_t count = 1;
        for (auto d : shape) count *= d;
        std::vector<T> values(count);
        read(name, tensor_type_of<T>(), Shape(shape.size(), 0), shape, values.data());
        return values;
    }

    bool has_attribute(const std::string& name) const;
    const AttributeValue& attribute(const std::string& name) const;  // CheckpointError when absent
    std::int64_t attribute_int(const std::string& name) const;
    double attribute_double(const std::string& name) const;

private:
    std::shared_ptr<const Impl> impl_;
};

}  // namespace trainrt
