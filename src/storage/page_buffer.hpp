#pragma once
// Memory for large O_DIRECT reads (a checkpoint file's image), backed by transparent huge pages
// when the kernel has them free. Why: a paravirtual disk (virtio-blk) gets one segment per
// physically contiguous piece of a direct read's buffer, so an 8 MiB read into 4 KiB pages is
// 2048 segments and into 2 MiB pages 4: a direct read into huge pages is faster, and the
// buffer's pages are allocated faster too (the restore rows of BENCHMARKS.md).
//
// Huge pages are asked for (MADV_HUGEPAGE) only when free 2 MiB blocks already cover twice the
// buffer: a huge-page fault that has to compact memory first can stall for a second or more.
#include <cstdint>
#include <string>

namespace trainrt::storage {

// Move-only owner of an anonymous mapping aligned to the huge page size; unmaps on destruction,
// never throws.
class PageBuffer {
public:
    PageBuffer() = default;
    ~PageBuffer();
    PageBuffer(PageBuffer&& other) noexcept;
    PageBuffer& operator=(PageBuffer&& other) noexcept;
    PageBuffer(const PageBuffer&) = delete;
    PageBuffer& operator=(const PageBuffer&) = delete;

    char* data() const { return data_; }
    std::uint64_t size() const { return size_; }
    bool huge() const { return huge_; }  // MADV_HUGEPAGE was asked for

private:
    friend PageBuffer allocate_page_buffer(std::uint64_t, const std::string&);
    char* data_ = nullptr;
    std::uint64_t size_ = 0;  // mapped bytes: the size asked for, rounded up to the huge page size
    bool huge_ = false;
};

// `bytes` (> 0) of fresh memory, its pages not yet allocated (the first touch allocates them);
// `what` names it in the StorageError raised when it cannot be mapped.
PageBuffer allocate_page_buffer(std::uint64_t bytes, const std::string& what);

// Bytes in free blocks of at least `huge_page_bytes` in the text of /proc/buddyinfo (blocks of
// each order, 4 KiB pages at order 0), summed over zones; 0 for text it cannot read.
std::uint64_t free_huge_block_bytes(const std::string& buddyinfo, std::uint64_t page_bytes,
                                    std::uint64_t huge_page_bytes);
// Whether a buffer of `bytes` asks for huge pages: at least 4 MiB, and free huge blocks of at
// least twice that.
bool wants_huge_pages(std::uint64_t bytes, std::uint64_t free_huge_bytes);

}  // namespace trainrt::storage
