// src/h5's dataspaces, property lists, dataset I/O and files: what is written is what is read back,
// the properties asked for are the ones HDF5 reports, and a failed call names the HDF5 call.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "h5/file.hpp"
#include "h5/h5.hpp"
#include "h5/io.hpp"
#include "h5/props.hpp"
#include "h5/space.hpp"
#include "temp_run_dir.hpp"
#include "trainrt/error.hpp"

using namespace trainrt;
using Catch::Matchers::Contains;

namespace {

std::vector<std::int32_t> iota_values(std::size_t count, std::int32_t first) {
    std::vector<std::int32_t> values(count);
    std::iota(values.begin(), values.end(), first);
    return values;
}

// A 6 x 4 int32 dataset "grid" in `file` with the given layout, element (r, c) = 10 * r + c.
h5::Dataset sample_grid(hid_t file, const h5::DatasetLayout& layout) {
    h5::Dataspace space = h5::simple_space({6, 4}, "grid");
    h5::PropertyList dcpl = h5::dataset_create_props(layout, "grid");
    h5::Dataset grid = h5::create_dataset(file, "grid", H5T_STD_I32LE, space.get(), dcpl.get(), "grid");
    std::vector<std::int32_t> values(24);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int32_t>(10 * (i / 4) + i % 4);
    h5::write_all(grid.get(), H5T_NATIVE_INT32, values.data(), "grid");
    return grid;
}

}  // namespace

TEST_CASE("h5 spaces: simple, extendible and scalar extents, their dims and points", "[h5]") {
    h5::Dataspace simple = h5::simple_space({3, 5}, "simple");
    CHECK(h5::space_dims(simple.get(), "simple") == std::vector<hsize_t>{3, 5});
    CHECK(h5::space_points(simple.get(), "simple") == 15);
    h5::Dataspace scalar = h5::scalar_space("scalar");
    CHECK(h5::space_dims(scalar.get(), "scalar").empty());
    CHECK(h5::space_points(scalar.get(), "scalar") == 1);
    h5::Dataspace growing = h5::extendible_space({2}, {H5S_UNLIMITED}, "growing");
    CHECK(h5::space_points(growing.get(), "growing") == 2);
    CHECK_THROWS_AS(h5::extendible_space({2, 2}, {H5S_UNLIMITED}, "growing"), H5Error);
    CHECK_THROWS_WITH(h5::space_dims(-1, "no space"),
                      Contains("H5Sget_simple_extent_ndims") && Contains("no space"));
}

TEST_CASE("h5 blocks: a block written into a dataset is read back, the rest untouched", "[h5]") {
    testing::TempRunDir dir;
    h5::File file = h5::create_file(dir.str() + "/blocks.h5");
    h5::DatasetLayout layout;
    layout.chunk_dims = {2, 4};
    h5::Dataset grid = sample_grid(file.get(), layout);
    const std::vector<std::int32_t> block = iota_values(6, 1000);  // rows 2-4, columns 1-2
    h5::write_block(grid.get(), H5T_NATIVE_INT32, {{2, 1}, {3, 2}}, block.data(), "grid");
    std::vector<std::int32_t> back(6, -1);
    h5::read_block(grid.get(), H5T_NATIVE_INT32, {{2, 1}, {3, 2}}, back.data(), "grid");
    CHECK(back == block);
    std::vector<std::int32_t> all(24, -1);
    h5::read_all(grid.get(), H5T_NATIVE_INT32, all.data(), "grid");
    CHECK(all[2 * 4 + 0] == 20);  // beside the block
    CHECK(all[2 * 4 + 1] == 1000);
    CHECK(all[4 * 4 + 2] == 1005);
    CHECK(all[5 * 4 + 3] == 53);  // after it
}

TEST_CASE("h5 blocks: a selection of memory and of the file, read in order", "[h5]") {
    testing::TempRunDir dir;
    h5::File file = h5::create_file(dir.str() + "/selected.h5");
    h5::Dataset grid = sample_grid(file.get(), {});
    h5::Dataspace file_space = h5::dataset_space(grid.get());
    h5::select_block(file_space.get(), {{4, 2}, {2, 2}}, "grid");
    h5::Dataspace memory_space = h5::simple_space({3, 3}, "memory");
    h5::select_block(memory_space.get(), {{1, 1}, {2, 2}}, "memory");
    std::vector<std::int32_t> memory(9, -1);
    h5::read_selected(grid.get(), H5T_NATIVE_INT32, memory_space.get(), file_space.get(), memory.data(), "grid");
    CHECK(memory == std::vector<std::int32_t>{-1, -1, -1, -1, 42, 43, -1, 52, 53});
}

