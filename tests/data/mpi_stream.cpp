// The streaming reader under real MPI ranks (mpiexec -n 2 and -n 4): in every shuffle mode each
// sample reaches exactly one rank once per epoch, and global batch k holds the samples a single
// rank's stream puts in batch k. Each rank reads the file itself (no communication in the reader).
#include <catch2/catch.hpp>
#include <mpi.h>

#include <algorithm>
#include <vector>

#include "data/dataset_writer.hpp"
#include "data/stream.hpp"
#include "mpi_support.hpp"

using namespace trainrt;
using namespace trainrt::testing;

namespace {

constexpr std::uint64_t kRows = 1001;
constexpr std::size_t kBatch = 24;

void write_dataset(const std::string& path) {
    data::DatasetWriter writer(path, 0);
    writer.describe("mpi", "test", "v", "");
    auto& v = writer.add_column("train", {"v", ColumnType::i64, {3}, kRows});
    for (std::uint64_t r = 0; r < kRows; ++r) {
        const std::int64_t row[3] = {std::int64_t(r), -std::int64_t(r), std::int64_t(r) * 3};
        v.append(row, 1);
    }
    writer.commit();
}

// Per global batch: the rows this rank got, checked against the column's content.
std::vector<std::vector<std::int64_t>> my_batches(const std::string& path, int rank, int ranks, Shuffle shuffle) {
    BatchOptions options;
    options.batch_size = kBatch;
    options.shuffle = shuffle;
    options.shuffle_buffer = 96;
    std::vector<std::vector<std::int64_t>> out;
    BatchIterator batches = data::open_dataset(path, "train", rank, ranks, 11).iter_batches(options, 3);
    while (const Batch* batch = batches.next()) {
        auto v = batch->view<std::int64_t>("v");
        std::vector<std::int64_t> rows;
        for (std::size_t i = 0; i < batch->count; ++i) {
            REQUIRE(v[i * 3] == static_cast<std::int64_t>(batch->rows[i]));
            REQUIRE(v[i * 3 + 2] == 3 * v[i * 3]);
            rows.push_back(v[i * 3]);
        }
        out.push_back(rows);
    }
    return out;
}

}  // namespace

TEST_CASE("streams across ranks: every sample once per epoch, batch k the same samples as on one rank", "[stream]") {
    SharedDir dir("trainrt-stream");
    const std::string path = dir.path() + "/data.h5";
    if (world_rank() == 0) write_dataset(path);
    barrier();
    for (Shuffle shuffle : {Shuffle::none, Shuffle::global, Shuffle::blocks}) {
        const auto mine = my_batches(path, world_rank(), world_size(), shuffle);
        const auto alone = my_batches(path, 0, 1, shuffle);  // what one rank would see
        REQUIRE(mine.size() == alone.size());
        for (std::size_t k = 0; k < mine.size(); ++k) {
            int count = static_cast<int>(mine[k].size());
            std::vector<int> counts(world_size()), offsets(world_size());
            MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
            for (int r = 1; r < world_size(); ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
            std::vector<std::int64_t> all(offsets.back() + counts.back());
            MPI_Allgatherv(mine[k].data(), count, MPI_INT64_T, all.data(), counts.data(), offsets.data(),
                           MPI_INT64_T, MPI_COMM_WORLD);
            const auto [low, high] = std::minmax_element(counts.begin(), counts.end());
            CHECK(*high - *low <= 1);
            std::sort(all.begin(), all.end());
            std::vector<std::int64_t> expected(alone[k]);
            std::sort(expected.begin(), expected.end());
            INFO("shuffle " << shuffle_name(shuffle) << ", global batch " << k);
            CHECK(all == expected);  // disjoint parts that make up batch k exactly
        }
    }
    barrier();
}
