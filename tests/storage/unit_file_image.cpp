// A whole file read into memory once, its chunks handed over in order (storage/file_image.hpp).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "storage/file_image.hpp"
#include "byte_files.hpp"
#include "temp_run_dir.hpp"
#include "trainrt/error.hpp"

using namespace trainrt;
using testing::random_bytes;
using testing::write_file;
using Catch::Matchers::Contains;

TEST_CASE("file image: every byte, in order, whatever the size", "[storage]") {
    testing::TempRunDir dir;
    // Empty, under one O_DIRECT block, not a multiple of it, several 8 MiB chunks and a tail.
    for (std::size_t size : {std::size_t{0}, std::size_t{100}, std::size_t{4096 * 3 + 17}, std::size_t{(8 << 20) * 2 + 4097}}) {
        INFO("size " << size);
        const std::string path = dir.str() + "/f" + std::to_string(size);
        const std::string bytes = random_bytes(size, 1);
        write_file(path, bytes);
        std::string seen;
        int passes = 0;
        const storage::FileImage image = storage::read_file_image(
            path, [&] { seen.clear(), ++passes; }, [&](const char* data, std::size_t count) { seen.append(data, count); });
        CHECK(image.size() == size);
        CHECK(seen == bytes);
        CHECK(passes == (size == 0 ? 0 : 1));
        if (size > 0) CHECK(std::string(image.data(), image.size()) == bytes);
    }
}

TEST_CASE("file image: a missing file is a StorageError naming it; a move leaves the source empty", "[storage]") {
    testing::TempRunDir dir;
    CHECK_THROWS_WITH(storage::read_file_image(dir.str() + "/absent", [] {}, [](const char*, std::size_t) {}),
                      Contains("absent") && Contains("No such file"));
    write_file(dir.str() + "/f", "abc");
    storage::FileImage image = storage::read_file_image(dir.str() + "/f", [] {}, [](const char*, std::size_t) {});
    storage::FileImage moved = std::move(image);
    CHECK(moved.size() == 3);
    CHECK(image.data() == nullptr);
    moved.reset();
    CHECK(moved.data() == nullptr);
    CHECK(moved.size() == 0);
}

TEST_CASE("file image: the memory left is known on Linux", "[storage]") {
    CHECK(storage::available_memory_bytes() > 0);
}

TEST_CASE("file image: a file in memory (/dev/shm) is mapped, not copied", "[storage]") {
    const std::string shm = "/dev/shm/trainrt_test_image_" + std::to_string(::getpid());
    const std::string bytes = random_bytes((8 << 20) * 2 + 4097, 1);
    write_file(shm, bytes);
    std::string seen;
    storage::FileImage image = storage::read_file_image(
        shm, [&] { seen.clear(); }, [&](const char* data, std::size_t count) { seen.append(data, count); });
    std::filesystem::remove(shm);  // the mapping keeps the pages
    CHECK(image.mapped());
    CHECK_FALSE(image.direct());
    CHECK(seen == bytes);
    REQUIRE(image.size() == bytes.size());
    CHECK(std::string(image.data(), image.size()) == bytes);
    storage::FileImage moved = std::move(image);
    CHECK(moved.mapped());
    CHECK_FALSE(image.mapped());
    moved.reset();
    CHECK_FALSE(moved.mapped());
    CHECK(moved.data() == nullptr);
}

TEST_CASE("file range image: the range's bytes alone, from any offset, on disk and in memory", "[storage]") {
    testing::TempRunDir dir;
    const std::string bytes = random_bytes((8 << 20) * 2 + 4097, 1);
    const std::string shm = "/dev/shm/trainrt_test_range_" + std::to_string(::getpid());
    write_file(dir.str() + "/f", bytes);
    write_file(shm, bytes);
    // Aligned, unaligned (the read starts at the 4 KiB boundary before it), across chunks, to the end, empty.
    const std::pair<std::uint64_t, std::uint64_t> ranges[] = {
        {0, 4096}, {4097, 100}, {4095, (8 << 20) + 3}, {(8 << 20) - 1, bytes.size() - (8 << 20) + 1}, {4096 * 5, 0}};
    for (const std::string& path : {dir.str() + "/f", shm})
        for (const auto& [offset, length] : ranges) {
            INFO(path << ": bytes " << offset << " + " << length);
            std::string seen;
            const storage::FileImage image = storage::read_file_range_image(
                path, offset, length, [&] { seen.clear(); }, [&](const char* data, std::size_t count) { seen.append(data, count); });
            CHECK(seen == bytes.substr(offset, length));
            REQUIRE(image.size() == length);
            if (length > 0) CHECK(std::string(image.data(), image.size()) == bytes.substr(offset, length));
        }
    CHECK_THROWS_WITH(storage::read_file_range_image(dir.str() + "/f", bytes.size() - 10, 11, [] {}, [](const char*, std::size_t) {}),
                      Contains("/f") && Contains("ends at byte"));
    std::filesystem::remove(shm);
}
