#pragma once
// Small RAII layer over the HDF5 C API. Every HDF5 call goes through h5::check, which turns a
// failure into an H5Error holding the call and HDF5's own error stack. Files are opened with
// file locking off (flock fails on many Lustre/NFS mounts; trainrt's commits never rely on it).
#include <hdf5.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace trainrt::h5 {

// Debian's (parallel) HDF5 is not built thread-safe: a thread that uses HDF5 while another may
// (the async checkpoint writer) holds this lock around its HDF5 work.
std::mutex& library_mutex();

// Silences HDF5's automatic error printing once per process (errors become exceptions).
void init_library();

[[noreturn]] void throw_error(const char* call, const std::string& what);

template <class T> T check(T result, const char* call, const std::string& what = "") {
    if (result < 0) throw_error(call, what);
    return result;
}
#define TRAINRT_H5(call, what) ::trainrt::h5::check((call), #call, (what))

// Move-only owner of one hid_t; closes it with the matching H5*close. Never throws on close.
class Handle {
public:
    using Closer = herr_t (*)(hid_t);
    Handle() = default;
    Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
    ~Handle() { reset(); }
    Handle(Handle&& other) noexcept : id_(other.id_), closer_(other.closer_) { other.id_ = -1; }
    Handle& operator=(Handle&& other) noexcept;
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    hid_t get() const { return id_; }
    void reset() noexcept;
    // Forgets the id without closing it. After a failed write, HDF5 1.10's H5Fclose can fail and
    // keep a dangling id that crashes the process at exit (HDFFV-11052): such a file is left for
    // the library to close at exit instead.
    hid_t release() noexcept;

private:
    hid_t id_ = -1;
    Closer closer_ = nullptr;
};

Handle file_access_props();  // fapl: no locking, latest-compatible format
Handle create_file(const std::string& path);  // truncates
Handle open_file(const std::string& path, bool writable);
// Flushes and closes `file`, throwing H5Error when either fails (e.g. no space left), so a write
// is never taken as complete when its last bytes did not reach the file. On failure the id is
// released, not closed (see Handle::release).
void close_file(Handle& file, const std::string& path);
Handle create_group(hid_t parent, const std::string& name);
Handle open_group(hid_t parent, const std::string& name);
Handle open_dataset(hid_t parent, const std::string& name);
Handle dataset_space(hid_t dataset);
std::vector<hsize_t> dataset_shape(hid_t dataset);
bool exists(hid_t parent, const std::string& name);

// Whole-dataset write of a contiguous buffer with the given shape.
void write_dataset(hid_t parent, const std::string& name, hid_t mem_type,
                   const std::vector<hsize_t>& shape, const void* data);

void write_attribute(hid_t object, const std::string& name, const std::string& value);
void write_attribute(hid_t object, const std::string& name, std::int64_t value);
std::string read_string_attribute(hid_t object, const std::string& name);
std::int64_t read_int_attribute(hid_t object, const std::string& name);

}  // namespace trainrt::h5
