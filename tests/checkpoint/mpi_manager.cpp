// CheckpointManager under mpiexec, for both layouts: save, commit, restore, read back every
// block, verification and schema, retention, a save that fails on one rank, async saves.
//
// Every tensor element is a function of (tensor, global index, seed), so any block read back can
// be checked without keeping the writer's buffers.
//
// Collective safety: every rank runs every assertion; a REQUIRE is used only where its outcome
// is the same on every rank (a rank leaving a test early would leave the others in a
// collective). Checks of checkpoints/ sit between two barriers, so no rank's next save changes
// the directory while another rank is still looking.
//
// Failures are injected deterministically on one rank with RLIMIT_FSIZE (SIGXFSZ ignored): its
// writes past the limit fail with EFBIG, as on a full disk or an exceeded quota.
#include <catch2/catch.hpp>
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <hdf5.h>
#include <nlohmann/json.hpp>

#include "checkpoint/format/catalog.hpp"
#include "checkpoint/format/layout.hpp"
#include "checkpoint/format/manifest.hpp"
#include "checkpoint/format/validate.hpp"
#include "checkpoint/manager.hpp"
#include "checkpoint/read/reader.hpp"
#include "checkpoint/read/schema_check.hpp"
#include "checkpoint/read/verify.hpp"
#include "comm/mpi_communicator.hpp"
#include "comm/strings.hpp"
#include "trainrt/checkpoint.hpp"
#include "trainrt/context.hpp"
#include "trainrt/error.hpp"
#include "mpi_support.hpp"

using namespace trainrt;
using namespace trainrt::checkpoint;
using Catch::Matchers::Contains;
using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

using testing::barrier;
int my_rank() { return testing::world_rank(); }
int n_ranks() { return testing::world_size(); }

// A fresh run directory seen by every rank (testing::SharedDir).
class RunDir : public testing::SharedDir {
public:
    RunDir() : SharedDir("trainrt-ckpt") {}
    std::string checkpoints() const { return checkpoints_dir(path()); }
    std::string checkpoint(std::int64_t iteration) const {
        return checkpoints() + "/" + checkpoint_name(iteration);
    }
};

Context context_for(const std::string& run_dir) { return testing::world_context(run_dir); }

CheckpointOptions options_for(const std::string& layout, RetentionPolicy retention = {},
                              bool async = false) {
    CheckpointOptions options;
    options.layout.layout = layout;
    options.retention = retention;
    options.async = async;
    return options;
}

std::unique_ptr<Communicator> world() { return comm::make_mpi_communicator(MPI_COMM_WORLD); }

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Names in checkpoints/ that a finished save must not leave behind.
// Names in checkpoints/ that are not committed checkpoints. Retired checkpoints (".deleting_")
// are removed in the background until the manager is destroyed: `retired_too = false` skips them.
std::vector<std::string> leftovers(const RunDir& run, bool retired_too = true) {
    std::vector<std::string> found;
    if (!fs::is_directory(run.checkpoints())) return found;
    for (const auto& entry : fs::directory_iterator(run.checkpoints())) {
        const std::string name = entry.path().filename().string();
        if (name.rfind(".pending_", 0) == 0 || (retired_too && name.rfind(".deleting_", 0) == 0) ||
            name.rfind("latest.tmp", 0) == 0)
            found.push_back(name);
    }
    return found;
}

std::vector<std::string> names_of(std::initializer_list<std::int64_t> iterations) {
    std::vector<std::string> names;
    for (std::int64_t i : iterations) names.push_back(checkpoint_name(i));
    return names;
}

// ------------------------------------------------------------------ tensors as functions

using testing::expected_block;
using testing::value_at;
using testing::with_type;
std::uint64_t count_of(const Shape& shape) { return element_count(shape); }

// One tensor of the test state: replicated, or split along `split_dim` with sizes[r] on rank r.
struct Spec {
    std::string name;
    TensorType type;
    bool replicated;
    Shape global;
    std::size_t split_dim;
    std::vector<std::uint64_t> sizes;
    int id;
};

struct Block {
    Shape offset;
    Shape shape;
};

// Extent split evenly, the first extent % n ranks one more.
std::vector<std::uint64_t> even_sizes(std::uint64_t extent, int n) {
    std::vector<std::uint64_t> sizes;
    for (int r = 0; r < n; ++r) sizes.push_back(extent / n + (static_cast<std::uint64_t>(r) < extent % n ? 1 : 0));
    return sizes;
}

// Rank r holds r + 1: every rank a different amount.
std::vector<std::uint64_t> staircase(int n) {
    std::vector<std::uint64_t> sizes;
    for (int r = 0; r < n; ++r) sizes.push_back(static_cast<std::uint64_t>(r) + 1);
    return sizes;
}

std::uint64_t sum(const std::vector<std::uint64_t>& sizes) {
    std::uint64_t total = 0;
    for (auto s : sizes) total += s;
    return total;
}

std::vector<Spec> test_specs(int n) {
    const std::uint64_t N = static_cast<std::uint64_t>(n);
    return {
        {"bias", TensorType::f32, true, {5}, 0, {}, 1},
        {"encoder.embed.weight", TensorType::f32, true, {3, 4}, 0, {}, 2},  // PyTorch-style name
        {"weights", TensorType::f64, false, {sum(staircase(n)), 6}, 0, staircase(n), 4},
        {"counts", TensorType::i32, false, {2 * N + 1}, 0, even_sizes(2 * N + 1, n), 5},
        {"ids", TensorType::i64, false, {3 * N + 2}, 0, even_sizes(3 * N + 2, n), 6},
        {"mask", TensorType::u8, false, {2 * N + 1, 3}, 0, even_sizes(2 * N + 1, n), 7},
        {"volume", TensorType::f32, false, {2 * N + 1, 3, 4}, 0, even_sizes(2 * N + 1, n), 8},
        {"columns", TensorType::f64, false, {2, 3 * N + 1, 2}, 1, even_sizes(3 * N + 1, n), 9},
        {"sparse", TensorType::i32, false, {N - 1, 2}, 0, even_sizes(N - 1, n), 10},  // last rank: empty
    };
}

// A large sharded tensor: 64 Ki doubles (512 KiB) per rank.
Spec big_spec(int n) {
    const std::uint64_t rows = 1024;
    return {"big", TensorType::f64, false, {rows * static_cast<std::uint64_t>(n), 64}, 0,
            std::vector<std::uint64_t>(static_cast<std::size_t>(n), rows), 11};
}

// A replicated scalar (shape {}), e.g. the step counter.
Spec scalar_spec() { return {"step", TensorType::i64, true, {}, 0, {}, 3}; }

Block block_of(const Spec& spec, int rank) {
    Block block{Shape(spec.global.size(), 0), spec.global};
    if (spec.replicated) return block;
    std::uint64_t start = 0;
    for (int r = 0; r < rank; ++r) start += spec.sizes[r];
    block.offset[spec.split_dim] = start;
    block.shape[spec.split_dim] = spec.sizes[rank];
    return block;
}

