#pragma once
// Datasets: their creation, reads and writes of the whole dataset or of a block of it, raw chunk
// writes, growth, and what HDF5 says of their storage (file offset, chunks, layout, filters).
// A failed call is an H5Error naming the HDF5 call, `what` and HDF5's own text.
#include <cstddef>
#include <string>
#include <vector>

#include "h5/h5.hpp"
#include "h5/space.hpp"

namespace trainrt::h5 {

// Creates dataset `name` below `parent` of file type `type` and dataspace `space`, with creation
// properties `dcpl` (H5P_DEFAULT, or props.hpp's dataset_create_props).
Dataset create_dataset(hid_t parent, const std::string& name, hid_t type, hid_t space, hid_t dcpl,
                       const std::string& what);
// Opens dataset `name` below `parent` with access properties `dapl` (e.g. uncached_dataset_access).
Dataset open_dataset_with(hid_t parent, const std::string& name, hid_t dapl, const std::string& what);

// The whole dataset from or to contiguous memory of `memory_type` holding every element, in the
// dataset's shape. `transfer`: H5P_DEFAULT or a transfer property list (independent_transfer).
void read_all(hid_t dataset, hid_t memory_type, void* out, const std::string& what);
void write_all(hid_t dataset, hid_t memory_type, const void* data, const std::string& what,
               hid_t transfer = H5P_DEFAULT);
// The elements selected in `file_space` (a copy of the dataset's space) from or to those selected
// in `memory_space`, in order; H5S_ALL for either: the whole dataset's shape.
void read_selected(hid_t dataset, hid_t memory_type, hid_t memory_space, hid_t file_space, void* out,
                   const std::string& what);
// `block` of the dataset from or to contiguous memory shaped as block.count. Under the HDF5 lock
// throughout, from the selection to the end of the transfer.
void read_block(hid_t dataset, hid_t memory_type, const Block& block, void* out, const std::string& what);
void write_block(hid_t dataset, hid_t memory_type, const Block& block, const void* data, const std::string& what,
                 hid_t transfer = H5P_DEFAULT);

// Writes the stored bytes of the chunk that starts at element `offset` of a chunked dataset as they
// are (no type conversion; no filter applied, so an unfiltered dataset's chunk is its elements).
// The chunk must lie within the dataset's current extent (set_extent).
void write_chunk(hid_t dataset, const std::vector<hsize_t>& offset, const void* bytes, std::size_t size,
                 const std::string& what);
// Changes a chunked dataset's extent to `dims`, within its space's maximum extent.
void set_extent(hid_t dataset, const std::vector<hsize_t>& dims, const std::string& what);

// Where a contiguous dataset's elements start in the file; HADDR_UNDEF when it has no place there
// (not allocated yet, chunked, compact). Never throws: HADDR_UNDEF is also HDF5's failure.
haddr_t data_offset(hid_t dataset);
// Where the chunk holding element `coords` lies in the file and its stored size in bytes; address
// HADDR_UNDEF and size 0 when that chunk is not allocated.
struct ChunkPlace {
    haddr_t address = HADDR_UNDEF;
    hsize_t bytes = 0;
};
ChunkPlace chunk_place(hid_t dataset, const std::vector<hsize_t>& coords, const std::string& what);

Datatype dataset_type(hid_t dataset, const std::string& what);  // the type stored in the file
H5D_layout_t dataset_layout(hid_t dataset, const std::string& what);
// A chunked dataset's chunk dims; empty when it is not chunked.
std::vector<hsize_t> chunk_dims(hid_t dataset, const std::string& what);
// How many filters (compression, shuffle, checksums) its chunks go through.
int filter_count(hid_t dataset, const std::string& what);

}  // namespace trainrt::h5
