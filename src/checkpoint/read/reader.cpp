#include "checkpoint/read/reader.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checkpoint/format/layout.hpp"
#include "checkpoint/format/validate.hpp"
#include "checkpoint/read/block_copy.hpp"
#include "h5/h5.hpp"
#include "h5/io.hpp"
#include "h5/space.hpp"
#include "storage/page_coherence.hpp"
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

struct OverlapCopy {
    const Shape& shape;         // the requested block's
    const Shape& file_start;    // the overlap's first element in the part
    const Shape& memory_start;  // and in the requested block
    const Shape& count;
    std::size_t element;
};

// From the bytes of a whole part (row-major, the part's shape) into the requested block.
void copy_overlap(const Checkpoint::Impl& impl, const char* part_bytes, const checkpoint::PartEntry& part,
                  const OverlapCopy& c, void* out) {
    checkpoint::copy_block(part_bytes, {&part.shape, &c.file_start}, static_cast<char*>(out),
                           {&c.shape, &c.memory_start}, c.count, c.element, impl.copy_threads);
}

// Copies the overlap out of a kept range of the shared file (one this rank wrote and verified),
// when the overlap is whole rows of the part lying inside one range; false otherwise.
bool copy_from_range(const Checkpoint::Impl& impl, const checkpoint::PartEntry& part, TensorType type,
                     const OverlapCopy& c, void* out) {
    std::optional<checkpoint::ByteSpan> rows = checkpoint::rows_in_file(impl, part, type, c.file_start, c.count);
    if (!rows) return false;
    for (checkpoint::KeptImage::Range& range : impl.kept.ranges) {
        const char* bytes = range.image.data();
        if (bytes == nullptr || rows->offset < range.offset || rows->offset + rows->length > range.offset + range.image.size())
            continue;
        const Shape origin(c.count.size(), 0);  // the rows as a block of their own
        checkpoint::copy_block(bytes + (rows->offset - range.offset), {&c.count, &origin}, static_cast<char*>(out),
                               {&c.shape, &c.memory_start}, c.count, c.element, impl.copy_threads);
        range.unread -= std::min(range.unread, rows->length);
        if (range.unread == 0) checkpoint::release_later(impl, std::move(range.image));
        return true;
    }
    return false;
}

// Copies the overlap out of the kept image of the part's file (the restoring rank's own, read
// while it was verified) or a kept range of it; false when the part is not there, and the caller
// reads elsewhere.
bool copy_from_image(const Checkpoint::Impl& impl, const checkpoint::PartEntry& part, TensorType type,
                     const OverlapCopy& c, void* out) {
    std::lock_guard<std::mutex> lock(impl.image_mutex);
    const char* bytes = checkpoint::image_bytes_of(impl, part, type);
    if (bytes == nullptr) return copy_from_range(impl, part, type, c, out);
    copy_overlap(impl, bytes, part, c, out);
    impl.kept_unread -= std::min(impl.kept_unread, checkpoint::element_count(c.count) * c.element);
    if (impl.kept_unread == 0) checkpoint::release_later(impl, std::move(impl.kept.image));
    return true;
}

// The same from a part another rank sent at restore (replicated_exchange.hpp).
bool copy_from_received(const Checkpoint::Impl& impl, const checkpoint::PartEntry& part, const OverlapCopy& c,
                        void* out) {
    std::lock_guard<std::mutex> lock(impl.image_mutex);
    auto found = impl.received.find({part.file, part.dataset});
    if (found == impl.received.end()) return false;
    copy_overlap(impl, found->second.data(), part, c, out);
    impl.received_unread -= std::min(impl.received_unread, checkpoint::element_count(c.count) * c.element);
    if (impl.received_unread == 0) impl.received.clear();
    return true;
}

// Copies the overlap [start, start + count) from the part's dataset into the requested block:
// from memory where a restore left the part's bytes, else through HDF5.
void read_overlap(const Checkpoint::Impl& impl, const checkpoint::PartEntry& part, TensorType type,
                  const Shape& offset, const Shape& shape, const Shape& start, const Shape& count, void* out) {
    const int rank = static_cast<int>(shape.size());
    Shape file_start(rank), memory_start(rank);
    for (int d = 0; d < rank; ++d) {
        file_start[d] = start[d] - part.offset[d];
        memory_start[d] = start[d] - offset[d];
    }
    const OverlapCopy copy{shape, file_start, memory_start, count, tensor_type_size(type)};
    if (copy_from_received(impl, part, copy, out) || copy_from_image(impl, part, type, copy, out)) return;
    storage::forget_foreign_pages(impl.path + "/" + part.file);  // HDF5 reads through this node's cache
    h5::File file = h5::open_file(impl.path + "/" + part.file, false);
    h5::Dataset dataset = h5::open_dataset(file.get(), part.dataset);
    const std::vector<hsize_t> counts(count.begin(), count.end());
    h5::Dataspace file_space = h5::dataset_space(dataset.get());
    h5::Dataspace memory_space = h5::simple_space({shape.begin(), shape.end()}, part.dataset);
    if (rank > 0) {  // a scalar's spaces hold its one element, selected as they are
        h5::select_block(file_space.get(), {{file_start.begin(), file_start.end()}, counts}, part.dataset);
        h5::select_block(memory_space.get(), {{memory_start.begin(), memory_start.end()}, counts}, part.dataset);
    }
    h5::read_selected(dataset.get(), checkpoint::memory_type(type), memory_space.get(), file_space.get(), out,
                      part.dataset);
}

}  // namespace

