// src/h5/types: the types trainrt builds hold what is written into them (compounds, binary16,
// strings), and what a type says of itself (class, size, sign, members) is HDF5's answer.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "h5/h5.hpp"
#include "h5/io.hpp"
#include "h5/space.hpp"
#include "h5/types.hpp"
#include "temp_run_dir.hpp"
#include "trainrt/error.hpp"

using namespace trainrt;
using Catch::Matchers::Contains;

namespace {

struct Row {
    std::int64_t step;
    double loss;
    char tag[16];
};

h5::Datatype row_type() {
    h5::Datatype tag = h5::string_type(sizeof(Row::tag), "tag");
    return h5::compound_type(sizeof(Row),
                             {{"step", offsetof(Row, step), H5T_STD_I64LE},
                              {"loss", offsetof(Row, loss), H5T_IEEE_F64LE},
                              {"tag", offsetof(Row, tag), tag.get()}},
                             "row");
}

}  // namespace

TEST_CASE("h5 types: a compound's members and rows round-trip through a file", "[h5]") {
    testing::TempRunDir dir;
    h5::File file = h5::create_file(dir.str() + "/rows.h5");
    h5::Datatype type = row_type();
    std::vector<Row> rows(2);
    rows[0] = {3, 0.5, "first"};
    rows[1] = {-9, 1e300, "second"};
    h5::Dataspace space = h5::simple_space({2}, "rows");
    h5::Dataset dataset = h5::create_dataset(file.get(), "rows", type.get(), space.get(), H5P_DEFAULT, "rows");
    h5::write_all(dataset.get(), type.get(), rows.data(), "rows");
    h5::Datatype stored = h5::dataset_type(dataset.get(), "rows");
    CHECK(h5::type_class(stored.get(), "rows") == H5T_COMPOUND);
    CHECK(h5::type_size(stored.get(), "rows") == sizeof(Row));
    REQUIRE(h5::member_count(stored.get(), "rows") == 3);
    CHECK(h5::member_name(stored.get(), 0, "rows") == "step");
    CHECK(h5::member_name(stored.get(), 2, "rows") == "tag");
    CHECK(h5::type_class(h5::member_type(stored.get(), 1, "rows").get(), "loss") == H5T_FLOAT);
    CHECK(h5::type_size(h5::member_type(stored.get(), 2, "rows").get(), "tag") == 16);
    std::vector<Row> back(2);
    h5::read_all(dataset.get(), type.get(), back.data(), "rows");
    CHECK(back[1].step == -9);
    CHECK(back[1].loss == 1e300);
    CHECK(std::string(back[0].tag) == "first");
    CHECK(std::string(back[1].tag) == "second");
    CHECK_THROWS_WITH(h5::compound_type(8, {{"wide", 4, H5T_STD_I64LE}}, "narrow"),
                      Contains("H5Tinsert") && Contains("narrow: wide"));
}

TEST_CASE("h5 types: binary16 stores values exactly where they fit, rounds the others", "[h5]") {
    testing::TempRunDir dir;
    h5::File file = h5::create_file(dir.str() + "/half.h5");
    h5::Datatype half = h5::float16_type(H5T_IEEE_F32LE, "half");
    CHECK(h5::type_class(half.get(), "half") == H5T_FLOAT);
    CHECK(h5::type_size(half.get(), "half") == 2);
    const std::vector<float> values = {1.5f, -2.0f, 0.25f, 65504.0f, 1.0f + 1.0f / 4096};
    h5::Dataspace space = h5::simple_space({values.size()}, "half");
    h5::Dataset dataset = h5::create_dataset(file.get(), "half", half.get(), space.get(), H5P_DEFAULT, "half");
    h5::write_all(dataset.get(), H5T_NATIVE_FLOAT, values.data(), "half");
    std::vector<float> back(values.size());
    h5::read_all(dataset.get(), H5T_NATIVE_FLOAT, back.data(), "half");
    for (std::size_t i = 0; i < 4; ++i) CHECK(back[i] == values[i]);
    CHECK(back[4] == 1.0f);  // 10 mantissa bits: 1 + 2^-12 is 1
    std::uint16_t bits = 0;
    h5::read_block(dataset.get(), half.get(), {{0}, {1}}, &bits, "half");
    CHECK(bits == 0x3E00);  // 1.5 in binary16
}

TEST_CASE("h5 types: copies, equality, sign and size of numeric types", "[h5]") {
    h5::Datatype copy = h5::copy_type(H5T_NATIVE_INT64, "copy");
    CHECK(h5::same_type(copy.get(), H5T_NATIVE_INT64, "copy"));
    CHECK_FALSE(h5::same_type(copy.get(), H5T_NATIVE_INT32, "copy"));
    CHECK(h5::type_size(copy.get(), "copy") == 8);
    CHECK(h5::type_sign(H5T_NATIVE_INT8, "i8") == H5T_SGN_2);
    CHECK(h5::type_sign(H5T_NATIVE_UINT16, "u16") == H5T_SGN_NONE);
    CHECK(h5::type_class(h5::string_type(5, "s").get(), "s") == H5T_STRING);
    CHECK_THROWS_WITH(h5::type_size(-1, "no type"), Contains("H5Tget_size") && Contains("no type"));
    CHECK_THROWS_WITH(h5::same_type(-1, H5T_NATIVE_INT8, "no type"), Contains("H5Tequal"));
}

TEST_CASE("h5 types: an enum's members, values and base type", "[h5]") {
    h5::Datatype flag(H5Tenum_create(H5T_NATIVE_UINT8));
    REQUIRE(flag.get() >= 0);
    const unsigned char no = 0, yes = 1;
    REQUIRE(H5Tenum_insert(flag.get(), "FALSE", &no) >= 0);
    REQUIRE(H5Tenum_insert(flag.get(), "TRUE", &yes) >= 0);
    REQUIRE(h5::member_count(flag.get(), "flag") == 2);
    CHECK(h5::member_name(flag.get(), 1, "flag") == "TRUE");
    CHECK(h5::enum_member_name(flag.get(), 0) == "FALSE");
    unsigned char value = 7;
    h5::enum_member_value(flag.get(), 1, &value, "flag");
    CHECK(value == 1);
    CHECK(h5::same_type(h5::base_type(flag.get(), "flag").get(), H5T_NATIVE_UINT8, "flag"));
    CHECK_THROWS_WITH(h5::member_name(flag.get(), 5, "flag member"),
                      Contains("H5Tget_member_name") && Contains("flag member"));
    CHECK_THROWS_AS(h5::base_type(H5T_NATIVE_INT8, "int"), H5Error);
}
