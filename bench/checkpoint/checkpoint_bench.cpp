// Checkpoint bandwidth against a plain write()+fsync of the same bytes, in one run.
//
//   mpiexec -n N build/bench/checkpoint_bench [--dir DIR] [--mib 1024] [--reps 3] [--local-dir /dev/shm]
//
// The state is `--mib` MiB of float32 in total, split evenly over the ranks as 4 sharded tensors
// per rank (so every rank writes its share: the DDP-weights case where rank 0 writes everything is
// the 1-rank row). Per repetition, interleaved: (1) plain: each rank write()s its bytes to its own
// file and fsyncs it; (2) save with layout file_per_rank; (3) with layout shared; (4) async
// file_per_rank: the stall (time save() blocks training; the first save's, which also allocates
// the host copy, and a later one's) and the time until the commit. Reads:
// after dropping the files from the page cache (posix_fadvise DONTNEED), plain read() vs
// restore + Checkpoint::read of this rank's blocks. On 2 ranks or more, (5) the same bytes as
// replicated tensors (a DDP model: every rank holds all of it), saved with file_per_rank by rank 0
// alone (spread_replicated = false) and spread over the ranks (write_plan.hpp), alternated; the
// spread one restored and read back whole on every rank, its parts exchanged at restore
// (replicated_exchange.hpp) or every rank reading every file.
// (6) the node-local level (levels = local,pfs) in --local-dir against a plain write and read there.
// (7) a training step (about 0.5 s of compute that does not touch the state, then every element
// updated) with an async save reported before it, snapshot = copy and = background, against the
// same step alone: what the save costs training. (8) 2000 tensors of 16 KiB per rank restored and
// read back against a plain read of the same bytes, and an async save's stall when it settles
// the save before (many_round).
// A warm-up round (plain and file_per_rank) comes first and is not reported; then plain,
// file_per_rank, shared in even repetitions and the reverse order in odd ones. Times are the slowest rank's; bandwidth = total bytes /
// time. One JSON line per measurement with its repetition ("rep"): run.sh takes ratios pair by
// pair (same repetition) and their median.
#include <fcntl.h>
#include <sys/mman.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <xxhash.h>

#include "checkpoint/manager.hpp"
#include "comm/mpi_communicator.hpp"
#include "comm/mpi_world.hpp"
#include "launch/launcher.hpp"
#include "storage/posix.hpp"

namespace fs = std::filesystem;
using namespace trainrt;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kTensors = 4;

struct Options {
    std::string dir = "build/bench-checkpoint";
    std::uint64_t mib = 1024;
    int reps = 3;
    std::string local_dir = "/dev/shm";  // where the local level is measured
};

Options parse(int argc, char** argv) {
    Options options;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string key = argv[i];
        if (key == "--dir") options.dir = argv[i + 1];
        else if (key == "--mib") options.mib = std::stoull(argv[i + 1]);
        else if (key == "--reps") options.reps = std::stoi(argv[i + 1]);
        else if (key == "--local-dir") options.local_dir = argv[i + 1];
        else throw std::runtime_error("checkpoint_bench: unknown option " + key);
    }
    return options;
}

// The slowest rank's time of `body`, started together after a barrier.
double timed(Communicator& comm, const std::function<void()>& body) {
    comm.barrier();
    auto start = Clock::now();
    body();
    double mine = std::chrono::duration<double>(Clock::now() - start).count();
    return comm.allreduce_value(mine, ReduceOp::max);
}

// This VM's host takes guest pages back some time after they are freed (free page reporting):
// touching 1 GiB of fresh memory took 0.11 s right after 1 GiB had been freed and 0.6-2.5 s after
// a 3 s pause (writing 1 GiB to /dev/shm: 0.7-2.8 s). Every write or read timed here fills fresh
// pages (the page cache, a restore's image), so the side that ran after a pause carried seconds
// of the host's work. Each timed I/O (Bench::timed_io) starts right after `bytes` were touched and
// freed, both sides of every ratio alike; a machine without such a host behaves so throughout.
// In huge pages where the kernel has them (MADV_HUGEPAGE): a restore's image asks for 2 MiB pages
// (storage/page_buffer.hpp), and 4 KiB pages freed did not warm those. With 4 KiB pages warmed,
// faulting in one rank's 512 MiB image took 0.03-1.1 s and a 2-rank restore of 1 GiB 0.28-1.15 s
// (plain read 0.32-0.44 s); with 2 MiB pages warmed, 0.02-0.04 s and 0.27-0.31 s (plain read
// 0.28-0.30 s) (2026-11-26, 4 repetitions each; the fault time was nearly all the restore's time).
void warm_pages(std::size_t bytes) {
    void* pages = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED) throw std::runtime_error("mmap of the warm-up pages failed");
    ::madvise(pages, bytes, MADV_HUGEPAGE);  // no huge pages: the 4 KiB ones are still warmed
    std::memset(pages, 1, bytes);
    ::munmap(pages, bytes);
}

