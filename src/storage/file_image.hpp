#pragma once
// A whole file's bytes held in memory, read once: with O_DIRECT where the filesystem allows it
// (the disk writes straight into this buffer, no copy through the page cache), else buffered;
// a file whose pages already live in memory (tmpfs: a node-local checkpoint level in /dev/shm)
// is mapped instead of copied. A restore verifies a file's checksum from its image and then
// copies blocks out of it, so the file is read from the disk once and copied once, as a plain
// read() would (from memory: copied once, where a read() would copy it too).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "storage/mapped_file.hpp"
#include "storage/page_buffer.hpp"

namespace trainrt::storage {

// Move-only owner of the image's aligned buffer, or of the file's mapping; frees (unmaps) it on
// destruction, never throws. A mapping holds the file's own pages: trainrt never rewrites a
// checkpoint file in place (a new checkpoint is new files, renamed in), so they stay the bytes
// that were verified; a process that wrote into the file in place would change them.
class FileImage {
public:
    FileImage() = default;
    ~FileImage();
    FileImage(FileImage&& other) noexcept;
    FileImage& operator=(FileImage&& other) noexcept;
    FileImage(const FileImage&) = delete;
    FileImage& operator=(const FileImage&) = delete;

    const char* data() const { return data_; }
    std::uint64_t size() const { return size_; }
    bool direct() const { return direct_; }  // read with O_DIRECT
    bool mapped() const { return mapped_.data() != nullptr; }
    bool huge_pages() const { return buffer_.huge(); }  // its buffer asked for huge pages
    void reset() noexcept;

private:
    friend FileImage read_image(const std::string&, std::uint64_t, const std::uint64_t*, const std::function<void()>&,
                                const std::function<void(const char*, std::size_t)>&);
    char* data_ = nullptr;  // in buffer_ or mapped_
    std::uint64_t size_ = 0;
    bool direct_ = false;
    PageBuffer buffer_;     // the bytes read (huge pages where free: page_buffer.hpp)
    MappedFile mapped_;
};

// Reads the whole file at `path` into an image, two reads in flight, and calls `consume` on each
// chunk in file order from the calling thread while later chunks are being read (a checksum
// costs no time of its own); a file in memory (map_if_in_memory) is mapped, and `consume` called
// on its mapping's chunks. `restart` is called before the first chunk of each pass: a
// filesystem that accepts O_DIRECT but refuses its reads (EINVAL) is read again, buffered.
// StorageError (with strerror) when it cannot be opened or read; an exception from `consume` is
// passed on after the reads in flight end.
FileImage read_file_image(const std::string& path, const std::function<void()>& restart,
                          const std::function<void(const char*, std::size_t)>& consume);

// read_file_image of bytes [offset, offset + length) of the file alone (a range of a file that
// several ranks wrote): `consume` sees those bytes, and data() is byte `offset`. With O_DIRECT the
// read starts at the 4 KiB boundary before `offset` (the image holds those few bytes more).
// StorageError also when the file ends before the range.
FileImage read_file_range_image(const std::string& path, std::uint64_t offset, std::uint64_t length,
                                const std::function<void()>& restart,
                                const std::function<void(const char*, std::size_t)>& consume);

// MemAvailable of /proc/meminfo in bytes; 0 when unknown.
std::uint64_t available_memory_bytes();

}  // namespace trainrt::storage
