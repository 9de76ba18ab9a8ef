#pragma once
// Property lists, each built from a small description of what it asks of HDF5: how a dataset is
// laid out and allocated, how a file is accessed (trainrt's defaults, MPI-IO, in memory), how a
// dataset is read or written. A failed call is an H5Error naming the HDF5 call and its part.
#include <mpi.h>

#include <string>
#include <vector>

#include "h5/h5.hpp"

namespace trainrt::h5 {

// A dataset's storage: contiguous (no chunk dims) or chunked, when its space is allocated and
// whether it is pre-filled, and its compression (chunked datasets only).
struct DatasetLayout {
    std::vector<hsize_t> chunk_dims;  // empty: contiguous
    bool allocate_early = false;      // space allocated at creation, not at the first write
    bool never_fill = false;          // no fill value written: every element is written later
    unsigned deflate_level = 0;       // > 0: byte shuffle, then gzip at this level (1-9)
};
// Dataset creation properties for `layout`. H5Error when compression is asked of a contiguous
// layout or this HDF5 has no deflate filter (check deflate_available() first for a better message).
PropertyList dataset_create_props(const DatasetLayout& layout, const std::string& what);
// Whether this HDF5 can write and read gzip (deflate) compressed chunks.
bool deflate_available();

// Dataset access properties with HDF5's chunk cache off: chunks are read from the file each time.
PropertyList uncached_dataset_access(const std::string& what);

// File access: file_access_props() (no file locking) with the newest file format's structures,
// which SWMR needs.
PropertyList latest_format_file_access();
// File access through MPI-IO for parallel HDF5: every rank of `comm` opens the file together.
struct MpiFileAccess {
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Info hints = MPI_INFO_NULL;    // ROMIO hints; HDF5 duplicates them and the communicator
    hsize_t alignment = 0;             // > 0: every object starts at a multiple of it
    bool collective_metadata = false;  // metadata read and written by collective operations
};
PropertyList mpi_file_access(const MpiFileAccess& access);
// File access through the core driver: the file lives in memory only, growing by
// `increment_bytes`, never written to disk (file_image() takes its bytes).
PropertyList in_memory_file_access(std::size_t increment_bytes);

// Transfer properties for parallel HDF5: each rank reads or writes on its own (MPI-IO
// independent I/O), not in collective operations.
PropertyList independent_transfer();

}  // namespace trainrt::h5
