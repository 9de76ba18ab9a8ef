#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "trainrt/checkpoint.hpp"
#include "checkpoint/format/validate.hpp"
#include "trainrt/error.hpp"

namespace trainrt {

std::size_t tensor_type_size(TensorType type) {
    switch (type) {
        case TensorType::f32: return 4;
        case TensorType::f64: return 8;
        case TensorType::i32: return 4;
        case TensorType::i64: return 8;
        case TensorType::u8: return 1;
    }
    return 0;
}

const char* tensor_type_name(TensorType type) {
    switch (type) {
        case TensorType::f32: return "float32";
        case TensorType::f64: return "float64";
        case TensorType::i32: return "int32";
        case TensorType::i64: return "int64";
        case TensorType::u8: return "uint8";
    }
    return "unknown";
}

std::uint64_t TensorPart::elements() const { return checkpoint::element_count(shape); }

std::uint64_t TensorPart::bytes() const { return elements() * tensor_type_size(type); }

CheckpointState& CheckpointState::add(TensorPart part, std::size_t elements) {
    auto fail = [&part](const std::string& why) {
        throw CheckpointError(fmt::format("checkpoint: tensor '{}': {}", part.name, why));
    };
    if (part.name.empty() || part.name.find('/') != std::string::npos || part.name[0] == '.')
        fail("a tensor name must be non-empty, without '/' and not start with '.'");
    for (const TensorPart& existing : tensors_)
        if (existing.name == part.name) fail("added twice to one checkpoint");
    if (part.global_shape.size() != part.shape.size() || part.offset.size() != part.shape.size())
        fail(fmt::format("global shape [{}], offset [{}] and shape [{}] differ in rank",
                         fmt::join(part.global_shape, ", "), fmt::join(part.offset, ", "),
                         fmt::join(part.shape, ", ")));
    std::uint64_t count = 1;
    for (std::size_t d = 0; d < part.global_shape.size(); ++d) {
        if (part.global_shape[d] != 0 && count > std::numeric_limits<std::uint64_t>::max() / part.global_shape[d])
            fail("the global shape's element count overflows 64 bits");
        count *= part.global_shape[d];
    }
    for (std::size_t d = 0; d < part.shape.size(); ++d)
        if (part.offset[d] > part.global_shape[d] || part.shape[d] > part.global_shape[d] - part.offset[d])
            fail(fmt::format("block at offset [{}] with shape [{}] lies outside global shape [{}]",
                             fmt::join(part.offset, ", "), fmt::join(part.shape, ", "),
                             fmt::join(part.global_shape, ", ")));
    if (part.elements() != elements)
        fail(fmt::format("shape [{}] holds {} elements but {} were given",
                         fmt::join(part.shape, ", "), part.elements(), elements));
    tensors_.push_back(std::move(part));
    return *this;
}

CheckpointState& CheckpointState::attribute(const std::string& name, AttributeValue value) {
    if (const double* number = std::get_if<double>(&value); number && !std::isfinite(*number))
        throw CheckpointError(fmt::format("checkpoint: attribute '{}' is {}: the manifest (JSON) "
                                          "holds finite numbers only", name, *number));
    for (auto& [existing, old] : attributes_)
        if (existing == name) {
            old = std::move(value);
            return *this;
        }
    attributes_.emplace_back(name, std::move(value));
    return *this;
}

}  // namespace trainrt
