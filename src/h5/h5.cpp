#include "h5/h5.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <hdf5_hl.h>

#include "h5/space.hpp"
#include "h5/types.hpp"
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

// An automatic error handler (H5Eset_auto2): the frames of the first failure it sees.
herr_t collect_stack(hid_t stack, void* frames) {
    if (static_cast<std::vector<std::string>*>(frames)->empty())
        H5Ewalk2(stack, H5E_WALK_DOWNWARD, collect_error, frames);
    return 0;
}

// The API call that failed and the innermost frames, where HDF5 says why (e.g. "errno = 28,
// error message = 'No space left on device'").
std::string summarize(const std::vector<std::string>& frames) {
    if (frames.size() <= 3) return fmt::format("{}", fmt::join(frames, "; "));
    return fmt::format("{}; ...; {}; {}", frames.front(), frames[frames.size() - 2], frames.back());
}

}  // namespace

namespace detail {

std::recursive_mutex& api_mutex() {
    static std::recursive_mutex mutex;
    return mutex;
}

}  // namespace detail

void FreeMemory::operator()(char* memory) const noexcept {
    locked([memory] { return H5free_memory(memory); });
}

void init_library() {
    locked([] {
        static bool done = false;  // guarded by the lock
        if (done) return;
        H5open();
        H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
        // HDF5 keeps every block it frees on free lists of its own, without limit by default: a
        // reader going through a large chunked dataset would hold hundreds of MB it no longer
        // uses. Bounded here (bytes: all lists of a kind, then each list).
        H5set_free_list_limits(16 << 20, 1 << 20, 16 << 20, 1 << 20, 32 << 20, 4 << 20);
        done = true;
    });
}

void throw_error(const char* call, const std::string& what) {
    std::vector<std::string> frames;
    locked([&] {
        H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_error, &frames);
        return H5Eclear2(H5E_DEFAULT);
    });
    throw H5Error(fmt::format("HDF5 call {} failed{}: {}", call,
                              what.empty() ? "" : " (" + what + ")",
                              frames.empty() ? "no HDF5 error stack" : summarize(frames)));
}

void close_file(File& file, const std::string& path) {
    try {
        TRAINRT_H5(H5Fflush(file.get(), H5F_SCOPE_LOCAL), path);
        TRAINRT_H5(H5Fclose(file.get()), path);
    } catch (...) {
        file.release();
        throw;
    }
    file.release();
}

PropertyList file_access_props() {
    init_library();
    PropertyList fapl(TRAINRT_H5(H5Pcreate(H5P_FILE_ACCESS), ""));
    TRAINRT_H5(H5Pset_file_locking(fapl.get(), false, true), "");
    return fapl;
}

File create_file(const std::string& path) {
    PropertyList fapl = file_access_props();
    return File(TRAINRT_H5(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), path));
}

File open_file(const std::string& path, bool writable) {
    PropertyList fapl = file_access_props();
    unsigned flags = writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY;
    return File(TRAINRT_H5(H5Fopen(path.c_str(), flags, fapl.get()), path));
}

File open_file_packed(const std::string& path, std::uint64_t metadata_block_bytes) {
    PropertyList fapl = file_access_props();
    TRAINRT_H5(H5Pset_meta_block_size(fapl.get(), metadata_block_bytes), path);
    TRAINRT_H5(H5Pset_small_data_block_size(fapl.get(), 0), path);
    return File(TRAINRT_H5(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get()), path));
}

File open_image(const char* bytes, std::uint64_t size, const std::string& name) {
    // Without DONT_COPY HDF5 copies the image, as large as the checkpoint file; without
    // DONT_RELEASE it would free memory it does not own. Read-only: the image is never written.
    const unsigned flags = H5LT_FILE_IMAGE_DONT_COPY | H5LT_FILE_IMAGE_DONT_RELEASE;
    // H5LTopen_file_image cleans up after a failure with HDF5 calls that clear the error stack:
    // HDF5's text is taken as its inner call fails, by an automatic error handler set meanwhile.
    std::vector<std::string> frames;
    const hid_t opened = locked([&] {
        H5E_auto2_t previous = nullptr;
        void* previous_data = nullptr;
        H5Eget_auto2(H5E_DEFAULT, &previous, &previous_data);
        H5Eset_auto2(H5E_DEFAULT, collect_stack, &frames);
        const hid_t id = H5LTopen_file_image(const_cast<char*>(bytes), size, flags);
        H5Eset_auto2(H5E_DEFAULT, previous, previous_data);
        H5Eclear2(H5E_DEFAULT);
        return id;
    });
    if (opened < 0)
        throw H5Error(fmt::format("HDF5 call H5LTopen_file_image failed ({}): {}", name,
                                  frames.empty() ? "no HDF5 error stack" : summarize(frames)));
    return File(opened);
}

