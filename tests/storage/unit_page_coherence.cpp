// Which filesystems are trusted to keep clients' page caches coherent (storage/page_coherence.hpp),
// and that forgetting foreign pages leaves a coherent filesystem's cache alone. That a network
// filesystem's stale pages are dropped is tested on a real GlusterFS volume
// (tests/checkpoint/test_glusterfs.sh): no FUSE mount is needed here.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "byte_files.hpp"
#include "storage/page_coherence.hpp"
#include "storage/posix.hpp"
#include "temp_run_dir.hpp"

using namespace trainrt;

TEST_CASE("page coherence: local, memory and cluster filesystems are coherent, network clients and unknown ones not",
          "[storage]") {
    for (std::uint64_t type : {std::uint64_t{EXT4_SUPER_MAGIC}, std::uint64_t{0x58465342} /* xfs */,
                               std::uint64_t{BTRFS_SUPER_MAGIC}, std::uint64_t{TMPFS_MAGIC},
                               std::uint64_t{0x0BD00BD0} /* Lustre */, std::uint64_t{0x47504653} /* GPFS */,
                               std::uint64_t{0x00C36400} /* CephFS */})
        CHECK(storage::coherent_filesystem_type(type));
    for (std::uint64_t type : {std::uint64_t{NFS_SUPER_MAGIC}, std::uint64_t{FUSE_SUPER_MAGIC},
                               std::uint64_t{0xFF534D42} /* CIFS */, std::uint64_t{0xFE534D42} /* SMB2 */,
                               std::uint64_t{V9FS_MAGIC}, std::uint64_t{0x12345678} /* unknown */})
        CHECK_FALSE(storage::coherent_filesystem_type(type));
}

TEST_CASE("page coherence: on a coherent filesystem forgetting foreign pages keeps the file cached", "[storage]") {
    testing::TempRunDir dir;
    const std::string path = dir.str() + "/f";
    constexpr std::size_t kPages = 64;
    const std::string bytes = testing::random_bytes(kPages * 4096, 3);
    storage::Fd fd = storage::open_or_throw(path, O_RDWR | O_CREAT | O_TRUNC);
    storage::write_all(fd.get(), bytes.data(), bytes.size(), path);
    REQUIRE(::fsync(fd.get()) == 0);
    REQUIRE(storage::page_cache_coherent(fd.get()));  // the test directory: a local disk or memory
    REQUIRE(storage::page_cache_coherent(path));
    storage::forget_foreign_pages(fd.get());

    void* mapped = ::mmap(nullptr, bytes.size(), PROT_READ, MAP_SHARED, fd.get(), 0);
    REQUIRE(mapped != MAP_FAILED);
    std::vector<unsigned char> cached(kPages);
    REQUIRE(::mincore(mapped, bytes.size(), cached.data()) == 0);
    ::munmap(mapped, bytes.size());
    std::size_t resident = 0;
    for (unsigned char page : cached) resident += page & 1;
    CHECK(resident == kPages);
}

TEST_CASE("page coherence: a path that does not exist is not trusted", "[storage]") {
    CHECK_FALSE(storage::page_cache_coherent(std::string("/nonexistent/trainrt/page_coherence")));
}
