// HDF5 from two threads at once: the training thread reads its restored checkpoint
// (Checkpoint::read) while async saves write the next ones on the manager's background thread.
// Debian's HDF5 is not built thread-safe, so this holds only because every HDF5 call made
// through src/h5 takes trainrt's HDF5 lock itself; a call that does not corrupts HDF5's global
// state (a crash, an HDF5 error or torn data within a few saves).
//
// Every element is a function of (seed, global index), so each value read back is checked
// exactly. The loop counts are the same on every rank (save() and finish() are collective);
// the reads are local and run for a fixed time per save, long enough to overlap its write.
#include <catch2/catch.hpp>
#include <mpi.h>
#include <stdlib.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/format/catalog.hpp"
#include "checkpoint/manager.hpp"
#include "checkpoint/read/reader.hpp"
#include "checkpoint/read/verify.hpp"
#include "comm/mpi_communicator.hpp"
#include "trainrt/checkpoint.hpp"
#include "trainrt/context.hpp"
#include "mpi_support.hpp"

using namespace trainrt;
using namespace trainrt::checkpoint;
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kRowsPerRank = 1024, kColumns = 256;  // 2 MiB of f64 per rank
constexpr std::uint64_t kSteps = 4096;                        // replicated, 32 KiB of i64
constexpr int kSaves = 24;
constexpr auto kReadWindow = std::chrono::milliseconds(60);  // reading after each save()

int my_rank() { return testing::world_rank(); }
int n_ranks() { return testing::world_size(); }

// A fresh run directory seen by every rank (testing::SharedDir).
struct RunDir : testing::SharedDir {
    RunDir() : SharedDir("trainrt-h5thr") {}
};

std::string checkpoint_dir(const RunDir& run, int iteration) {
    return checkpoints_dir(run.path()) + "/" + checkpoint_name(iteration);
}

double weight_at(int seed, std::uint64_t flat) { return testing::value_at<double>(1, flat, seed); }
std::int64_t step_at(int seed, std::uint64_t index) { return testing::value_at<std::int64_t>(2, index, seed); }

// Rows [first_row, first_row + rows) of "weights" as saved with `seed`.
std::vector<double> weight_rows(int seed, std::uint64_t first_row, std::uint64_t rows) {
    std::vector<double> values(rows * kColumns);
    for (std::uint64_t i = 0; i < values.size(); ++i) values[i] = weight_at(seed, first_row * kColumns + i);
    return values;
}

std::vector<std::int64_t> all_steps(int seed) {
    std::vector<std::int64_t> values(kSteps);
    for (std::uint64_t i = 0; i < kSteps; ++i) values[i] = step_at(seed, i);
    return values;
}

// This rank's buffers for one save and the state that points at them.
struct Saved {
    std::vector<double> weights;
    std::vector<std::int64_t> steps;
    CheckpointState state;
};

std::unique_ptr<Saved> make_saved(int seed) {
    auto saved = std::make_unique<Saved>();
    const std::uint64_t first = static_cast<std::uint64_t>(my_rank()) * kRowsPerRank;
    saved->weights = weight_rows(seed, first, kRowsPerRank);
    saved->steps = all_steps(seed);
    const std::uint64_t rows = kRowsPerRank * static_cast<std::uint64_t>(n_ranks());
    saved->state.sharded<double>("weights", saved->weights, {rows, kColumns}, {first, 0},
                                 {kRowsPerRank, kColumns});
    saved->state.replicated<std::int64_t>("steps", saved->steps, {kSteps});
    saved->state.attribute("seed", std::int64_t{seed});
    return saved;
}

// Reads of `cp` (saved with `seed`) that return other values than were saved; a read that
// throws counts as one.
struct ReadTally {
    int reads = 0;
    int wrong = 0;
    std::string first_problem;
    void note(bool ok, const std::string& what) {
        ++reads;
        if (ok) return;
        if (wrong++ == 0) first_problem = what;
    }
};

// This rank's own block, a block that straddles two ranks' files and the replicated tensor.
void read_once(const Checkpoint& cp, int seed, ReadTally& tally) {
    try {
        const std::uint64_t first = static_cast<std::uint64_t>(my_rank()) * kRowsPerRank;
        std::vector<double> block(kRowsPerRank * kColumns);
        cp.read("weights", TensorType::f64, {first, 0}, {kRowsPerRank, kColumns}, block.data());
        tally.note(block == weight_rows(seed, first, kRowsPerRank), cp.name() + ": own block differs");
        if (n_ranks() > 1) {
            const std::uint64_t straddle = kRowsPerRank - 2;  // 2 rows of rank 0's, 2 of rank 1's
            std::vector<double> across(4 * kColumns);
            cp.read("weights", TensorType::f64, {straddle, 0}, {4, kColumns}, across.data());
            tally.note(across == weight_rows(seed, straddle, 4), cp.name() + ": straddling block differs");
        }
        tally.note(cp.read_all<std::int64_t>("steps") == all_steps(seed), cp.name() + ": steps differ");
    } catch (const std::exception& e) {
        tally.note(false, cp.name() + ": read failed: " + e.what());
    }
}

void read_for(const Checkpoint& cp, int seed, std::chrono::milliseconds window, ReadTally& tally) {
    const auto until = std::chrono::steady_clock::now() + window;
    do read_once(cp, seed, tally);
    while (std::chrono::steady_clock::now() < until);
}

}  // namespace

TEST_CASE("h5 threads: reading a checkpoint while async saves write in the background",
          "[checkpoint][h5]") {
    RunDir run;
    auto comm = comm::make_mpi_communicator(MPI_COMM_WORLD);
    Context context;
    context.world_rank = my_rank();
    context.world_size = n_ranks();
    context.run_dir = run.path();
    CheckpointOptions options;
    options.layout.layout = "file_per_rank";
    options.async = true;
    CheckpointManager manager(options, context, *comm);
    const auto first = make_saved(0);
    manager.save(first->state, 0, nlohmann::ordered_json::object());
    manager.finish();
    const std::optional<Checkpoint> restored = manager.restore();
    REQUIRE(restored.has_value());

    ReadTally tally;
    for (int seed = 1; seed <= kSaves; ++seed) {
        const auto saved = make_saved(seed);
        // Its thread commits seed - 1 (rank 0), then writes seed; seed - 2 is committed by now.
        manager.save(saved->state, seed, nlohmann::ordered_json{{"seed", seed}});
        if (seed > 2) read_once(open_checkpoint(checkpoint_dir(run, seed - 2)), seed - 2, tally);
        read_for(*restored, 0, kReadWindow, tally);
    }
    manager.finish();
    INFO("rank " << my_rank() << ": " << tally.wrong << " of " << tally.reads
                 << " reads wrong; first: " << tally.first_problem);
    CHECK(tally.wrong == 0);
    CHECK(tally.reads >= 4 * kSaves);

    MPI_Barrier(MPI_COMM_WORLD);  // every save committed on every rank
    const std::string last = checkpoint_dir(run, kSaves);
    CHECK(verify(last) == "");
    ReadTally final_read;
    read_once(open_checkpoint(last), kSaves, final_read);
    INFO(final_read.first_problem);
    CHECK(final_read.wrong == 0);
}
