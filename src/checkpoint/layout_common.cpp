#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <future>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "checkpoint/layout.hpp"
#include "h5/h5.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace trainrt::checkpoint {

std::string dataset_path(const std::string& tensor_name) { return "/tensors/" + tensor_name; }

hid_t file_type(TensorType type) {
    switch (type) {
        case TensorType::f32: return H5T_IEEE_F32LE;
        case TensorType::f64: return H5T_IEEE_F64LE;
        case TensorType::i32: return H5T_STD_I32LE;
        case TensorType::i64: return H5T_STD_I64LE;
        case TensorType::u8: return H5T_STD_U8LE;
    }
    return H5T_STD_U8LE;
}

hid_t memory_type(TensorType type) {
    switch (type) {
        case TensorType::f32: return H5T_NATIVE_FLOAT;
        case TensorType::f64: return H5T_NATIVE_DOUBLE;
        case TensorType::i32: return H5T_NATIVE_INT32;
        case TensorType::i64: return H5T_NATIVE_INT64;
        case TensorType::u8: return H5T_NATIVE_UINT8;
    }
    return H5T_NATIVE_UINT8;
}

void write_shape_attribute(hid_t object, const std::string& name, const Shape& shape) {
    std::vector<std::int64_t> values(shape.begin(), shape.end());
    hsize_t count = values.size();
    h5::Dataspace space(TRAINRT_H5(H5Screate_simple(1, &count, nullptr), name));
    h5::Attribute attribute(TRAINRT_H5(H5Acreate2(object, name.c_str(), H5T_STD_I64LE, space.get(),
                                                  H5P_DEFAULT, H5P_DEFAULT), name));
    if (!values.empty())  // a scalar tensor's shape is empty: a zero-length attribute
        TRAINRT_H5(H5Awrite(attribute.get(), H5T_NATIVE_INT64, values.data()), name);
}

FileEntry describe_file(const std::string& dir, const std::string& name) {
    const std::string path = dir + "/" + name;
    storage::Fd fd = storage::open_or_throw(path, O_RDONLY);
    ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
    std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(),
                                                                   XXH3_freeState);
    XXH3_64bits_reset(state.get());
    // Chunks small enough to stay in the core's cache between the copy and the hash; the disk
    // reads ahead of them: every kAhead bytes the next kAhead are asked for (WILLNEED starts
    // their reads and returns), so the disk never waits for the hash.
    constexpr std::size_t kChunk = 512 << 10, kAhead = 32 << 20;
    std::vector<char> buffer(kChunk);
    std::uint64_t size = 0;
    for (;;) {
        if (size % kAhead == 0)
            ::posix_fadvise(fd.get(), static_cast<off_t>(size + kAhead), kAhead, POSIX_FADV_WILLNEED);
        ssize_t got = ::read(fd.get(), buffer.data(), buffer.size());
        if (got < 0 && errno == EINTR) continue;
        if (got < 0)
            throw StorageError(fmt::format("checkpoint: reading {} failed: {}", path,
                                           std::strerror(errno)));
        if (got == 0) break;
        XXH3_64bits_update(state.get(), buffer.data(), static_cast<std::size_t>(got));
        size += static_cast<std::uint64_t>(got);
    }
    return {name, size, fmt::format("{:016x}", XXH3_64bits_digest(state.get()))};
}

FileEntry describe_file_image(const std::string& dir, const std::string& name, storage::FileImage& image) {
    std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(), XXH3_freeState);
    image = storage::read_file_image(
        dir + "/" + name, [&] { XXH3_64bits_reset(state.get()); },
        [&](const char* bytes, std::size_t count) { XXH3_64bits_update(state.get(), bytes, count); });
    return {name, image.size(), fmt::format("{:016x}", XXH3_64bits_digest(state.get()))};
}

FileEntry sync_and_describe_file(const std::string& dir, const std::string& name) {
    std::future<void> synced =
        std::async(std::launch::async, [path = dir + "/" + name] { storage::fsync_path(path); });
    FileEntry entry = describe_file(dir, name);  // on a throw, the future's destructor waits
    synced.get();
    return entry;
}

}  // namespace trainrt::checkpoint
