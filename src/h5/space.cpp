#include "h5/space.hpp"

#include "trainrt/error.hpp"

namespace trainrt::h5 {

Dataspace simple_space(const std::vector<hsize_t>& dims, const std::string& what) {
    return Dataspace(
        TRAINRT_H5(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), what));
}

Dataspace extendible_space(const std::vector<hsize_t>& dims, const std::vector<hsize_t>& max_dims,
                           const std::string& what) {
    if (max_dims.size() != dims.size())
        throw H5Error("HDF5 dataspace (" + what + "): its maximum extent has another rank than its extent");
    return Dataspace(
        TRAINRT_H5(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), max_dims.data()), what));
}

Dataspace scalar_space(const std::string& what) { return Dataspace(TRAINRT_H5(H5Screate(H5S_SCALAR), what)); }

std::vector<hsize_t> space_dims(hid_t space, const std::string& what) {
    const int rank = TRAINRT_H5(H5Sget_simple_extent_ndims(space), what);
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    TRAINRT_H5(H5Sget_simple_extent_dims(space, dims.data(), nullptr), what);
    return dims;
}

std::uint64_t space_points(hid_t space, const std::string& what) {
    return static_cast<std::uint64_t>(TRAINRT_H5(H5Sget_simple_extent_npoints(space), what));
}

void select_block(hid_t space, const Block& block, const std::string& what) {
    if (block.start.size() != block.count.size())
        throw H5Error("HDF5 selection (" + what + "): a block's start and count differ in rank");
    TRAINRT_H5(
        H5Sselect_hyperslab(space, H5S_SELECT_SET, block.start.data(), nullptr, block.count.data(), nullptr),
        what);
}

}  // namespace trainrt::h5
