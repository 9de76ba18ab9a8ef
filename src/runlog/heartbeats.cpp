#include "runlog/heartbeats.hpp"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "runlog/run_files.hpp"
#include "storage/posix.hpp"

namespace trainrt::runlog {
namespace {

std::string beat_path(const std::string& run_dir, const std::string& host) {
    return path_in(run_dir, kHeartbeatsDir) + "/" + host;
}

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

double heartbeat_interval(double peer_timeout_s) { return std::clamp(peer_timeout_s / 6, 0.5, 10.0); }

}  // namespace trainrt::runlog
