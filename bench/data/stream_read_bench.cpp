// Reading a dataset split as a training rank does (the streaming reader: HDF5 row blocks on a
// background thread, `prefetch` batches ahead), against a plain sequential read() of the file,
// cold (the file's pages dropped from the page cache first with posix_fadvise DONTNEED) or warm.
// Every byte handed out is touched (summed), as a consumer would. Prints one JSON line:
//   stream_read_bench FILE --mode stream|plain [--split S] [--batch B] [--shuffle none|global|blocks]
//                     [--prefetch P] [--ranks N --rank R] [--cold] [--compute-us U]
// --compute-us: the consumer spins that long per batch (a training step), so the reader's time is
// hidden behind it when it keeps up; data_wait_s is then what the consumer still waited.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "data/configured.hpp"
#include "data/stream.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// A /proc/self/status field in MB ("VmHWM:" peak RSS, "VmRSS:" RSS now).
double status_mb(const std::string& field) {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind(field, 0) == 0) return std::stod(line.substr(field.size())) / 1024.0;
    return 0;
}
double peak_rss_mb() { return status_mb("VmHWM:"); }
double rss_mb() { return status_mb("VmRSS:"); }

void drop_cache(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) return;
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
}

std::uint64_t touch(const std::byte* data, std::size_t bytes) {
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < bytes; i += 64) sum += static_cast<unsigned char>(data[i]);
    return sum;
}

void spin(double us) {
    const auto until = Clock::now() + std::chrono::duration<double, std::micro>(us);
    while (Clock::now() < until) {}
}

struct Args {
    std::string file, mode = "stream", split = "train", shuffle = "none";
    std::size_t batch = 256, prefetch = 2;
    int ranks = 1, rank = 0;
    bool cold = false;
    double compute_us = 0;
};

Args parse(int argc, char** argv) {
    Args args;
    args.file = argv[1];
    for (int i = 2; i < argc; ++i) {
        std::string key = argv[i];
        auto value = [&] { return std::string(argv[++i]); };
        if (key == "--mode") args.mode = value();
        else if (key == "--split") args.split = value();
        else if (key == "--batch") args.batch = std::stoul(value());
        else if (key == "--shuffle") args.shuffle = value();
        else if (key == "--prefetch") args.prefetch = std::stoul(value());
        else if (key == "--ranks") args.ranks = std::stoi(value());
        else if (key == "--rank") args.rank = std::stoi(value());
        else if (key == "--cold") args.cold = true;
        else if (key == "--compute-us") args.compute_us = std::stod(value());
    }
    return args;
}

int plain(const Args& args, double rss_start) {
    std::vector<std::byte> buffer(1 << 20);
    const auto start = Clock::now();
    int fd = ::open(args.file.c_str(), O_RDONLY);
    std::uint64_t bytes = 0, sum = 0;
    for (ssize_t got; (got = ::read(fd, buffer.data(), buffer.size())) > 0;) {
        bytes += static_cast<std::uint64_t>(got);
        sum += touch(buffer.data(), static_cast<std::size_t>(got));
    }
    ::close(fd);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("{\"mode\":\"plain\",\"bytes\":%llu,\"seconds\":%.6f,\"mb_per_s\":%.1f,\"rss_start_mb\":%.1f,"
                "\"peak_rss_mb\":%.1f,\"checksum\":%llu}\n", static_cast<unsigned long long>(bytes), seconds,
                bytes / seconds / 1e6, rss_start, peak_rss_mb(), static_cast<unsigned long long>(sum));
    return 0;
}

int stream(const Args& args, double rss_start) {
    trainrt::BatchOptions options;
    options.batch_size = args.batch;
    options.prefetch_batches = args.prefetch;
    options.shuffle = trainrt::data::shuffle_from(args.shuffle, "--shuffle");
    const auto start = Clock::now();
    trainrt::Dataset dataset = trainrt::data::open_dataset(args.file, args.split, args.rank, args.ranks, 0);
    trainrt::BatchIterator batches = dataset.iter_batches(options, 0);
    std::uint64_t bytes = 0, sum = 0, count = 0, samples = 0;
    while (const trainrt::Batch* batch = batches.next()) {
        samples += batch->count;
        for (const std::string& name : batch->column_names()) {
            const trainrt::BatchColumn& column = batch->column(name);
            bytes += column.bytes();
            sum += touch(column.data(), column.bytes());
        }
        spin(args.compute_us);
        ++count;
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("{\"mode\":\"stream\",\"shuffle\":\"%s\",\"batch\":%zu,\"prefetch\":%zu,\"batches\":%llu,\"samples\":%llu,"
                "\"bytes\":%llu,\"seconds\":%.6f,\"mb_per_s\":%.1f,\"samples_per_s\":%.1f,\"data_wait_s\":%.6f,\"rss_start_mb\":%.1f,\"peak_rss_mb\":%.1f,"
                "\"checksum\":%llu}\n", args.shuffle.c_str(), args.batch, args.prefetch,
                static_cast<unsigned long long>(count), static_cast<unsigned long long>(samples),
                static_cast<unsigned long long>(bytes), seconds, bytes / seconds / 1e6, samples / seconds,
                batches.wait_seconds(), rss_start, peak_rss_mb(),
                static_cast<unsigned long long>(sum));
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: stream_read_bench FILE [--mode stream|plain] [options]\n");
        return 2;
    }
    const Args args = parse(argc, argv);
    if (args.cold) drop_cache(args.file);
    const double rss_start = rss_mb();
    try {
        return args.mode == "plain" ? plain(args, rss_start) : stream(args, rss_start);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "stream_read_bench: %s\n", error.what());
        return 1;
    }
}