Checkpoint::Impl::~Impl() {
    if (releasing.joinable()) releasing.join();
}

Checkpoint::Checkpoint(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

const std::string& Checkpoint::path() const { return impl_->path; }
const std::string& Checkpoint::name() const { return impl_->manifest.name; }
std::int64_t Checkpoint::iteration() const { return impl_->manifest.iteration; }
std::int64_t Checkpoint::reported_iterations() const {
    const bool between = impl_->manifest.metrics.value(checkpoint::kBetweenReportsKey, false);
    return impl_->manifest.iteration - (between ? 1 : 0);
}
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
            read_overlap(*impl_, part, type, offset, shape, start, count, out);
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

const char* image_bytes_of(const Checkpoint::Impl& impl, const PartEntry& part, TensorType type) {
    const storage::FileImage& image = impl.kept.image;
    if (part.file != impl.kept.file || image.data() == nullptr) return nullptr;
    const auto found = impl.kept.addresses.find(part.dataset);
    if (found == impl.kept.addresses.end() || found->second.type != type ||
        found->second.offset + element_count(part.shape) * tensor_type_size(type) > image.size())
        return nullptr;
    return image.data() + found->second.offset;
}

std::optional<ByteSpan> rows_in_file(const Checkpoint::Impl& impl, const PartEntry& part, TensorType type,
                                     const Shape& start, const Shape& count) {
    if (part.file != impl.kept.ranges_file) return std::nullopt;
    const auto found = impl.kept.addresses.find(part.dataset);
    if (found == impl.kept.addresses.end() || found->second.type != type) return std::nullopt;
    std::uint64_t row = tensor_type_size(type);  // bytes of one index of the first dimension
    for (std::size_t d = 1; d < part.shape.size(); ++d) {
        if (start[d] != 0 || count[d] != part.shape[d]) return std::nullopt;  // not whole rows
        row *= part.shape[d];
    }
    const std::uint64_t first = part.shape.empty() ? 0 : start[0], rows = part.shape.empty() ? 1 : count[0];
    return ByteSpan{found->second.offset + first * row, rows * row};
}

namespace {

// The bytes of `part`'s dataset inside `range` (its data's place: kept.addresses).
std::uint64_t dataset_bytes_in(const Checkpoint::Impl& impl, const PartEntry& part, TensorType type,
                               const KeptImage::Range& range) {
    const Shape whole(part.shape.size(), 0);
    const std::optional<ByteSpan> data = rows_in_file(impl, part, type, whole, part.shape);
    if (!data) return 0;
    const std::uint64_t begin = std::max(data->offset, range.offset);
    const std::uint64_t end = std::min(data->offset + data->length, range.offset + range.image.size());
    return end > begin ? end - begin : 0;
}

// kept_unread: the bytes of the parts the kept image holds (image_bytes_of), and each kept
// range's unread the bytes of datasets in it; each image is freed once that many were read.
void count_kept_bytes(Checkpoint::Impl& impl) {
    for (const auto& [name, tensor] : impl.manifest.tensors)
        for (const PartEntry& part : tensor.parts) {
            if (image_bytes_of(impl, part, tensor.type) != nullptr)
                impl.kept_unread += element_count(part.shape) * tensor_type_size(tensor.type);
            for (KeptImage::Range& range : impl.kept.ranges) range.unread += dataset_bytes_in(impl, part, tensor.type, range);
        }
    std::erase_if(impl.kept.ranges, [](const KeptImage::Range& range) { return range.unread == 0; });
}

}  // namespace

void release_later(const Checkpoint::Impl& impl, storage::FileImage image) {
    if (impl.releasing.joinable()) impl.releasing.join();
    try {
        impl.releasing = std::thread([held = std::move(image)]() mutable { held.reset(); });
    } catch (const std::system_error&) {  // no thread: the image went with the lambda, freed here
    }
}

std::shared_ptr<Checkpoint::Impl> open_checkpoint_impl(const std::string& dir, Manifest manifest, KeptImage kept,
                                                       int copy_threads) {
    auto impl = std::make_shared<Checkpoint::Impl>();
    impl->copy_threads = copy_threads;
    impl->path = dir;
    impl->manifest = std::move(manifest);
    impl->kept = std::move(kept);
    count_kept_bytes(*impl);
    if (impl->kept_unread == 0) impl->kept.image.reset();
    return impl;
}

Checkpoint open_checkpoint(const std::string& dir) {
    return Checkpoint(open_checkpoint_impl(dir, read_manifest(dir), {}, 1));
}

}  // namespace checkpoint
}  // namespace trainrt
