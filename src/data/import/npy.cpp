#include "data/import/npy.hpp"

#include <hdf5.h>
#include <sys/stat.h>
#include <zip.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <regex>
#include <string_view>

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::data {
namespace {

class FileSource final : public ByteSource {
public:
    explicit FileSource(std::string path) : path_(std::move(path)), file_(std::fopen(path_.c_str(), "rb")) {
        if (!file_) throw DataError(fmt::format("data import: cannot open {}: {}", path_, std::strerror(errno)));
        struct stat status {};
        if (::fstat(::fileno(file_), &status) == 0 && S_ISREG(status.st_mode))
            size_ = static_cast<std::uint64_t>(status.st_size);
    }
    ~FileSource() override { std::fclose(file_); }
    FileSource(const FileSource&) = delete;
    FileSource& operator=(const FileSource&) = delete;
    void read(void* out, std::size_t bytes, const char* what) override {
        if (std::fread(out, 1, bytes, file_) != bytes)
            throw DataError(fmt::format("data import: {} ends inside its {}: the file is truncated", path_, what));
        position_ += bytes;
    }
    std::optional<std::uint64_t> remaining() const override {
        if (!size_) return std::nullopt;
        return *size_ > position_ ? *size_ - position_ : 0;
    }
    void finish() override {}
    const std::string& where() const override { return path_; }

private:
    std::string path_;
    std::FILE* file_;
    std::optional<std::uint64_t> size_;  // a regular file's; unknown for pipes
    std::uint64_t position_ = 0;
};

class ZipMemberSource final : public ByteSource {
public:
    ZipMemberSource(zip_file_t* file, std::string where, std::uint64_t size)
        : file_(file), where_(std::move(where)), size_(size) {}
    ~ZipMemberSource() override { zip_fclose(file_); }
    ZipMemberSource(const ZipMemberSource&) = delete;
    ZipMemberSource& operator=(const ZipMemberSource&) = delete;
    void read(void* out, std::size_t bytes, const char* what) override {
        auto* cursor = static_cast<char*>(out);
        while (bytes > 0) {
            const zip_int64_t got = zip_fread(file_, cursor, bytes);
            if (got < 0)
                throw DataError(fmt::format("data import: {}: cannot read its {}: {}", where_, what,
                                            zip_error_strerror(zip_file_get_error(file_))));
            if (got == 0)
                throw DataError(fmt::format("data import: {} ends inside its {}: the archive is truncated", where_, what));
            cursor += got, bytes -= static_cast<std::size_t>(got), position_ += static_cast<std::uint64_t>(got);
        }
    }
    std::optional<std::uint64_t> remaining() const override { return size_ > position_ ? size_ - position_ : 0; }
    void finish() override {
        char rest[4096];
        zip_int64_t got = 0;
        while ((got = zip_fread(file_, rest, sizeof rest)) > 0) {}
        if (got < 0)
            throw DataError(fmt::format("data import: {}: cannot read its data: {}; the archive is damaged",
                                        where_, zip_error_strerror(zip_file_get_error(file_))));
    }
    const std::string& where() const override { return where_; }

private:
    zip_file_t* file_;
    std::string where_;
    std::uint64_t size_;  // uncompressed, from the archive's directory
    std::uint64_t position_ = 0;
};

std::string header_field(const std::string& header, const std::string& key, const std::string& where) {
    std::smatch match;
    const std::regex pattern("['\"]" + key + "['\"]\\s*:\\s*(\\([^)]*\\)|'[^']*'|\"[^\"]*\"|True|False)");
    if (!std::regex_search(header, match, pattern))
        throw DataError(fmt::format("data import: {}: its .npy header has no plain '{}' field; save a numeric array "
                                    "with np.save (structured and object arrays are not columns)", where, key));
    return match[1].str();
}

// A header field's text is made by NumPy; a malformed one is refused, never trusted.
[[noreturn]] void bad_header(const std::string& where, const std::string& what) {
    throw DataError(fmt::format("data import: {}: its .npy header is malformed ({}); write the file with np.save",
                                where, what));
}

// A non-negative integer that is all of `text`, or nullopt (std::from_chars: no sign, no overflow).
std::optional<std::size_t> parse_count(std::string_view text) {
    std::size_t value = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
    return value;
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
    return text;
}

// "(d0, d1, ...)" as NumPy writes it ("(d0,)" for one dimension, "()" for none).
std::vector<std::size_t> parse_shape(const std::string& text, const std::string& where) {
    if (text.size() < 2 || text.front() != '(' || text.back() != ')')
        bad_header(where, fmt::format("shape {} is not a tuple", text));
    std::vector<std::size_t> shape;
    const std::string_view inside = trim(std::string_view(text).substr(1, text.size() - 2));
    for (std::size_t start = 0; start < inside.size();) {
        const std::size_t comma = std::min(inside.find(',', start), inside.size());
        const std::string_view item = trim(inside.substr(start, comma - start));
        const std::optional<std::size_t> dimension = parse_count(item);
        if (!dimension)
            bad_header(where, fmt::format("shape {}: '{}' is not a dimension (a non-negative integer below 2^64)",
                                          text, item));
        shape.push_back(*dimension);
        start = comma + 1;
    }
    if (shape.size() > H5S_MAX_RANK)
        bad_header(where, fmt::format("shape {} has {} dimensions; HDF5 holds at most {}", text, shape.size(),
                                      H5S_MAX_RANK));
    return shape;
}

// The array's data must follow its header in full: a shape whose bytes overflow 64 bits, or exceed
// what the file holds, is refused before anything is allocated for it.
void check_size(const NpyArray& array, const ByteSource& source) {
    if (std::find(array.shape.begin(), array.shape.end(), 0) != array.shape.end()) return;
    std::uint64_t bytes = array.item_bytes;
    for (std::size_t dimension : array.shape) {
        if (bytes > std::numeric_limits<std::uint64_t>::max() / dimension)
            bad_header(source.where(), "its shape holds more than 2^64 bytes");
        bytes *= dimension;
    }
    const std::optional<std::uint64_t> left = source.remaining();
    if (left && *left < bytes)
        throw DataError(fmt::format("data import: {} ends inside its data: the file is truncated (its header "
                                    "promises {} bytes of data, {} follow)", source.where(), bytes, *left));
}

ColumnType stored_type(char kind, std::size_t bytes, const std::string& descr, const std::string& where) {
    if (kind == 'b' && bytes == 1) return ColumnType::u8;
    if (kind == 'u' && bytes == 1) return ColumnType::u8;
    if (kind == 'u' && bytes == 2) return ColumnType::i32;
    if (kind == 'u' && bytes == 4) return ColumnType::i64;
    if (kind == 'i' && bytes == 1) return ColumnType::i8;
    if (kind == 'i' && bytes == 2) return ColumnType::i16;
    if (kind == 'i' && bytes == 4) return ColumnType::i32;
    if (kind == 'i' && bytes == 8) return ColumnType::i64;
    if (kind == 'f' && bytes == 2) return ColumnType::f16;
    if (kind == 'f' && bytes == 4) return ColumnType::f32;
    if (kind == 'f' && bytes == 8) return ColumnType::f64;
    throw DataError(fmt::format("data import: {}: dtype {} is not stored (bool, u1, u2, u4, i1, i2, i4, i8, f2, "
                                "f4, f8 are); convert it with .astype() first", where, descr));
}

template <class In, class Out> void widen(const std::byte* in, std::size_t count, std::byte* out) {
    for (std::size_t i = 0; i < count; ++i) {
        In value;
        std::memcpy(&value, in + i * sizeof(In), sizeof(In));
        const Out wide = static_cast<Out>(value);
        std::memcpy(out + i * sizeof(Out), &wide, sizeof(Out));
    }
}

// descr: a quoted '<f8' and the like (byte order, kind, item size).
void read_descr(const std::string& descr, const std::string& where, NpyArray& array) {
    if (descr.front() != '\'' && descr.front() != '"')
        bad_header(where, fmt::format("descr {} is not a string", descr));
    const std::string type = descr.substr(1, descr.size() - 2);
    const std::optional<std::size_t> item_bytes =
        parse_count(std::string_view(type).substr(std::min<std::size_t>(2, type.size())));
    if (type.size() < 3 || !item_bytes || *item_bytes == 0 || std::string("<>|=").find(type[0]) == std::string::npos)
        throw DataError(fmt::format("data import: {}: dtype {} is not a plain numeric type", where, descr));
    array.kind = type[1];
    array.item_bytes = *item_bytes;
    array.swap = type[0] == '>' && array.item_bytes > 1;
    array.type = stored_type(array.kind, array.item_bytes, descr, where);
}

// NumPy writes headers of a few hundred bytes; a larger length is a damaged or foreign file, and
// is refused before it is allocated.
constexpr std::uint32_t kMaxHeaderBytes = 1u << 20;

// The magic, version and header length, then the header's text; the stream then stands at the data.
std::string read_header_text(ByteSource& source) {
    unsigned char magic[8];
    source.read(magic, sizeof magic, "header");
    if (std::memcmp(magic, "\x93NUMPY", 6) != 0)
        throw DataError(fmt::format("data import: {} is not a .npy array (no NumPy magic); save it with np.save",
                                    source.where()));
    if (magic[6] < 1 || magic[6] > 3)
        bad_header(source.where(), fmt::format("format version {}.{}; versions 1.0 to 3.0 are read", int(magic[6]),
                                               int(magic[7])));
    unsigned char bytes[4] = {0, 0, 0, 0};
    source.read(bytes, magic[6] == 1 ? 2 : 4, "header");
    const std::uint32_t length = bytes[0] | (bytes[1] << 8) | (bytes[2] << 16) | (std::uint32_t(bytes[3]) << 24);
    if (length > kMaxHeaderBytes)
        bad_header(source.where(), fmt::format("a header of {} bytes; NumPy's are a few hundred", length));
    std::string header(length, '\0');
    source.read(header.data(), length, "header");
    return header;
}

}  // namespace

std::size_t NpyArray::sample_elements() const {
    std::size_t elements = 1;
    for (std::size_t d = 1; d < shape.size(); ++d) elements *= shape[d];
    return elements;
}

NpyArray read_npy_header(ByteSource& source) {
    const std::string header = read_header_text(source);
    const std::string descr = header_field(header, "descr", source.where());
    const std::string fortran_order = header_field(header, "fortran_order", source.where());
    if (fortran_order == "True")
        throw DataError(fmt::format("data import: {} is a Fortran-order array; save it C-ordered "
                                    "(np.save(f, np.ascontiguousarray(a)))", source.where()));
    if (fortran_order != "False") bad_header(source.where(), fmt::format("fortran_order is {}", fortran_order));
    NpyArray array;
    array.shape = parse_shape(header_field(header, "shape", source.where()), source.where());
    if (array.shape.empty())
        throw DataError(fmt::format("data import: {} holds a 0-d array; a column needs one row per sample",
                                    source.where()));
    read_descr(descr, source.where(), array);
    check_size(array, source);
    return array;
}

void convert_elements(const NpyArray& array, const std::byte* in, std::size_t count, std::byte* out) {
    std::vector<std::byte> swapped;
    if (array.swap) {
        swapped.assign(in, in + count * array.item_bytes);
        for (std::size_t i = 0; i < count; ++i)
            std::reverse(swapped.begin() + i * array.item_bytes, swapped.begin() + (i + 1) * array.item_bytes);
        in = swapped.data();
    }
    if (array.kind == 'u' && array.item_bytes == 2) return widen<std::uint16_t, std::int32_t>(in, count, out);
    if (array.kind == 'u' && array.item_bytes == 4) return widen<std::uint32_t, std::int64_t>(in, count, out);
    if (array.kind == 'b')
        for (std::size_t i = 0; i < count; ++i) out[i] = in[i] != std::byte{0} ? std::byte{1} : std::byte{0};
    else
        std::memcpy(out, in, count * array.item_bytes);
}

std::unique_ptr<ByteSource> open_npy_file(const std::string& path) { return std::make_unique<FileSource>(path); }

NpzArchive::NpzArchive(const std::string& path) : path_(path) {
    int error = 0;
    zip_t* archive = zip_open(path.c_str(), ZIP_RDONLY, &error);
    if (!archive) {
        zip_error_t reason;
        zip_error_init_with_code(&reason, error);
        std::string text = zip_error_strerror(&reason);
        zip_error_fini(&reason);
        throw DataError(fmt::format("data import: cannot open {} as an .npz (zip) archive: {}", path, text));
    }
    archive_ = archive;
    const zip_int64_t entries = zip_get_num_entries(archive, 0);
    for (zip_int64_t i = 0; i < entries; ++i) {
        std::string name = zip_get_name(archive, static_cast<zip_uint64_t>(i), 0);
        if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
        else continue;
        members_.push_back(name);
        indices_.push_back(static_cast<std::uint64_t>(i));
    }
    if (members_.empty()) {
        zip_discard(archive);
        archive_ = nullptr;
        throw DataError(fmt::format("data import: {} holds no .npy arrays", path));
    }
}

NpzArchive::~NpzArchive() {
    if (archive_) zip_discard(static_cast<zip_t*>(archive_));
}

std::unique_ptr<ByteSource> NpzArchive::open(std::size_t member) {
    auto* archive = static_cast<zip_t*>(archive_);
    const std::string where = fmt::format("{}[{}]", path_, members_[member]);
    zip_stat_t stat;
    zip_stat_init(&stat);
    if (zip_stat_index(archive, indices_.at(member), 0, &stat) != 0 || !(stat.valid & ZIP_STAT_SIZE))
        throw DataError(fmt::format("data import: cannot read {}: {}", where, zip_strerror(archive)));
    zip_file_t* file = zip_fopen_index(archive, indices_.at(member), 0);
    if (!file) throw DataError(fmt::format("data import: cannot read {}: {}", where, zip_strerror(archive)));
    return std::make_unique<ZipMemberSource>(file, where, stat.size);
}

}  // namespace trainrt::data
