#include "checkpoint/slab_write.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
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

}  // namespace

void write_in_slabs(const TensorPart& part, const SlabTarget& target) {
    if (part.shape.empty()) {  // a scalar: one element, nothing to split
        TRAINRT_H5(H5Dwrite(target.dataset, memory_type(part.type), H5S_ALL, H5S_ALL, target.transfer, part.data),
                   dataset_path(part.name));
        return;
    }
    if (part.elements() == 0) return;
    const std::vector<hsize_t> shape(part.shape.begin(), part.shape.end());
    const hsize_t rows = shape[0];
    const std::uint64_t row_bytes = part.bytes() / rows;
    const hsize_t slab_rows = std::max<hsize_t>(1, kSlabBytes / row_bytes);
    h5::Dataspace file_space(TRAINRT_H5(H5Dget_space(target.dataset), part.name));
    const std::uint64_t file_row_bytes = dataset_row_bytes(file_space.get(), part, row_bytes);
    const haddr_t at = h5::locked([&] { return H5Dget_offset(target.dataset); });
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
        if (at != HADDR_UNDEF && target.writeback_fd >= 0)
            storage::start_writeback(target.writeback_fd, at + start[0] * file_row_bytes, count[0] * file_row_bytes,
                                     target.path);
    }
}

}  // namespace trainrt::checkpoint
