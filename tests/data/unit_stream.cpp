// The streaming reader (trainrt/data.hpp) and the epoch orders behind it, on dataset files written
// by the importers' DatasetWriter; ranks are simulated in one process (each rank's iterator is
// independent: no communication).
#include <catch2/catch.hpp>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <cmath>
#include <map>
#include <set>
#include <thread>

#include "data/dataset_file.hpp"
#include "data/dataset_writer.hpp"
#include "data/epoch_order.hpp"
#include "data/stream.hpp"
#include "trainrt/error.hpp"

using namespace trainrt;

namespace {

std::string temp_path(const std::string& name) {
    return (std::filesystem::temp_directory_path() / ("trainrt_stream_" + std::to_string(::getpid()) + "_" + name))
        .string();
}

// Split "train" of `rows` samples: "row" (i64, the row index), "img" (u8 [2, 3], row % 251 in every
// pixel) and "w" (f32 [4], row + k / 4): any batch's content tells which rows it holds.
std::string make_file(const std::string& name, std::uint64_t rows, int compression = 0) {
    const std::string path = temp_path(name);
    data::DatasetWriter writer(path, compression);
    writer.describe("test", "unit test", "w", "row");
    auto& row = writer.add_column("train", {"row", ColumnType::i64, {}, rows});
    auto& img = writer.add_column("train", {"img", ColumnType::u8, {2, 3}, rows});
    auto& w = writer.add_column("train", {"w", ColumnType::f32, {4}, rows});
    for (std::uint64_t r = 0; r < rows; ++r) {
        const auto index = static_cast<std::int64_t>(r);
        std::vector<std::uint8_t> pixels(6, static_cast<std::uint8_t>(r % 251));
        std::vector<float> values{float(r), float(r) + 0.25f, float(r) + 0.5f, float(r) + 0.75f};
        row.append(&index, 1);
        img.append(pixels.data(), 1);
        w.append(values.data(), 1);
    }
    writer.commit();
    return path;
}

// Every batch of one epoch on one rank: rows in order, contents checked against the rows.
std::vector<std::vector<std::uint64_t>> epoch_rows(const std::string& path, int rank, int ranks,
                                                   const BatchOptions& options, DataPosition from = {}) {
    Dataset dataset = data::open_dataset(path, "train", rank, ranks, 42);
    BatchIterator batches = dataset.iter_batches(options, from);
    std::vector<std::vector<std::uint64_t>> out;
    while (const Batch* batch = batches.next()) {
        REQUIRE(batch->rows.size() == batch->count);
        if (!options.columns || !options.columns->empty()) {
            auto row = batch->view<std::int64_t>("row");
            auto img = batch->view<std::uint8_t>("img");
            auto w = batch->view<float>("w");
            REQUIRE(batch->column("img").shape() == std::vector<std::size_t>{batch->count, 2, 3});
            for (std::size_t i = 0; i < batch->count; ++i) {
                REQUIRE(static_cast<std::uint64_t>(row[i]) == batch->rows[i]);
                REQUIRE(img[i * 6 + 5] == batch->rows[i] % 251);
                REQUIRE(w[i * 4 + 3] == float(batch->rows[i]) + 0.75f);
            }
        }
        out.push_back(batch->rows);
    }
    REQUIRE(out.size() == batches.batches() - static_cast<std::size_t>(from.next_batch));
    return out;
}

BatchOptions options_for(Shuffle shuffle, std::size_t batch, std::size_t prefetch) {
    BatchOptions options;
    options.batch_size = batch;
    options.shuffle = shuffle;
    options.prefetch_batches = prefetch;
    options.shuffle_buffer = 40;
    return options;
}

}  // namespace

TEST_CASE("epoch orders are permutations fixed by seed and epoch", "[stream]") {
    for (Shuffle shuffle : {Shuffle::none, Shuffle::global, Shuffle::blocks})
        for (std::uint64_t rows : {1, 2, 3, 7, 64, 1000, 4099}) {
            data::EpochOrder a(rows, shuffle, 5, 1, 10, 40), b(rows, shuffle, 5, 1, 10, 40), c(rows, shuffle, 5, 2, 10, 40);
            std::set<std::uint64_t> seen;
            bool differs = false;
            for (std::uint64_t p = 0; p < rows; ++p) {
                REQUIRE(a.row(p) == b.row(p));
                seen.insert(a.row(p));
                differs |= a.row(p) != c.row(p);
            }
            CHECK(seen.size() == rows);
            CHECK(*seen.rbegin() == rows - 1);
            if (shuffle != Shuffle::none && rows >= 64) CHECK(differs);
        }
}

