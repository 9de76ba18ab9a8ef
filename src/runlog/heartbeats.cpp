#include "runlog/heartbeats.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "runlog/run_files.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace trainrt::runlog {
namespace {

std::string beat_path(const std::string& run_dir, const std::string& host) {
    return path_in(run_dir, kHeartbeatsDir) + "/" + host;
}

// Dot names: a host name never starts with a dot, so these never clash with a node's beat.
constexpr const char* kWrapperBeat = ".wrapper";
constexpr const char* kTakeover = ".takeover";

}  // namespace

void write_heartbeat(const std::string& run_dir, const std::string& host, double now_s) {
    storage::make_dirs(path_in(run_dir, kHeartbeatsDir));
    storage::write_file_atomic(beat_path(run_dir, host), fmt::format("{:.3f}\n", now_s));
}

std::optional<double> read_heartbeat(const std::string& run_dir, const std::string& host) {
    std::ifstream in(beat_path(run_dir, host));
    double beat = 0;
    if (!(in >> beat)) return std::nullopt;
    return beat;
}

std::vector<SilentHost> silent_hosts(const std::string& run_dir, const std::vector<std::string>& hosts,
                                     double since_s, double now_s, double limit_s) {
    std::vector<SilentHost> silent;
    for (const std::string& host : hosts) {
        const double last = std::max(read_heartbeat(run_dir, host).value_or(since_s), since_s);
        if (now_s - last > limit_s) silent.push_back({host, now_s - last});
    }
    return silent;
}

void write_wrapper_beat(const std::string& run_dir, const WrapperBeat& beat) {
    storage::make_dirs(path_in(run_dir, kHeartbeatsDir));
    storage::write_file_atomic(beat_path(run_dir, kWrapperBeat),
                               fmt::format("{:.3f} {:.3f} {}\n", beat.time, beat.step_started, beat.host));
}

std::optional<WrapperBeat> read_wrapper_beat(const std::string& run_dir) {
    std::ifstream in(beat_path(run_dir, kWrapperBeat));
    WrapperBeat beat;
    if (!(in >> beat.time >> beat.step_started >> beat.host)) return std::nullopt;
    return beat;
}

void write_takeover(const std::string& run_dir, const std::string& host, double now_s) {
    storage::make_dirs(path_in(run_dir, kHeartbeatsDir));
    storage::write_file_atomic(beat_path(run_dir, kTakeover), fmt::format("{} {:.3f}\n", host, now_s));
}

std::optional<std::string> read_takeover(const std::string& run_dir) {
    std::ifstream in(beat_path(run_dir, kTakeover));
    std::string host;
    if (!(in >> host)) return std::nullopt;
    return host;
}

void remove_takeover(const std::string& run_dir) {
    const std::string path = beat_path(run_dir, kTakeover);
    std::error_code error;
    std::filesystem::remove(path, error);
    if (error) throw StorageError(fmt::format("storage: cannot remove {}: {}", path, error.message()));
}

double heartbeat_interval(double peer_timeout_s) { return std::clamp(peer_timeout_s / 6, 0.5, 10.0); }

}  // namespace trainrt::runlog
