// allreduce_bench: trainrt's MPI communicator against a plain MPI_Allreduce on the same buffer.
//
//   mpiexec -n 2 build/bench/allreduce_bench [--min-time S] [--reps R] [--min-bytes B]
//                                            [--max-bytes B] [--bucket-mb M] [--no-sizes]
//                                            [--no-reducer]
//
// Part 1, for message sizes 4 B .. 64 MiB (powers of 2, float32, in-place sum): the time of
// comm->allreduce(ptr, count, f32, sum) and of MPI_Allreduce(MPI_IN_PLACE, ...) on the same buffer.
// Per size: warm-up, an iteration count every rank agrees on so that one timed loop lasts at least
// --min-time seconds, then --reps repetitions, each timing one trainrt loop and one plain loop (the
// order alternates between repetitions so drift and noise fall on both alike). A loop's time is
// the slowest rank's; the reported time is the median over repetitions. Bandwidths as nccl-tests:
// algbw = bytes / time, busbw = algbw * 2(n-1)/n, in GB/s (1e9 bytes).
//
// Part 2, fashion_mlp's gradient exchange: trainrt::GradientReducer over its six gradients (in
// backward order; --bucket-mb, default 2 = the default scaling.bucket_mb), each marked ready in
// turn with no compute in between, then finish(); against one MPI_Allreduce of the flat
// 669706-float buffer followed by the division by n (the same work: a mean). Time per step.
//
// Output: one JSON line per measurement on rank 0's stdout.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "comm/mpi_communicator.hpp"
#include "trainrt/comm.hpp"
#include "trainrt/error.hpp"

namespace {

struct Options {
    double min_time_s = 0.2;
    int reps = 7;
    std::size_t min_bytes = 4;
    std::size_t max_bytes = std::size_t{64} << 20;
    double bucket_mb = 2.0;
    bool sizes = true;    // part 1
    bool reducer = true;  // part 2
};

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw trainrt::ConfigError("allreduce_bench: " + arg + " needs a value");
            return argv[++i];
        };
        if (arg == "--min-time") o.min_time_s = std::stod(value());
        else if (arg == "--reps") o.reps = std::stoi(value());
        else if (arg == "--min-bytes") o.min_bytes = std::stoull(value());
        else if (arg == "--max-bytes") o.max_bytes = std::stoull(value());
        else if (arg == "--bucket-mb") o.bucket_mb = std::stod(value());
        else if (arg == "--no-sizes") o.sizes = false;
        else if (arg == "--no-reducer") o.reducer = false;
        else
            throw trainrt::ConfigError("allreduce_bench: unknown argument " + arg +
                                       " (accepted: --min-time S --reps R --min-bytes B --max-bytes B"
                                       " --bucket-mb M --no-sizes --no-reducer)");
    }
    if (o.reps < 1 || o.min_time_s <= 0 || o.min_bytes < 4 || o.max_bytes < o.min_bytes ||
        o.bucket_mb <= 0)
        throw trainrt::ConfigError(
            "allreduce_bench: needs --reps >= 1, --min-time > 0, 4 <= --min-bytes <= --max-bytes, "
            "--bucket-mb > 0");
    return o;
}

