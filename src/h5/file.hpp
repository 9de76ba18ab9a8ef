#pragma once
// Files opened with a given file access property list (props.hpp) and flags, and what a file
// holds so far: flushes, its end of allocation, the bytes of an in-memory file. h5.hpp's
// create_file / open_file cover the common case (trainrt's default access). A failed call is an
// H5Error naming the HDF5 call, `what` (or the path) and HDF5's own text.
#include <string>

#include "h5/h5.hpp"

namespace trainrt::h5 {

// Creates `path` (truncating it) with file access `fapl`.
File create_file_with(const std::string& path, hid_t fapl);
// Opens `path` with `flags` (H5F_ACC_RDONLY or H5F_ACC_RDWR, with H5F_ACC_SWMR_READ or
// H5F_ACC_SWMR_WRITE to read a file while one process appends to it) and file access `fapl`.
File open_file_with(const std::string& path, unsigned flags, hid_t fapl);
// Closes `file` with its one H5Fclose, which writes what is left of its metadata (collectively,
// on an MPI-IO file: every rank calls it), and throws H5Error when that fails. The id is released
// first, so a file whose close failed is left to HDF5's shutdown (see Id::release).
void close_file_once(File& file, const std::string& path);

// Writes `file`'s buffered metadata and data: H5F_SCOPE_LOCAL for this file only,
// H5F_SCOPE_GLOBAL for every file mounted with it. Collective on an MPI-IO file.
void flush(hid_t file, H5F_scope_t scope, const std::string& what);
// Where HDF5's allocation in the file ends (its end of allocation, "eoa"): the file's bytes past it
// are not HDF5's. Flush first for the metadata still buffered to have its place.
haddr_t end_of_allocation(hid_t file, const std::string& what);
// The bytes of `file` as they would be on disk (e.g. of a file opened with in_memory_file_access).
std::string file_image(hid_t file, const std::string& what);

}  // namespace trainrt::h5
