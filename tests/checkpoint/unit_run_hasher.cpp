// A file_per_rank file's checksums taken while it is written (run_hasher.hpp): its blocks' bytes
// lie back to back after HDF5's metadata block, each run of them is a checksum range hashed from
// memory on a thread of its own, and the bytes around the runs are ranges of their own.
#include <catch2/catch.hpp>
#include <xxhash.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "checkpoint/format/layout.hpp"
#include "checkpoint/format/manifest.hpp"
#include "checkpoint/read/verify.hpp"
#include "checkpoint/write/layout_writer.hpp"
#include "checkpoint/write/run_hasher.hpp"
#include "checkpoint/write/write_plan.hpp"
#include "h5/h5.hpp"
#include "temp_run_dir.hpp"

using namespace trainrt;
using namespace trainrt::checkpoint;
using Catch::Matchers::Contains;

namespace {

std::string digest_of(const char* bytes, std::size_t count) { return fmt::format("{:016x}", XXH3_64bits(bytes, count)); }

std::vector<char> patterned(std::size_t count, int seed) {
    std::vector<char> bytes(count);
    for (std::size_t i = 0; i < count; ++i) bytes[i] = static_cast<char>((i * 131 + static_cast<std::size_t>(seed) * 7) % 251);
    return bytes;
}

// Three large blocks and two tiny ones (HDF5 would put the tiny ones in a small-data block of its
// own without open_file_packed), written by the file_per_rank writer into `dir`.
struct SavedFile {
    std::vector<float> a = std::vector<float>(600000, 1.5f), b = std::vector<float>(300000, -2.0f);
    std::vector<double> c = std::vector<double>(200000, 3.25);
    std::vector<float> tiny = std::vector<float>(7, 4.0f);
    std::vector<std::int64_t> step = std::vector<std::int64_t>(1, 42);
    RankWrite written;

    explicit SavedFile(const std::string& dir) {
        CheckpointState state;
        state.replicated<float>("a", a, {600, 1000})
            .replicated<float>("b", b, {300000})
            .replicated<float>("tiny", tiny, {7})
            .replicated<double>("c", c, {200, 1000})
            .replicated<std::int64_t>("step", step, {1});
        const Context context;
        written = make_file_per_rank_writer(LayoutOptions{})->write(plan_writes(state, 0, 1, true), dir, context);
    }
    std::uint64_t data_bytes() const {
        return (a.size() + b.size() + tiny.size()) * sizeof(float) + c.size() * sizeof(double) + sizeof(std::int64_t);
    }
};

// Where each of the file's datasets lies, as HDF5 reads them back.
std::vector<std::pair<haddr_t, hsize_t>> dataset_extents(const std::string& path) {
    h5::File file = h5::open_file(path, false);
    std::vector<std::pair<haddr_t, hsize_t>> extents;
    for (const char* name : {"a", "b", "c", "step", "tiny"}) {
        h5::Dataset dataset = h5::open_dataset(file.get(), dataset_path(name));
        extents.emplace_back(H5Dget_offset(dataset.get()), H5Dget_storage_size(dataset.get()));
    }
    std::sort(extents.begin(), extents.end());
    return extents;
}

}  // namespace

TEST_CASE("RunHasher: regions back to back are one run, a gap starts the next, each hashed from memory",
          "[checkpoint]") {
    const std::vector<char> first = patterned(3 << 20, 1), second = patterned(1 << 20, 2), third = patterned(5000, 3);
    RunHasher hasher;
    hasher.add({4096, first.size(), first.data()});
    hasher.add({4096 + first.size(), 0, nullptr});  // nothing to hash: ignored
    hasher.add({4096 + first.size(), second.size(), second.data()});
    hasher.add({4096 + first.size() + second.size() + 100, third.size(), third.data()});
    const std::vector<ChecksumRange> runs = hasher.finish();
    REQUIRE(runs.size() == 2);
    std::vector<char> joined(first);
    joined.insert(joined.end(), second.begin(), second.end());
    CHECK(runs[0].offset == 4096);
    CHECK(runs[0].length == joined.size());
    CHECK(runs[0].xxh3 == digest_of(joined.data(), joined.size()));
    CHECK(runs[1].offset == 4096 + joined.size() + 100);
    CHECK(runs[1].length == third.size());
    CHECK(runs[1].xxh3 == digest_of(third.data(), third.size()));
}