TEST_CASE("blocks keeps whole blocks together inside each window", "[stream]") {
    data::EpochOrder order(1000, Shuffle::blocks, 3, 0, 10, 40);  // 100 blocks of 10, windows of 4 blocks
    for (std::uint64_t window = 0; window < 25; ++window) {
        std::map<std::uint64_t, int> per_block;
        for (std::uint64_t p = window * 40; p < window * 40 + 40; ++p) ++per_block[order.row(p) / 10];
        CHECK(per_block.size() == 4);
        for (auto [block, count] : per_block) CHECK(count == 10);
    }
}

TEST_CASE("every shuffle gives each sample exactly once per epoch, for 1 to 4 ranks", "[stream]") {
    const std::string path = make_file("once.h5", 103);
    for (Shuffle shuffle : {Shuffle::none, Shuffle::global, Shuffle::blocks})
        for (std::size_t prefetch : {0, 3}) {
            std::vector<std::set<std::uint64_t>> batch_sets;  // batch k's rows, from the 1-rank run
            for (int ranks = 1; ranks <= 4; ++ranks) {
                std::multiset<std::uint64_t> all;
                std::vector<std::set<std::uint64_t>> sets;
                for (int rank = 0; rank < ranks; ++rank) {
                    auto batches = epoch_rows(path, rank, ranks, options_for(shuffle, 10, prefetch));
                    REQUIRE(batches.size() == 11);  // ceil(103 / 10), the same on every rank
                    sets.resize(batches.size());
                    for (std::size_t k = 0; k < batches.size(); ++k) {
                        all.insert(batches[k].begin(), batches[k].end());
                        sets[k].insert(batches[k].begin(), batches[k].end());
                    }
                }
                INFO("shuffle " << shuffle_name(shuffle) << ", " << ranks << " ranks, prefetch " << prefetch);
                CHECK(all.size() == 103);
                CHECK(std::set<std::uint64_t>(all.begin(), all.end()).size() == 103);
                if (ranks == 1) batch_sets = sets;
                CHECK(sets == batch_sets);  // global batch k holds the same samples on any world size
            }
        }
    std::filesystem::remove(path);
}

TEST_CASE("parts of a global batch differ by at most one sample and follow DistributedSampler", "[stream]") {
    const std::string path = make_file("parts.h5", 10);
    auto rank1 = epoch_rows(path, 1, 4, options_for(Shuffle::none, 8, 2));
    REQUIRE(rank1.size() == 2);
    CHECK(rank1[0] == std::vector<std::uint64_t>{1, 5});
    CHECK(rank1[1] == std::vector<std::uint64_t>{9});
    auto rank3 = epoch_rows(path, 3, 4, options_for(Shuffle::none, 8, 2));
    CHECK(rank3[1].empty());  // block 8..9 has two samples for four ranks
    std::filesystem::remove(path);
}

TEST_CASE("pad repeats the first samples so parts are equal; drop_last leaves the partial batch out", "[stream]") {
    const std::string path = make_file("pad.h5", 10);
    BatchOptions options = options_for(Shuffle::none, 4, 2);
    options.pad = true;
    Dataset dataset = data::open_dataset(path, "train", 3, 4, 0);
    BatchIterator batches = dataset.iter_batches(options, 0);
    std::vector<std::uint64_t> rows;
    std::size_t padded = 0;
    while (const Batch* batch = batches.next()) {
        CHECK(batch->count == 1);
        rows.insert(rows.end(), batch->rows.begin(), batch->rows.end());
        padded += batch->padded;
    }
    CHECK(rows == std::vector<std::uint64_t>{3, 7, 1});  // position 11 repeats sample 1
    CHECK(padded == 1);
    options.pad = false;
    options.drop_last = true;
    CHECK(dataset.batches(options) == 2);
    std::filesystem::remove(path);
}

TEST_CASE("a stream started at a saved position gives the rest of the epoch exactly", "[stream]") {
    const std::string path = make_file("resume.h5", 257, 4);  // compressed chunks too
    for (Shuffle shuffle : {Shuffle::none, Shuffle::global, Shuffle::blocks}) {
        auto whole = epoch_rows(path, 1, 3, options_for(shuffle, 12, 2), {2, 0});
        for (std::int64_t k : {1, 5, 21}) {
            auto rest = epoch_rows(path, 1, 3, options_for(shuffle, 12, 2), {2, k});
            CHECK(rest == std::vector<std::vector<std::uint64_t>>(whole.begin() + k, whole.end()));
        }
        CHECK(epoch_rows(path, 1, 3, options_for(shuffle, 12, 2), {2, 22}).empty());
        CHECK_THROWS_AS(epoch_rows(path, 1, 3, options_for(shuffle, 12, 2), {2, 23}), DataError);
    }
    std::filesystem::remove(path);
}

