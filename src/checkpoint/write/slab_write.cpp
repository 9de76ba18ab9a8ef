#include "checkpoint/write/slab_write.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
#include <optional>
#include <vector>

#include "checkpoint/format/layout.hpp"
#include "h5/h5.hpp"
#include "h5/io.hpp"
#include "h5/space.hpp"
#include "h5/types.hpp"
#include "storage/posix.hpp"

namespace trainrt::checkpoint {
namespace {

template <class It> std::uint64_t product(It begin, It end) {
    return std::accumulate(begin, end, std::uint64_t{1}, std::multiplies<>());
}

// Bytes of one row (first index) of the dataset in the file: a slab of the block's rows lies
// within those rows of the dataset, contiguous when the block spans every later dimension.
std::uint64_t dataset_row_bytes(hid_t dataset, const TensorPart& part, std::uint64_t block_row_bytes) {
    h5::Dataspace space = h5::dataset_space(dataset);
    const std::vector<hsize_t> dims = h5::space_dims(space.get(), part.name);
    const std::uint64_t block_row_elements = product(part.shape.begin() + 1, part.shape.end());
    return block_row_bytes / block_row_elements * product(dims.begin() + 1, dims.end());
}

// The block's bytes in the file as one region when they lie there as they are in memory: the file's
// type is the native one and the block spans every later dimension of the dataset.
std::optional<WrittenRegion> region_of(const TensorPart& part, haddr_t at, std::uint64_t first_byte, bool contiguous) {
    const bool same_bytes = h5::same_type(file_type(part.type), memory_type(part.type), part.name);
    if (!same_bytes || !contiguous || at == HADDR_UNDEF) return std::nullopt;
    return WrittenRegion{at + first_byte, part.bytes(), part.data};
}

std::optional<WrittenRegion> announce(std::optional<WrittenRegion> region, const SlabTarget& target) {
    if (region && target.placed) target.placed(*region);
    return region;
}

// The block written by target.direct when its bytes lie in the file as in memory and the
// dataset has its place already; nullopt, nothing written, otherwise.
std::optional<WrittenRegion> write_direct(const TensorPart& part, const SlabTarget& target) {
    const std::uint64_t row_bytes = part.bytes() / part.shape[0];
    const std::uint64_t file_row_bytes = dataset_row_bytes(target.dataset, part, row_bytes);
    const std::optional<WrittenRegion> region = region_of(part, h5::data_offset(target.dataset),
                                                          target.offset[0] * file_row_bytes,
                                                          file_row_bytes == row_bytes);
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
        h5::write_all(target.dataset, memory_type(part.type), part.data, dataset_path(part.name), target.transfer);
        return announce(region_of(part, h5::data_offset(target.dataset), 0, true), target);
    }
    if (part.elements() == 0) return std::nullopt;
    const std::vector<hsize_t> shape(part.shape.begin(), part.shape.end());
    const hsize_t rows = shape[0];
    const std::uint64_t row_bytes = part.bytes() / rows;
    const hsize_t slab_rows = std::max<hsize_t>(1, kSlabBytes / row_bytes);
    const std::uint64_t file_row_bytes = dataset_row_bytes(target.dataset, part, row_bytes);
    haddr_t at = HADDR_UNDEF;  // known once the dataset has its space: at creation or at the first write
    std::optional<WrittenRegion> region;
    for (hsize_t row = 0; row < rows; row += slab_rows) {
        std::vector<hsize_t> start(target.offset.begin(), target.offset.end()), count = shape;
        start[0] += row;
        count[0] = std::min(slab_rows, rows - row);
        h5::write_block(target.dataset, memory_type(part.type), {start, count},
                        static_cast<const std::byte*>(part.data) + row * row_bytes, dataset_path(part.name),
                        target.transfer);
        if (at == HADDR_UNDEF) {
            at = h5::data_offset(target.dataset);
            region = announce(region_of(part, at, target.offset[0] * file_row_bytes, file_row_bytes == row_bytes), target);
        }
        if (at != HADDR_UNDEF && target.writeback != nullptr)
            target.writeback->wrote(at + start[0] * file_row_bytes, count[0] * file_row_bytes);
    }
    return region;
}

}  // namespace trainrt::checkpoint
