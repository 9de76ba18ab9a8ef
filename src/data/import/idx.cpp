#include "data/import/idx.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::data {
namespace {

struct GzCloser {
    void operator()(gzFile file) const noexcept { gzclose(file); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

void read_exact(gzFile file, const std::string& path, void* out, std::size_t bytes,
                const char* what) {
    auto* cursor = static_cast<unsigned char*>(out);
    while (bytes > 0) {
        unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(bytes, 1u << 30));
        int got = gzread(file, cursor, chunk);
        if (got <= 0) {
            int code = 0;
            const char* message = gzerror(file, &code);
            throw DataError(fmt::format("data: {} is truncated or corrupt while reading {} ({}); "
                                        "reinstall the dataset package or re-download the file",
                                        path, what, code != Z_OK ? message : "unexpected end"));
        }
        cursor += got;
        bytes -= static_cast<std::size_t>(got);
    }
}

std::uint32_t big_endian(const unsigned char* bytes) {
    return (std::uint32_t(bytes[0]) << 24) | (std::uint32_t(bytes[1]) << 16) |
           (std::uint32_t(bytes[2]) << 8) | std::uint32_t(bytes[3]);
}

}  // namespace

IdxArray read_idx(const std::string& path) {
    GzFile file(gzopen(path.c_str(), "rb"));
    if (!file)
        throw DataError(fmt::format("data: cannot open {}: {}; install Debian's "
                                    "dataset-fashion-mnist package or pass --from DIR",
                                    path, std::strerror(errno)));
    unsigned char magic[4];
    read_exact(file.get(), path, magic, 4, "the IDX header");
    // Magic: two zero bytes, the element type (0x08 = unsigned byte), the number of dimensions.
    if (magic[0] != 0 || magic[1] != 0 || magic[2] != 0x08 || magic[3] == 0 || magic[3] > 4)
        throw DataError(fmt::format("data: {} is not an unsigned-byte IDX file (magic {:02x}{:02x}"
                                    "{:02x}{:02x})", path, magic[0], magic[1], magic[2], magic[3]));
    IdxArray array;
    constexpr std::size_t kMaxBytes = std::size_t(1) << 34;
    std::size_t total = 1;  // at most kMaxBytes, so the product is checked before it can wrap
    for (int d = 0; d < magic[3]; ++d) {
        unsigned char dim[4];
        read_exact(file.get(), path, dim, 4, "the IDX dimensions");
        array.dims.push_back(big_endian(dim));
        if (array.dims.back() == 0 || total > kMaxBytes / array.dims.back())
            throw DataError(fmt::format("data: {} declares an implausible shape (a dimension of 0, or more than "
                                        "2^34 bytes); reinstall the dataset package or re-download the file", path));
        total *= array.dims.back();
    }
    array.values.resize(total);
    read_exact(file.get(), path, array.values.data(), total, "the IDX values");
    unsigned char extra;
    if (gzread(file.get(), &extra, 1) > 0)
        throw DataError(fmt::format("data: {} has bytes after its declared {} values", path, total));
    return array;
}

}  // namespace trainrt::data
