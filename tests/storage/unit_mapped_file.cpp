// Files in memory filesystems mapped for checksums (mapped_file.hpp), and the checkpoint
// checksums taken through the mapping equal those read through pread.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <xxhash.h>

#include <filesystem>
#include <fmt/format.h>
#include <string>

#include "checkpoint/format/layout.hpp"
#include "storage/mapped_file.hpp"
#include "storage/posix.hpp"
#include "temp_run_dir.hpp"
#include "trainrt/error.hpp"

namespace fs = std::filesystem;
using namespace trainrt;
using trainrt::testing::TempRunDir;

namespace {

bool in_memory(const std::string& dir) {
    struct statfs filesystem {};
    if (::statfs(dir.c_str(), &filesystem) != 0) return false;
    return static_cast<unsigned long>(filesystem.f_type) == TMPFS_MAGIC ||
           static_cast<unsigned long>(filesystem.f_type) == RAMFS_MAGIC;
}

// A directory of its own in /dev/shm, removed at the end.
struct ShmDir {
    std::string path = fmt::format("/dev/shm/trainrt_unit_{}", ::getpid());
    ShmDir() { fs::create_directories(path); }
    ~ShmDir() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
};

void write_bytes(const std::string& path, const std::string& bytes) {
    storage::Fd fd = storage::open_or_throw(path, O_WRONLY | O_CREAT | O_TRUNC);
    storage::write_all(fd.get(), bytes.data(), bytes.size(), path);
}

}  // namespace

TEST_CASE("mapped file: a file in memory is mapped, its checksums equal the ones read through pread", "[storage]") {
    if (!in_memory("/dev/shm")) {
        WARN("/dev/shm is not a memory filesystem here: nothing to map");
        return;
    }
    ShmDir shm;
    TempRunDir disk_dir;
    const std::string disk = disk_dir.path().string();
    std::string bytes(3 << 20, '\0');
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 97 % 241);
    write_bytes(shm.path + "/data.h5", bytes);
    write_bytes(disk + "/data.h5", bytes);

    storage::Fd fd = storage::open_or_throw(shm.path + "/data.h5", O_RDONLY);
    const auto mapped = storage::map_if_in_memory(fd.get(), shm.path + "/data.h5");
    REQUIRE(mapped);
    CHECK(mapped->size() == bytes.size());
    CHECK(std::string(mapped->data(), 16) == bytes.substr(0, 16));

    const std::string expected = fmt::format("{:016x}", XXH3_64bits(bytes.data(), bytes.size()));
    CHECK(checkpoint::describe_file(shm.path, "data.h5").xxh3 == expected);
    const checkpoint::ChecksumRange range{1000, 2 << 20, ""};
    CHECK(checkpoint::describe_range(shm.path, "data.h5", range) ==
          fmt::format("{:016x}", XXH3_64bits(bytes.data() + 1000, 2 << 20)));
    if (!in_memory(disk)) {  // the same bytes read through pread: the same digests
        CHECK(checkpoint::describe_file(disk, "data.h5").xxh3 == expected);
        CHECK(checkpoint::describe_range(disk, "data.h5", range) == checkpoint::describe_range(shm.path, "data.h5", range));
        storage::Fd on_disk = storage::open_or_throw(disk + "/data.h5", O_RDONLY);
        CHECK_FALSE(storage::map_if_in_memory(on_disk.get(), disk + "/data.h5"));
    }
    // A range past the end is an error, as through pread.
    CHECK_THROWS_AS(checkpoint::describe_range(shm.path, "data.h5", {3 << 20, 10, ""}), StorageError);
    // An empty file is not mapped, and hashes as empty.
    write_bytes(shm.path + "/empty.h5", "");
    CHECK(checkpoint::describe_file(shm.path, "empty.h5").xxh3 == fmt::format("{:016x}", XXH3_64bits("", 0)));
}