Group create_group(hid_t parent, const std::string& name) {
    return Group(TRAINRT_H5(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                            name));
}

Group open_group(hid_t parent, const std::string& name) {
    return Group(TRAINRT_H5(H5Gopen2(parent, name.c_str(), H5P_DEFAULT), name));
}

Dataset open_dataset(hid_t parent, const std::string& name) {
    return Dataset(TRAINRT_H5(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), name));
}

Dataspace dataset_space(hid_t dataset) { return Dataspace(TRAINRT_H5(H5Dget_space(dataset), "")); }

std::vector<hsize_t> dataset_shape(hid_t dataset) {
    Dataspace space = dataset_space(dataset);
    return space_dims(space.get(), "");
}

bool exists(hid_t parent, const std::string& name) {
    return TRAINRT_H5(H5Lexists(parent, name.c_str(), H5P_DEFAULT), name) > 0;
}

bool path_exists(hid_t parent, const std::string& path) {
    return locked([&] { return H5Lexists(parent, path.c_str(), H5P_DEFAULT) > 0; });
}

H5O_type_t object_type(hid_t parent, const std::string& path) {
    return locked([&] {
        H5O_info_t info;
        if (H5Oget_info_by_name2(parent, path.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0)
            return H5O_TYPE_UNKNOWN;
        return info.type;
    });
}

void write_dataset(hid_t parent, const std::string& name, hid_t mem_type,
                   const std::vector<hsize_t>& shape, const void* data) {
    Dataspace space(TRAINRT_H5(
        H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr), name));
    Dataset dataset(TRAINRT_H5(H5Dcreate2(parent, name.c_str(), mem_type, space.get(), H5P_DEFAULT,
                                          H5P_DEFAULT, H5P_DEFAULT),
                               name));
    TRAINRT_H5(H5Dwrite(dataset.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), name);
}

void write_attribute(hid_t object, const std::string& name, const std::string& value) {
    Datatype type(TRAINRT_H5(H5Tcopy(H5T_C_S1), name));
    TRAINRT_H5(H5Tset_size(type.get(), std::max<std::size_t>(1, value.size())), name);
    Dataspace space(TRAINRT_H5(H5Screate(H5S_SCALAR), name));
    Attribute attribute(TRAINRT_H5(H5Acreate2(object, name.c_str(), type.get(), space.get(),
                                              H5P_DEFAULT, H5P_DEFAULT),
                                   name));
    TRAINRT_H5(H5Awrite(attribute.get(), type.get(), value.empty() ? "" : value.data()), name);
}

void write_attribute(hid_t object, const std::string& name, std::int64_t value) {
    Dataspace space(TRAINRT_H5(H5Screate(H5S_SCALAR), name));
    Attribute attribute(TRAINRT_H5(H5Acreate2(object, name.c_str(), H5T_STD_I64LE, space.get(),
                                              H5P_DEFAULT, H5P_DEFAULT),
                                   name));
    TRAINRT_H5(H5Awrite(attribute.get(), H5T_NATIVE_INT64, &value), name);
}

void write_attribute(hid_t object, const std::string& name, const std::vector<double>& values) {
    const hsize_t count = values.size();
    Dataspace space(TRAINRT_H5(H5Screate_simple(1, &count, nullptr), name));
    Attribute attribute(TRAINRT_H5(H5Acreate2(object, name.c_str(), H5T_IEEE_F64LE, space.get(),
                                              H5P_DEFAULT, H5P_DEFAULT),
                                   name));
    TRAINRT_H5(H5Awrite(attribute.get(), H5T_NATIVE_DOUBLE, values.data()), name);
}

void write_attribute(hid_t object, const std::string& name, const std::vector<std::int64_t>& values) {
    Dataspace space = simple_space({values.size()}, name);
    Attribute attribute(TRAINRT_H5(H5Acreate2(object, name.c_str(), H5T_STD_I64LE, space.get(),
                                              H5P_DEFAULT, H5P_DEFAULT),
                                   name));
    if (!values.empty()) TRAINRT_H5(H5Awrite(attribute.get(), H5T_NATIVE_INT64, values.data()), name);
}

