#include "data/import/npy.hpp"

#include <zip.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <regex>

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::data {
namespace {

class FileSource final : public ByteSource {
public:
    explicit FileSource(std::string path) : path_(std::move(path)), file_(std::fopen(path_.c_str(), "rb")) {
        if (!file_) throw DataError(fmt::format("data import: cannot open {}: {}", path_, std::strerror(errno)));
    }
    ~FileSource() override { std::fclose(file_); }
    void read(void* out, std::size_t bytes, const char* what) override {
        if (std::fread(out, 1, bytes, file_) != bytes)
            throw DataError(fmt::format("data import: {} ends inside its {}: the file is truncated", path_, what));
    }
    const std::string& where() const override { return path_; }

private:
    std::string path_;
    std::FILE* file_;
};

class ZipMemberSource final : public ByteSource {
public:
    ZipMemberSource(zip_file_t* file, std::string where) : file_(file), where_(std::move(where)) {}
    ~ZipMemberSource() override { zip_fclose(file_); }
    void read(void* out, std::size_t bytes, const char* what) override {
        auto* cursor = static_cast<char*>(out);
        while (bytes > 0) {
            const zip_int64_t got = zip_fread(file_, cursor, bytes);
            if (got < 0)
                throw DataError(fmt::format("data import: {}: cannot read its {}: {}", where_, what,
                                            zip_error_strerror(zip_file_get_error(file_))));
            if (got == 0)
                throw DataError(fmt::format("data import: {} ends inside its {}: the archive is truncated", where_, what));
            cursor += got, bytes -= static_cast<std::size_t>(got);
        }
    }
    const std::string& where() const override { return where_; }

private:
    zip_file_t* file_;
    std::string where_;
};

std::string header_field(const std::string& header, const std::string& key, const std::string& where) {
    std::smatch match;
    const std::regex pattern("['\"]" + key + "['\"]\\s*:\\s*(\\([^)]*\\)|'[^']*'|\"[^\"]*\"|True|False)");
    if (!std::regex_search(header, match, pattern))
        throw DataError(fmt::format("data import: {}: its .npy header has no plain '{}' field; save a numeric array "
                                    "with np.save (structured and object arrays are not columns)", where, key));
    return match[1].str();
}

std::vector<std::size_t> parse_shape(const std::string& text) {
    std::vector<std::size_t> shape;
    static const std::regex number("\\d+");
    for (std::sregex_iterator it(text.begin(), text.end(), number), end; it != end; ++it)
        shape.push_back(std::stoull(it->str()));
    return shape;
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

}  // namespace

std::size_t NpyArray::sample_elements() const {
    std::size_t elements = 1;
    for (std::size_t d = 1; d < shape.size(); ++d) elements *= shape[d];
    return elements;
}

NpyArray read_npy_header(ByteSource& source) {
    unsigned char magic[8];
    source.read(magic, sizeof magic, "header");
    if (std::memcmp(magic, "\x93NUMPY", 6) != 0)
        throw DataError(fmt::format("data import: {} is not a .npy array (no NumPy magic); save it with np.save",
                                    source.where()));
    std::uint32_t length = 0;
    if (magic[6] == 1) {
        unsigned char bytes[2];
        source.read(bytes, 2, "header");
        length = bytes[0] | (bytes[1] << 8);
    } else {
        unsigned char bytes[4];
        source.read(bytes, 4, "header");
        length = bytes[0] | (bytes[1] << 8) | (bytes[2] << 16) | (std::uint32_t(bytes[3]) << 24);
    }
    std::string header(length, '\0');
    source.read(header.data(), length, "header");
    const std::string descr = header_field(header, "descr", source.where());
    if (header_field(header, "fortran_order", source.where()) == "True")
        throw DataError(fmt::format("data import: {} is a Fortran-order array; save it C-ordered "
                                    "(np.save(f, np.ascontiguousarray(a)))", source.where()));
    NpyArray array;
    array.shape = parse_shape(header_field(header, "shape", source.where()));
    if (array.shape.empty())
        throw DataError(fmt::format("data import: {} holds a 0-d array; a column needs one row per sample", source.where()));
    const std::string type = descr.substr(1, descr.size() - 2);  // strip the quotes
    if (type.size() < 3 || std::string("<>|=").find(type[0]) == std::string::npos)
        throw DataError(fmt::format("data import: {}: dtype {} is not a plain numeric type", source.where(), descr));
    array.kind = type[1];
    array.item_bytes = std::stoul(type.substr(2));
    array.swap = type[0] == '>' && array.item_bytes > 1;
    array.type = stored_type(array.kind, array.item_bytes, descr, source.where());
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
    zip_file_t* file = zip_fopen_index(static_cast<zip_t*>(archive_), indices_.at(member), 0);
    const std::string where = fmt::format("{}[{}]", path_, members_[member]);
    if (!file)
        throw DataError(fmt::format("data import: cannot read {}: {}", where,
                                    zip_strerror(static_cast<zip_t*>(archive_))));
    return std::make_unique<ZipMemberSource>(file, where);
}

}  // namespace trainrt::data