TEST_CASE("h5 blocks: a block beyond the dataset is an H5Error naming the call and the dataset", "[h5]") {
    testing::TempRunDir dir;
    h5::File file = h5::create_file(dir.str() + "/beyond.h5");
    h5::Dataset grid = sample_grid(file.get(), {});
    std::vector<std::int32_t> out(8);
    CHECK_THROWS_WITH(h5::read_block(grid.get(), H5T_NATIVE_INT32, {{5, 0}, {2, 4}}, out.data(), "grid of 6 rows"),
                      Contains("H5Dread") && Contains("grid of 6 rows"));
    CHECK_THROWS_WITH(h5::select_block(-1, {{0}, {1}}, "no space"), Contains("H5Sselect_hyperslab"));
}

TEST_CASE("h5 layouts: contiguous with early allocation has its place at creation", "[h5]") {
    testing::TempRunDir dir;
    h5::File file = h5::create_file(dir.str() + "/early.h5");
    h5::DatasetLayout layout;
    layout.allocate_early = true;
    layout.never_fill = true;
    h5::PropertyList dcpl = h5::dataset_create_props(layout, "early");
    h5::Dataspace space = h5::simple_space({1000}, "early");
    h5::Dataset early = h5::create_dataset(file.get(), "early", H5T_STD_I64LE, space.get(), dcpl.get(), "early");
    CHECK(h5::dataset_layout(early.get(), "early") == H5D_CONTIGUOUS);
    CHECK(h5::chunk_dims(early.get(), "early").empty());
    CHECK(h5::data_offset(early.get()) != HADDR_UNDEF);  // before any write
    h5::Dataset late = h5::create_dataset(file.get(), "late", H5T_STD_I64LE, space.get(), H5P_DEFAULT, "late");
    CHECK(h5::data_offset(late.get()) == HADDR_UNDEF);
}

TEST_CASE("h5 layouts: chunked and compressed, as HDF5 reports it", "[h5]") {
    testing::TempRunDir dir;
    h5::File file = h5::create_file(dir.str() + "/chunked.h5");
    h5::DatasetLayout layout;
    layout.chunk_dims = {3, 4};
    layout.deflate_level = h5::deflate_available() ? 4 : 0;
    h5::Dataset grid = sample_grid(file.get(), layout);
    CHECK(h5::dataset_layout(grid.get(), "grid") == H5D_CHUNKED);
    CHECK(h5::chunk_dims(grid.get(), "grid") == std::vector<hsize_t>{3, 4});
    CHECK(h5::filter_count(grid.get(), "grid") == (layout.deflate_level > 0 ? 2 : 0));  // shuffle, deflate
    CHECK(h5::data_offset(grid.get()) == HADDR_UNDEF);
    h5::DatasetLayout contiguous;
    contiguous.deflate_level = 4;
    CHECK_THROWS_WITH(h5::dataset_create_props(contiguous, "flat"), Contains("chunked") && Contains("flat"));
}

TEST_CASE("h5 chunks: a raw chunk written past a grown extent is read back, and found in the file", "[h5]") {
    testing::TempRunDir dir;
    h5::File file = h5::create_file(dir.str() + "/raw.h5");
    h5::Dataspace space = h5::extendible_space({0}, {H5S_UNLIMITED}, "rows");
    h5::PropertyList dcpl = h5::dataset_create_props({{4}}, "rows");
    h5::Dataset rows = h5::create_dataset(file.get(), "rows", H5T_STD_I32LE, space.get(), dcpl.get(), "rows");
    CHECK(h5::chunk_place(rows.get(), {0}, "rows").address == HADDR_UNDEF);
    h5::set_extent(rows.get(), {6}, "rows");
    const std::vector<std::int32_t> second = {7, 8, 9, 10};  // rows 4-7; the extent ends at 6
    h5::write_chunk(rows.get(), {4}, second.data(), second.size() * sizeof(std::int32_t), "rows");
    CHECK(h5::dataset_shape(rows.get()) == std::vector<hsize_t>{6});
    std::vector<std::int32_t> back(2, -1);
    h5::read_block(rows.get(), H5T_NATIVE_INT32, {{4}, {2}}, back.data(), "rows");
    CHECK(back == std::vector<std::int32_t>{7, 8});
    const h5::ChunkPlace place = h5::chunk_place(rows.get(), {5}, "rows");
    CHECK(place.address != HADDR_UNDEF);
    CHECK(place.bytes == 16);
    CHECK_THROWS_WITH(h5::set_extent(rows.get(), {}, "rows"), Contains("H5Dset_extent"));
}