// kRestoredKept: a timed restore ends when the caller holds its blocks; the restored Checkpoint is
// destroyed after the clock stops, as a run keeps its restored checkpoint until it ends. Memory a
// restore held (its own file's image) is freed on a thread of its own once read (reader.hpp),
// beside the first training step; destroying the Checkpoint waits for that thread.

void drop_cache(const std::string& dir) {
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
        if (!entry.is_regular_file()) continue;
        int fd = ::open(entry.path().c_str(), O_RDONLY);
        if (fd < 0) continue;
        ::fdatasync(fd);
        ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        ::close(fd);
    }
}

void plain_write(const std::string& path, const std::vector<float>& data) {
    storage::Fd fd = storage::open_or_throw(path, O_WRONLY | O_CREAT | O_TRUNC);
    storage::write_all(fd.get(), data.data(), data.size() * sizeof(float), path);
    if (::fsync(fd.get()) != 0) throw std::runtime_error("fsync failed");
}

void plain_read(const std::string& path, std::vector<float>& data) {
    storage::Fd fd = storage::open_or_throw(path, O_RDONLY);
    char* out = reinterpret_cast<char*>(data.data());
    std::size_t left = data.size() * sizeof(float);
    while (left > 0) {
        ssize_t got = ::read(fd.get(), out, left);
        if (got <= 0) throw std::runtime_error("short read of " + path);
        out += got;
        left -= static_cast<std::size_t>(got);
    }
}

struct Bench {
    Options options;
    Communicator& comm;
    Context context;
    std::uint64_t rows_per_rank = 0;  // each tensor is [rows_total, 1024] float32
    std::vector<std::vector<float>> tensors;
    std::vector<std::vector<float>> whole;  // replicated: every rank holds all rows (2+ ranks only)
    int rep = -1;  // the repetition being measured; -1: the warm-up round, not reported

    std::uint64_t total_bytes() const {
        return rows_per_rank * 1024 * sizeof(float) * kTensors * static_cast<std::uint64_t>(context.world_size);
    }

    CheckpointState state() const {
        CheckpointState state;
        const std::uint64_t total_rows = rows_per_rank * context.world_size;
        for (int t = 0; t < kTensors; ++t)
            state.sharded<float>(fmt::format("t{}", t), tensors[t], {total_rows, 1024},
                                 {rows_per_rank * context.world_rank, 0}, {rows_per_rank, 1024});
        return state;
    }

    CheckpointState replicated_state() const {
        CheckpointState state;
        const std::uint64_t total_rows = rows_per_rank * context.world_size;
        for (int t = 0; t < kTensors; ++t) state.replicated<float>(fmt::format("t{}", t), whole[t], {total_rows, 1024});
        return state;
    }

    checkpoint::CheckpointOptions checkpoint_options(const std::string& layout, bool async) const {
        checkpoint::CheckpointOptions o;
        o.layout.layout = layout;
        o.async = async;
        return o;
    }

    // timed() of an I/O that fills fresh pages, after warm_pages of twice this rank's share.
    double timed_io(const std::function<void()>& body) {
        warm_pages(2 * total_bytes() / context.world_size);
        return timed(comm, body);
    }

    void emit(const std::string& what, const std::string& layout, double seconds) const {
        emit_bytes(what, layout, seconds, total_bytes());
    }

