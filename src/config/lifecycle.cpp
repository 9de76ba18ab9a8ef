#include "config/lifecycle.hpp"

#include <signal.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include <fmt/format.h>

#include "config/values.hpp"
#include "trainrt/error.hpp"

namespace trainrt::config {
namespace {

// Signals a batch system or a user sends to ask a job to end; KILL and STOP cannot be caught,
// and SEGV/ABRT/... mean a crash, not a request.
const std::vector<std::pair<std::string, int>>& catchable_signals() {
    static const std::vector<std::pair<std::string, int>> table = {
        {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"TERM", SIGTERM}, {"INT", SIGINT},
        {"HUP", SIGHUP},   {"QUIT", SIGQUIT}, {"XCPU", SIGXCPU}, {"ALRM", SIGALRM}};
    return table;
}

std::string signal_display_name(int number) {
    for (const auto& [name, value] : catchable_signals())
        if (value == number) return name;
    return std::to_string(number);
}

std::string trim(const std::string& text) {
    auto first = text.find_first_not_of(" \t");
    if (first == std::string::npos) return "";
    return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

void parse_signals(const JobConfig& config, LifecycleSettings& settings) {
    const std::string key = "stop.signals";
    const std::string& text = config.get(key);
    std::stringstream items(text);
    std::string item;
    while (std::getline(items, item, ',')) {
        item = trim(item);
        if (item.empty() && text.empty()) break;
        auto number = stop_signal_number(item);
        if (!number)
            throw ConfigError(fmt::format(
                "config: bad value '{}' for {} ({}): '{}' is not a stop signal; expected a comma "
                "list of USR1, USR2, TERM, INT, HUP, QUIT, XCPU, ALRM (or empty for none)",
                text, key, config.source(key), item));
        if (std::find(settings.stop_signals.begin(), settings.stop_signals.end(), *number) ==
            settings.stop_signals.end()) {
            settings.stop_signals.push_back(*number);
            settings.stop_signal_names.push_back(signal_display_name(*number));
        }
    }
}

std::optional<double> parse_margin(const JobConfig& config) {
    const std::string key = "stop.time_margin";
    const std::string& text = config.get(key);
    if (text == "auto") return std::nullopt;
    double seconds = parse_real(key, text, config.source(key));
    if (seconds < 0)
        throw ConfigError(fmt::format("config: bad value '{}' for {} ({}): expected auto or a "
                                      "number of seconds >= 0", text, key, config.source(key)));
    return seconds;
}

}  // namespace

std::optional<int> stop_signal_number(const std::string& name) {
    std::string upper;
    for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (upper.rfind("SIG", 0) == 0) upper = upper.substr(3);
    for (const auto& [signal_name, number] : catchable_signals()) {
        if (upper == signal_name || upper == std::to_string(number)) return number;
    }
    return std::nullopt;
}

LifecycleSettings lifecycle_settings(const JobConfig& config) {
    LifecycleSettings settings;
    parse_signals(config, settings);
    settings.time_margin_s = parse_margin(config);
    settings.max_failures = static_cast<int>(config.get_int("failure.max_failures"));
    settings.max_launch_failures = static_cast<int>(config.get_int("failure.max_launch_failures"));
    settings.min_nodes = static_cast<int>(config.get_int("failure.min_nodes"));
    settings.requeue = config.get("failure.requeue") == "auto";
    settings.fail_on_nonfinite = config.get("failure.on_nonfinite") == "fail";
    settings.collective_timeout_s = config.get_double("failure.collective_timeout");
    settings.peer_timeout_s = config.get_double("failure.peer_timeout");
    return settings;
}

std::vector<OptionSpec> lifecycle_options() {
    OptionSpec max_failures{"failure.max_failures", "3", ValueKind::integer,
                            "relaunch or requeue after this many failures (crashed rank, dead "
                            "node, hung collective), counted across requeues; -1: no limit"};
    max_failures.min = -1;
    OptionSpec launches{"failure.max_launch_failures", "5", ValueKind::integer,
                        "step launches that fail before trainrt starts (srun cannot create the step, "
                        "a node cannot start it), in a row: retried after 2, 4, 8 ... 60 s, not counted "
                        "in max_failures; then give up"};
    launches.min = 0;
    OptionSpec min_nodes{"failure.min_nodes", "1", ValueKind::integer,
                         "after a node failure, relaunch on the nodes left only if at least this many "
                         "are; fewer: requeue the job for a whole allocation (needs --requeue)"};
    min_nodes.min = 1;
    OptionSpec requeue{"failure.requeue", "auto", ValueKind::choice,
                       "auto: after a stop for the time limit or a preemption, rank 0 requeues "
                       "the job (scontrol requeue); never: just checkpoint and exit"};
    requeue.choices = {"auto", "never"};
    OptionSpec timeout{"failure.collective_timeout", "600", ValueKind::real,
                       "seconds a collective may block before the watchdog ends the step as "
                       "failed (0: no watchdog)"};
    timeout.min = 0;
    OptionSpec peer{"failure.peer_timeout", "60", ValueKind::real,
                    "seconds a node may go without a heartbeat (heartbeats/<host> in the run directory) "
                    "while the others wait for it in a collective before they end the step and the "
                    "relaunch excludes it, before Slurm notices (SlurmdTimeout); 0: no heartbeats"};
    peer.min = 0;
    OptionSpec nonfinite{"failure.on_nonfinite", "fail", ValueKind::choice,
                         "fail: a report() with a NaN or infinite metric ends the run (exit 7) without "
                         "committing its checkpoint, so the latest checkpoint is the last finite one; "
                         "ignore: go on"};
    nonfinite.choices = {"fail", "ignore"};
    return {{"stop.signals", "USR2,TERM", ValueKind::string,
             "signals that request a stop: checkpoint at the next step and exit (comma list; "
             "USR1 is left to NCCL)"},
            {"stop.time_margin", "auto", ValueKind::string,
             "stop this many seconds before the Slurm time limit; auto: from the measured step "
             "and checkpoint times"},
            max_failures, launches, min_nodes, requeue, timeout, peer, nonfinite};
}

}  // namespace trainrt::config
