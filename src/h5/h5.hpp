#pragma once
// Small RAII layer over the HDF5 C API. Every HDF5 call goes through TRAINRT_H5 (or h5::locked
// for calls whose result is not negative-on-error), which turns a failure into an H5Error
// holding the call and HDF5's own error stack. Files are opened with file locking off (flock
// fails on many Lustre/NFS mounts; trainrt's commits never rely on it).
//
// Thread safety: Debian's (parallel) HDF5 is not built thread-safe, and trainrt uses HDF5 from
// two threads (the async checkpoint writer and the training thread). As HDF5's own thread-safe
// build does, every call made through this layer runs under one process-wide recursive lock,
// and a failed call's error stack (global in HDF5) is read before that lock is released. So
// callers never lock; an HDF5 call made outside this layer is a bug.
//
// This header holds the core (the lock, error checking, id owners) and the common file, group,
// dataset and attribute operations; the others in src/h5 cover the rest, one subject each:
// space.hpp (dataspaces, blocks), io.hpp (dataset creation, reads and writes, storage),
// props.hpp (property lists), types.hpp (datatypes) and file.hpp (files with a given access).
#include <hdf5.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace trainrt::h5 {

namespace detail {
// Only for locked() and the owners below: no other code takes it.
std::recursive_mutex& api_mutex();
}  // namespace detail

// Runs `call` (one or more HDF5 calls) under trainrt's HDF5 lock and returns its result.
template <class Call> decltype(auto) locked(Call&& call) {
    std::lock_guard<std::recursive_mutex> lock(detail::api_mutex());
    return std::forward<Call>(call)();
}

// Memory HDF5 allocated for the caller (a member name, a variable-length string read), freed with
// H5free_memory under the lock, not free(): HDF5 may be built with its own allocator.
struct FreeMemory {
    void operator()(char* memory) const noexcept;
};
using Memory = std::unique_ptr<char, FreeMemory>;

// Silences HDF5's automatic error printing once per process (errors become exceptions).
void init_library();

// Throws H5Error for `call` with HDF5's error stack, which it then clears. Takes the lock, but
// only a caller that held it since the failed call gets that call's stack: use TRAINRT_H5.
[[noreturn]] void throw_error(const char* call, const std::string& what);

// Runs `call` under the lock; a negative result throws H5Error, the lock still held.
template <class Call> auto checked(Call&& call, const char* text, const std::string& what) {
    std::lock_guard<std::recursive_mutex> lock(detail::api_mutex());
    auto result = std::forward<Call>(call)();
    if (result < 0) throw_error(text, what);
    return result;
}
#define TRAINRT_H5(call, what) ::trainrt::h5::checked([&] { return (call); }, #call, (what))

// Move-only owner of one HDF5 id of the kind that `Close` closes (File, Dataset, ...), so an id
// cannot be closed with the wrong function. Closes under the lock; never throws.
template <herr_t (*Close)(hid_t)> class Id {
public:
    Id() = default;
    explicit Id(hid_t id) : id_(id) {}
    ~Id() { reset(); }
    Id(Id&& other) noexcept : id_(std::exchange(other.id_, -1)) {}
    Id& operator=(Id&& other) noexcept {
        if (this != &other) {
            reset();
            id_ = std::exchange(other.id_, -1);
        }
        return *this;
    }
    Id(const Id&) = delete;
    Id& operator=(const Id&) = delete;
    hid_t get() const { return id_; }
    // A failed close is not reported here (destructors, cleanup after an error); close_file does.
    void reset() noexcept {
        if (id_ >= 0) locked([this] { return Close(id_); });
        id_ = -1;
    }
    // Forgets the id without closing it. After a failed write, HDF5 1.10's H5Fclose can fail and
    // keep a dangling id that crashes the process at exit (HDFFV-11052): such a file is left for
    // the library to close at exit instead.
    hid_t release() noexcept { return std::exchange(id_, -1); }

private:
    hid_t id_ = -1;
};

using File = Id<H5Fclose>;
using Group = Id<H5Gclose>;
using Dataset = Id<H5Dclose>;
using Dataspace = Id<H5Sclose>;
using Datatype = Id<H5Tclose>;
using Attribute = Id<H5Aclose>;
using PropertyList = Id<H5Pclose>;

PropertyList file_access_props();  // fapl: no locking, latest-compatible format
File create_file(const std::string& path);  // truncates
File open_file(const std::string& path, bool writable);
// Opens `path` for writing with HDF5's metadata gathered in blocks of `metadata_block_bytes`
// (the first one allocated before any data) and no small-data block: datasets' raw data then
// lies back to back in the order it is allocated, unbroken by metadata until a block fills.
File open_file_packed(const std::string& path, std::uint64_t metadata_block_bytes);
// Opens, read-only, the HDF5 file whose bytes are [bytes, bytes + size) in memory (`name` for
// messages): no copy of them, no read of the disk. The bytes must outlive the File.
File open_image(const char* bytes, std::uint64_t size, const std::string& name);
// Flushes and closes `file`, throwing H5Error when either fails (e.g. no space left), so a write
// is never taken as complete when its last bytes did not reach the file. On failure the id is
// released, not closed (see Id::release).
void close_file(File& file, const std::string& path);
Group create_group(hid_t parent, const std::string& name);
Group open_group(hid_t parent, const std::string& name);
Dataset open_dataset(hid_t parent, const std::string& name);
Dataspace dataset_space(hid_t dataset);
std::vector<hsize_t> dataset_shape(hid_t dataset);
bool exists(hid_t parent, const std::string& name);
// Whether `path` (one name or several, "a/b/c") leads from `parent` to an object. Unlike exists(),
// false and not an H5Error when a group on the way is missing (HDF5 then fails) or HDF5 cannot tell.
bool path_exists(hid_t parent, const std::string& path);
// The kind of object at `path` below `parent`; H5O_TYPE_UNKNOWN, not an H5Error, when there is none
// or HDF5 cannot tell.
H5O_type_t object_type(hid_t parent, const std::string& path);

// Whole-dataset write of a contiguous buffer with the given shape.
void write_dataset(hid_t parent, const std::string& name, hid_t mem_type,
                   const std::vector<hsize_t>& shape, const void* data);

void write_attribute(hid_t object, const std::string& name, const std::string& value);
void write_attribute(hid_t object, const std::string& name, std::int64_t value);
void write_attribute(hid_t object, const std::string& name, const std::vector<double>& values);
// A one-dimensional little-endian int64 attribute, zero-length (nothing written) when `values` is empty.
void write_attribute(hid_t object, const std::string& name, const std::vector<std::int64_t>& values);
// One string, fixed-length (as trainrt and h5py's numpy.bytes_ write) or variable-length (as h5py
// writes str), in either character set; H5Error for anything else (numbers, arrays of strings).
std::string read_string_attribute(hid_t object, const std::string& name);
std::int64_t read_int_attribute(hid_t object, const std::string& name);
std::vector<double> read_double_array_attribute(hid_t object, const std::string& name);
// Every element of an integer attribute (any shape, in order) as int64; empty for a zero-length one.
std::vector<std::int64_t> read_int_array_attribute(hid_t object, const std::string& name);
bool has_attribute(hid_t object, const std::string& name);

// The name of member `member` (0-based) of an enum type (types.hpp's member_name).
std::string enum_member_name(hid_t type, unsigned member);

// The members of a group, in name order, and whether each is a group (else a dataset or other).
struct Member {
    std::string name;
    bool is_group = false;
    bool is_dataset = false;
};
std::vector<Member> list_members(hid_t group);

}  // namespace trainrt::h5