void check(int rc, const char* what) {
    if (rc != MPI_SUCCESS) throw trainrt::CommError(std::string("allreduce_bench: ") + what + " failed");
}

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs `op` `iters` times after a barrier; returns the slowest rank's seconds per call.
double time_loop(const std::function<void()>& op, long iters) {
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    const double t0 = now();
    for (long i = 0; i < iters; ++i) op();
    double elapsed = now() - t0;
    check(MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    return elapsed / static_cast<double>(iters);
}

// The iteration count for loops of at least `min_time` s, agreed by every rank (the slowest's).
long calibrate(const std::function<void()>& op, double min_time) {
    long iters = 1;
    for (;;) {
        const double per_call = time_loop(op, iters);
        if (per_call * static_cast<double>(iters) >= min_time / 4 || iters >= (1L << 24)) {
            long want = static_cast<long>(std::ceil(min_time / std::max(per_call, 1e-9)));
            want = std::max(want, 3L);
            check(MPI_Bcast(&want, 1, MPI_LONG, 0, MPI_COMM_WORLD), "MPI_Bcast");
            return want;
        }
        iters *= 4;
    }
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Times `a` and `b` interleaved (order alternating per repetition); medians in seconds per call.
std::pair<double, double> compare(const std::function<void()>& a, const std::function<void()>& b,
                                  const Options& o, long* iters_out) {
    for (int i = 0; i < 3; ++i) { a(); b(); }  // warm-up: connections, caches, page faults
    const long iters = std::max(calibrate(a, o.min_time_s), calibrate(b, o.min_time_s));
    std::vector<double> ta, tb;
    for (int r = 0; r < o.reps; ++r) {
        if (r % 2 == 0) {
            ta.push_back(time_loop(a, iters));
            tb.push_back(time_loop(b, iters));
        } else {
            tb.push_back(time_loop(b, iters));
            ta.push_back(time_loop(a, iters));
        }
    }
    *iters_out = iters;
    return {median(ta), median(tb)};
}

struct Bw {
    double time_us, algbw, busbw;
};

Bw bandwidth(std::size_t bytes, double seconds, int n) {
    const double algbw = static_cast<double>(bytes) / seconds / 1e9;
    return {seconds * 1e6, algbw, algbw * 2.0 * (n - 1) / n};
}

// One in-place sum of rank-dependent values through trainrt, checked, before anything is timed.
void verify_sum(trainrt::Communicator& comm, std::vector<float>& buf, std::size_t count) {
    const int n = comm.size();
    std::fill_n(buf.begin(), count, static_cast<float>(comm.rank() + 1));
    comm.allreduce(buf.data(), count, trainrt::DType::f32, trainrt::ReduceOp::sum);
    const float want = static_cast<float>(n * (n + 1) / 2);
    for (std::size_t i = 0; i < count; ++i)
        if (buf[i] != want)
            throw trainrt::CommError("allreduce_bench: trainrt allreduce gave " + std::to_string(buf[i]) +
                                     " at " + std::to_string(i) + ", expected " + std::to_string(want));
    std::fill_n(buf.begin(), count, 0.0f);  // zeros: sums stay finite however often we repeat
}

void bench_sizes(trainrt::Communicator& comm, const Options& o) {
    const int n = comm.size();
    std::vector<float> buf(o.max_bytes / sizeof(float), 0.0f);
    std::size_t first = 4;
    while (first < o.min_bytes) first *= 2;
    for (std::size_t bytes = first; bytes <= o.max_bytes; bytes *= 2) {
        const std::size_t count = bytes / sizeof(float);
        verify_sum(comm, buf, count);
        auto ours = [&] { comm.allreduce(buf.data(), count, trainrt::DType::f32, trainrt::ReduceOp::sum); };
        auto plain = [&] {
            check(MPI_Allreduce(MPI_IN_PLACE, buf.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                                MPI_COMM_WORLD), "MPI_Allreduce");
        };
        long iters = 0;
        auto [t_ours, t_plain] = compare(ours, plain, o, &iters);
        if (comm.rank() == 0) {
            const Bw a = bandwidth(bytes, t_ours, n), b = bandwidth(bytes, t_plain, n);
            std::printf("{\"bench\":\"allreduce\",\"ranks\":%d,\"bytes\":%zu,\"iters\":%ld,\"reps\":%d,"
                        "\"trainrt_time_us\":%.3f,\"trainrt_algbw_GBps\":%.4f,\"trainrt_busbw_GBps\":%.4f,"
                        "\"mpi_time_us\":%.3f,\"mpi_algbw_GBps\":%.4f,\"mpi_busbw_GBps\":%.4f,"
                        "\"busbw_ratio\":%.4f}\n",
                        n, bytes, iters, o.reps, a.time_us, a.algbw, a.busbw, b.time_us, b.algbw,
                        b.busbw, a.busbw / b.busbw);
            std::fflush(stdout);
        }
    }
}

void bench_gradient_reducer(trainrt::Communicator& comm, const Options& o) {
    // fashion_mlp's gradients in the order backward produces them: fc3.weight, fc3.bias,
    // fc2.weight, fc2.bias, fc1.weight, fc1.bias.
    const std::vector<std::size_t> sizes = {5120, 10, 262144, 512, 401408, 512};
    const std::size_t total = std::accumulate(sizes.begin(), sizes.end(), std::size_t{0});
    const auto bucket_bytes = static_cast<std::size_t>(o.bucket_mb * 1024 * 1024);
    trainrt::GradientReducer reducer(comm, sizes, bucket_bytes);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        auto g = reducer.gradient(i);
        std::fill(g.begin(), g.end(), static_cast<float>(comm.rank()));
    }
    auto step = [&] {
        for (std::size_t i = 0; i < sizes.size(); ++i) reducer.mark_ready(i);
        reducer.finish();
    };
    step();
    const float want = static_cast<float>(comm.size() - 1) / 2.0f;  // mean of 0..n-1
    for (std::size_t i = 0; i < sizes.size(); ++i)
        for (float v : reducer.gradient(i))
            if (std::fabs(v - want) > 1e-6f)
                throw trainrt::CommError("allreduce_bench: GradientReducer mean gave " + std::to_string(v) +
                                         ", expected " + std::to_string(want));

    const int n = comm.size();
    std::vector<float> flat(total, 1.0f);
    auto plain = [&] {
        check(MPI_Allreduce(MPI_IN_PLACE, flat.data(), static_cast<int>(total), MPI_FLOAT, MPI_SUM,
                            MPI_COMM_WORLD), "MPI_Allreduce");
        const float scale = 1.0f / static_cast<float>(n);
        for (float& v : flat) v *= scale;
    };
    long iters = 0;
    auto [t_ours, t_plain] = compare(step, plain, o, &iters);
    if (comm.rank() == 0) {
        const std::size_t bytes = total * sizeof(float);
        const Bw a = bandwidth(bytes, t_ours, n), b = bandwidth(bytes, t_plain, n);
        std::printf("{\"bench\":\"gradient_reducer\",\"ranks\":%d,\"floats\":%zu,\"bytes\":%zu,"
                    "\"bucket_bytes\":%zu,\"buckets\":%zu,\"iters\":%ld,\"reps\":%d,"
                    "\"reducer_step_us\":%.3f,\"reducer_busbw_GBps\":%.4f,"
                    "\"mpi_flat_step_us\":%.3f,\"mpi_flat_busbw_GBps\":%.4f,\"time_ratio\":%.4f}\n",
                    n, total, bytes, bucket_bytes, reducer.bucket_count(), iters, o.reps, a.time_us,
                    a.busbw, b.time_us, b.busbw, t_ours / t_plain);
        std::fflush(stdout);
    }
}

}  // namespace

int main(int argc, char** argv) {
    int provided = 0;
    // The thread level trainrt's runtime asks for, so both sides run under the same MPI settings.
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    int rc = 0;
    try {
        const Options o = parse(argc, argv);
        auto comm = trainrt::comm::make_mpi_communicator(MPI_COMM_WORLD);
        if (comm->size() < 2 && comm->rank() == 0)
            std::fprintf(stderr, "allreduce_bench: running on 1 rank; start it with mpiexec -n 2\n");
        if (o.sizes) bench_sizes(*comm, o);
        if (o.reducer) bench_gradient_reducer(*comm, o);
    } catch (const trainrt::ConfigError& e) {  // the same on every rank: say it once
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0) std::fprintf(stderr, "%s\n", e.what());
        MPI_Finalize();
        return 2;
    } catch (const std::exception& e) {
        const std::string what = e.what();
        std::fprintf(stderr, "%s%s\n", what.rfind("allreduce_bench:", 0) == 0 ? "" : "allreduce_bench: ",
                     what.c_str());
        rc = 1;
    }
    if (rc != 0) MPI_Abort(MPI_COMM_WORLD, rc);
    MPI_Finalize();
    return rc;
}