    void emit_bytes(const std::string& what, const std::string& layout, double seconds, std::uint64_t bytes) const {
        if (context.world_rank != 0 || rep < 0) return;
        std::cout << fmt::format(R"({{"bench":"checkpoint","ranks":{},"rep":{},"what":"{}","layout":"{}",)"
                                 R"("bytes":{},"seconds":{:.6f},"GBps":{:.4f}}})",
                                 context.world_size, rep, what, layout, bytes, seconds, bytes / seconds / 1e9)
                  << std::endl;
    }

    // The last repetition's files are removed and the removal committed before anything is timed:
    // on a file system mounted with `discard` (this machine's root) the freed blocks' discards
    // otherwise go out with the next fsync, and the timed write after them would pay for them.
    void fresh_run_dir(const std::string& name) {
        context.run_dir = options.dir + "/" + name;
        if (context.world_rank == 0) {
            fs::remove_all(context.run_dir);
            fs::create_directories(context.run_dir);
            ::sync();
        }
        comm.barrier();
    }

    void plain_round() {
        fresh_run_dir("plain");
        const std::string base = context.run_dir + fmt::format("/rank_{:05d}_t", context.world_rank);
        emit("write", "plain", timed_io([&] {
            for (int t = 0; t < kTensors; ++t) plain_write(base + std::to_string(t), tensors[t]);
        }));
        drop_cache(context.run_dir);
        std::vector<float> back(tensors[0].size());
        emit("read", "plain", timed_io([&] {
            for (int t = 0; t < kTensors; ++t) plain_read(base + std::to_string(t), back);
        }));
    }

    void checkpoint_round(const std::string& layout) {
        fresh_run_dir(layout);
        CheckpointState saved = state();
        {
            checkpoint::CheckpointManager manager(checkpoint_options(layout, false), context, comm);
            emit("write", layout, timed_io([&] { manager.save(saved, 1, nlohmann::ordered_json::object()); }));
        }
        drop_cache(context.run_dir);
        std::vector<float> back(tensors[0].size());
        double verify = 0;  // restore(): choosing the checkpoint, verifying every file's checksum
        std::optional<Checkpoint> restored;  // kept past the clock, as a run keeps it (kRestoredKept)
        emit("read", layout, timed_io([&] {
            checkpoint::CheckpointManager manager(checkpoint_options(layout, false), context, comm);
            const auto started = Clock::now();
            restored = manager.restore();
            verify = std::chrono::duration<double>(Clock::now() - started).count();
            for (int t = 0; t < kTensors; ++t)
                restored->read(fmt::format("t{}", t), TensorType::f32,
                               {rows_per_rank * context.world_rank, 0}, {rows_per_rank, 1024}, back.data());
        }));
        restored.reset();
        emit("restore", layout, comm.allreduce_value(verify, ReduceOp::max));
    }

    void async_round() {
        fresh_run_dir("async");
        CheckpointState saved = state();
        checkpoint::CheckpointManager manager(checkpoint_options("file_per_rank", true), context, comm);
        // The first save also allocates the host copy; later ones reuse it (training's case).
        double first = timed(comm, [&] { manager.save(saved, 1, nlohmann::ordered_json::object()); });
        timed(comm, [&] { manager.finish(); });
        double stall = timed(comm, [&] { manager.save(saved, 2, nlohmann::ordered_json::object()); });
        double rest = timed(comm, [&] { manager.finish(); });
        emit("async_first_stall", "file_per_rank", first);
        emit("async_stall", "file_per_rank", stall);
        emit("async_total", "file_per_rank", stall + rest);
    }

    // A training step's compute that does not touch the checkpointed state (forward and backward
    // read the weights, the optimizer changes them after): hashing a cache-sized buffer, `units`
    // times. Its result is kept so the loop is not optimized away.
    std::uint64_t compute(int units) const {
        static std::vector<char> scratch(256 << 10, 1);
        std::uint64_t h = 0;
        for (int i = 0; i < units; ++i) h ^= XXH3_64bits_withSeed(scratch.data(), scratch.size(), h);
        return h;
    }
    // The optimizer's step: every element of this rank's tensors changed.
    void update() {
        for (auto& tensor : tensors)
            for (float& x : tensor) x += 1.0f;
    }
    int step_units = 0;  // compute() units of about 0.5 s, the same on every rank

