// The shared checkpoint layout under mpiexec: all ranks write one data.h5 collectively; it is
// read back here with plain serial HDF5, element by element.
#include <catch2/catch.hpp>
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "checkpoint/format/layout.hpp"
#include "checkpoint/format/validate.hpp"
#include "checkpoint/write/layout_writer.hpp"
#include "comm/mpi_communicator.hpp"
#include "h5/h5.hpp"
#include "storage/posix.hpp"
#include "trainrt/checkpoint.hpp"
#include "trainrt/error.hpp"
#include "mpi_support.hpp"

using namespace trainrt;
using namespace trainrt::checkpoint;
using Catch::Matchers::Contains;

namespace {

using testing::world_rank;
using testing::world_size;
Context world_context() { return testing::world_context(); }

// The writer's part of a save: this rank's blocks of `state` (write_plan.hpp), as the manager plans them.
RankWrite write_state(LayoutWriter& writer, const CheckpointState& state, const std::string& dir, const Context& context) {
    return writer.write(plan_writes(state, context.world_rank, context.world_size, true), dir, context);
}

// A fresh directory seen by every rank (testing::SharedDir).
struct SharedTempDir : testing::SharedDir {
    SharedTempDir() : SharedDir("trainrt-shared") {}
};

// Rows [start, start + count) of `rows` for `rank`: the first rows % size ranks get one more.
struct RowBlock {
    std::uint64_t start = 0;
    std::uint64_t count = 0;
};

RowBlock rows_of(std::uint64_t rows, int rank, int size) {
    const std::uint64_t r = static_cast<std::uint64_t>(rank), n = static_cast<std::uint64_t>(size);
    const std::uint64_t base = rows / n, extra = rows % n;
    return {r * base + std::min(r, extra), base + (r < extra ? 1 : 0)};
}

// The tensors every test checkpoint holds, as functions of their global index.
constexpr std::uint64_t kBiasLength = 5;
constexpr std::uint64_t kWeightRows = 7;  // uneven over 2, 3 and 4 ranks
constexpr std::uint64_t kWeightCols = 300;  // 7 x 300 doubles: above the 4 KiB alignment
constexpr std::uint64_t kTokenCols = 3;
constexpr std::int64_t kStep = 42;

float bias_at(std::uint64_t i) { return 0.5f * static_cast<float>(i) - 1.0f; }
double weight_at(std::uint64_t row, std::uint64_t col) { return row * 1000.0 + col + 0.25; }
std::uint8_t token_at(std::uint64_t row, std::uint64_t col) {
    return static_cast<std::uint8_t>((row * kTokenCols + col) * 37 % 256);
}
// size - 1 rows over size ranks: the last rank holds an empty block.
std::uint64_t token_rows() { return static_cast<std::uint64_t>(world_size() - 1); }

// This rank's buffers; they must outlive the write (the state only points at them).
struct Buffers {
    std::vector<float> bias;
    std::vector<double> weights;
    std::vector<std::uint8_t> tokens;
    std::vector<std::int64_t> step{kStep};
    RowBlock weight_rows;
    RowBlock token_block;
};

Buffers make_buffers() {
    Buffers buffers;
    for (std::uint64_t i = 0; i < kBiasLength; ++i) buffers.bias.push_back(bias_at(i));
    buffers.weight_rows = rows_of(kWeightRows, world_rank(), world_size());
    for (std::uint64_t r = 0; r < buffers.weight_rows.count; ++r)
        for (std::uint64_t c = 0; c < kWeightCols; ++c)
            buffers.weights.push_back(weight_at(buffers.weight_rows.start + r, c));
    buffers.token_block = rows_of(token_rows(), world_rank(), world_size());
    for (std::uint64_t r = 0; r < buffers.token_block.count; ++r)
        for (std::uint64_t c = 0; c < kTokenCols; ++c)
            buffers.tokens.push_back(token_at(buffers.token_block.start + r, c));
    return buffers;
}

CheckpointState make_state(const Buffers& b) {
    CheckpointState state;
    state.replicated<float>("bias", b.bias, {kBiasLength});
    state.sharded<double>("weights", b.weights, {kWeightRows, kWeightCols},
                          {b.weight_rows.start, 0}, {b.weight_rows.count, kWeightCols});
    state.sharded<std::uint8_t>("tokens", b.tokens, {token_rows(), kTokenCols},
                                {b.token_block.start, 0}, {b.token_block.count, kTokenCols});
    state.replicated<std::int64_t>("step", b.step, {});  // a scalar
    state.sharded<float>("empty", std::span<const float>(), {0, 4}, {0, 0}, {0, 4});
    return state;
}

LayoutOptions test_options() {
    LayoutOptions options;
    options.layout = "shared";
    options.alignment = 4096;
    options.stripe_count = 2;         // ROMIO ignores striping hints off Lustre; they must not hurt
    options.stripe_size = 1 << 20;
    return options;
}

template <class T> std::vector<T> read_whole(hid_t file, const std::string& name, hid_t type) {
    h5::Dataset dataset = h5::open_dataset(file, dataset_path(name));
    std::uint64_t count = 1;
    for (hsize_t extent : h5::dataset_shape(dataset.get())) count *= extent;
    std::vector<T> values(count);
    TRAINRT_H5(H5Dread(dataset.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), name);
    return values;
}

std::vector<std::int64_t> read_shape_attribute(hid_t object, const std::string& name) {
    h5::Attribute attribute(TRAINRT_H5(H5Aopen(object, name.c_str(), H5P_DEFAULT), name));
    h5::Dataspace space(TRAINRT_H5(H5Aget_space(attribute.get()), name));
    std::vector<std::int64_t> values(
        static_cast<std::size_t>(TRAINRT_H5(H5Sget_simple_extent_npoints(space.get()), name)));
    if (!values.empty())
        TRAINRT_H5(H5Aread(attribute.get(), H5T_NATIVE_INT64, values.data()), name);
    return values;
}

// Type, layout, fill time and the self-describing attributes of one tensor's dataset.
void check_dataset(hid_t file, const std::string& name, hid_t file_type, bool replicated,
                   const std::vector<std::int64_t>& global_shape) {
    INFO("dataset " << dataset_path(name));
    h5::Dataset dataset = h5::open_dataset(file, dataset_path(name));
    h5::Datatype type(TRAINRT_H5(H5Dget_type(dataset.get()), name));
    CHECK(H5Tequal(type.get(), file_type) > 0);
    h5::PropertyList dcpl(TRAINRT_H5(H5Dget_create_plist(dataset.get()), name));
    CHECK(H5Pget_layout(dcpl.get()) == H5D_CONTIGUOUS);
    H5D_fill_time_t fill_time{};
    TRAINRT_H5(H5Pget_fill_time(dcpl.get(), &fill_time), name);
    CHECK(fill_time == H5D_FILL_TIME_NEVER);
    CHECK(h5::read_int_attribute(dataset.get(), "replicated") == (replicated ? 1 : 0));
    CHECK(read_shape_attribute(dataset.get(), "global_shape") == global_shape);
    const std::vector<hsize_t> shape = h5::dataset_shape(dataset.get());
    CHECK(std::vector<std::int64_t>(shape.begin(), shape.end()) == global_shape);
}

void check_file_contents(const std::string& path) {
    h5::File file = h5::open_file(path, false);
    CHECK(h5::read_string_attribute(file.get(), "format") == "trainrt-checkpoint-data");
    CHECK(h5::read_int_attribute(file.get(), "format_version") == 1);
    CHECK(h5::read_string_attribute(file.get(), "layout") == "shared");
    CHECK(h5::read_int_attribute(file.get(), "world_size") == world_size());
    const auto tokens = static_cast<std::int64_t>(token_rows());
    check_dataset(file.get(), "bias", H5T_IEEE_F32LE, true, {kBiasLength});
    check_dataset(file.get(), "weights", H5T_IEEE_F64LE, false, {kWeightRows, kWeightCols});
    check_dataset(file.get(), "tokens", H5T_STD_U8LE, false, {tokens, kTokenCols});
    check_dataset(file.get(), "step", H5T_STD_I64LE, true, {});
    check_dataset(file.get(), "empty", H5T_IEEE_F32LE, false, {0, 4});

    const auto bias = read_whole<float>(file.get(), "bias", H5T_NATIVE_FLOAT);
    for (std::uint64_t i = 0; i < kBiasLength; ++i) REQUIRE(bias[i] == bias_at(i));
    const auto weights = read_whole<double>(file.get(), "weights", H5T_NATIVE_DOUBLE);
    for (std::uint64_t r = 0; r < kWeightRows; ++r)
        for (std::uint64_t c = 0; c < kWeightCols; ++c)
            REQUIRE(weights[r * kWeightCols + c] == weight_at(r, c));
    const auto token_values = read_whole<std::uint8_t>(file.get(), "tokens", H5T_NATIVE_UINT8);
    for (std::uint64_t r = 0; r < token_rows(); ++r)
        for (std::uint64_t c = 0; c < kTokenCols; ++c)
            REQUIRE(token_values[r * kTokenCols + c] == token_at(r, c));
    CHECK(read_whole<std::int64_t>(file.get(), "step", H5T_NATIVE_INT64) ==
          std::vector<std::int64_t>{kStep});

    // H5Pset_alignment: datasets at least `alignment` bytes long start on a multiple of it.
    h5::Dataset weights_dataset = h5::open_dataset(file.get(), dataset_path("weights"));
    CHECK(H5Dget_offset(weights_dataset.get()) % test_options().alignment == 0);
}

void check_rank_write(const RankWrite& written, const std::string& dir,
                      const CheckpointState& state) {
    // Each rank reports the checksums of the ranges of data.h5 it hashes (ranges_of_writers: the
    // bytes it wrote; none when it hashes none), each naming it as their writer.
    const std::uint64_t size = std::filesystem::file_size(dir + "/data.h5");
    if (written.files.empty()) {
        CHECK(world_rank() != 0);
    } else {
        REQUIRE(written.files.size() == 1);
        CHECK(written.files[0].name == "data.h5");
        CHECK(written.files[0].size == size);
        CHECK(written.files[0].xxh3.empty());
        for (const ChecksumRange& range : written.files[0].ranges) {
            CHECK(range.rank == world_rank());
            CHECK(range.xxh3 == describe_range(dir, "data.h5", range));
            // A range covering the file is the whole file's checksum, as before ranges existed.
            if (range.length == size) CHECK(range.xxh3 == describe_file(dir, "data.h5").xxh3);
        }
    }
    if (world_rank() != 0) {
        CHECK(written.parts.empty());
        return;
    }
    REQUIRE(written.parts.size() == state.tensors().size());
    for (const TensorPart& tensor : state.tensors()) {
        INFO("tensor " << tensor.name);
        int found = 0;
        for (const auto& [name, part] : written.parts) {
            if (name != tensor.name) continue;
            ++found;
            CHECK(part.file == "data.h5");
            CHECK(part.dataset == dataset_path(tensor.name));
            CHECK(part.offset == Shape(tensor.global_shape.size(), 0));
            CHECK(part.shape == tensor.global_shape);
        }
        CHECK(found == 1);
    }
}

// While alive, this process's writes past `bytes` of a file fail with EFBIG (RLIMIT_FSIZE,
// SIGXFSZ ignored): a deterministic I/O failure on one rank.
class FileSizeLimit {
public:
    FileSizeLimit(bool active, rlim_t bytes) : active_(active) {
        if (!active_) return;
        previous_handler_ = ::signal(SIGXFSZ, SIG_IGN);
        ::getrlimit(RLIMIT_FSIZE, &previous_);
        rlimit limit = previous_;
        limit.rlim_cur = bytes;
        ::setrlimit(RLIMIT_FSIZE, &limit);
    }
    ~FileSizeLimit() {
        if (!active_) return;
        ::setrlimit(RLIMIT_FSIZE, &previous_);
        ::signal(SIGXFSZ, previous_handler_);
    }
    FileSizeLimit(const FileSizeLimit&) = delete;
    FileSizeLimit& operator=(const FileSizeLimit&) = delete;

private:
    bool active_;
    rlimit previous_{};
    sighandler_t previous_handler_ = SIG_DFL;
};

}  // namespace

