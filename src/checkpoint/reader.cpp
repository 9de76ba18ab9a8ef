#include "checkpoint/reader.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checkpoint/layout.hpp"
#include "h5/h5.hpp"
#include "trainrt/error.hpp"

namespace trainrt {
namespace {

const checkpoint::TensorEntry& tensor_entry(const Checkpoint::Impl& impl, const std::string& name) {
    auto found = impl.manifest.tensors.find(name);
    if (found == impl.manifest.tensors.end())
        throw CheckpointError(fmt::format("checkpoint {}: no tensor '{}'", impl.path, name));
    return found->second;
}

// The overlap of a stored part with the requested block, per dimension; false when empty.
bool overlap(const checkpoint::PartEntry& part, const Shape& offset, const Shape& shape,
             Shape& start, Shape& count) {
    start.resize(shape.size());
    count.resize(shape.size());
    for (std::size_t d = 0; d < shape.size(); ++d) {
        std::uint64_t begin = std::max(part.offset[d], offset[d]);
        std::uint64_t end = std::min(part.offset[d] + part.shape[d], offset[d] + shape[d]);
        if (begin >= end) return false;
        start[d] = begin;
        count[d] = end - begin;
    }
    return true;
}

// Copies the overlap [start, start + count) from the part's dataset into the requested block.
void read_overlap(const std::string& dir, const checkpoint::PartEntry& part, TensorType type,
                  const Shape& offset, const Shape& shape, const Shape& start, const Shape& count,
                  void* out) {
    h5::File file = h5::open_file(dir + "/" + part.file, false);
    h5::Dataset dataset = h5::open_dataset(file.get(), part.dataset);
    const int rank = static_cast<int>(shape.size());
    std::vector<hsize_t> file_start(rank), memory_start(rank), counts(count.begin(), count.end());
    std::vector<hsize_t> memory_dims(shape.begin(), shape.end());
    for (int d = 0; d < rank; ++d) {
        file_start[d] = start[d] - part.offset[d];
        memory_start[d] = start[d] - offset[d];
    }
    h5::Dataspace file_space = h5::dataset_space(dataset.get());
    h5::Dataspace memory_space(
        TRAINRT_H5(H5Screate_simple(rank, memory_dims.data(), nullptr), part.dataset));
    if (rank > 0) {
        TRAINRT_H5(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, file_start.data(), nullptr,
                                       counts.data(), nullptr), part.dataset);
        TRAINRT_H5(H5Sselect_hyperslab(memory_space.get(), H5S_SELECT_SET, memory_start.data(),
                                       nullptr, counts.data(), nullptr), part.dataset);
    }
    TRAINRT_H5(H5Dread(dataset.get(), checkpoint::memory_type(type), memory_space.get(),
                       file_space.get(), H5P_DEFAULT, out), part.dataset);
}

}  // namespace

Checkpoint::Checkpoint(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

const std::string& Checkpoint::path() const { return impl_->path; }
const std::string& Checkpoint::name() const { return impl_->manifest.name; }
std::int64_t Checkpoint::iteration() const { return impl_->manifest.iteration; }
int Checkpoint::world_size() const { return impl_->manifest.world_size; }

bool Checkpoint::has_tensor(const std::string& name) const {
    return impl_->manifest.tensors.count(name) != 0;
}

std::vector<std::string> Checkpoint::tensor_names() const {
    std::vector<std::string> names;
    for (const auto& [name, tensor] : impl_->manifest.tensors) names.push_back(name);
    return names;
}

std::vector<std::string> Checkpoint::attribute_names() const {
    std::vector<std::string> names;
    for (const auto& [name, value] : impl_->manifest.attributes) names.push_back(name);
    return names;
}

TensorType Checkpoint::tensor_type(const std::string& name) const {
    return tensor_entry(*impl_, name).type;
}

Shape Checkpoint::global_shape(const std::string& name) const {
    return tensor_entry(*impl_, name).global_shape;
}

void Checkpoint::read(const std::string& name, TensorType type, const Shape& offset,
                      const Shape& shape, void* out) const {
    const checkpoint::TensorEntry& tensor = tensor_entry(*impl_, name);
    if (tensor.type != type)
        throw CheckpointError(fmt::format("checkpoint {}: tensor '{}' is {}, read as {}", impl_->path,
                                          name, tensor_type_name(tensor.type), tensor_type_name(type)));
    bool inside = offset.size() == tensor.global_shape.size() && shape.size() == offset.size();
    for (std::size_t d = 0; inside && d < shape.size(); ++d)
        inside = offset[d] + shape[d] <= tensor.global_shape[d];
    if (!inside)
        throw CheckpointError(fmt::format(
            "checkpoint {}: block at [{}] of shape [{}] is outside tensor '{}' of shape [{}]",
            impl_->path, fmt::join(offset, ", "), fmt::join(shape, ", "), name,
            fmt::join(tensor.global_shape, ", ")));
    const auto started = std::chrono::steady_clock::now();
    Shape start, count;
    for (const checkpoint::PartEntry& part : tensor.parts)
        if (overlap(part, offset, shape, start, count))
            read_overlap(impl_->path, part, type, offset, shape, start, count, out);
    impl_->read_seconds.store(impl_->read_seconds.load() +
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
}

double Checkpoint::read_seconds() const { return impl_->read_seconds.load(); }

bool Checkpoint::has_attribute(const std::string& name) const {
    for (const auto& [key, value] : impl_->manifest.attributes)
        if (key == name) return true;
    return false;
}

const AttributeValue& Checkpoint::attribute(const std::string& name) const {
    for (const auto& [key, value] : impl_->manifest.attributes)
        if (key == name) return value;
    throw CheckpointError(fmt::format("checkpoint {}: no attribute '{}'", impl_->path, name));
}

std::int64_t Checkpoint::attribute_int(const std::string& name) const {
    const AttributeValue& value = attribute(name);
    if (const auto* number = std::get_if<std::int64_t>(&value)) return *number;
    throw CheckpointError(fmt::format("checkpoint {}: attribute '{}' is not an integer", impl_->path, name));
}

double Checkpoint::attribute_double(const std::string& name) const {
    const AttributeValue& value = attribute(name);
    if (const auto* number = std::get_if<double>(&value)) return *number;
    if (const auto* number = std::get_if<std::int64_t>(&value)) return static_cast<double>(*number);
    throw CheckpointError(fmt::format("checkpoint {}: attribute '{}' is not a number", impl_->path, name));
}

namespace checkpoint {

Checkpoint open_checkpoint(const std::string& dir) {
    auto impl = std::make_shared<Checkpoint::Impl>();
    impl->path = dir;
    impl->manifest = read_manifest(dir);
    return Checkpoint(impl);
}

}  // namespace checkpoint
}  // namespace trainrt