TEST_CASE("the transform runs on the reader thread and its exception reaches next()", "[stream]") {
    const std::string path = make_file("transform.h5", 50);
    BatchOptions options = options_for(Shuffle::global, 8, 2);
    std::atomic<bool> on_caller{false};
    const auto caller = std::this_thread::get_id();
    options.transform = [&](Batch& batch) {
        on_caller = on_caller || std::this_thread::get_id() == caller;
        auto w = batch.view<float>("w");
        double* sums = batch.set<double>("sum", {batch.count}).data();
        for (std::size_t i = 0; i < batch.count; ++i) sums[i] = w[i * 4] + w[i * 4 + 1] + w[i * 4 + 2] + w[i * 4 + 3];
        batch.erase("img");
    };
    Dataset dataset = data::open_dataset(path, "train", 0, 1, 0);
    BatchIterator batches = dataset.iter_batches(options, 0);
    while (const Batch* batch = batches.next()) {
        CHECK_FALSE(batch->has("img"));
        for (std::size_t i = 0; i < batch->count; ++i)
            CHECK(batch->view<double>("sum")[i] == 4.0 * batch->rows[i] + 1.5);
        CHECK_THROWS_AS(batch->view<float>("sum"), DataError);  // typed views check the type
    }
    CHECK_FALSE(on_caller);
    options.transform = [](Batch& batch) {
        if (batch.index == 3) throw std::runtime_error("bad sample in batch 3");
    };
    BatchIterator failing = dataset.iter_batches(options, 0);
    CHECK_THROWS_WITH([&] { while (failing.next()) {} }(), "bad sample in batch 3");
    std::filesystem::remove(path);
}

TEST_CASE("columns: a chosen subset, none (positions only), or an unknown one named", "[stream]") {
    const std::string path = make_file("columns.h5", 20);
    Dataset dataset = data::open_dataset(path, "train", 0, 2, 0);
    BatchOptions options = options_for(Shuffle::none, 4, 1);
    options.columns = std::vector<std::string>{"row"};
    BatchIterator some = dataset.iter_batches(options, 0);
    const Batch* first = some.next();
    CHECK(first->column_names() == std::vector<std::string>{"row"});
    options.columns = std::vector<std::string>{};
    BatchIterator none = dataset.iter_batches(options, 0);
    const Batch* positions = none.next();
    CHECK(positions->column_names().empty());
    CHECK(positions->first == 0);
    CHECK(positions->count == 2);
    options.columns = std::vector<std::string>{"nope"};
    CHECK_THROWS_WITH(dataset.iter_batches(options, 0), Catch::Contains("no column 'nope'") && Catch::Contains("img, row, w"));
    CHECK_THROWS_WITH(data::open_dataset(path, "test", 0, 1, 0), Catch::Contains("no split 'test'"));
    std::filesystem::remove(path);
}

TEST_CASE("a column of every supported type round-trips through import and stream", "[stream]") {
    const std::string path = temp_path("types.h5");
    const std::uint64_t rows = 5;
    {
        data::DatasetWriter writer(path, 0);
        writer.describe("types", "unit test", "", "");
        std::vector<std::uint8_t> u8{0, 1, 127, 200, 255};
        std::vector<std::int8_t> i8{-128, -1, 0, 1, 127};
        std::vector<std::int16_t> i16{-32768, -2, 0, 3, 32767};
        std::vector<std::int32_t> i32{INT32_MIN, -5, 0, 7, INT32_MAX};
        std::vector<std::int64_t> i64{INT64_MIN, -9, 0, 11, INT64_MAX};
        std::vector<float16> f16;
        for (float v : {0.0f, -2.25f, 1.5f, 65504.0f, 6.1035156e-05f}) f16.push_back(float16::from_float(v));
        std::vector<float> f32{-1e30f, -0.5f, 0.0f, 3.25f, 1e-30f};
        std::vector<double> f64{-1e300, -0.125, 0.0, 2.5, 1e-300};
        writer.add_column("train", {"u8", ColumnType::u8, {}, rows}).append(u8.data(), rows);
        writer.add_column("train", {"i8", ColumnType::i8, {}, rows}).append(i8.data(), rows);
        writer.add_column("train", {"i16", ColumnType::i16, {}, rows}).append(i16.data(), rows);
        writer.add_column("train", {"i32", ColumnType::i32, {}, rows}).append(i32.data(), rows);
        writer.add_column("train", {"i64", ColumnType::i64, {}, rows}).append(i64.data(), rows);
        writer.add_column("train", {"f16", ColumnType::f16, {}, rows}).append(f16.data(), rows);
        writer.add_column("train", {"f32", ColumnType::f32, {}, rows}).append(f32.data(), rows);
        writer.add_column("train", {"f64", ColumnType::f64, {}, rows}).append(f64.data(), rows);
        writer.commit();
    }
    const data::DatasetInfo info = data::read_dataset_info(path);
    const data::SplitInfo& split = info.split("train");
    for (ColumnType type : {ColumnType::u8, ColumnType::i8, ColumnType::i16, ColumnType::i32, ColumnType::i64,
                            ColumnType::f16, ColumnType::f32, ColumnType::f64})
        CHECK(split.find(column_type_name(type))->type == type);
    BatchOptions options = options_for(Shuffle::none, rows, 0);
    const Batch* batch = nullptr;
    Dataset dataset = data::open_dataset(path, "train", 0, 1, 0);
    BatchIterator batches = dataset.iter_batches(options, 0);
    REQUIRE((batch = batches.next()));
    CHECK(batch->view<std::int8_t>("i8")[0] == -128);
    CHECK(batch->view<std::int16_t>("i16")[4] == 32767);
    CHECK(batch->view<std::int32_t>("i32")[0] == INT32_MIN);
    CHECK(batch->view<std::int64_t>("i64")[4] == INT64_MAX);
    CHECK(batch->view<std::uint8_t>("u8")[3] == 200);
    CHECK(batch->view<float16>("f16")[1].to_float() == -2.25f);
    CHECK(batch->view<float16>("f16")[3].to_float() == 65504.0f);
    CHECK(batch->view<float16>("f16")[4].to_float() == 6.1035156e-05f);
    CHECK(batch->view<float>("f32")[0] == -1e30f);
    CHECK(batch->view<double>("f64")[4] == 1e-300);
    std::vector<double> widened(rows);
    batch->column("f16").copy_to(widened.data());
    CHECK(widened[2] == 1.5);
    std::filesystem::remove(path);
}

