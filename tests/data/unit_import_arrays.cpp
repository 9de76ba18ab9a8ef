// data::write_arrays (Ray Data's datasets written from memory): every split and column read back
// by the streaming reader as given; bad input refused before the output exists.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>

#include "data/import/importers.hpp"
#include "data/stream.hpp"
#include "trainrt/error.hpp"

using namespace trainrt;

namespace {

std::string temp_path(const std::string& name) {
    return (std::filesystem::temp_directory_path() / ("trainrt_arrays_" + std::to_string(::getpid()) + "_" + name))
        .string();
}

}  // namespace

TEST_CASE("columns in memory are written as one split per dataset and read back unchanged", "[import]") {
    const std::string path = temp_path("ok.h5");
    std::vector<std::int64_t> ids{0, 1, 2, 3, 4};
    std::vector<float> x{0, 0.5f, 1, 1.5f, 2, 2.5f, 3, 3.5f, 4, 4.5f};  // [5, 2]
    std::vector<double> y{7, 8};
    data::write_arrays(path, {{"train", {{"id", ColumnType::i64, {}, 5, ids.data()},
                                         {"x", ColumnType::f32, {2}, 5, x.data()}}},
                              {"valid", {{"y", ColumnType::f64, {}, 2, y.data()}}}},
                       "unit test");
    Dataset train = data::open_dataset(path, "train", 0, 1, 0);
    REQUIRE(train.size() == 5);
    BatchOptions options;
    options.batch_size = 5;
    BatchIterator batches = train.iter_batches(options, {});
    const Batch* batch = batches.next();
    REQUIRE(batch != nullptr);
    auto got_ids = batch->view<std::int64_t>("id");
    auto got_x = batch->view<float>("x");
    CHECK(std::vector<std::int64_t>(got_ids.begin(), got_ids.end()) == ids);
    CHECK(std::vector<float>(got_x.begin(), got_x.end()) == x);
    CHECK(data::open_dataset(path, "valid", 0, 1, 0).size() == 2);
    std::filesystem::remove(path);
}

TEST_CASE("columns of different lengths, no rows or a name twice are refused and nothing is written", "[import]") {
    const std::string path = temp_path("bad.h5");
    std::vector<std::int64_t> three{1, 2, 3};
    CHECK_THROWS_WITH(data::write_arrays(path, {{"train", {{"a", ColumnType::i64, {}, 3, three.data()},
                                                          {"b", ColumnType::i64, {}, 2, three.data()}}}}, "t"),
                      Catch::Contains("column 'b' has 2 rows, column 'a' has 3"));
    CHECK_THROWS_WITH(data::write_arrays(path, {{"train", {{"a", ColumnType::i64, {}, 0, three.data()}}}}, "t"),
                      Catch::Contains("dataset 'train' has no rows"));
    CHECK_THROWS_WITH(data::write_arrays(path, {{"train", {{"a", ColumnType::i64, {}, 3, three.data()},
                                                          {"a", ColumnType::i64, {}, 3, three.data()}}}}, "t"),
                      Catch::Contains("comes twice"));
    CHECK_THROWS_AS(data::write_arrays(path, {{"a/b", {{"a", ColumnType::i64, {}, 3, three.data()}}}}, "t"),
                    DataError);
    CHECK_FALSE(std::filesystem::exists(path));
}
