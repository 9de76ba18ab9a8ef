// storage::write_all and storage::pwrite_all (storage/posix.hpp): every byte where it was asked,
// the rest of the file kept, and a failure told with the system's reason (a StorageError naming
// the file from write_all, the errno from pwrite_all, which must not throw).
#include <catch2/catch.hpp>

#include <fcntl.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <string>

#include "storage/posix.hpp"
#include "byte_files.hpp"
#include "temp_run_dir.hpp"
#include "trainrt/error.hpp"

using namespace trainrt;
using testing::file_bytes;
using Catch::Matchers::Contains;

TEST_CASE("posix writes: write_all appends where the descriptor is, pwrite_all at its offset", "[storage]") {
    testing::TempRunDir dir;
    const std::string path = dir.str() + "/f";
    {
        storage::Fd fd = storage::open_or_throw(path, O_WRONLY | O_CREAT | O_TRUNC);
        storage::write_all(fd.get(), "0123456789", 10, path);
        storage::write_all(fd.get(), "abc", 3, path);
        REQUIRE(storage::pwrite_all(fd.get(), "XY", 2, 4) == 0);
        REQUIRE(storage::pwrite_all(fd.get(), "end", 3, 20) == 0);  // past the end: a hole of zeros
        REQUIRE(storage::pwrite_all(fd.get(), "", 0, 100) == 0);    // nothing: the file unchanged
    }
    CHECK(file_bytes(path) == std::string("0123XY6789abc") + std::string(7, '\0') + "end");
}

TEST_CASE("posix writes: a failed write names the file and the reason; pwrite_all returns the errno", "[storage]") {
    testing::TempRunDir dir;
    const std::string path = dir.str() + "/f";
    std::ofstream(path) << "kept";
    storage::Fd read_only = storage::open_or_throw(path, O_RDONLY);
    CHECK_THROWS_WITH(storage::write_all(read_only.get(), "x", 1, path), Contains(path) && Contains("Bad file descriptor"));
    CHECK(storage::pwrite_all(read_only.get(), "x", 1, 0) == EBADF);
    CHECK(file_bytes(path) == "kept");
}