TEST_CASE("shared layout: all ranks write one data.h5 that serial HDF5 reads back", "[shared]") {
    SharedTempDir dir;
    const Buffers buffers = make_buffers();
    const CheckpointState state = make_state(buffers);
    auto writer = make_shared_file_writer(test_options());
    CHECK(writer->name() == "shared");

    const RankWrite written = write_state(*writer, state, dir.path(), world_context());
    MPI_Barrier(MPI_COMM_WORLD);

    check_rank_write(written, dir.path(), state);
    check_file_contents(dir.path() + "/data.h5");
}

TEST_CASE("shared layout: a second write over the same file replaces it", "[shared]") {
    SharedTempDir dir;
    const Buffers buffers = make_buffers();
    const CheckpointState state = make_state(buffers);
    auto writer = make_shared_file_writer(test_options());
    write_state(*writer, state, dir.path(), world_context());
    const RankWrite written = write_state(*writer, state, dir.path(), world_context());
    MPI_Barrier(MPI_COMM_WORLD);
    check_rank_write(written, dir.path(), state);
    check_file_contents(dir.path() + "/data.h5");
}

TEST_CASE("shared layout: tensor lists that differ across ranks fail on every rank",
          "[shared]") {
    if (world_size() < 2) return;  // one rank cannot disagree with itself
    SharedTempDir dir;
    const Buffers buffers = make_buffers();
    CheckpointState state = make_state(buffers);
    const std::vector<float> extra{1.0f, 2.0f};
    const bool last = world_rank() == world_size() - 1;

    SECTION("an extra tensor on the last rank") {
        if (last) state.replicated<float>("extra", extra, {2});
    }
    SECTION("a different global shape on the last rank") {
        if (last) state.replicated<float>("extra", extra, {2});
        else state.replicated<float>("extra", extra, {1, 2});
    }
    SECTION("a different type on the last rank") {
        const std::vector<std::int32_t> ints{1, 2};
        if (last) state.replicated<std::int32_t>("extra", ints, {2});
        else state.replicated<float>("extra", extra, {2});
    }
    SECTION("replicated on the last rank, sharded elsewhere") {
        if (last) state.replicated<float>("extra", extra, {2});
        else state.sharded<float>("extra", extra, {2}, {0}, {2});
    }
    // The one validation every save passes before a layout writes (checkpoint/format/validate.hpp).
    CHECK_THROWS_AS(validate_state(state, *comm::make_world_communicator()), CheckpointError);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_FALSE(storage::path_exists(dir.path() + "/data.h5"));  // refused before creating
}

