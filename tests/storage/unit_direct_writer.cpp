// Large writes without the page cache (storage/direct_writer.hpp): every byte lands where it was
// written, the bytes around the runs (another writer's) are kept, the runs' whole blocks bypass
// the page cache on a disk, and a failed write is a StorageError with the system's reason.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "storage/direct_writer.hpp"
#include "storage/posix.hpp"
#include "byte_files.hpp"
#include "temp_run_dir.hpp"
#include "trainrt/error.hpp"

using namespace trainrt;
using testing::random_bytes;
using testing::file_bytes;
using Catch::Matchers::Contains;

namespace {

constexpr std::uint64_t kBlock = storage::DirectWriter::kBlock;
constexpr std::uint64_t kChunk = storage::DirectWriter::kChunkBytes;

// `path` filled with `size` bytes of 'F': another writer's bytes, which the runs must leave alone.
void foreign_file(const std::string& path, std::size_t size) {
    std::ofstream(path, std::ios::binary) << std::string(size, 'F');
}

struct Piece {
    std::uint64_t offset, length;
};

// The pieces written through a DirectWriter into a file of 'F's, and the same bytes placed in
// memory: the file must equal the expected bytes.
void check_pieces(const std::string& path, std::size_t size, const std::vector<Piece>& pieces) {
    foreign_file(path, size);
    std::string expected(size, 'F');
    {
        storage::DirectWriter writer(path);
        for (std::size_t i = 0; i < pieces.size(); ++i) {
            const std::string bytes = random_bytes(pieces[i].length, i + 1);
            writer.write(pieces[i].offset, bytes.data(), bytes.size());
            expected.replace(pieces[i].offset, pieces[i].length, bytes);
        }
        writer.finish();
    }
    const std::string seen = file_bytes(path);
    REQUIRE(seen.size() == expected.size());
    for (std::size_t at = 0; at < size; ++at)
        if (seen[at] != expected[at]) FAIL("first wrong byte at " << at);
}

// Pieces of every kind: unaligned starts and ends, runs of several pieces back to back, a run
// across chunk boundaries, pieces under a block, a piece ending on a block boundary, gaps of
// foreign bytes inside one block between two runs.
std::vector<Piece> mixed_pieces() {
    std::vector<Piece> pieces = {{100, 50}, {150, 4000}, {4150, 9000}};  // one run of three
    pieces.push_back({13150 + 7, 3});                                    // a gap of 7 foreign bytes
    pieces.push_back({13160 + 1, 2 * kChunk + 5 * kBlock + 123});        // across two chunk ends
    const std::uint64_t after = 13161 + 2 * kChunk + 5 * kBlock + 123;
    pieces.push_back({after, 3 * kBlock - (after % kBlock)});            // ends on a block boundary
    pieces.push_back({after + 3 * kBlock, kBlock});                      // a block on its own
    for (std::uint64_t i = 0; i < 200; ++i)                              // many small back to back
        pieces.push_back({after + 5 * kBlock + i * 1000, 1000});
    return pieces;
}

}  // namespace

TEST_CASE("direct writer: every byte where it was written, the bytes between runs kept", "[storage]") {
    testing::TempRunDir dir;
    const std::vector<Piece> pieces = mixed_pieces();
    const std::size_t size = pieces.back().offset + pieces.back().length + 3 * kBlock + 11;
    check_pieces(dir.str() + "/disk", size, pieces);
    const std::string shm = "/dev/shm/trainrt_test_direct_" + std::to_string(::getpid());
    check_pieces(shm, size, pieces);  // a memory filesystem: plain writes
    std::filesystem::remove(shm);
}

TEST_CASE("direct writer: on a disk a run's whole blocks bypass the page cache, on /dev/shm nothing does", "[storage]") {
    testing::TempRunDir dir;
    const std::string path = dir.str() + "/f";
    const std::uint64_t size = 64 * kBlock;
    foreign_file(path, size);
    {  // the foreign file's pages leave the cache before the test
        storage::Fd fd = storage::open_or_throw(path, O_RDONLY);
        REQUIRE(::fdatasync(fd.get()) == 0);
        REQUIRE(::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED) == 0);
    }
    storage::DirectWriter writer(path);
    storage::Fd probe = storage::open_or_throw(path, O_RDONLY);
    REQUIRE(writer.direct() == !storage::on_memory_filesystem(probe.get()));
    if (!writer.direct()) {
        WARN("the temporary directory is in memory: O_DIRECT is not used there, nothing to check");
        return;
    }
    const std::string bytes = random_bytes(40 * kBlock, 7);
    writer.write(10 * kBlock + 5, bytes.data(), bytes.size());  // blocks 11..49 whole, 10 and 50 partial
    writer.finish();
    void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, probe.get(), 0);
    REQUIRE(mapped != MAP_FAILED);
    std::vector<unsigned char> cached(size / kBlock);
    REQUIRE(::mincore(mapped, size, cached.data()) == 0);
    ::munmap(mapped, size);
    CHECK((cached[10] & 1) == 1);  // the partial blocks went through the page cache
    CHECK((cached[50] & 1) == 1);
    for (std::uint64_t block = 11; block < 50; ++block) CHECK((cached[block] & 1) == 0);
}

TEST_CASE("direct writer: a failed write is a StorageError with the system's reason, on a later call too", "[storage]") {
    testing::TempRunDir dir;
    const std::string path = dir.str() + "/f";
    foreign_file(path, 0);
    // Writes past RLIMIT_FSIZE fail with EFBIG (SIGXFSZ ignored): a failure no mount is needed for.
    struct rlimit before {};
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &before) == 0);
    const auto previous = ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = before;
    small.rlim_cur = kChunk;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    const std::string bytes = random_bytes(3 * kChunk, 3);
    std::string message;
    {
        storage::DirectWriter writer(path);
        try {
            writer.write(0, bytes.data(), bytes.size());  // the chunk past the limit fails on a thread
            writer.finish();
        } catch (const StorageError& error) {
            message = error.what();
        }
        CHECK_THROWS_AS(writer.finish(), StorageError);  // and stays failed
    }  // destroyed after a failure: no throw
    ::setrlimit(RLIMIT_FSIZE, &before);
    ::signal(SIGXFSZ, previous);
    CHECK_THAT(message, Contains(path) && Contains("File too large"));
}

TEST_CASE("direct copy: a file from memory and from a disk, every byte; a missing source names it", "[storage]") {
    testing::TempRunDir dir;
    const std::string bytes = random_bytes(2 * kChunk + 3 * kBlock + 77, 11);  // chunks, blocks and a tail
    const std::string shm = "/dev/shm/trainrt_test_copy_" + std::to_string(::getpid());
    for (const std::string& from : {shm, dir.str() + "/on_disk"}) {
        INFO("from " << from);
        std::ofstream(from, std::ios::binary) << bytes;
        const std::string to = dir.str() + "/copy";
        std::ofstream(to, std::ios::binary) << std::string(3 * kChunk, 'F');  // longer: truncated first
        storage::copy_file_direct(from, to);
        CHECK((file_bytes(to) == bytes));
    }
    std::filesystem::remove(shm);
    CHECK_THROWS_WITH(storage::copy_file_direct(dir.str() + "/absent", dir.str() + "/copy"),
                      Contains("absent") && Contains("No such file"));
}
