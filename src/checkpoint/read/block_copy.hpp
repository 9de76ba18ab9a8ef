#pragma once
// Copies a box of elements between two row-major arrays: the overlap of a stored part with a
// requested block, out of a file's image in memory (restore), without HDF5's own read.
#include <cstddef>

#include "trainrt/checkpoint.hpp"

namespace trainrt::checkpoint {

struct ArrayBox {
    const Shape* dims;   // the whole array's shape
    const Shape* start;  // the box's first element in it
};

// Copies `count` elements per dimension from `from` (an array of from_box.dims) at from_box.start
// into `to` (an array of to_box.dims) at to_box.start; every dimension's box lies inside both
// arrays (the caller checked). Trailing dimensions that are whole in both are copied as one run.
// A scalar (no dimensions) is one element. A run of at least kParallelCopyBytes is copied by up to
// `threads` threads in slices of at least kParallelCopyBytes / 2 (the calling thread takes one): one
// core's memcpy is what a restore's copy out of a verified image waits on (about 9 GB/s on a Xeon
// VM core, under the disk's read), where the rank's other cores are idle at that point.
inline constexpr std::size_t kParallelCopyBytes = std::size_t{64} << 20;
void copy_block(const char* from, const ArrayBox& from_box, char* to, const ArrayBox& to_box, const Shape& count,
                std::size_t element_size, int threads = 1);

}  // namespace trainrt::checkpoint
