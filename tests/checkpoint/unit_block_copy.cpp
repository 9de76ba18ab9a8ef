// Copying a box between row-major arrays (checkpoint/read/block_copy.hpp), against an element-by-element copy.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "checkpoint/read/block_copy.hpp"

using namespace trainrt;

namespace {

std::uint64_t flat(const Shape& dims, const Shape& at) {
    std::uint64_t index = 0;
    for (std::size_t d = 0; d < dims.size(); ++d) index = index * dims[d] + at[d];
    return index;
}

// Element by element: the reference.
std::vector<std::int32_t> reference(const std::vector<std::int32_t>& from, const Shape& from_dims, const Shape& from_start,
                                    std::vector<std::int32_t> to, const Shape& to_dims, const Shape& to_start,
                                    const Shape& count) {
    Shape i(count.size(), 0);
    const std::uint64_t total = std::accumulate(count.begin(), count.end(), std::uint64_t{1}, std::multiplies<>());
    for (std::uint64_t n = 0; n < total; ++n) {
        Shape a = from_start, b = to_start;
        for (std::size_t d = 0; d < count.size(); ++d) a[d] += i[d], b[d] += i[d];
        to[flat(to_dims, b)] = from[flat(from_dims, a)];
        for (std::size_t d = count.size(); d-- > 0;) {
            if (++i[d] < count[d]) break;
            i[d] = 0;
        }
    }
    return to;
}

void check_copy(const Shape& from_dims, const Shape& from_start, const Shape& to_dims, const Shape& to_start,
                const Shape& count, int threads = 1) {
    std::uint64_t from_n = 1, to_n = 1;
    for (auto n : from_dims) from_n *= n;
    for (auto n : to_dims) to_n *= n;
    std::vector<std::int32_t> from(from_n), to(to_n, -1);
    std::iota(from.begin(), from.end(), 0);
    const std::vector<std::int32_t> expected = reference(from, from_dims, from_start, to, to_dims, to_start, count);
    checkpoint::copy_block(reinterpret_cast<const char*>(from.data()), {&from_dims, &from_start},
                           reinterpret_cast<char*>(to.data()), {&to_dims, &to_start}, count, sizeof(std::int32_t), threads);
    CHECK(to == expected);
}

}  // namespace

TEST_CASE("block copy: whole arrays, row blocks and column blocks land where they belong", "[checkpoint]") {
    check_copy({6, 4}, {0, 0}, {6, 4}, {0, 0}, {6, 4});  // one run
    check_copy({3, 4}, {0, 0}, {6, 4}, {3, 0}, {3, 4});  // a part of rows into the second half
    check_copy({6, 2}, {0, 0}, {6, 4}, {0, 2}, {6, 2});  // a part split by columns
    check_copy({6, 4}, {1, 1}, {3, 5}, {0, 2}, {3, 3});  // an overlap inside both
    check_copy({2, 3, 4}, {0, 1, 0}, {2, 3, 4}, {0, 0, 0}, {2, 2, 4});  // whole last dim, partial middle
    check_copy({5}, {2}, {3}, {0}, {3});
}

TEST_CASE("block copy: a scalar is one element; an empty box copies nothing", "[checkpoint]") {
    check_copy({}, {}, {}, {}, {});
    check_copy({4, 4}, {0, 0}, {4, 4}, {0, 0}, {0, 4});
}

TEST_CASE("block copy: a run of 64 MiB or more is copied in slices by several threads, every byte in place",
          "[checkpoint]") {
    constexpr std::uint64_t kRow = 1024;  // int32 elements: 4 KiB rows
    const std::uint64_t rows = 2 * checkpoint::kParallelCopyBytes / (kRow * sizeof(std::int32_t)) + 3;
    const Shape dims{rows, kRow}, origin{0, 0}, into{rows + 5, kRow}, at{2, 0};
    std::vector<std::int32_t> from(rows * kRow);
    std::iota(from.begin(), from.end(), 1);
    // 128 MiB + 3 rows as one run (the last slice shorter) into rows 2.. of a larger array.
    for (int threads : {1, 3, 8}) {
        std::vector<std::int32_t> to((rows + 5) * kRow, -1);
        checkpoint::copy_block(reinterpret_cast<const char*>(from.data()), {&dims, &origin},
                               reinterpret_cast<char*>(to.data()), {&into, &at}, dims, sizeof(std::int32_t), threads);
        INFO("threads " << threads);
        CHECK(std::equal(from.begin(), from.end(), to.begin() + 2 * kRow));
        CHECK(std::all_of(to.begin(), to.begin() + 2 * kRow, [](std::int32_t v) { return v == -1; }));
        CHECK(std::all_of(to.end() - 3 * kRow, to.end(), [](std::int32_t v) { return v == -1; }));
    }
    // Runs under 64 MiB (a column block: one run per row) are one memcpy each, with threads too.
    check_copy({64, kRow}, {0, 0}, {64, 2 * kRow}, {0, kRow}, {64, kRow}, 4);
}