std::vector<std::int64_t> read_int_array_attribute(hid_t object, const std::string& name) {
    Attribute attribute(TRAINRT_H5(H5Aopen(object, name.c_str(), H5P_DEFAULT), name));
    Dataspace space(TRAINRT_H5(H5Aget_space(attribute.get()), name));
    std::vector<std::int64_t> values(static_cast<std::size_t>(space_points(space.get(), name)));
    if (!values.empty()) TRAINRT_H5(H5Aread(attribute.get(), H5T_NATIVE_INT64, values.data()), name);
    return values;
}

std::vector<double> read_double_array_attribute(hid_t object, const std::string& name) {
    Attribute attribute(TRAINRT_H5(H5Aopen(object, name.c_str(), H5P_DEFAULT), name));
    Dataspace space(TRAINRT_H5(H5Aget_space(attribute.get()), name));
    const auto count = TRAINRT_H5(H5Sget_simple_extent_npoints(space.get()), name);
    std::vector<double> values(static_cast<std::size_t>(count));
    TRAINRT_H5(H5Aread(attribute.get(), H5T_NATIVE_DOUBLE, values.data()), name);
    return values;
}

bool has_attribute(hid_t object, const std::string& name) {
    return TRAINRT_H5(H5Aexists(object, name.c_str()), name) > 0;
}

namespace {

herr_t collect_member(hid_t group, const char* name, const H5L_info_t*, void* out) {
    Member member{name};
    const H5O_type_t type = object_type(group, name);
    member.is_group = type == H5O_TYPE_GROUP;
    member.is_dataset = type == H5O_TYPE_DATASET;
    static_cast<std::vector<Member>*>(out)->push_back(std::move(member));
    return 0;
}

}  // namespace

std::vector<Member> list_members(hid_t group) {
    std::vector<Member> members;
    TRAINRT_H5(H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_member, &members), "members");
    return members;
}

namespace {

std::string read_variable_string(hid_t attribute, hid_t type, const std::string& name) {
    Datatype memory(TRAINRT_H5(H5Tcopy(H5T_C_S1), name));
    TRAINRT_H5(H5Tset_size(memory.get(), H5T_VARIABLE), name);
    // HDF5 converts no character set into another: read in the attribute's own.
    TRAINRT_H5(H5Tset_cset(memory.get(), TRAINRT_H5(H5Tget_cset(type), name)), name);
    char* text = nullptr;
    TRAINRT_H5(H5Aread(attribute, memory.get(), &text), name);
    const Memory owned(text);
    return owned ? std::string(owned.get()) : std::string();
}

std::string read_fixed_string(hid_t attribute, hid_t type, const std::string& name) {
    const std::size_t size = locked([type] { return H5Tget_size(type); });
    std::string value(size, '\0');
    TRAINRT_H5(H5Aread(attribute, type, value.data()), name);
    value.resize(std::min(value.size(), value.find('\0')));
    if (TRAINRT_H5(H5Tget_strpad(type), name) == H5T_STR_SPACEPAD)
        value.erase(value.find_last_not_of(' ') + 1);
    return value;
}

}  // namespace

std::string read_string_attribute(hid_t object, const std::string& name) {
    Attribute attribute(TRAINRT_H5(H5Aopen(object, name.c_str(), H5P_DEFAULT), name));
    Datatype type(TRAINRT_H5(H5Aget_type(attribute.get()), name));
    Dataspace space(TRAINRT_H5(H5Aget_space(attribute.get()), name));
    if (TRAINRT_H5(H5Tget_class(type.get()), name) != H5T_STRING ||
        TRAINRT_H5(H5Sget_simple_extent_npoints(space.get()), name) != 1)
        throw H5Error(fmt::format("HDF5 attribute '{}' is not one string (fixed or variable length)", name));
    if (TRAINRT_H5(H5Tis_variable_str(type.get()), name) > 0)
        return read_variable_string(attribute.get(), type.get(), name);
    return read_fixed_string(attribute.get(), type.get(), name);
}

std::string enum_member_name(hid_t type, unsigned member) { return member_name(type, member, "enum member"); }

std::int64_t read_int_attribute(hid_t object, const std::string& name) {
    Attribute attribute(TRAINRT_H5(H5Aopen(object, name.c_str(), H5P_DEFAULT), name));
    std::int64_t value = 0;
    TRAINRT_H5(H5Aread(attribute.get(), H5T_NATIVE_INT64, &value), name);
    return value;
}

}  // namespace trainrt::h5
