// storage on a filesystem that opens files with O_DIRECT but refuses its transfers with EINVAL
// (some network and parallel filesystems, an alignment the device does not take). Run by ctest
// storage.einval with einval_shim.so preloaded, which makes every O_DIRECT pread/pwrite fail so;
// each check requires that refusals happened, so it fails without the shim.
//  - DirectWriter: the refused chunks are written through the page cache; every byte lands;
//  - read_file_image: the file is read again without O_DIRECT, `consume` restarted first; the
//    image and what `consume` saw are the file's bytes.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <atomic>
#include <string>

#include "byte_files.hpp"
#include "storage/direct_writer.hpp"
#include "storage/file_image.hpp"
#include "temp_run_dir.hpp"

using namespace trainrt;
using testing::file_bytes;
using testing::random_bytes;

namespace {

long refusals() {
    const auto* count = static_cast<const std::atomic<long>*>(::dlsym(RTLD_DEFAULT, "trainrt_test_einval_count"));
    if (count == nullptr) FAIL("einval_shim.so is not preloaded: run this as ctest storage.einval");
    return count->load();
}

constexpr std::uint64_t kChunk = storage::DirectWriter::kChunkBytes;
constexpr std::uint64_t kBlock = storage::DirectWriter::kBlock;

}  // namespace

TEST_CASE("EINVAL from O_DIRECT writes: the direct writer writes those chunks through the page cache", "[storage]") {
    testing::TempRunDir dir;
    const std::string path = dir.str() + "/f";
    const std::string before_run(100, 'F'), run = random_bytes(2 * kChunk + 5 * kBlock + 123, 5);
    testing::write_file(path, std::string(before_run.size() + run.size() + 77, 'F'));
    const long refused_before = refusals();
    {
        storage::DirectWriter writer(path);
        REQUIRE(writer.direct());  // a disk (TMPDIR is set to the build tree), not memory
        writer.write(before_run.size(), run.data(), run.size());
        writer.finish();
    }
    CHECK(refusals() > refused_before);
    CHECK(file_bytes(path) == before_run + run + std::string(77, 'F'));
}

TEST_CASE("EINVAL from O_DIRECT reads: the image is read again buffered, consume restarted", "[storage]") {
    testing::TempRunDir dir;
    const std::string path = dir.str() + "/f";
    const std::string bytes = random_bytes(2 * (8 << 20) + 4097, 9);
    testing::write_file(path, bytes);
    const long refused_before = refusals();
    int restarts = 0;
    std::string seen;
    const storage::FileImage image = storage::read_file_image(
        path, [&] { ++restarts, seen.clear(); }, [&](const char* data, std::size_t size) { seen.append(data, size); });
    CHECK(refusals() > refused_before);
    CHECK(restarts == 2);
    CHECK_FALSE(image.direct());
    CHECK(seen == bytes);
    CHECK(std::string(image.data(), image.size()) == bytes);
}
