#pragma once
// A whole file's bytes held in memory, read once: with O_DIRECT where the filesystem allows it
// (the disk writes straight into this buffer, no copy through the page cache), else buffered.
// A restore verifies a file's checksum from its image and then copies blocks out of it, so the
// file is read from the disk once and copied once, as a plain read() would.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace trainrt::storage {

// Move-only owner of the image's aligned buffer; frees it on destruction, never throws.
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
    void reset() noexcept;

private:
    friend FileImage read_file_image(const std::string&, const std::function<void()>&,
                                     const std::function<void(const char*, std::size_t)>&);
    char* data_ = nullptr;
    std::uint64_t size_ = 0;
    bool direct_ = false;
};

// Reads the whole file at `path` into an image, two reads in flight, and calls `consume` on each
// chunk in file order from the calling thread while later chunks are being read (a checksum
// costs no time of its own). `restart` is called before the first chunk of each pass: a
// filesystem that accepts O_DIRECT but refuses its reads (EINVAL) is read again, buffered.
// StorageError (with strerror) when it cannot be opened or read; an exception from `consume` is
// passed on after the reads in flight end.
FileImage read_file_image(const std::string& path, const std::function<void()>& restart,
                          const std::function<void(const char*, std::size_t)>& consume);

// MemAvailable of /proc/meminfo in bytes; 0 when unknown.
std::uint64_t available_memory_bytes();

}  // namespace trainrt::storage