    void calibrate_step() {
        const auto start = Clock::now();
        volatile std::uint64_t sink = compute(200);
        (void)sink;
        const double per_unit = std::chrono::duration<double>(Clock::now() - start).count() / 200;
        int units = static_cast<int>(0.5 / per_unit);
        comm.broadcast(&units, sizeof(units), 0);
        step_units = units;
    }

    // What a save costs a training step (report, compute, await_snapshot, optimizer step), against
    // the same step without one: async with snapshot = copy (report() copies the state) and with
    // snapshot = background (the copy runs beside the compute), alternated. The save's writing
    // runs beside the compute in both; its slowdown of the compute counts in the stall.
    void step_round() {
        if (step_units == 0) calibrate_step();
        volatile std::uint64_t sink = 0;
        auto step = [&] { sink = sink + compute(step_units); };
        for (bool background : rep % 2 == 0 ? std::vector<bool>{false, true} : std::vector<bool>{true, false}) {
            const char* mode = background ? "background" : "copy";
            fresh_run_dir(std::string("step_") + mode);
            checkpoint::CheckpointOptions o = checkpoint_options("file_per_rank", true);
            o.background_snapshot = background;
            checkpoint::CheckpointManager manager(o, context, comm);
            CheckpointState saved = state();
            manager.save(saved, 1, nlohmann::ordered_json::object());  // allocates the host copy
            manager.await_snapshot();
            manager.finish();
            // Three times a step with a save between two steps without: the stall is the median of
            // its excess over their mean (a step moves by a few percent from one to the next here).
            std::vector<double> alone, stall, in_report;
            for (int pair = 0; pair < kStepPairs; ++pair) {
                const double a = timed(comm, [&] { step(); update(); });
                double reported = 0;
                const double with_save = timed(comm, [&] {
                    const auto start = Clock::now();
                    manager.save(saved, 2 + pair, nlohmann::ordered_json::object());
                    reported = std::chrono::duration<double>(Clock::now() - start).count();
                    step();
                    manager.await_snapshot();
                    update();
                });
                manager.finish();
                const double b = timed(comm, [&] { step(); update(); });
                alone.push_back((a + b) / 2);
                stall.push_back(with_save - alone.back());
                in_report.push_back(comm.allreduce_value(reported, ReduceOp::max));
            }
            emit("step_alone", mode, median(alone));
            emit("step_stall", mode, median(stall));
            emit("report_stall", mode, median(in_report));
        }
    }
    static constexpr int kStepPairs = 3;
    static double median(std::vector<double> values) {
        std::sort(values.begin(), values.end());
        return values[values.size() / 2];
    }

    // The node-local level ([checkpoint] levels = local,pfs) in `local_dir` (/dev/shm: memory)
    // against a plain write and read of the same bytes there, alternated like the others. Its
    // copies to the run directory (pfs_every) are beyond this round: pfs_every is out of reach and
    // finish() is not called, so only the local save and a restore from it are timed.
    void local_round() {
        fresh_run_dir("local");
        const std::string shm = options.local_dir + "/trainrt-checkpoint-bench";
        if (context.world_rank == 0) { fs::remove_all(shm); fs::create_directories(shm); }
        comm.barrier();
        const std::string base = shm + fmt::format("/plain_{:05d}_t", context.world_rank);
        std::vector<float> back(tensors[0].size());
        auto plain = [&] {
            emit("write", "plain_local", timed_io([&] {
                for (int t = 0; t < kTensors; ++t) plain_write(base + std::to_string(t), tensors[t]);
            }));
            emit("read", "plain_local", timed_io([&] {
                for (int t = 0; t < kTensors; ++t) plain_read(base + std::to_string(t), back);
            }));
        };
        if (rep % 2 == 0) plain();
        checkpoint::CheckpointOptions o = checkpoint_options("file_per_rank", false);
        o.levels = CheckpointLevels::local;
        o.local_dir = shm;
        o.pfs_every = 1 << 30;
        CheckpointState saved = state();
        {
            checkpoint::CheckpointManager manager(o, context, comm);
            emit("write", "local", timed_io([&] { manager.save(saved, 1, nlohmann::ordered_json::object()); }));
        }
        std::optional<Checkpoint> restored;  // kept past the clock (kRestoredKept)
        emit("read", "local", timed_io([&] {
            checkpoint::CheckpointManager manager(o, context, comm);
            restored = manager.restore();
            for (int t = 0; t < kTensors; ++t)
                restored->read(fmt::format("t{}", t), TensorType::f32,
                               {rows_per_rank * context.world_rank, 0}, {rows_per_rank, 1024}, back.data());
        }));
        restored.reset();
        if (rep % 2 == 1) plain();
        comm.barrier();
        if (context.world_rank == 0) fs::remove_all(shm);
    }

