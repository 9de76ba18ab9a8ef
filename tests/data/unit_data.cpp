#include <catch2/catch.hpp>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "data/import/idx.hpp"
#include "data/import/importers.hpp"
#include "data/dataset_file.hpp"
#include "data/shard.hpp"
#include "h5/h5.hpp"
#include "trainrt/error.hpp"

using namespace trainrt;

namespace {

std::string temp_path(const std::string& name) {
    return (std::filesystem::temp_directory_path() /
            ("trainrt_data_" + std::to_string(::getpid()) + "_" + name)).string();
}

// A dataset of N samples of 2x3 pixels whose every pixel equals the sample index (mod 256) and
// whose label is index % 10, so a shard's content tells which samples it holds.
std::string make_dataset(std::size_t count) {
    std::string path = temp_path(std::to_string(count) + ".h5");
    std::vector<std::uint8_t> images(count * 6), labels(count);
    for (std::size_t i = 0; i < count; ++i) {
        std::fill_n(images.begin() + i * 6, 6, static_cast<std::uint8_t>(i % 256));
        labels[i] = static_cast<std::uint8_t>(i % 10);
    }
    h5::File file = h5::create_file(path);
    h5::write_attribute(file.get(), "format", data::kDatasetFormat);
    h5::Group group = h5::create_group(file.get(), "train");
    h5::write_dataset(group.get(), "images", H5T_NATIVE_UINT8, {count, 2, 3}, images.data());
    h5::write_dataset(group.get(), "labels", H5T_NATIVE_UINT8, {count}, labels.data());
    return path;
}

void write_gz(const std::string& path, const std::vector<unsigned char>& bytes) {
    gzFile file = gzopen(path.c_str(), "wb");
    gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(file);
}

}  // namespace

TEST_CASE("rank parts are disjoint, equal-sized, and follow DistributedSampler order", "[data]") {
    auto order = data::epoch_order(10, false, 0, 0);
    std::size_t padded = 0;
    auto rank1 = data::rank_indices(order, 1, 4, padded);
    CHECK(rank1 == std::vector<std::uint64_t>{1, 5, 9});
    CHECK(padded == 0);
    auto rank3 = data::rank_indices(order, 3, 4, padded);
    CHECK(rank3 == std::vector<std::uint64_t>{3, 7, 1});  // 10 -> 12: positions 10, 11 repeat samples 0, 1
    CHECK(padded == 1);
}

TEST_CASE("shuffled orders are permutations, fixed by seed and epoch", "[data]") {
    auto a = data::epoch_order(1000, true, 5, 1);
    auto b = data::epoch_order(1000, true, 5, 1);
    auto c = data::epoch_order(1000, true, 5, 2);
    CHECK(a == b);
    CHECK(a != c);
    CHECK(std::set<std::uint64_t>(a.begin(), a.end()).size() == 1000);
}

TEST_CASE("read_shard reads exactly the rank's samples, strided or shuffled", "[data]") {
    std::string path = make_dataset(103);
    for (bool shuffle : {false, true}) {
        std::set<std::uint64_t> seen;
        for (int rank = 0; rank < 4; ++rank) {
            data::ShardRequest request{path, "train", rank, 4, shuffle, 9, 3};
            DatasetShard shard = data::read_shard(request);
            REQUIRE(shard.count == 26);  // ceil(103 / 4)
            CHECK(shard.global_count == 103);
            CHECK(shard.sample_shape == std::vector<std::size_t>{2, 3});
            for (std::size_t i = 0; i < shard.count; ++i) {
                CHECK(shard.features[i * 6 + 5] == shard.indices[i] % 256);
                CHECK(shard.labels[i] == shard.indices[i] % 10);
            }
            seen.insert(shard.indices.begin(), shard.indices.end() - shard.padded);
        }
        CHECK(seen.size() == 103);  // the unpadded parts cover every sample exactly once
    }
    std::filesystem::remove(path);
}

TEST_CASE("missing or foreign dataset files are DataErrors naming the file", "[data]") {
    data::ShardRequest request{temp_path("absent.h5"), "train", 0, 1, false, 0, 0};
    CHECK_THROWS_WITH(data::read_shard(request), Catch::Contains("does not exist"));
    std::string path = make_dataset(10);
    CHECK_THROWS_AS(data::check_split(path, "test"), DataError);
    std::filesystem::remove(path);
}

TEST_CASE("IDX reader rejects bad magic, truncation and trailing bytes", "[data]") {
    std::string path = temp_path("x.gz");
    write_gz(path, {0, 0, 8, 1, 0, 0, 0, 3, 7, 8, 9});
    CHECK(data::read_idx(path).values == std::vector<std::uint8_t>{7, 8, 9});
    write_gz(path, {0, 0, 9, 1, 0, 0, 0, 3, 7, 8, 9});
    CHECK_THROWS_WITH(data::read_idx(path), Catch::Contains("not an unsigned-byte IDX"));
    write_gz(path, {0, 0, 8, 1, 0, 0, 0, 3, 7});
    CHECK_THROWS_WITH(data::read_idx(path), Catch::Contains("truncated"));
    write_gz(path, {0, 0, 8, 1, 0, 0, 0, 3, 7, 8, 9, 10});
    CHECK_THROWS_WITH(data::read_idx(path), Catch::Contains("bytes after"));
    CHECK_THROWS_WITH(data::read_idx(temp_path("none.gz")), Catch::Contains("cannot open"));
    std::filesystem::remove(path);
}

TEST_CASE("import refuses a directory without the IDX files and writes nothing", "[data]") {
    std::string out = temp_path("out.h5");
    data::ImportOptions options;
    options.out = out;
    CHECK_THROWS_AS(data::import_idx("fashion-mnist", "/nonexistent", options), DataError);
    CHECK_FALSE(std::filesystem::exists(out));
}
