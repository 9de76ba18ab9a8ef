// Resharding across rank counts: a checkpoint written by N ranks is read by M ranks.
//
//   mpiexec -n 4 reshard_check save DIR   writes DIR/file_per_rank and DIR/shared (run dirs), each
//                                         with two checkpoints of tensors split unevenly over
//                                         the ranks of this run
//   mpiexec -n M reshard_check load DIR   restores the newest checkpoint of each and checks, on
//                                         every rank, an even split over the M ranks of this
//                                         run, an odd block that crosses stored blocks, and the
//                                         whole tensor
//
// Every element is a function of its tensor and global index, so the loader needs nothing from
// the saver but the directory. Exit status 0 when every rank agrees that everything matched;
// 1 with one line per mismatch on stderr otherwise; 2 on a usage error or an exception.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

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

constexpr std::int64_t kFirstIteration = 6;
constexpr std::int64_t kNewestIteration = 7;
const char* const kLayouts[] = {"file_per_rank", "shared"};

struct Tensor {
    const char* name;
    TensorType type;
    bool replicated;
    Shape global;
    std::size_t split_dim;
    int id;
};

// Extents chosen so that neither 2, 4 nor 8 ranks divide them evenly, and some are smaller
// than 8 (some of 8 ranks get empty blocks).
const std::vector<Tensor>& tensors() {
    static const std::vector<Tensor> all = {
        {"w2d", TensorType::f64, false, {13, 5}, 0, 1},
        {"v3d_dim0", TensorType::f32, false, {11, 3, 4}, 0, 2},
        {"v3d_dim1", TensorType::i32, false, {2, 17, 3}, 1, 3},
        {"ids", TensorType::i64, false, {29}, 0, 4},
        {"bytes", TensorType::u8, false, {9, 7}, 0, 5},
        {"small", TensorType::f64, false, {3, 2}, 0, 6},
        {"bias", TensorType::f32, true, {6}, 0, 7},
        // Over 1 MiB: saved in row ranges, a share by each of the saving ranks (write_plan.hpp).
        {"embed", TensorType::f32, true, {520, 520}, 0, 8},
    };
    return all;
}

using testing::with_type;
std::uint64_t count_of(const Shape& shape) { return element_count(shape); }

template <class T>
std::vector<T> expected_block(const Tensor& t, std::int64_t seed, const Shape& offset, const Shape& shape) {
    return testing::expected_block<T>(t.id, seed, t.global, offset, shape);
}

struct Block {
    Shape offset;
    Shape shape;
};

Block along(const Tensor& t, std::uint64_t start, std::uint64_t count) {
    Block block{Shape(t.global.size(), 0), t.global};
    block.offset[t.split_dim] = start;
    block.shape[t.split_dim] = count;
    return block;
}

// Saving: rank r of n holds the part [b_r, b_{r+1}) with b_r = extent * r(r+1)/2 / (n(n+1)/2):
// blocks that grow with the rank (the first may be empty).
Block uneven_block(const Tensor& t, int rank, int n) {
    if (t.replicated) return {Shape(t.global.size(), 0), t.global};
    const std::uint64_t extent = t.global[t.split_dim];
    const auto bound = [&](std::uint64_t r) {
        return extent * (r * (r + 1) / 2) / (static_cast<std::uint64_t>(n) * (n + 1) / 2);
    };
    const std::uint64_t r = static_cast<std::uint64_t>(rank);
    return along(t, bound(r), bound(r + 1) - bound(r));
}

// Loading: an even split, the first extent % n ranks one more.
Block even_block(const Tensor& t, int rank, int n) {
    const std::uint64_t extent = t.global[t.split_dim], size = static_cast<std::uint64_t>(n);
    const std::uint64_t r = static_cast<std::uint64_t>(rank);
    const std::uint64_t base = extent / size, extra = extent % size;
    return along(t, r * base + std::min(r, extra), base + (r < extra ? 1 : 0));
}

// One in from each edge where the extent allows, shifted by the rank: it crosses stored blocks.
Block odd_block(const Tensor& t, int rank) {
    Block block{Shape(t.global.size(), 0), t.global};
    for (std::size_t d = 0; d < t.global.size(); ++d) {
        const std::uint64_t extent = t.global[d];
        if (extent < 3) continue;
        block.offset[d] = 1 + static_cast<std::uint64_t>(rank) % (extent - 2);
        block.shape[d] = extent - 1 - block.offset[d];
    }
    return block;
}

std::string text(const Shape& shape) { return nlohmann::json(shape).dump(); }

struct World {
    int rank = 0;
    int size = 1;
    std::unique_ptr<Communicator> comm;
};

Context context_for(const World& world, const std::string& run_dir) {
    Context context;
    context.world_rank = world.rank;
    context.world_size = world.size;
    context.run_dir = run_dir;
    return context;
}

CheckpointOptions options_for(const std::string& layout) {
    CheckpointOptions options;
    options.layout.layout = layout;
    return options;
}

