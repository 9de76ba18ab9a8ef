#include "storage/page_buffer.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::storage {
namespace {

std::uint64_t huge_page_bytes() {
    std::uint64_t bytes = 0;
    std::ifstream("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size") >> bytes;
    return bytes > 0 ? bytes : 2 << 20;
}

std::string file_text(const char* path) {
    std::ostringstream text;
    text << std::ifstream(path).rdbuf();
    return text.str();
}

}  // namespace

PageBuffer::~PageBuffer() {
    if (data_ != nullptr) ::munmap(data_, size_);
}

PageBuffer::PageBuffer(PageBuffer&& other) noexcept : data_(other.data_), size_(other.size_), huge_(other.huge_) {
    other.data_ = nullptr;
    other.size_ = 0;
}

PageBuffer& PageBuffer::operator=(PageBuffer&& other) noexcept {
    if (this != &other) {
        if (data_ != nullptr) ::munmap(data_, size_);
        data_ = other.data_, size_ = other.size_, huge_ = other.huge_;
        other.data_ = nullptr;
        other.size_ = 0;
    }
    return *this;
}

std::uint64_t free_huge_block_bytes(const std::string& buddyinfo, std::uint64_t page_bytes, std::uint64_t huge_page_bytes) {
    std::uint64_t free_bytes = 0;
    std::istringstream lines(buddyinfo);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string node, id, zone_word, zone;
        if (!(words >> node >> id >> zone_word >> zone) || node != "Node" || zone_word != "zone") continue;
        std::uint64_t blocks = 0, block_bytes = page_bytes;
        for (; words >> blocks; block_bytes *= 2)
            if (block_bytes >= huge_page_bytes) free_bytes += blocks * block_bytes;
    }
    return free_bytes;
}

bool wants_huge_pages(std::uint64_t bytes, std::uint64_t free_huge_bytes) {
    return bytes >= (4u << 20) && free_huge_bytes / 2 >= bytes;
}

PageBuffer allocate_page_buffer(std::uint64_t bytes, const std::string& what) {
    const std::uint64_t huge = huge_page_bytes();
    const std::uint64_t size = (bytes + huge - 1) / huge * huge;
    // Mapped with a huge page's slack, then trimmed to an aligned start: huge pages need one.
    void* raw = ::mmap(nullptr, size + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        throw StorageError(fmt::format("storage: no memory for {} ({} bytes): {}", what, bytes, std::strerror(errno)));
    char* start = static_cast<char*>(raw);
    char* aligned = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(start) + huge - 1) / huge * huge);
    if (aligned > start) ::munmap(start, static_cast<std::size_t>(aligned - start));
    if (aligned + size < start + size + huge) ::munmap(aligned + size, static_cast<std::size_t>(start + size + huge - (aligned + size)));
    PageBuffer buffer;
    buffer.data_ = aligned;
    buffer.size_ = size;
    const long page = ::sysconf(_SC_PAGESIZE);
    buffer.huge_ = wants_huge_pages(bytes, free_huge_block_bytes(file_text("/proc/buddyinfo"), page > 0 ? page : 4096, huge)) &&
                   ::madvise(aligned, size, MADV_HUGEPAGE) == 0;
    return buffer;
}

}  // namespace trainrt::storage
