#include "storage/page_coherence.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <array>

namespace trainrt::storage {
namespace {

// Not all of them are in <linux/magic.h>.
constexpr std::uint64_t kXfs = 0x58465342, kLustre = 0x0BD00BD0, kGpfs = 0x47504653, kCeph = 0x00C36400,
                        kZfs = 0x2FC12FC1;

}  // namespace

bool coherent_filesystem_type(std::uint64_t statfs_type) {
    constexpr std::array<std::uint64_t, 11> coherent = {
        EXT4_SUPER_MAGIC, kXfs, BTRFS_SUPER_MAGIC, TMPFS_MAGIC, RAMFS_MAGIC, OVERLAYFS_SUPER_MAGIC,
        kZfs, F2FS_SUPER_MAGIC, kLustre, kGpfs, kCeph};
    for (std::uint64_t type : coherent)
        if (type == statfs_type) return true;
    return false;
}

namespace {

bool coherent(int statfs_result, const struct statfs& filesystem) {
    return statfs_result == 0 && coherent_filesystem_type(static_cast<std::uint64_t>(filesystem.f_type));
}

}  // namespace

bool page_cache_coherent(int fd) {
    struct statfs filesystem {};
    return coherent(::fstatfs(fd, &filesystem), filesystem);
}

bool page_cache_coherent(const std::string& path) {
    struct statfs filesystem {};
    return coherent(::statfs(path.c_str(), &filesystem), filesystem);
}

void forget_foreign_pages(int fd, std::uint64_t offset, std::uint64_t length) {
    if (page_cache_coherent(fd)) return;
    ::posix_fadvise(fd, static_cast<off_t>(offset), static_cast<off_t>(length), POSIX_FADV_DONTNEED);
}

void forget_foreign_pages(const std::string& path) {
    if (page_cache_coherent(path)) return;  // no open where nothing is to be done
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
}

}  // namespace trainrt::storage