void save(const World& world, const std::string& dir) {
    for (const char* layout : kLayouts) {
        const std::string run_dir = dir + "/" + layout;
        if (world.rank == 0) {
            fs::remove_all(run_dir);
            fs::create_directories(run_dir);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        const Context context = context_for(world, run_dir);
        CheckpointManager manager(options_for(layout), context, *world.comm);
        manager.restore();
        for (std::int64_t seed : {kFirstIteration, kNewestIteration}) {
            std::vector<std::vector<std::byte>> buffers;
            buffers.reserve(tensors().size());
            CheckpointState state;
            for (const Tensor& t : tensors()) {
                const Block block = uneven_block(t, world.rank, world.size);
                std::vector<std::byte>& buffer = buffers.emplace_back();
                with_type(t.type, [&](auto tag) {
                    using T = decltype(tag);
                    const std::vector<T> values = expected_block<T>(t, seed, block.offset, block.shape);
                    buffer.resize(std::max<std::size_t>(values.size() * sizeof(T), 1));
                    if (!values.empty()) std::memcpy(buffer.data(), values.data(), values.size() * sizeof(T));
                    const std::span<const T> data(reinterpret_cast<const T*>(buffer.data()), values.size());
                    if (t.replicated) state.replicated<T>(t.name, data, t.global);
                    else state.sharded<T>(t.name, data, t.global, block.offset, block.shape);
                });
            }
            state.attribute("saved_ranks", std::int64_t{world.size});
            state.attribute("seed", seed);
            manager.save(state, seed, nlohmann::ordered_json{{"seed", seed}});
        }
        if (world.rank == 0)
            std::cout << "reshard_check: saved " << run_dir << " on " << world.size << " ranks\n";
    }
}

// Mismatches on this rank, one line each.
std::vector<std::string> load(const World& world, const std::string& dir) {
    std::vector<std::string> problems;
    for (const char* layout : kLayouts) {
        const std::string run_dir = dir + "/" + layout;
        const std::string where = std::string(layout) + " on rank " + std::to_string(world.rank) +
                                  " of " + std::to_string(world.size);
        const Context context = context_for(world, run_dir);
        CheckpointManager manager(options_for(layout), context, *world.comm);
        const std::optional<Checkpoint> cp = manager.restore();
        if (!cp) {
            problems.push_back(where + ": no checkpoint in " + run_dir);
            continue;
        }
        if (cp->iteration() != kNewestIteration)
            problems.push_back(where + ": restored iteration " + std::to_string(cp->iteration()));
        if (cp->world_size() != cp->attribute_int("saved_ranks"))
            problems.push_back(where + ": world_size " + std::to_string(cp->world_size()) +
                               " differs from the saver's " +
                               std::to_string(cp->attribute_int("saved_ranks")));
        if (world.rank == 0) {
            const std::string problem = verify(cp->path());
            if (!problem.empty()) problems.push_back(where + ": verify: " + problem);
        }
        const std::int64_t seed = cp->attribute_int("seed");
        for (const Tensor& t : tensors()) {
            if (!cp->has_tensor(t.name) || cp->global_shape(t.name) != t.global ||
                cp->tensor_type(t.name) != t.type) {
                problems.push_back(where + ": tensor " + t.name + " missing or of another shape or type");
                continue;
            }
            with_type(t.type, [&](auto tag) {
                using T = decltype(tag);
                std::vector<Block> blocks = {odd_block(t, world.rank),
                                             {Shape(t.global.size(), 0), t.global}};
                if (!t.replicated) blocks.insert(blocks.begin(), even_block(t, world.rank, world.size));
                for (const Block& block : blocks) {
                    std::vector<T> got(count_of(block.shape));
                    cp->read(t.name, t.type, block.offset, block.shape, got.data());
                    const std::vector<T> expected = expected_block<T>(t, seed, block.offset, block.shape);
                    if (got != expected) {
                        std::size_t first = 0;
                        while (first < got.size() && got[first] == expected[first]) ++first;
                        std::ostringstream line;
                        line << where << ": tensor " << t.name << " block at " << text(block.offset)
                             << " of shape " << text(block.shape) << " differs first at element "
                             << first << ": read " << +got[first] << ", expected " << +expected[first];
                        problems.push_back(line.str());
                    }
                }
                if (cp->read_all<T>(t.name) != expected_block<T>(t, seed, Shape(t.global.size(), 0), t.global))
                    problems.push_back(where + ": tensor " + t.name + ": read_all differs");
            });
        }
    }
    return problems;
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    World world;
    MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world.size);
    const std::string mode = argc == 3 ? argv[1] : "";
    if (mode != "save" && mode != "load") {
        if (world.rank == 0) std::cerr << "usage: reshard_check save|load DIR\n";
        MPI_Finalize();
        return 2;
    }
    int failed = 0;
    try {
        world.comm = comm::make_mpi_communicator(MPI_COMM_WORLD);
        if (mode == "save") {
            save(world, argv[2]);
        } else {
            for (const std::string& problem : load(world, argv[2])) {
                std::cerr << "reshard_check: " << problem << "\n";
                failed = 1;
            }
        }
    } catch (const std::exception& e) {
        // A collective may be half done on the other ranks: end them all.
        std::cerr << "reshard_check: rank " << world.rank << ": " << e.what() << std::endl;
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    world.comm.reset();
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (world.rank == 0 && mode == "load")
        std::cout << "reshard_check: " << (any ? "MISMATCH" : "OK") << ": " << argv[2] << " read on "
                  << world.size << " ranks\n";
    MPI_Finalize();
    return any;
}