TEST_CASE("h5 files: an in-memory file's image, reopened as an image", "[h5]") {
    h5::PropertyList fapl = h5::in_memory_file_access(64 * 1024);
    h5::File file = h5::create_file_with("trainrt-test-image", fapl.get());
    const std::vector<std::int32_t> values = iota_values(100, 5);
    h5::write_dataset(file.get(), "values", H5T_STD_I32LE, {100}, values.data());
    h5::flush(file.get(), H5F_SCOPE_GLOBAL, "image");
    const std::string image = h5::file_image(file.get(), "image");
    REQUIRE(image.size() > 400);
    CHECK(image.compare(0, 8, "\x89HDF\r\n\x1a\n") == 0);
    CHECK_THROWS_WITH(h5::end_of_allocation(file.get(), "image"), Contains("H5Fget_eoa"));  // sec2 only
    h5::File reopened = h5::open_image(image.data(), image.size(), "image");
    h5::Dataset dataset = h5::open_dataset(reopened.get(), "values");
    std::vector<std::int32_t> back(100);
    h5::read_all(dataset.get(), H5T_NATIVE_INT32, back.data(), "values");
    CHECK(back == values);
}

TEST_CASE("h5 files: the end of allocation covers the data written, and is where the file ends", "[h5]") {
    testing::TempRunDir dir;
    const std::string path = dir.str() + "/eoa.h5";
    h5::File file = h5::create_file(path);
    const haddr_t empty = h5::end_of_allocation(file.get(), path);
    const std::vector<std::int32_t> values = iota_values(4096, 0);
    h5::write_dataset(file.get(), "values", H5T_STD_I32LE, {4096}, values.data());
    h5::flush(file.get(), H5F_SCOPE_LOCAL, path);
    const haddr_t end = h5::end_of_allocation(file.get(), path);
    CHECK(end >= empty + values.size() * sizeof(std::int32_t));
    h5::close_file(file, path);
    CHECK(std::filesystem::file_size(path) == end);
}

TEST_CASE("h5 files: the latest format for SWMR, opened with flags; a missing file names H5Fopen", "[h5]") {
    testing::TempRunDir dir;
    const std::string path = dir.str() + "/swmr.h5";
    {
        h5::PropertyList fapl = h5::latest_format_file_access();
        h5::File file = h5::create_file_with(path, fapl.get());
        h5::write_attribute(file.get(), "n", std::int64_t{7});
        h5::close_file_once(file, path);
        CHECK(file.get() == -1);
    }
    h5::PropertyList fapl = h5::file_access_props();
    h5::File reader = h5::open_file_with(path, H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, fapl.get());
    CHECK(h5::read_int_attribute(reader.get(), "n") == 7);
    CHECK_THROWS_WITH(h5::open_file_with(dir.str() + "/none.h5", H5F_ACC_RDONLY, fapl.get()),
                      Contains("H5Fopen") && Contains("none.h5"));
}

TEST_CASE("h5 property lists: chunk cache off, independent transfer", "[h5]") {
    h5::PropertyList dapl = h5::uncached_dataset_access("column");
    std::size_t slots = 1, bytes = 1;
    double w0 = 0;
    REQUIRE(H5Pget_chunk_cache(dapl.get(), &slots, &bytes, &w0) >= 0);
    CHECK(slots == 0);
    CHECK(bytes == 0);
    h5::PropertyList dxpl = h5::independent_transfer();
    H5FD_mpio_xfer_t mode = H5FD_MPIO_COLLECTIVE;
    REQUIRE(H5Pget_dxpl_mpio(dxpl.get(), &mode) >= 0);
    CHECK(mode == H5FD_MPIO_INDEPENDENT);
}

TEST_CASE("h5 attributes and links: int64 arrays round-trip, paths looked up without throwing", "[h5]") {
    testing::TempRunDir dir;
    h5::File file = h5::create_file(dir.str() + "/links.h5");
    h5::Group group = h5::create_group(file.get(), "a");
    const std::vector<std::int64_t> shape = {3, -4, 1LL << 40};
    h5::write_attribute(group.get(), "shape", shape);
    h5::write_attribute(group.get(), "empty", std::vector<std::int64_t>{});
    CHECK(h5::read_int_array_attribute(group.get(), "shape") == shape);
    CHECK(h5::read_int_array_attribute(group.get(), "empty").empty());
    h5::write_dataset(group.get(), "d", H5T_NATIVE_INT64, {3}, shape.data());
    CHECK(h5::path_exists(file.get(), "a/d"));
    CHECK_FALSE(h5::path_exists(file.get(), "a/e"));
    CHECK_FALSE(h5::path_exists(file.get(), "b/c"));  // b missing: HDF5 fails, not an H5Error here
    CHECK_THROWS_WITH(h5::exists(file.get(), "b/c"), Contains("H5Lexists"));
    CHECK(h5::object_type(file.get(), "a") == H5O_TYPE_GROUP);
    CHECK(h5::object_type(file.get(), "a/d") == H5O_TYPE_DATASET);
    CHECK(h5::object_type(file.get(), "b/c") == H5O_TYPE_UNKNOWN);
}