    // (8) Many small tensors (kMany per rank, 16 KiB blocks, file_per_rank): a save against a plain
    // write+fsync of the same bytes into one file per rank, then restore and every block read back
    // against a plain read of them, the page cache dropped before each read: what a checkpoint's
    // per-tensor work (HDF5 metadata, one write and one read per tensor, the manifest) costs, in
    // the order `rep` says.
    void many_round(int rep) {
        constexpr int kMany = 2000;
        constexpr std::uint64_t kSide = 64;  // a 64 x 64 float32 block: 16 KiB
        const std::uint64_t world = static_cast<std::uint64_t>(context.world_size);
        const std::uint64_t bytes = kMany * kSide * kSide * sizeof(float) * world;
        std::vector<std::vector<float>> blocks(kMany, std::vector<float>(kSide * kSide, 1.0f + context.world_rank));
        std::vector<float> concatenated(kMany * kSide * kSide, 1.0f + context.world_rank);
        auto plain = [&] {
            fresh_run_dir("many_plain");
            const std::string path = context.run_dir + fmt::format("/rank_{:05d}", context.world_rank);
            emit_bytes("many_write", "plain", timed_io([&] { plain_write(path, concatenated); }), bytes);
            drop_cache(context.run_dir);
            emit_bytes("many_read", "plain", timed_io([&] { plain_read(path, concatenated); }), bytes);
        };
        if (rep % 2 == 0) plain();
        fresh_run_dir("many");
        CheckpointState saved;
        for (int t = 0; t < kMany; ++t)
            saved.sharded<float>(fmt::format("m{:04d}", t), blocks[t], {kSide * world, kSide},
                                 {kSide * context.world_rank, 0}, {kSide, kSide});
        emit_bytes("many_write", "file_per_rank", timed_io([&] {
            checkpoint::CheckpointManager(checkpoint_options("file_per_rank", false), context, comm)
                .save(saved, 1, nlohmann::ordered_json::object());
        }), bytes);
        drop_cache(context.run_dir);
        std::optional<Checkpoint> restored;  // kept past the clock (kRestoredKept)
        emit_bytes("many_read", "file_per_rank", timed_io([&] {
            checkpoint::CheckpointManager manager(checkpoint_options("file_per_rank", false), context, comm);
            restored = manager.restore();
            for (int t = 0; t < kMany; ++t)
                restored->read(fmt::format("m{:04d}", t), TensorType::f32, {kSide * context.world_rank, 0},
                               {kSide, kSide}, blocks[t].data());
        }), bytes);
        restored.reset();
        many_async_stall(saved, bytes);
        if (rep % 2 == 1) plain();
    }

    // Training's case of an async save (snapshot = background): each report() settles the save
    // before it (joins its thread, agrees, gathers the ranks' writes) and starts the next. The
    // stall of saves 2-4, each 0.5 s after the one before (its writing done by then), median. Its
    // blocks are all under kBackgroundBlockBytes: report() copies them itself.
    void many_async_stall(const CheckpointState& saved, std::uint64_t bytes) {
        fresh_run_dir("many_async");
        checkpoint::CheckpointOptions o = checkpoint_options("file_per_rank", true);
        o.background_snapshot = true;
        checkpoint::CheckpointManager manager(o, context, comm);
        std::vector<double> stalls;
        for (int i = 1; i <= 4; ++i) {
            const double stall = timed(comm, [&] { manager.save(saved, i, nlohmann::ordered_json::object()); });
            if (i > 1) stalls.push_back(stall);
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
        }
        manager.finish();
        std::sort(stalls.begin(), stalls.end());
        emit_bytes("many_async_stall", "file_per_rank", stalls[stalls.size() / 2], bytes);
    }