// An odd block: one in from every edge wherever the extent allows, so it crosses stored blocks.
Block odd_block(const Shape& global) {
    Block block{Shape(global.size(), 0), global};
    for (std::size_t d = 0; d < global.size(); ++d)
        if (global[d] > 2) {
            block.offset[d] = 1;
            block.shape[d] = global[d] - 2;
        }
    return block;
}

// This rank's buffers and the state pointing at them (so: neither copied nor moved).
struct Saved {
    std::vector<Spec> specs;
    int seed = 0;
    std::vector<std::vector<std::byte>> buffers;
    CheckpointState state;
    std::uint64_t sharded_bytes_here = 0;  // this rank's blocks of the sharded tensors
    std::uint64_t replicated_bytes = 0;    // the replicated tensors, once
    // What SaveReport::bytes should sum to over the ranks: everything, written once.
    std::uint64_t bytes_in_all() const {
        std::uint64_t sharded = 0;
        MPI_Allreduce(&sharded_bytes_here, &sharded, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        return sharded + replicated_bytes;
    }
};

std::unique_ptr<Saved> make_saved(int seed, std::vector<Spec> specs) {
    auto saved = std::make_unique<Saved>();
    saved->specs = std::move(specs);
    saved->seed = seed;
    saved->buffers.reserve(saved->specs.size());
    const int rank = my_rank();
    for (const Spec& spec : saved->specs) {
        const Block block = block_of(spec, rank);
        std::vector<std::byte>& buffer = saved->buffers.emplace_back();
        with_type(spec.type, [&](auto tag) {
            using T = decltype(tag);
            const std::vector<T> values = expected_block<T>(spec.id, seed, spec.global, block.offset, block.shape);
            buffer.resize(std::max<std::size_t>(values.size() * sizeof(T), 1));
            if (!values.empty()) std::memcpy(buffer.data(), values.data(), values.size() * sizeof(T));
            const std::span<const T> data(reinterpret_cast<const T*>(buffer.data()), values.size());
            if (spec.replicated) saved->state.replicated<T>(spec.name, data, spec.global);
            else saved->state.sharded<T>(spec.name, data, spec.global, block.offset, block.shape);
            (spec.replicated ? saved->replicated_bytes : saved->sharded_bytes_here) += values.size() * sizeof(T);
        });
    }
    saved->state.attribute("epoch", std::int64_t{seed})
        .attribute("big_int", std::int64_t{-(std::int64_t{1} << 50) - seed})
        .attribute("lr", 1.0 / (seed + 3))
        .attribute("whole", 2.0)
        .attribute("note", "saved with seed " + std::to_string(seed) + " \"quoted\" ✓");
    return saved;
}

std::unique_ptr<Saved> make_saved(int seed) { return make_saved(seed, test_specs(n_ranks())); }

// Overwrites the caller's buffers, as a training step would right after save() returns.
void scribble(Saved& saved) {
    for (auto& buffer : saved.buffers) std::memset(buffer.data(), 0xA5, buffer.size());
}

Json metrics_for(int seed) {
    return Json{{"loss", 1.0 / (seed + 1)}, {"acc", 0.01 * seed}, {"epoch", seed},
                {"phase", "train"}, {"nested", {{"lr", 0.125}, {"ranks", n_ranks()}}}};
}

// Checkpoints 1 and 2 saved by `manager`, of states made with seeds 1 and 2 (returned), then a barrier.
std::array<std::unique_ptr<Saved>, 2> save_first_two(CheckpointManager& manager) {
    std::array<std::unique_ptr<Saved>, 2> saved{make_saved(1), make_saved(2)};
    for (int i : {1, 2}) manager.save(saved[i - 1]->state, i, metrics_for(i));
    barrier();
    return saved;
}

// Every tensor of `saved` (written by `writers` ranks): this rank's block, an odd block and the
// whole tensor; types, shapes, attributes.
void check_contents(const Checkpoint& cp, const Saved& saved) {
    const int rank = my_rank();
    for (const Spec& spec : saved.specs) {
        // CHECKs only: a REQUIRE failing on one rank would leave the others in a collective.
        INFO("tensor " << spec.name << " in " << cp.path());
        CHECK(cp.has_tensor(spec.name));
        if (!cp.has_tensor(spec.name)) continue;
        CHECK(cp.tensor_type(spec.name) == spec.type);
        CHECK(cp.global_shape(spec.name) == spec.global);
        with_type(spec.type, [&](auto tag) {
            using T = decltype(tag);
            try {
                for (const Block& block : {block_of(spec, rank), odd_block(spec.global)}) {
                    std::vector<T> got(count_of(block.shape));
                    cp.read(spec.name, spec.type, block.offset, block.shape, got.data());
                    const bool equal =
                        got == expected_block<T>(spec.id, saved.seed, spec.global, block.offset, block.shape);
                    if (!equal)
                        UNSCOPED_INFO("block at offset " << Json(block.offset).dump() << " shape "
                                                         << Json(block.shape).dump() << " differs");
                    CHECK(equal);
                }
                CHECK(cp.read_all<T>(spec.name) ==
                      expected_block<T>(spec.id, saved.seed, spec.global, Shape(spec.global.size(), 0),
                                        spec.global));
            } catch (const std::exception& e) {
                FAIL_CHECK("reading " << spec.name << " failed: " << e.what());
            }
        });
    }
    CHECK(cp.attribute_int("epoch") == saved.seed);
    CHECK(cp.attribute_int("big_int") == -(std::int64_t{1} << 50) - saved.seed);
    CHECK(cp.attribute_double("lr") == 1.0 / (saved.seed + 3));
    CHECK(std::holds_alternative<double>(cp.attribute("whole")));
    CHECK(cp.attribute_double("whole") == 2.0);
    CHECK(cp.attribute_double("epoch") == saved.seed);  // an integer reads as a double too
    CHECK(cp.attribute("note") ==
          AttributeValue{"saved with seed " + std::to_string(saved.seed) + " \"quoted\" ✓"});
    CHECK(cp.has_attribute("note"));
    CHECK_FALSE(cp.has_attribute("nope"));
}

// The first tensor of `saved` that cannot be read whole from `dir` or differs, or "".
std::string read_problem(const std::string& dir, const Saved& saved) {
    try {
        const Checkpoint cp = open_checkpoint(dir);
        for (const Spec& spec : saved.specs) {
            std::string problem;
            with_type(spec.type, [&](auto tag) {
                using T = decltype(tag);
                if (cp.read_all<T>(spec.name) !=
                    expected_block<T>(spec.id, saved.seed, spec.global, Shape(spec.global.size(), 0), spec.global))
                    problem = "tensor " + spec.name + " differs";
            });
            if (!problem.empty()) return problem;
        }
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

// The committed directory: manifest fields, files, verification and schema.
void check_committed(const Checkpoint& cp, const RunDir& run, const std::string& layout,
                     std::int64_t iteration, const Saved& saved, const Json& metrics) {
    INFO("checkpoint " << cp.path());
    CHECK(cp.path() == run.checkpoint(iteration));
    CHECK(cp.name() == checkpoint_name(iteration));
    CHECK(cp.iteration() == iteration);
    CHECK(cp.world_size() == n_ranks());
    const Manifest manifest = read_manifest(cp.path());
    CHECK(manifest.name == checkpoint_name(iteration));
    CHECK(manifest.iteration == iteration);
    CHECK(manifest.world_size == n_ranks());
    CHECK(manifest.layout == layout);
    CHECK(manifest.metrics == metrics);
    CHECK(manifest.tensors.size() == saved.specs.size());
    if (layout == "shared") {
        REQUIRE(manifest.files.size() == 1);
        CHECK(manifest.files[0].name == "data.h5");
    } else {
        CHECK(manifest.files.size() == static_cast<std::size_t>(n_ranks()));
    }
    CHECK(verify(cp.path()) == "");
    const std::vector<std::string> problems = schema_problems(cp.path(), manifest);
    for (const std::string& problem : problems) UNSCOPED_INFO(problem);
    CHECK(problems.empty());
}

// Sets RLIMIT_FSIZE on this rank while alive (SIGXFSZ ignored): its writes past `bytes` fail
// with EFBIG. A deterministic I/O failure on one rank in the middle of a save.
class FileSizeLimit {
public:
    FileSizeLimit(bool active, rlim_t bytes) : active_(active) {
        if (!active_) return;
        previous_handler_ = ::signal(SIGXFSZ, SIG_IGN);
        ::getrlimit(RLIMIT_FSIZE, &previous_);
        rlimit limit = previous_;
        limit.rlim_cur = bytes;
        REQUIRE(::setrlimit(RLIMIT_FSIZE, &limit) == 0);
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

// The rank whose writes fail: one that writes data in the layout (the shared layout writes
// through MPI-IO collective buffering, whose single aggregator on one node is rank 0).
int failing_rank(const std::string& layout) { return layout == "shared" ? 0 : n_ranks() - 1; }

}  // namespace

// ------------------------------------------------------------------------------ save, restore

TEST_CASE("checkpoint manager: a saved state restores exactly", "[checkpoint]") {
    const std::string layout = GENERATE(as<std::string>{}, "file_per_rank", "shared");
    INFO("layout " << layout << ", " << n_ranks() << " ranks");
    RunDir run;
    auto comm = world();
    const Context context = context_for(run.path());
    CheckpointManager manager(options_for(layout), context, *comm);
    CHECK_FALSE(manager.restore().has_value());  // a fresh run directory

    const auto saved = make_saved(7);
    const Json metrics = metrics_for(7);
    const SaveReport report = manager.save(saved->state, 7, metrics);
    CHECK(report.name == "checkpoint_000007");
    std::uint64_t reported = 0;
    MPI_Allreduce(&report.bytes, &reported, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    CHECK(reported == saved->bytes_in_all());
    barrier();
    CHECK(leftovers(run) == std::vector<std::string>{});
    CHECK(committed_names(run.path()) == names_of({7}));
    CHECK(read_text(run.checkpoints() + "/latest") == "checkpoint_000007\n");
    barrier();  // every rank has looked before any rank changes checkpoints/ again

    const std::optional<Checkpoint> cp = manager.restore();
    REQUIRE(cp.has_value());
    check_committed(*cp, run, layout, 7, *saved, metrics);
    check_contents(*cp, *saved);

    SECTION("a restarted job (a new manager) restores the same checkpoint") {
        CheckpointManager restarted(options_for(layout), context, *comm);
        const std::optional<Checkpoint> again = restarted.restore();
        REQUIRE(again.has_value());
        CHECK(again->path() == cp->path());
        check_contents(*again, *saved);
    }
    SECTION("open_checkpoint reads what restore returned") {
        check_contents(open_checkpoint(run.checkpoint(7)), *saved);
    }
    SECTION("reads that do not fit the tensor are CheckpointErrors naming it") {
        std::vector<double> out(64);
        CHECK_THROWS_AS(cp->read("weights", TensorType::f32, {0, 0}, {1, 1}, out.data()), CheckpointError);
        CHECK_THROWS_WITH(cp->read("weights", TensorType::f32, {0, 0}, {1, 1}, out.data()),
                          Contains("weights"));
        const std::uint64_t rows = cp->global_shape("weights")[0];
        CHECK_THROWS_WITH(cp->read("weights", TensorType::f64, {rows - 1, 0}, {2, 6}, out.data()),
                          Contains("weights") && Contains("outside"));
        CHECK_THROWS_AS(cp->read("weights", TensorType::f64, {0}, {1}, out.data()), CheckpointError);
        CHECK_THROWS_AS(cp->global_shape("nope"), CheckpointError);
        CHECK_THROWS_AS(cp->read("nope", TensorType::f64, {0}, {1}, out.data()), CheckpointError);
        CHECK_FALSE(cp->has_tensor("nope"));
        CHECK_THROWS_AS(cp->attribute("nope"), CheckpointError);
        CHECK_THROWS_AS(cp->attribute_int("note"), CheckpointError);
        CHECK_THROWS_AS(cp->attribute_double("note"), CheckpointError);
        CHECK_THROWS_AS(cp->attribute_int("lr"), CheckpointError);
    }
    SECTION("a second save becomes the latest; resume_from picks an older one") {
        const auto second = make_saved(8);
        manager.save(second->state, 8, metrics_for(8));
        const std::optional<Checkpoint> latest = manager.restore();
        REQUIRE(latest.has_value());
        CHECK(latest->iteration() == 8);
        check_contents(*latest, *second);
        barrier();
        CHECK(committed_names(run.path()) == names_of({7, 8}));

        CheckpointOptions pinned = options_for(layout);
        pinned.resume_from = run.checkpoint(7);
        CheckpointManager resumed(pinned, context, *comm);
        const std::optional<Checkpoint> older = resumed.restore();
        REQUIRE(older.has_value());
        CHECK(older->iteration() == 7);
        check_contents(*older, *saved);
    }
}

// 1.5 MiB of doubles per rank: a shared data.h5 larger than 1 MiB per rank, so every rank hashes a range.
Spec ranged_spec(int n) {
    const std::uint64_t rows = 3072;
    return {"ranged", TensorType::f64, false, {rows * static_cast<std::uint64_t>(n), 64}, 0,
            std::vector<std::uint64_t>(static_cast<std::size_t>(n), rows), 13};
}

// Overwrites the stored bytes of the datasets in checkpoint file `name` (not its metadata) with 0x5A.
void overwrite_datasets(const std::string& checkpoint_dir, const std::string& name) {
    const Manifest manifest = read_manifest(checkpoint_dir);
    const std::string path = checkpoint_dir + "/" + name;
    std::vector<std::pair<haddr_t, hsize_t>> extents;
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    REQUIRE(file >= 0);
    for (const auto& [tensor_name, tensor] : manifest.tensors)
        for (const PartEntry& part : tensor.parts)
            if (part.file == name) {
                const hid_t dataset = H5Dopen2(file, part.dataset.c_str(), H5P_DEFAULT);
                extents.emplace_back(H5Dget_offset(dataset), H5Dget_storage_size(dataset));
                H5Dclose(dataset);
            }
    H5Fclose(file);
    std::fstream out(path, std::ios::in | std::ios::out | std::ios::binary);
    for (const auto& [offset, size] : extents)
        if (offset != HADDR_UNDEF && size > 0) {
            const std::string junk(size, '\x5A');
            out.seekp(static_cast<std::streamoff>(offset));
            out.write(junk.data(), static_cast<std::streamsize>(size));
        }
    REQUIRE(out.good());
}

// The rank's own file is kept in memory from its verification (file_per_rank): its blocks are
// copied from there. Changing the file on disk after restore() shows where they came from.
TEST_CASE("checkpoint manager: a restore reads the bytes it verified, not the file as it is later", "[checkpoint]") {
    RunDir run;
    auto comm = world();
    const Context context = context_for(run.path());
    const auto saved = make_saved(7);
    CheckpointManager(options_for("file_per_rank"), context, *comm).save(saved->state, 7, metrics_for(7));
    barrier();
    const std::optional<Checkpoint> cp = CheckpointManager(options_for("file_per_rank"), context, *comm).restore();
    REQUIRE(cp.has_value());
    overwrite_datasets(cp->path(), rank_file_name(my_rank()));
    barrier();
    const Checkpoint from_disk = open_checkpoint(cp->path());
    for (const Spec& spec : saved->specs) {
        const Block block = block_of(spec, my_rank());
        if (spec.replicated || count_of(block.shape) == 0) continue;
        INFO("tensor " << spec.name);
        with_type(spec.type, [&](auto tag) {
            using T = decltype(tag);
            const std::vector<T> expected = expected_block<T>(spec.id, saved->seed, spec.global, block.offset, block.shape);
            std::vector<T> verified(expected.size()), now(expected.size());
            cp->read(spec.name, spec.type, block.offset, block.shape, verified.data());
            from_disk.read(spec.name, spec.type, block.offset, block.shape, now.data());
            CHECK(verified == expected);
            CHECK(now != expected);  // the file did change on disk
        });
    }
    barrier();
}

// The shared layout restored by as many ranks as wrote it: each rank verifies the ranges of
// data.h5 it wrote and keeps them, so its blocks (1.5 MiB each: a range of their own) are copied
// from there. Changing the file after restore() shows where they came from.
TEST_CASE("checkpoint manager: a shared-layout restore reads each rank's blocks from the ranges it verified", "[checkpoint]") {
    RunDir run;
    auto comm = world();
    const Context context = context_for(run.path());
    const auto saved = make_saved(7, {ranged_spec(n_ranks())});
    CheckpointManager(options_for("shared"), context, *comm).save(saved->state, 7, metrics_for(7));
    barrier();
    const std::optional<Checkpoint> cp = CheckpointManager(options_for("shared"), context, *comm).restore();
    REQUIRE(cp.has_value());
    barrier();
    if (my_rank() == 0) overwrite_datasets(cp->path(), "data.h5");
    barrier();
    const Spec& spec = saved->specs.front();
    const Block block = block_of(spec, my_rank());
    const std::vector<double> expected = expected_block<double>(spec.id, saved->seed, spec.global, block.offset, block.shape);
    std::vector<double> verified(expected.size()), now(expected.size());
    cp->read(spec.name, spec.type, block.offset, block.shape, verified.data());
    open_checkpoint(cp->path()).read(spec.name, spec.type, block.offset, block.shape, now.data());
    CHECK((verified == expected));  // in parentheses: no printing of 196 608 values when it fails
    CHECK((now != expected));       // the file did change on disk
    barrier();
}

TEST_CASE("checkpoint manager: a manifest that disagrees with a rank's file is found by that rank's check of the bytes it verified",
          "[checkpoint]") {
    // The last rank's part of a tensor said one row shorter than it is stored: the checksums
    // pass, and only the schema check of the last rank's file (in memory at restore, that rank's
    // share) can find it. Restore skips the checkpoint on every rank; verify() from the disk
    // finds the same.
    RunDir run;
    auto comm = world();
    const Context context = context_for(run.path());
    CheckpointManager manager(options_for("file_per_rank"), context, *comm);
    const auto [first, second] = save_first_two(manager);
    const std::string last_file = rank_file_name(n_ranks() - 1);
    std::string tensor;
    if (my_rank() == 0) {
        Manifest manifest = read_manifest(run.checkpoint(2));
        for (auto& [name, entry] : manifest.tensors)
            for (PartEntry& part : entry.parts)
                if (tensor.empty() && part.file == last_file && !part.shape.empty() && part.shape[0] > 1) {
                    part.shape[0] -= 1;
                    tensor = name;
                }
        std::ofstream(run.checkpoint(2) + "/" + kManifestFile) << to_json(manifest).dump(2) << "\n";
    }
    REQUIRE(comm::broadcast_string(*comm, tensor, 0) != "");
    barrier();
    const std::optional<Checkpoint> restored = manager.restore();
    REQUIRE(restored.has_value());
    CHECK(restored->iteration() == 1);
    check_contents(*restored, *first);
    const std::string problem = verify(run.checkpoint(2));
    CHECK_THAT(problem, Contains("schema:") && Contains(last_file) && Contains("the manifest says"));
    barrier();
}

TEST_CASE("checkpoint manager: resume_from a checkpoint that does not verify fails on every rank",
          "[checkpoint]") {
    RunDir run;
    auto comm = world();
    const Context context = context_for(run.path());
    {
        CheckpointManager manager(options_for("file_per_rank"), context, *comm);
        const auto saved = make_saved(1);
        manager.save(saved->state, 1, metrics_for(1));
    }
    barrier();
    if (my_rank() == 0) {
        std::ofstream(run.checkpoint(1) + "/rank_00000.h5", std::ios::app) << "x";
    }
    barrier();
    CheckpointOptions pinned = options_for("file_per_rank");
    pinned.resume_from = run.checkpoint(1);
    CheckpointManager manager(pinned, context, *comm);
    CHECK_THROWS_AS(manager.restore(), CheckpointError);
}

// Flips some bits of the byte at `at` in the file at `path`, its size unchanged.
void flip_byte(const std::string& path, std::streamoff at) {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(at);
    char byte = 0;
    file.get(byte);
    file.seekp(at);
    file.put(static_cast<char>(byte ^ 0x5a));
}

TEST_CASE("checkpoint manager: a corrupted newest checkpoint is skipped and can be saved again",
          "[checkpoint]") {
    // Restore falls back to the checkpoint before a corrupted one; the run then continues from
    // that iteration, so its next report saves the corrupted checkpoint's iteration again. That
    // save must commit (replacing the corrupted directory), or the run can never save again.
    const std::string layout = GENERATE(as<std::string>{}, "file_per_rank", "shared");
    INFO("layout " << layout);
    RunDir run;
    auto comm = world();
    const Context context = context_for(run.path());
    CheckpointManager manager(options_for(layout), context, *comm);
    const auto [first, second] = save_first_two(manager);
    // Flip the last byte of the manifest's last data file: under file_per_rank the last rank's,
    // which the last rank alone checksums at restore (the ranks verify a share each).
    if (my_rank() == 0) {
        const Manifest manifest = read_manifest(run.checkpoint(2));
        const std::string path = run.checkpoint(2) + "/" + manifest.files.back().name;
        flip_byte(path, static_cast<std::streamoff>(std::filesystem::file_size(path)) - 1);
    }
    barrier();
    const std::optional<Checkpoint> restored = manager.restore();
    REQUIRE(restored.has_value());
    CHECK(restored->iteration() == 1);
    check_contents(*restored, *first);

    const auto again = make_saved(22);
    std::string error;
    try {
        manager.save(again->state, 2, metrics_for(22));
    } catch (const CheckpointError& e) {
        error = e.what();
    }
    CHECK(error == "");
    const std::optional<Checkpoint> latest = manager.restore();
    REQUIRE(latest.has_value());
    CHECK(latest->iteration() == 2);
    if (latest->iteration() == 2) check_contents(*latest, *again);
    barrier();
    CHECK(leftovers(run) == std::vector<std::string>{});
}

TEST_CASE("checkpoint manager: a shared file is checksummed in one range per writer, and a flipped byte in any range is found",
          "[checkpoint]") {
    RunDir run;
    auto comm = world();
    const Context context = context_for(run.path());
    CheckpointManager manager(options_for("shared"), context, *comm);
    const auto first = make_saved(1, {ranged_spec(n_ranks())}), second = make_saved(2, {ranged_spec(n_ranks())});
    manager.save(first->state, 1, metrics_for(1));
    manager.save(second->state, 2, metrics_for(2));
    barrier();
    const Manifest manifest = read_manifest(run.checkpoint(2));
    REQUIRE(manifest.files.size() == 1);
    const FileEntry& data = manifest.files[0];
    CHECK(data.xxh3.empty());
    // Each rank's 1.5 MiB block is its range (HDF5's metadata with the ranges around it).
    std::string listed;
    for (const ChecksumRange& range : data.ranges) listed += fmt::format("[{}, +{}) rank {}; ", range.offset, range.length, range.rank);
    INFO(listed);
    REQUIRE(data.ranges.size() == static_cast<std::size_t>(n_ranks()));
    for (int r = 0; r < n_ranks(); ++r) CHECK(data.ranges[static_cast<std::size_t>(r)].rank == r);
    CHECK(data.ranges.size() >= 2);
    for (const ChecksumRange& range : data.ranges) CHECK(range.xxh3 == describe_range(run.checkpoint(2), data.name, range));
    barrier();
    // The middle of the last range: verified at restore by the rank that wrote it, not rank 0.
    const ChecksumRange& last = data.ranges.back();
    if (my_rank() == 0) {
        flip_byte(run.checkpoint(2) + "/" + data.name, static_cast<std::streamoff>(last.offset + last.length / 2));
    }
    barrier();
    const std::optional<Checkpoint> restored = manager.restore();
    REQUIRE(restored.has_value());
    CHECK(restored->iteration() == 1);
    check_contents(*restored, *first);
    CHECK(verify(run.checkpoint(2)).find(fmt::format("of bytes {}-{}", last.offset, last.offset + last.length)) !=
          std::string::npos);
}

TEST_CASE("checkpoint manager: a non-finite attribute is refused or restored as saved",
          "[checkpoint]") {
    // JSON has no NaN: a manifest that silently turns it into null cannot be read back, and the
    // checkpoint that save() reported as committed would be skipped at restore.
    RunDir run;
    auto comm = world();
    const Context context = context_for(run.path());
    CheckpointManager manager(options_for("file_per_rank"), context, *comm);
    const auto first = make_saved(1);
    manager.save(first->state, 1, metrics_for(1));
    auto second = make_saved(2);
    bool refused = false;
    try {  // refused when set (CheckpointState) or when saved: either way never half-committed
        second->state.attribute("best_loss", std::numeric_limits<double>::quiet_NaN());
        manager.save(second->state, 2, metrics_for(2));
    } catch (const CheckpointError&) {
        refused = true;
    }
    const std::optional<Checkpoint> cp = manager.restore();
    REQUIRE(cp.has_value());
    if (refused) {
        CHECK(cp->iteration() == 1);
    } else {
        CHECK(cp->iteration() == 2);
        if (cp->iteration() == 2) CHECK(std::isnan(cp->attribute_double("best_loss")));
    }
}

// ------------------------------------------------------------------------------ retention

TEST_CASE("checkpoint manager: retention keeps the best num_to_keep and the newest",
          "[checkpoint]") {
    struct Case {
        std::string attribute;
        bool max;
        std::vector<std::vector<std::string>> after;  // committed names after saves 1..4
    };
    // acc of saves 1..4: 0.5, 0.9, 0.7, 0.3
    const Case c = GENERATE(
        Case{"acc", true, {names_of({1}), names_of({1, 2}), names_of({2, 3}), names_of({2, 3, 4})}},
        Case{"acc", false, {names_of({1}), names_of({1, 2}), names_of({1, 3}), names_of({1, 4})}},
        Case{"", true, {names_of({1}), names_of({1, 2}), names_of({2, 3}), names_of({3, 4})}});
    const std::string layout = GENERATE(as<std::string>{}, "file_per_rank", "shared");
    INFO("score '" << c.attribute << "' " << (c.max ? "max" : "min") << ", layout " << layout);
    RunDir run;
    auto comm = world();
    const Context context = context_for(run.path());
    RetentionPolicy retention;
    retention.num_to_keep = 2;
    retention.score_attribute = c.attribute;
    retention.higher_is_better = c.max;
    std::vector<std::unique_ptr<Saved>> states;
    {
        CheckpointManager manager(options_for(layout, retention), context, *comm);
        const double acc[] = {0.5, 0.9, 0.7, 0.3};
        for (int i = 1; i <= 4; ++i) {
            INFO("after save " << i);
            states.push_back(make_saved(i));
            Json metrics = metrics_for(i);
            metrics["acc"] = acc[i - 1];
            manager.save(states.back()->state, i, metrics);
            barrier();
            CHECK(committed_names(run.path()) == c.after[i - 1]);
            CHECK(read_text(run.checkpoints() + "/latest") == checkpoint_name(i) + "\n");
            CHECK(leftovers(run, false) == std::vector<std::string>{});
            barrier();  // every rank has looked before any rank changes checkpoints/ again
        }
        const std::optional<Checkpoint> cp = manager.restore();
        REQUIRE(cp.has_value());
        CHECK(cp->iteration() == 4);  // the newest, even when its score is the worst
        check_contents(*cp, *states.back());
    }
    barrier();
    CHECK(leftovers(run) == std::vector<std::string>{});  // the retired ones' bytes are gone too
    for (const std::string& name : committed_names(run.path()))
        CHECK(verify(run.checkpoints() + "/" + name) == "");
}

// ------------------------------------------------------------------------------ failures

TEST_CASE("checkpoint manager: an I/O error on one rank fails the save on every rank",
          "[checkpoint]") {
    const std::string layout = GENERATE(as<std::string>{}, "file_per_rank", "shared");
    const int failing = failing_rank(layout);
    INFO("layout " << layout << ", writes fail on rank " << failing);
    RunDir run;
    auto comm = world();
    const Context context = context_for(run.path());
    CheckpointManager manager(options_for(layout), context, *comm);
    const auto first = make_saved(1);
    manager.save(first->state, 1, metrics_for(1));

    std::vector<Spec> specs = test_specs(n_ranks());
    specs.push_back(big_spec(n_ranks()));
    const auto doomed = make_saved(2, specs);
    const ssize_t open_files_before = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_FILE);
    bool threw = false;
    {
        FileSizeLimit limit(my_rank() == failing, 64 * 1024);
        try {
            manager.save(doomed->state, 2, metrics_for(2));
        } catch (const CheckpointError& e) {
            threw = true;
            CHECK_THAT(std::string(e.what()), Contains("checkpoint_000002"));
        } catch (const std::exception& e) {
            FAIL_CHECK("not a CheckpointError: " << e.what());
        }
    }
    CHECK(threw);
    // file_per_rank builds its file in memory and writes it with POSIX calls: nothing is left
    // open. The shared layout deliberately leaves a failed parallel file open for HDF5 to close at
    // exit (closing it after a failed flush crashes HDF5 1.10 at shutdown, HDFFV-11052).
    if (layout == "file_per_rank") CHECK(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_FILE) == open_files_before);
    barrier();
    CHECK(leftovers(run) == std::vector<std::string>{});
    CHECK(committed_names(run.path()) == names_of({1}));
    CHECK(read_text(run.checkpoints() + "/latest") == "checkpoint_000001\n");
    const Selection selection = select_latest_valid(run.path());
    CHECK(selection.path == std::optional<std::string>(run.checkpoint(1)));
    barrier();  // every rank has looked before any rank changes checkpoints/ again
    const std::optional<Checkpoint> cp = manager.restore();
    REQUIRE(cp.has_value());
    CHECK(cp->iteration() == 1);
    check_contents(*cp, *first);

    // The manager is usable afterwards: the same state saves once the disk is healthy again.
    manager.save(doomed->state, 2, metrics_for(2));
    const std::optional<Checkpoint> latest = manager.restore();
    REQUIRE(latest.has_value());
    CHECK(latest->iteration() == 2);
    check_contents(*latest, *doomed);
}

TEST_CASE("checkpoint manager: a save either fails on every rank or commits a readable checkpoint",
          "[checkpoint]") {
    // The file-size limit at every point of the failing rank's file: whatever write or close
    // hits it, the save must not commit a checkpoint that then fails to verify or to read.
    const std::string layout = GENERATE(as<std::string>{}, "file_per_rank", "shared");
    const int failing = failing_rank(layout);
    RunDir run;
    auto comm = world();
    const Context context = context_for(run.path());
    CheckpointManager manager(options_for(layout), context, *comm);
    const auto saved = make_saved(3);
    int iteration = 0;
    for (rlim_t limit : {rlim_t{0}, rlim_t{512}, rlim_t{1024}, rlim_t{2048}, rlim_t{3072},
                         rlim_t{4096}, rlim_t{6144}, rlim_t{8192}, rlim_t{12288}, rlim_t{16384}}) {
        ++iteration;
        INFO("layout " << layout << ", rank " << failing << " limited to " << limit << " bytes");
        bool committed = true;
        {
            FileSizeLimit guard(my_rank() == failing, limit);
            try {
                manager.save(saved->state, iteration, metrics_for(3));
            } catch (const CheckpointError&) {
                committed = false;
            }
        }
        barrier();
        CHECK(leftovers(run) == std::vector<std::string>{});
        barrier();  // every rank has looked before any rank changes checkpoints/ again
        if (!committed) continue;
        CHECK(verify(run.checkpoint(iteration)) == "");
        CHECK(read_problem(run.checkpoint(iteration), *saved) == "");
    }
}

TEST_CASE("checkpoint manager: ranks that describe different tensors fail the save on every rank",
          "[checkpoint]") {
    const std::string layout = GENERATE(as<std::string>{}, "file_per_rank", "shared");
    INFO("layout " << layout);
    RunDir run;
    auto comm = world();
    const Context context = context_for(run.path());
    CheckpointManager manager(options_for(layout), context, *comm);
    const auto first = make_saved(1);
    manager.save(first->state, 1, metrics_for(1));

    const int n = n_ranks();
    const bool last = my_rank() == n - 1;
    const std::uint64_t r = static_cast<std::uint64_t>(my_rank());
    const std::vector<float> two{1.0f, 2.0f};
    auto doomed = make_saved(2);
    const std::uint64_t rows = 2 * static_cast<std::uint64_t>(n);
    const int variant = GENERATE(range(0, 5));
    switch (variant) {
        case 0:
            if (last) doomed->state.replicated<float>("extra", two, {2});
            break;
        case 1:
            // Rows [2r, 2r + 2) of a 2n-row tensor, but the last rank says it has 2n + 2 rows.
            doomed->state.sharded<float>("extra", two, {rows + (last ? 2 : 0), 1}, {2 * r, 0}, {2, 1});
            break;
        case 2: {
            static const std::vector<std::int32_t> ints{1, 2};
            if (last) doomed->state.sharded<std::int32_t>("extra", ints, {rows}, {2 * r}, {2});
            else doomed->state.sharded<float>("extra", two, {rows}, {2 * r}, {2});
            break;
        }
        case 3:
            if (my_rank() == 0) doomed->state.replicated<float>("extra", two, {2});
            else doomed->state.sharded<float>("extra", two, {rows}, {2 * r}, {2});
            break;
        case 4:
            // Every rank holds rows [2r, 2r + 2) of a tensor with 2n + 1 rows: the last row is
            // nobody's, and would read back as whatever the reader's buffer held.
            doomed->state.sharded<float>("extra", two, {rows + 1}, {2 * r}, {2});
            break;
    }
    static const char* const kVariants[] = {"an extra tensor on the last rank",
                                            "a different global shape on the last rank",
                                            "a different type on the last rank",
                                            "replicated on rank 0, sharded elsewhere",
                                            "sharded blocks that leave a hole"};
    INFO(kVariants[variant]);
    CHECK_THROWS_AS(manager.save(doomed->state, 2, metrics_for(2)), CheckpointError);
    barrier();
    CHECK(leftovers(run) == std::vector<std::string>{});
    CHECK(committed_names(run.path()) == names_of({1}));
    barrier();  // every rank has looked before any rank changes checkpoints/ again
    const std::optional<Checkpoint> cp = manager.restore();
    REQUIRE(cp.has_value());
    CHECK(cp->iteration() == 1);
}

// ------------------------------------------------------------------------------ async

TEST_CASE("checkpoint manager: async saves commit what was passed whatever the caller does next",
          "[checkpoint]") {
    RunDir run;
    auto comm = world();
    const Context context = context_for(run.path());
    CheckpointManager manager(options_for("file_per_rank", {}, true), context, *comm);
    CHECK_FALSE(manager.restore().has_value());
    manager.finish();  // none in flight: a no-op

    const auto first = make_saved(11);
    const auto first_copy = make_saved(11);  // the values, for checking
    const SaveReport report = manager.save(first->state, 1, metrics_for(11));
    CHECK(report.name == "checkpoint_000001");
    scribble(*first);  // the next training step overwrites the buffers at once

    const auto second = make_saved(12);
    const auto second_copy = make_saved(12);
    // Agrees that every rank wrote the first; its thread publishes the first before writing.
    manager.save(second->state, 2, metrics_for(12));
    scribble(*second);

    manager.finish();
    manager.finish();  // again: nothing in flight
    barrier();
    CHECK(committed_names(run.path()) == names_of({1, 2}));
    CHECK(leftovers(run) == std::vector<std::string>{});
    CHECK(read_text(run.checkpoints() + "/latest") == "checkpoint_000002\n");
    barrier();  // every rank has looked before any rank changes checkpoints/ again
    for (std::int64_t iteration : {1, 2}) {
        const Saved& expected = iteration == 1 ? *first_copy : *second_copy;
        const Checkpoint cp = open_checkpoint(run.checkpoint(iteration));
        check_committed(cp, run, "file_per_rank", iteration, expected, metrics_for(expected.seed));
        check_contents(cp, expected);
    }
    const std::optional<Checkpoint> latest = manager.restore();
    REQUIRE(latest.has_value());
    CHECK(latest->iteration() == 2);
}

TEST_CASE("checkpoint manager: an async save that fails in the background fails finish() on every rank",
          "[checkpoint]") {
    RunDir run;
    auto comm = world();
    const Context context = context_for(run.path());
    CheckpointManager manager(options_for("file_per_rank", {}, true), context, *comm);
    const auto first = make_saved(1);
    manager.save(first->state, 1, metrics_for(1));
    manager.finish();

    std::vector<Spec> specs = test_specs(n_ranks());
    specs.push_back(big_spec(n_ranks()));
    const auto doomed = make_saved(2, specs);
    const ssize_t open_files_before = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_FILE);
    {
        FileSizeLimit limit(my_rank() == n_ranks() - 1, 64 * 1024);
        manager.save(doomed->state, 2, metrics_for(2));
        CHECK_THROWS_AS(manager.finish(), CheckpointError);
    }
    CHECK(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_FILE) == open_files_before);  // none left open
    barrier();
    CHECK(leftovers(run) == std::vector<std::string>{});
    CHECK(committed_names(run.path()) == names_of({1}));
    CHECK(read_text(run.checkpoints() + "/latest") == "checkpoint_000001\n");
    barrier();  // every rank has looked before any rank changes checkpoints/ again
    const std::optional<Checkpoint> cp = manager.restore();
    REQUIRE(cp.has_value());
    CHECK(cp->iteration() == 1);
    check_contents(*cp, *first);
}

// A large sharded tensor for background snapshots: 4096 x 64 doubles (2 MiB) per rank, over the
// 1 MiB under which report() copies a tensor itself.
Spec large_spec(int n) {
    const std::uint64_t rows = 4096;
    return {"large", TensorType::f64, false, {rows * static_cast<std::uint64_t>(n), 64}, 0,
            std::vector<std::uint64_t>(static_cast<std::size_t>(n), rows), 12};
}

// Lets the save's thread copy only once the training thread opened it.
struct Gate {
    std::mutex mutex;
    std::condition_variable opened;
    bool open = false;
    int waits = 0;
    void wait() {
        std::unique_lock<std::mutex> lock(mutex);
        ++waits;
        opened.wait(lock, [&] { return open; });
    }
    void release() {
        std::lock_guard<std::mutex> lock(mutex);
        open = true;
        opened.notify_all();
    }
};

// An async manager with background snapshots whose copies wait at `gate`, and the test tensors
// plus a large one.
struct BackgroundRun {
    RunDir run;
    std::unique_ptr<Communicator> comm = world();
    Context context = context_for(run.path());
    Gate gate;
    std::unique_ptr<CheckpointManager> manager;
    std::vector<Spec> specs = test_specs(n_ranks());
    BackgroundRun() {
        CheckpointOptions options = options_for("file_per_rank", {}, true);
        options.background_snapshot = true;
        options.before_background_copy = [this] { gate.wait(); };
        manager = std::make_unique<CheckpointManager>(options, context, *comm);
        specs.push_back(large_spec(n_ranks()));
    }
};

TEST_CASE("checkpoint manager: a background snapshot returns before the large copy and commits the state as reported",
          "[checkpoint]") {
    BackgroundRun b;
    const auto saved = make_saved(21, b.specs);
    const auto expected = make_saved(21, b.specs);
    b.manager->save(saved->state, 1, metrics_for(21));  // returns with the large copy held at the gate
    // The small tensors were copied by save() itself: the function may change them at once.
    for (std::size_t i = 0; i + 1 < saved->buffers.size(); ++i)
        std::memset(saved->buffers[i].data(), 0x5A, saved->buffers[i].size());
    b.gate.release();
    CHECK(b.manager->await_snapshot() >= 0.0);
    CHECK(b.manager->await_snapshot() == 0.0);  // taken: at once
    scribble(*saved);  // the step after await_snapshot() changes everything
    b.manager->finish();
    CHECK(b.gate.waits == 1);
    barrier();
    CHECK(committed_names(b.run.path()) == names_of({1}));
    barrier();
    const std::optional<Checkpoint> cp = b.manager->restore();
    REQUIRE(cp.has_value());
    check_contents(*cp, *expected);
}

TEST_CASE("checkpoint manager: a large tensor changed before await_snapshot() fails the save instead of committing it",
          "[checkpoint]") {
    BackgroundRun b;
    const auto first = make_saved(31, b.specs);
    b.manager->save(first->state, 1, metrics_for(31));
    b.gate.release();
    b.manager->await_snapshot();
    b.manager->finish();

    const auto second = make_saved(32, b.specs);
    b.gate.open = false;
    b.manager->save(second->state, 2, metrics_for(32));
    // The last rank's training thread goes on without await_snapshot(): its large tensor changes
    // before the copy (held at the gate) is taken.
    if (my_rank() == n_ranks() - 1) std::memset(second->buffers.back().data(), 0x11, 64);
    b.gate.release();
    try {
        b.manager->finish();
        FAIL("finish() committed a save whose state changed before its snapshot");
    } catch (const CheckpointError& error) {
        CHECK_THAT(error.what(), Contains("tensor 'large' changed after report() and before its background snapshot"));
        CHECK_THAT(error.what(), Contains("await_snapshot()"));
    }
    barrier();
    CHECK(committed_names(b.run.path()) == names_of({1}));
    CHECK(leftovers(b.run) == std::vector<std::string>{});
    barrier();
    const std::optional<Checkpoint> cp = b.manager->restore();
    REQUIRE(cp.has_value());
    CHECK(cp->iteration() == 1);
    check_contents(*cp, *first);
}

TEST_CASE("checkpoint manager: an async save never finished is not committed and is cleaned up",
          "[checkpoint]") {
    RunDir run;
    auto comm = world();
    const Context context = context_for(run.path());
    const auto first = make_saved(1), second = make_saved(2);
    {
        CheckpointManager manager(options_for("file_per_rank", {}, true), context, *comm);
        manager.save(first->state, 1, metrics_for(1));
        manager.finish();
        manager.save(second->state, 2, metrics_for(2));
    }  // destroyed with the second in flight (a crash before the commit)
    barrier();
    CHECK(committed_names(run.path()) == names_of({1}));
    CheckpointManager manager(options_for("file_per_rank", {}, true), context, *comm);
    const std::optional<Checkpoint> cp = manager.restore();
    REQUIRE(cp.has_value());
    CHECK(cp->iteration() == 1);
    check_contents(*cp, *first);
    barrier();
    CHECK(leftovers(run) == std::vector<std::string>{});
}

// ------------------------------------------------------------------------------ scalars

// One test case per layout (not a generator), so that each can be run alone.
void check_scalar_round_trip(const std::string& layout) {
    RunDir run;
    auto comm = world();
    const Context context = context_for(run.path());
    CheckpointManager manager(options_for(layout), context, *comm);
    std::vector<Spec> specs = test_specs(n_ranks());
    specs.push_back(scalar_spec());
    const auto saved = make_saved(5, specs);
    std::string error;
    try {
        manager.save(saved->state, 5, metrics_for(5));
    } catch (const CheckpointError& e) {
        error = e.what();
    }
    CHECK(error == "");
    const std::optional<Checkpoint> cp = manager.restore();
    REQUIRE(cp.has_value());
    CHECK(cp->global_shape("step") == Shape{});
    check_committed(*cp, run, layout, 5, *saved, metrics_for(5));
    check_contents(*cp, *saved);
}

TEST_CASE("checkpoint manager: a scalar tensor saves and restores (file_per_rank)", "[checkpoint]") {
    check_scalar_round_trip("file_per_rank");
}

TEST_CASE("checkpoint manager: a scalar tensor saves and restores (shared)", "[checkpoint]") {
    check_scalar_round_trip("shared");
}

// ------------------------------------------------------------------------- replicated state

namespace {

// A DDP model as the manager sees it: every tensor replicated. The first is over 1 MiB (split in
// row ranges over the ranks), the rest are small (rank 0's, whole).
std::vector<Spec> model_specs() {
    return {{"embed.weight", TensorType::f32, true, {600, 512}, 0, {}, 21},
            {"fc.weight", TensorType::f64, true, {40, 30}, 0, {}, 22},
            {"fc.bias", TensorType::f32, true, {30}, 0, {}, 23},
            {"step", TensorType::i64, true, {}, 0, {}, 24}};
}

std::uint64_t max_over_ranks(std::uint64_t value) {
    std::uint64_t max = 0;
    MPI_Allreduce(&value, &max, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    return max;
}

}  // namespace

TEST_CASE("checkpoint manager: replicated tensors are written once in all, a share by every rank",
          "[checkpoint]") {
    const std::string layout = GENERATE(as<std::string>{}, "file_per_rank", "shared");
    const bool spread = GENERATE(true, false);
    INFO("layout " << layout << ", spread_replicated " << spread << ", " << n_ranks() << " ranks");
    RunDir run;
    auto comm = world();
    CheckpointOptions options = options_for(layout);
    options.spread_replicated = spread;
    const Context context = context_for(run.path());  // the manager keeps a reference
    CheckpointManager manager(options, context, *comm);
    const auto saved = make_saved(5, model_specs());
    const SaveReport report = manager.save(saved->state, 5, metrics_for(5));
    std::uint64_t reported = 0;
    MPI_Allreduce(&report.bytes, &reported, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    CHECK(reported == saved->bytes_in_all());  // nothing written twice
    if (spread) {
        // The embedding's rows split evenly, the small tensors on rank 0: no rank near the whole.
        CHECK(max_over_ranks(report.bytes) <= saved->replicated_bytes / n_ranks() + 20000);
    } else {
        CHECK(report.bytes == (my_rank() == 0 ? saved->replicated_bytes : 0));
    }
    const Manifest manifest = read_manifest(run.checkpoint(5));
    const std::size_t embed_parts = manifest.tensors.at("embed.weight").parts.size();
    const bool spread_files = spread && layout == "file_per_rank";
    CHECK(embed_parts == (spread_files ? static_cast<std::size_t>(n_ranks()) : 1u));
    CHECK(manifest.files.size() == (spread_files ? static_cast<std::size_t>(n_ranks()) : 1u));
    CHECK(verify(run.checkpoint(5)) == "");
    CHECK(schema_problems(run.checkpoint(5), manifest).empty());
    barrier();
    const std::optional<Checkpoint> cp = manager.restore();
    REQUIRE(cp.has_value());
    check_contents(*cp, *saved);  // every rank reads every tensor back whole, from every share
}

TEST_CASE("checkpoint manager: a restore sends each rank's replicated parts to the others; no rank reads another's file for them",
          "[checkpoint]") {
    const bool exchange = GENERATE(true, false);
    INFO("replicated_reads = " << (exchange ? "exchange" : "files") << ", " << n_ranks() << " ranks");
    RunDir run;
    auto comm = world();
    CheckpointOptions options = options_for("file_per_rank");
    options.replicated_reads = exchange ? ReplicatedReads::exchange : ReplicatedReads::files;
    const Context context = context_for(run.path());
    CheckpointManager manager(options, context, *comm);
    const auto saved = make_saved(6, model_specs());
    manager.save(saved->state, 6, metrics_for(6));
    barrier();
    const std::optional<Checkpoint> cp = manager.restore();
    REQUIRE(cp.has_value());
    // Every other rank's file taken away after the restore: with the exchange, rank 0 still reads
    // the replicated tensors (spread over every rank's file) back whole, its own parts from the
    // bytes it verified and the others' from what they sent.
    barrier();
    const std::string own = cp->path() + "/" + rank_file_name(my_rank());
    const std::string hidden = run.path() + "/hidden_" + std::to_string(my_rank());
    if (my_rank() != 0) std::filesystem::rename(own, hidden);
    barrier();
    std::string error;
    if (my_rank() == 0) {
        try {
            for (const Spec& spec : model_specs()) {
                with_type(spec.type, [&](auto tag) {
                    using T = decltype(tag);
                    const std::vector<T> whole = cp->read_all<T>(spec.name);
                    CHECK(whole == expected_block<T>(spec.id, 6, spec.global, Shape(spec.global.size(), 0), spec.global));
                });
            }
        } catch (const Error& e) {
            error = e.what();
        }
    }
    if (exchange || my_rank() != 0) CHECK(error == "");
    else CHECK_THAT(error, Catch::Matchers::Contains("rank_00001.h5"));  // another rank's file, read through HDF5
    barrier();
    if (my_rank() != 0) std::filesystem::rename(hidden, own);
    barrier();
}
