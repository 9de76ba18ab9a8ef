#pragma once
// NumPy's .npy format (and .npz, a zip of .npy members, stored or deflated, read through libzip):
// the header is parsed here, the data streamed in blocks of rows. Little- and big-endian arrays of
// the types trainrt stores; bool as u8, u2/u4 widened to i32/i64. Fortran-order arrays, object
// arrays and 0-d arrays are refused with a line saying how to save them instead.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trainrt/data.hpp"

namespace trainrt::data {

// A readable stream of bytes: a .npy file or one member of an .npz.
class ByteSource {
public:
    virtual ~ByteSource() = default;
    // Reads exactly `bytes` (DataError naming `what` when the input ends first).
    virtual void read(void* out, std::size_t bytes, const char* what) = 0;
    // The bytes left to read, or nullopt where the source cannot tell (a pipe).
    virtual std::optional<std::uint64_t> remaining() const = 0;
    // Called after the data: reads what is left, so that an .npz member's CRC-32 is checked
    // (libzip checks it at the member's end only); DataError when it does not match.
    virtual void finish() = 0;
    virtual const std::string& where() const = 0;
};

struct NpyArray {
    ColumnType type = ColumnType::u8;  // the column type it is stored as
    char kind = 'u';                   // numpy's kind: b, u, i, f
    std::size_t item_bytes = 1;        // bytes per element in the file
    bool swap = false;                 // big-endian data
    std::vector<std::size_t> shape;    // shape[0] is the sample
    std::size_t sample_elements() const;
};

// Reads the magic, version and header of an .npy stream; the stream then stands at the data.
NpyArray read_npy_header(ByteSource& source);

// Converts `count` elements as stored (`array`'s kind and size, byte order) into the column type.
void convert_elements(const NpyArray& array, const std::byte* in, std::size_t count, std::byte* out);

std::unique_ptr<ByteSource> open_npy_file(const std::string& path);

// An .npz archive: its members (name without ".npy") and a stream over each.
class NpzArchive {
public:
    explicit NpzArchive(const std::string& path);
    ~NpzArchive();
    NpzArchive(const NpzArchive&) = delete;
    NpzArchive& operator=(const NpzArchive&) = delete;
    const std::vector<std::string>& members() const { return members_; }
    std::unique_ptr<ByteSource> open(std::size_t member);

private:
    std::string path_;
    void* archive_ = nullptr;  // zip_t
    std::vector<std::string> members_;
    std::vector<std::uint64_t> indices_;
};

}  // namespace trainrt::data