TEST_CASE("RunHasher: destroyed with regions still waiting, it stops without hashing them", "[checkpoint]") {
    const std::vector<char> bytes = patterned(64 << 20, 4);
    {
        RunHasher hasher;
        for (int i = 0; i < 16; ++i) hasher.add({static_cast<std::uint64_t>(i) * bytes.size(), bytes.size(), bytes.data()});
    }
    SUCCEED("the destructor returned");
}

TEST_CASE("file_per_rank: the blocks lie back to back after the metadata, one checksum range for all of them",
          "[checkpoint]") {
    testing::TempRunDir dir;
    const SavedFile saved(dir.str());
    REQUIRE(saved.written.files.size() == 1);
    const FileEntry& file = saved.written.files[0];
    const auto extents = dataset_extents(dir.str() + "/" + file.name);
    for (std::size_t i = 1; i < extents.size(); ++i) CHECK(extents[i].first == extents[i - 1].first + extents[i - 1].second);
    REQUIRE(file.xxh3.empty());
    REQUIRE(file.ranges.size() == 2);  // HDF5's metadata block, then the data to the file's end
    CHECK(file.ranges[1].offset == extents.front().first);
    CHECK(file.ranges[1].length == saved.data_bytes());
    CHECK(file.ranges[1].offset + file.ranges[1].length == file.size);
    CHECK_NOTHROW(check_ranges(file, "test"));
    for (const ChecksumRange& range : file.ranges) CHECK(range.xxh3 == describe_range(dir.str(), file.name, range));
    // The metadata block is sized for the datasets: its unused bytes are a small part of the file.
    CHECK(file.ranges[0].length < 70000);
}

TEST_CASE("describe_written_file: a run under 1 MiB, or one past the file's end, is not a range of its own",
          "[checkpoint]") {
    testing::TempRunDir dir;
    const std::vector<char> bytes = patterned(3 << 20, 5);
    std::ofstream(dir.str() + "/f", std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    const std::string whole = digest_of(bytes.data(), bytes.size());
    const ChecksumRange small{1000, (1 << 20) - 1, digest_of(bytes.data() + 1000, (1 << 20) - 1)};
    const ChecksumRange past{2 << 20, 2 << 20, "0000000000000000"};
    for (const ChecksumRange& run : {small, past}) {
        const FileEntry entry = describe_written_file(dir.str(), "f", {}, {run});
        CHECK(entry.ranges.empty());
        CHECK(entry.xxh3 == whole);
    }
    const ChecksumRange own{1000, 1 << 20, digest_of(bytes.data() + 1000, 1 << 20)};
    const FileEntry entry = describe_written_file(dir.str(), "f", {}, {own});
    REQUIRE(entry.ranges.size() == 3);
    CHECK(entry.ranges[0].xxh3 == digest_of(bytes.data(), 1000));
    CHECK(entry.ranges[1].xxh3 == own.xxh3);
    CHECK(entry.ranges[2].offset == 1000 + (1 << 20));
    CHECK(entry.ranges[2].xxh3 == digest_of(bytes.data() + entry.ranges[2].offset, entry.ranges[2].length));
}

TEST_CASE("verify: a byte changed in a file_per_rank file's data run is named by the run's bytes", "[checkpoint]") {
    testing::TempRunDir dir;
    const SavedFile saved(dir.str());
    Manifest manifest;
    manifest.name = "checkpoint_000001";
    manifest.layout = "file_per_rank";
    manifest.files = saved.written.files;
    for (const auto& [name, part] : saved.written.parts) {
        TensorEntry& tensor = manifest.tensors[name];
        tensor.global_shape = part.shape;
        tensor.parts.push_back(part);
    }
    const FileEntry& file = manifest.files[0];
    const ChecksumRange data = file.ranges[1];
    // Only the checksums: the test's manifest does not carry every attribute a schema check needs.
    REQUIRE(verify_share(dir.str(), manifest, 0, 1).empty());
    {
        std::fstream out(dir.str() + "/" + file.name, std::ios::in | std::ios::out | std::ios::binary);
        out.seekp(static_cast<std::streamoff>(data.offset + data.length / 2));
        out.put('\x7f');
    }
    CHECK_THAT(verify_share(dir.str(), manifest, 0, 1),
               Contains(fmt::format("of bytes {}-{}", data.offset, data.offset + data.length)) && Contains("corrupted"));
}
