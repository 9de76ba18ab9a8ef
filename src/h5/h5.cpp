#include "h5/h5.hpp"

#include <mutex>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "trainrt/error.hpp"

namespace trainrt::h5 {
namespace {

herr_t collect_error(unsigned, const H5E_error2_t* error, void* out) {
    std::string frame = fmt::format("{}(): {}", error->func_name ? error->func_name : "?",
                                    error->desc ? error->desc : "?");
    for (char& c : frame)  // the sec2 driver's descriptions span lines; errors are one line
        if (c == '\n' || c == '\r') c = ' ';
    static_cast<std::vector<std::string>*>(out)->push_back(std::move(frame));
    return 0;
}

// The API call that failed and the innermost frames, where HDF5 says why (e.g. "errno = 28,
// error message = 'No space left on device'").
std::string summarize(const std::vector<std::string>& frames) {
    if (frames.size() <= 3) return fmt::format("{}", fmt::join(frames, "; "));
    return fmt::format("{}; ...; {}; {}", frames.front(), frames[frames.size() - 2], frames.back());
}

}  // namespace

std::mutex& library_mutex() {
    static std::mutex mutex;
    return mutex;
}

void init_library() {
    static std::once_flag once;
    std::call_once(once, [] {
        H5open();
        H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    });
}

void throw_error(const char* call, const std::string& what) {
    std::vector<std::string> frames;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_error, &frames);
    H5Eclear2(H5E_DEFAULT);
    throw H5Error(fmt::format("HDF5 call {} failed{}: {}", call,
                              what.empty() ? "" : " (" + what + ")",
                              frames.empty() ? "no HDF5 error stack" : summarize(frames)));
}

Handle& Handle::operator=(Handle&& other) noexcept {
    if (this != &other) {
        reset();
        id_ = other.id_;
        closer_ = other.closer_;
        other.id_ = -1;
    }
    return *this;
}

hid_t Handle::release() noexcept {
    hid_t id = id_;
    id_ = -1;
    return id;
}

void close_file(Handle& file, const std::string& path) {
    try {
        TRAINRT_H5(H5Fflush(file.get(), H5F_SCOPE_LOCAL), path);
        TRAINRT_H5(H5Fclose(file.get()), path);
    } catch (...) {
        file.release();
        throw;
    }
    file.release();
}

void Handle::reset() noexcept {
    if (id_ >= 0 && closer_ != nullptr) closer_(id_);
    id_ = -1;
}

Handle file_access_props() {
    init_library();
    Handle fapl(TRAINRT_H5(H5Pcreate(H5P_FILE_ACCESS), ""), H5Pclose);
    TRAINRT_H5(H5Pset_file_locking(fapl.get(), false, true), "");
    return fapl;
}

Handle create_file(const std::string& path) {
    Handle fapl = file_access_props();
    return {TRAINRT_H5(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), path),
            H5Fclose};
}

Handle open_file(const std::string& path, bool writable) {
    Handle fapl = file_access_props();
    unsigned flags = writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY;
    return {TRAINRT_H5(H5Fopen(path.c_str(), flags, fapl.get()), path), H5Fclose};
}

Handle create_group(hid_t parent, const std::string& name) {
    return {TRAINRT_H5(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                       name),
            H5Gclose};
}

Handle open_group(hid_t parent, const std::string& name) {
    return {TRAINRT_H5(H5Gopen2(parent, name.c_str(), H5P_DEFAULT), name), H5Gclose};
}

Handle open_dataset(hid_t parent, const std::string& name) {
    return {TRAINRT_H5(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), name), H5Dclose};
}

Handle dataset_space(hid_t dataset) {
    return {TRAINRT_H5(H5Dget_space(dataset), ""), H5Sclose};
}

std::vector<hsize_t> dataset_shape(hid_t dataset) {
    Handle space = dataset_space(dataset);
    int rank = TRAINRT_H5(H5Sget_simple_extent_ndims(space.get()), "");
    std::vector<hsize_t> shape(static_cast<std::size_t>(rank));
    TRAINRT_H5(H5Sget_simple_extent_dims(space.get(), shape.data(), nullptr), "");
    return shape;
}

bool exists(hid_t parent, const std::string& name) {
    return TRAINRT_H5(H5Lexists(parent, name.c_str(), H5P_DEFAULT), name) > 0;
}

void write_dataset(hid_t parent, const std::string& name, hid_t mem_type,
                   const std::vector<hsize_t>& shape, const void* data) {
    Handle space(TRAINRT_H5(H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr),
                            name),
                 H5Sclose);
    Handle dataset(TRAINRT_H5(H5Dcreate2(parent, name.c_str(), mem_type, space.get(), H5P_DEFAULT,
                                         H5P_DEFAULT, H5P_DEFAULT),
                              name),
                   H5Dclose);
    TRAINRT_H5(H5Dwrite(dataset.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), name);
}

void write_attribute(hid_t object, const std::string& name, const std::string& value) {
    Handle type(TRAINRT_H5(H5Tcopy(H5T_C_S1), name), H5Tclose);
    TRAINRT_H5(H5Tset_size(type.get(), std::max<std::size_t>(1, value.size())), name);
    Handle space(TRAINRT_H5(H5Screate(H5S_SCALAR), name), H5Sclose);
    Handle attribute(TRAINRT_H5(H5Acreate2(object, name.c_str(), type.get(), space.get(),
                                           H5P_DEFAULT, H5P_DEFAULT),
                                name),
                     H5Aclose);
    TRAINRT_H5(H5Awrite(attribute.get(), type.get(), value.empty() ? "" : value.data()), name);
}

void write_attribute(hid_t object, const std::string& name, std::int64_t value) {
    Handle space(TRAINRT_H5(H5Screate(H5S_SCALAR), name), H5Sclose);
    Handle attribute(TRAINRT_H5(H5Acreate2(object, name.c_str(), H5T_STD_I64LE, space.get(),
                                           H5P_DEFAULT, H5P_DEFAULT),
                                name),
                     H5Aclose);
    TRAINRT_H5(H5Awrite(attribute.get(), H5T_NATIVE_INT64, &value), name);
}

std::string read_string_attribute(hid_t object, const std::string& name) {
    Handle attribute(TRAINRT_H5(H5Aopen(object, name.c_str(), H5P_DEFAULT), name), H5Aclose);
    Handle type(TRAINRT_H5(H5Aget_type(attribute.get()), name), H5Tclose);
    if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) > 0)
        throw H5Error(fmt::format("HDF5 attribute '{}' is not a fixed-length string", name));
    std::string value(H5Tget_size(type.get()), '\0');
    TRAINRT_H5(H5Aread(attribute.get(), type.get(), value.data()), name);
    return value.substr(0, value.find('\0'));
}

std::int64_t read_int_attribute(hid_t object, const std::string& name) {
    Handle attribute(TRAINRT_H5(H5Aopen(object, name.c_str(), H5P_DEFAULT), name), H5Aclose);
    std::int64_t value = 0;
    TRAINRT_H5(H5Aread(attribute.get(), H5T_NATIVE_INT64, &value), name);
    return value;
}

}  // namespace trainrt::h5
