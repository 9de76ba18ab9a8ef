#include "checkpoint/slab_write.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
#include <optional>
#include <vector>

#include "checkpoint/layout.hpp"
#include "h5/h5.hpp"
#include "storage/posix.hpp"

namespace trainrt::checkpoint {
namespace {

template <class It> std::uint64_t product(It begin, It end) {
    return std::accumulate(begin, end, std::uint64_t{1}, std::multiplies<>());
}

// Bytes of one row (first index) of the dataset in the file: a slab of the block's rows lies
// within those rows of the dataset, contiguous when the block spans every later dimension.
std::uint64_t dataset_row_bytes(hid_t space, const TensorPart& part, std::uint64_t block_row_bytes) {
    const int rank = TRAINRT_H5(H5Sget_simple_extent_ndims(space), part.name);
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    TRAINRT_H5(H5Sget_simple_extent_dims(space, dims.data(), nullptr), part.name);
    const std::uint64_t block_row_elements = product(part.shape.begin() + 1, part.shape.end());
    return block_row_bytes / block_row_elements * product(dims.begin() + 1, dims.end());
}

// The block's bytes in the file as one region when they lie there as they are in memory: the file's
// type is the native one and the block spans every later dimension of the dataset.
std::optional<WrittenRegion> region_of(const TensorPart& part, haddr_t at, std::uint64_t first_byte, bool contiguous) {
    const bool same_bytes = TRAINRT_H5(H5Tequal(file_type(part.type), memory_type(part.type)), part.name) > 0;
    if (!same_bytes || !contiguous || at == HADDR_UNDEF) return std::nullopt;
    return WrittenRegion{at + first_byte, part.bytes(), part.data};
}

haddr_t data_address(hid_t dataset) { return h5::locked([&] { return H5Dget_offset(dataset); }); }

std::optional<WrittenRegion> announce(std::optional<WrittenRegion> region, const SlabTarget& target) {
    if (region && target.placed) target.placed(*region);
    return region;
}

// The block written by target.direct when its bytes lie in the file as in memory and the
// dataset has its place already; nullopt, nothing written, otherwise.
std::optional<WrittenRegion> write_direct(const TensorPart& part, const SlabTarget& target) {
    h5::Dataspace file_space(TRAINRT_H5(H5Dget_space(target.dataset), part.name));
    const std::uint64_t row_bytes = part.bytes() / part.shape[0];
    const std::uint64_t file_row_bytes = dataset_row_bytes(file_space.get(), part, row_bytes);
    const std::optional<WrittenRegion> region =
        region_of(part, data_address(target.dataset), target.offset[0] * file_row_bytes, file_row_bytes == row_bytes);
    if (!region) return std::nullopt;
    announce(region, target);
    target.direct->write(region->offset, part.data, region->length);
    return region;
}

}  // namespace

std::optional<WrittenRegion> write_in_slabs(const TensorPart& part, const SlabTarget& target) {
    if (target.direct != nullptr && !part.shape.empty() && part.elements() > 0)
        if (std::optional<WrittenRegion> region = write_direct(part, target)) return region;
    if (part.shape.empty()) {  // a scalar: one element, nothing to split
        TRAINRT_H5(H5Dwrite(target.dataset, memory_type(part.type), H5S_ALL, H5S_ALL, target.transfer, part.data),
                   dataset_path(part.name));
        return announce(region_of(part, data_address(target.dataset), 0, true), target);
    }
    if (part.elements() == 0) return std::nullopt;
    const std::vector<hsize_t> shape(part.shape.begin(), part.shape.end());
    const hsize_t rows = shape[0];
    const std::uint64_t row_bytes = part.bytes() / rows;
    const hsize_t slab_rows = std::max<hsize_t>(1, kSlabBytes / row_bytes);
    h5::Dataspace file_space(TRAINRT_H5(H5Dget_space(target.dataset), part.name));
    const std::uint64_t file_row_bytes = dataset_row_bytes(file_space.get(), part, row_bytes);
    haddr_t at = HADDR_UNDEF;  // known once the dataset has its space: at creation or at the first write
    std::optional<WrittenRegion> region;
    for (hsize_t row = 0; row < rows; row += slab_rows) {
        std::vector<hsize_t> start(target.offset.begin(), target.offset.end()), count = shape;
        start[0] += row;
        count[0] = std::min(slab_rows, rows - row);
        TRAINRT_H5(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
                   part.name);
        h5::Dataspace memory_space(
            TRAINRT_H5(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), part.name));
        TRAINRT_H5(H5Dwrite(target.dataset, memory_type(part.type), memory_space.get(), file_space.get(),
                            target.transfer, static_cast<const std::byte*>(part.data) + row * row_bytes),
                   dataset_path(part.name));
        if (at == HADDR_UNDEF) {
            at = data_address(target.dataset);
            region = announce(region_of(part, at, target.offset[0] * file_row_bytes, file_row_bytes == row_bytes), target);
        }
        if (at != HADDR_UNDEF && target.writeback != nullptr)
            target.writeback->wrote(at + start[0] * file_row_bytes, count[0] * file_row_bytes);
    }
    return region;
}

}  // namespace trainrt::checkpoint