TEST_CASE("shared layout: the mismatch message names the differing ranks", "[shared]") {
    if (world_size() < 2) return;
    SharedTempDir dir;
    const Buffers buffers = make_buffers();
    CheckpointState state = make_state(buffers);
    const std::vector<float> extra{1.0f};
    if (world_rank() == world_size() - 1) state.replicated<float>("extra", extra, {1});
    CHECK_THROWS_WITH(validate_state(state, *comm::make_world_communicator()),
                      Contains("describe different tensors") &&
                          Contains(std::to_string(world_size() - 1)));
}

TEST_CASE("shared layout: sharded blocks that leave a hole fail on every rank", "[shared]") {
    SharedTempDir dir;
    // Every rank claims row 0 of a (size + 1)-row tensor: the last row would be unwritten.
    const std::vector<double> row{1.0, 2.0};
    const std::uint64_t rows = static_cast<std::uint64_t>(world_size()) + 1;
    CheckpointState state;
    state.sharded<double>("holey", row, {rows, 2}, {0, 0}, {1, 2});
    CHECK_THROWS_WITH(validate_state(state, *comm::make_world_communicator()),
                      Contains("holey") && Contains("unwritten"));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_FALSE(storage::path_exists(dir.path() + "/data.h5"));
}

// Each rank's block of a tensor split by columns is not contiguous in the file: written piece by
// piece by independent transfers, beside the other ranks' pieces in the same rows.
TEST_CASE("shared layout: blocks split by columns land where they belong", "[shared]") {
    SharedTempDir dir;
    constexpr std::uint64_t kRows = 300, kColumnsPerRank = 3;
    const std::uint64_t columns = kColumnsPerRank * static_cast<std::uint64_t>(world_size());
    const std::uint64_t first = kColumnsPerRank * static_cast<std::uint64_t>(world_rank());
    const auto value = [&](std::uint64_t r, std::uint64_t c) { return static_cast<double>(r * 1000 + c); };
    std::vector<double> block;
    for (std::uint64_t r = 0; r < kRows; ++r)
        for (std::uint64_t c = first; c < first + kColumnsPerRank; ++c) block.push_back(value(r, c));
    CheckpointState state;
    state.sharded<double>("columns", block, {kRows, columns}, {0, first}, {kRows, kColumnsPerRank});
    auto writer = make_shared_file_writer(test_options());
    write_state(*writer, state, dir.path(), world_context());
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() != 0) return;
    h5::File file = h5::open_file(dir.path() + "/data.h5", false);
    const auto stored = read_whole<double>(file.get(), "columns", H5T_NATIVE_DOUBLE);
    REQUIRE(stored.size() == kRows * columns);
    for (std::uint64_t r = 0; r < kRows; ++r)
        for (std::uint64_t c = 0; c < columns; ++c) REQUIRE(stored[r * columns + c] == value(r, c));
}

