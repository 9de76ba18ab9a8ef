#include "storage/mapped_file.hpp"

#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace trainrt::storage {

MappedFile::~MappedFile() {
    if (data_ != nullptr) ::munmap(data_, size_);
}

MappedFile::MappedFile(MappedFile&& other) noexcept : data_(other.data_), size_(other.size_) {
    other.data_ = nullptr;
    other.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        if (data_ != nullptr) ::munmap(data_, size_);
        data_ = other.data_, size_ = other.size_;
        other.data_ = nullptr;
        other.size_ = 0;
    }
    return *this;
}

std::optional<MappedFile> map_if_in_memory(int fd, const std::string& path) {
    if (!on_memory_filesystem(fd)) return std::nullopt;
    struct stat status {};
    if (::fstat(fd, &status) != 0)
        throw StorageError(fmt::format("storage: stat of {} failed: {}", path, std::strerror(errno)));
    if (status.st_size <= 0) return std::nullopt;
    MappedFile mapped;
    void* data = ::mmap(nullptr, static_cast<std::size_t>(status.st_size), PROT_READ, MAP_SHARED, fd, 0);
    if (data == MAP_FAILED) return std::nullopt;
    mapped.data_ = static_cast<char*>(data);
    mapped.size_ = static_cast<std::uint64_t>(status.st_size);
    return mapped;
}

}  // namespace trainrt::storage
