#include "runtime/watch_main.hpp"

#include <unistd.h>

#include <array>
#include <iostream>
#include <string>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "runlog/heartbeats.hpp"
#include "runtime/batch_host_watch.hpp"
#include "runtime/wrapper_command.hpp"
#include "trainrt/error.hpp"

namespace trainrt::runtime {
namespace {

constexpr const char* kUsage =
    "usage: trainrt watch beat --host H --started EPOCH -- RUN-ARGS | "
    "trainrt watch batch-host --host H -- RUN-ARGS | trainrt watch taken-over [--clear] -- RUN-ARGS";

struct WatchArgs {
    std::string mode, host;
    double started = 0;
    bool clear = false;
};

WatchArgs parse(const WrapperCommand& command, const char* const argv[]) {
    namespace po = boost::program_options;
    WatchArgs args;
    po::options_description options("watch");
    options.add_options()("mode", po::value<std::string>(&args.mode)->required(), "beat, batch-host or taken-over")(
        "host", po::value<std::string>(&args.host), "the batch host")(
        "started", po::value<double>(&args.started), "launch time of the wrapper's step, seconds since the epoch")(
        "clear", po::bool_switch(&args.clear), "a new allocation: forget an earlier takeover");
    po::positional_options_description positional;
    positional.add("mode", 1);
    try {
        po::variables_map values;
        po::store(po::command_line_parser(command.own_argc, argv).options(options).positional(positional).run(), values);
        po::notify(values);
    } catch (const po::error& error) {
        throw ConfigError(fmt::format("watch: {}; {}", error.what(), kUsage));
    }
    if (args.mode != "beat" && args.mode != "batch-host" && args.mode != "taken-over")
        throw ConfigError(fmt::format("watch: unknown mode '{}'; {}", args.mode, kUsage));
    if (args.mode != "taken-over" && args.host.empty())
        throw ConfigError(fmt::format("watch {}: --host is required; {}", args.mode, kUsage));
    return args;
}

std::string own_host() {
    std::array<char, 256> name{};
    if (::gethostname(name.data(), name.size() - 1) != 0) return "unknown";
    return name.data();
}

}  // namespace

int watch_main(int argc, const char* const argv[], const std::string& embedded_name) {
    const WrapperCommand command = split_wrapper_command(argc, argv);
    const WatchArgs args = parse(command, argv);
    const WrappedJob job = load_wrapped_job(command, embedded_name);
    if (args.mode == "taken-over") {
        if (args.clear) {
            runlog::remove_takeover(job.run_dir);
            std::cout << (job.settings.peer_timeout_s > 0 ? "watching" : "off") << std::endl;
        } else if (auto host = runlog::read_takeover(job.run_dir)) {
            std::cout << *host << std::endl;
        }
        return 0;
    }
    if (args.mode == "beat") {
        if (job.settings.peer_timeout_s > 0)
            keep_wrapper_beat(job.run_dir, job.settings.peer_timeout_s, args.host, args.started, ::getppid());
        return 0;
    }
    if (job.settings.peer_timeout_s <= 0) {
        std::cout << "off" << std::endl;
        return 0;
    }
    const Takeover takeover = await_takeover(job.run_dir, job.settings.peer_timeout_s, args.host, own_host());
    std::cout << fmt::format("takeover {:.0f}", takeover.step_started) << std::endl;
    return 0;
}

}  // namespace trainrt::runtime