TEST_CASE("shared layout: a directory that does not exist fails on every rank", "[shared]") {
    SharedTempDir dir;
    const Buffers buffers = make_buffers();
    const CheckpointState state = make_state(buffers);
    auto writer = make_shared_file_writer(test_options());
    CHECK_THROWS_AS(write_state(*writer, state, dir.path() + "/missing", world_context()), Error);
    // The writer is still usable afterwards: the failure left no collective half-done.
    const RankWrite written = write_state(*writer, state, dir.path(), world_context());
    MPI_Barrier(MPI_COMM_WORLD);
    check_rank_write(written, dir.path(), state);
}

// Rank 0 is where the metadata and (one aggregator per node) the collective data get written.
// HDF5 1.10 crashes at MPI_Finalize when an H5Fclose failed; the writer must not let that
// happen, so this test also passes only if the process exits cleanly.
TEST_CASE("shared layout: an I/O failure on rank 0 fails on every rank; the next save works",
          "[shared]") {
    const auto limit = GENERATE(as<rlim_t>{}, 0, 3000);
    INFO("rank 0 limited to " << limit << " bytes");
    SharedTempDir dir;
    const Buffers buffers = make_buffers();
    const CheckpointState state = make_state(buffers);
    auto writer = make_shared_file_writer(test_options());
    {
        FileSizeLimit limited(world_rank() == 0, limit);
        CHECK_THROWS_AS(write_state(*writer, state, dir.path(), world_context()), Error);
    }
    const std::string retry = dir.path() + "/retry";  // a fresh pending directory
    if (world_rank() == 0) storage::make_dirs(retry);
    MPI_Barrier(MPI_COMM_WORLD);
    const RankWrite written = write_state(*writer, state, retry, world_context());
    MPI_Barrier(MPI_COMM_WORLD);
    check_rank_write(written, retry, state);
    check_file_contents(retry + "/data.h5");
}