TEST_CASE("float16 conversion rounds to nearest even and keeps specials", "[stream]") {
    CHECK(float16::from_float(1.0f).bits == 0x3C00);
    CHECK(float16::from_float(-2.0f).bits == 0xC000);
    CHECK(float16::from_float(65520.0f).bits == 0x7C00);  // rounds to infinity
    CHECK(float16::from_float(1.0f + 1.0f / 2048).bits == 0x3C00);  // a tie: to even
    CHECK(float16::from_float(5.9604645e-08f).bits == 0x0001);  // smallest subnormal
    CHECK(std::isnan(float16{0x7E00}.to_float()));
    for (std::uint32_t bits = 0; bits < 0x7C00; ++bits)  // every finite half survives the round trip
        REQUIRE(float16::from_float(float16{static_cast<std::uint16_t>(bits)}.to_float()).bits == bits);
}

TEST_CASE("dataset files: the layout is read back, damaged and foreign files are named", "[stream]") {
    const std::string path = make_file("info.h5", 3);
    const data::DatasetInfo info = data::read_dataset_info(path);
    CHECK(info.version == 2);
    CHECK(info.feature_column == "w");
    CHECK(info.split("train").rows == 3);
    CHECK(info.split("train").find("w")->chunk_rows == 3);
    CHECK(info.split("train").find("w")->mean.size() == 4);
    CHECK(info.split("train").find("w")->mean[0] == Approx(1.0));
    {
        std::ofstream truncate(path, std::ios::binary | std::ios::trunc);
        truncate << "not hdf5";
    }
    CHECK_THROWS_WITH(data::read_dataset_info(path), Catch::Contains(path) && Catch::Contains("trainrt data import"));
    std::filesystem::remove(path);
}

TEST_CASE("order keys: the same on every rank, another for anything that changes the batches", "[stream]") {
    const std::string path = make_file("order.h5", 1000);
    const Dataset one = data::open_dataset(path, "train", 0, 1, 42);
    const Dataset third = data::open_dataset(path, "train", 2, 3, 42);
    BatchOptions options;
    options.batch_size = 10;
    options.shuffle = Shuffle::blocks;
    options.shuffle_buffer = 100;
    const std::string key = one.order_key(options);
    CHECK(key == third.order_key(options));
    CHECK(key.find("blocks rows=1000 batch=10 seed=42") == 0);
    BatchOptions other = options;
    other.shuffle_buffer = 200;
    CHECK(one.order_key(other) != key);
    other = options;
    other.batch_size = 20;
    CHECK(one.order_key(other) != key);
    other = options;
    other.prefetch_batches = 7;
    other.drop_last = true;
    CHECK(one.order_key(other) == key);  // how batches are read, not which samples they hold
    CHECK(data::open_dataset(path, "train", 0, 1, 43).order_key(options) != key);
    options.shuffle = Shuffle::none;
    CHECK(data::open_dataset(path, "train", 0, 1, 43).order_key(options) == one.order_key(options));
    std::filesystem::remove(path);
}
