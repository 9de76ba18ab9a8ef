#pragma once
// Dataspaces: their creation, their extent and a block selected in them. Every call goes through
// TRAINRT_H5 (h5.hpp): a failure is an H5Error naming the HDF5 call, `what` and HDF5's own text.
#include <cstdint>
#include <string>
#include <vector>

#include "h5/h5.hpp"

namespace trainrt::h5 {

// A simple dataspace of extent `dims`, fixed at that size. No dims: a scalar dataspace (HDF5
// takes rank 0 as one).
Dataspace simple_space(const std::vector<hsize_t>& dims, const std::string& what);
// A simple dataspace of extent `dims` that may grow up to `max_dims` (same rank; H5S_UNLIMITED
// for no limit). Datasets of such a space must be chunked.
Dataspace extendible_space(const std::vector<hsize_t>& dims, const std::vector<hsize_t>& max_dims,
                           const std::string& what);
Dataspace scalar_space(const std::string& what);

// The current extent of a simple dataspace (empty for a scalar one).
std::vector<hsize_t> space_dims(hid_t space, const std::string& what);
// How many elements a dataspace holds (1 for a scalar one, 0 for a null one).
std::uint64_t space_points(hid_t space, const std::string& what);

// A block of consecutive elements in every dimension: [start[d], start[d] + count[d]).
struct Block {
    std::vector<hsize_t> start;
    std::vector<hsize_t> count;
};
// Makes `block` the selection of `space` (replacing any earlier one). The block must have the
// space's rank and lie within its extent (else H5Error from the read or write that uses it).
void select_block(hid_t space, const Block& block, const std::string& what);

}  // namespace trainrt::h5
