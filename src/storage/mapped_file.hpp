#pragma once
// A file whose pages already live in memory (tmpfs, ramfs: a node-local checkpoint level in
// /dev/shm) mapped read-only, so a checksum reads those pages where they are instead of copying
// them into a buffer first (faster than pread into a buffer: BENCHMARKS.md's local level).
// Files on a disk are not mapped: faulting their pages in one by one reads slower than read().
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace trainrt::storage {

// Move-only owner of a read-only shared mapping of a whole file; unmaps on destruction, never
// throws. The file must not shrink while mapped (bytes past a new end fault: SIGBUS): the files
// mapped here are a run's own checkpoint files, which are replaced by rename, never truncated.
class MappedFile {
public:
    MappedFile() = default;
    ~MappedFile();
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const char* data() const { return data_; }
    std::uint64_t size() const { return size_; }

private:
    friend std::optional<MappedFile> map_if_in_memory(int fd, const std::string& path);
    char* data_ = nullptr;
    std::uint64_t size_ = 0;
};

// The open file `fd` mapped when its filesystem keeps files in memory (tmpfs, ramfs) and it is not
// empty; nullopt otherwise, or when it cannot be mapped (the caller reads it instead).
// StorageError (with strerror) when fstat fails.
std::optional<MappedFile> map_if_in_memory(int fd, const std::string& path);

}  // namespace trainrt::storage