    // Rank 0 alone against every rank a share, in the order `rep` says (alternated over reps).
    void replicated_round(int rep) {
        if (whole.empty()) return;
        for (bool spread : rep % 2 == 0 ? std::vector<bool>{false, true} : std::vector<bool>{true, false}) {
            const char* mode = spread ? "spread" : "rank0";
            fresh_run_dir(std::string("replicated_") + mode);
            CheckpointState saved = replicated_state();
            checkpoint::CheckpointOptions o = checkpoint_options("file_per_rank", false);
            o.spread_replicated = spread;
            checkpoint::CheckpointManager manager(o, context, comm);
            emit("replicated_write", mode, timed_io([&] { manager.save(saved, 1, nlohmann::ordered_json::object()); }));
        }
        replicated_read_round(rep);
    }

    // The spread checkpoint restored and every replicated tensor read back whole on every rank:
    // each rank's parts sent to the others at restore (exchange) against every rank reading
    // every file (files), in the order `rep` says, the page cache dropped before each.
    void replicated_read_round(int rep) {
        context.run_dir = options.dir + "/replicated_spread";
        for (bool exchange : rep % 2 == 0 ? std::vector<bool>{true, false} : std::vector<bool>{false, true}) {
            drop_cache(context.run_dir);
            comm.barrier();
            checkpoint::CheckpointOptions o = checkpoint_options("file_per_rank", false);
            o.replicated_reads = exchange ? ReplicatedReads::exchange : ReplicatedReads::files;
            const std::uint64_t total_rows = rows_per_rank * context.world_size;
            std::optional<Checkpoint> restored;  // kept past the clock (kRestoredKept)
            emit("replicated_read", exchange ? "exchange" : "files", timed_io([&] {
                checkpoint::CheckpointManager manager(o, context, comm);
                restored = manager.restore();
                for (int t = 0; t < kTensors; ++t)
                    restored->read(fmt::format("t{}", t), TensorType::f32, {0, 0}, {total_rows, 1024}, whole[t].data());
            }));
            restored.reset();
        }
    }
};

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int code = 0;
    try {
        Options options = parse(argc, argv);
        auto comm = comm::make_mpi_communicator(MPI_COMM_WORLD);
        Bench bench{options, *comm, {}, 0, {}, {}};
        launch::LaunchInfo launched;  // ranks and nodes as MPI says (the local level needs the nodes)
        launched.world_rank = comm->rank();
        launched.world_size = comm->size();
        bench.context = comm::build_context(launched);
        const std::uint64_t floats_per_rank = options.mib * 1048576 / sizeof(float) / comm->size();
        bench.rows_per_rank = floats_per_rank / 1024 / kTensors;
        for (int t = 0; t < kTensors; ++t)
            bench.tensors.emplace_back(bench.rows_per_rank * 1024, static_cast<float>(t + comm->rank()));
        if (comm->size() > 1)
            for (int t = 0; t < kTensors; ++t)
                bench.whole.emplace_back(bench.rows_per_rank * comm->size() * 1024, static_cast<float>(t));
        // Warm-up (not reported): the disk's first gigabytes after a pause go faster or slower
        // than the rest, whichever comes first would carry that.
        bench.plain_round();
        bench.checkpoint_round("file_per_rank");
        for (int rep = 0; rep < options.reps; ++rep) {
            bench.rep = rep;
            // Plain, file_per_rank, shared in even repetitions and the reverse in odd ones: on this
            // disk a write pays for the writeback of the one before it, and a drift of its speed
            // over the repetition favours no side; ratios are taken by couples of repetitions.
            if (rep % 2 == 0) bench.plain_round();
            bench.checkpoint_round(rep % 2 == 0 ? "file_per_rank" : "shared");
            bench.checkpoint_round(rep % 2 == 0 ? "shared" : "file_per_rank");
            if (rep % 2 == 1) bench.plain_round();
            bench.async_round();
            bench.step_round();
            bench.replicated_round(rep);
            bench.local_round();
            bench.many_round(rep);
        }
        if (comm->rank() == 0) fs::remove_all(options.dir);
    } catch (const std::exception& error) {
        std::cerr << "checkpoint_bench: " << error.what() << std::endl;
        code = 1;
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Finalize();
    return code;
}
