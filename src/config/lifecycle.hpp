#pragma once
// The [stop] and [failure] sections, parsed and checked once at start-up: what ends a run early,
// and how failures are retried (Ray's FailureConfig). Bad values are a ConfigError of one line
// naming the key, where it was set and what is accepted.
#include <optional>
#include <string>
#include <vector>

#include "trainrt/config.hpp"

namespace trainrt::config {

struct LifecycleSettings {
    std::vector<int> stop_signals;            // signal numbers that request a stop
    std::vector<std::string> stop_signal_names;  // as configured, without the SIG prefix
    std::optional<double> time_margin_s;      // nullopt: auto (from measured step/checkpoint time)
    int max_failures = 3;                     // -1: unlimited
    int min_nodes = 1;                        // fewer nodes left after a failure: requeue, not relaunch
    int max_launch_failures = 5;              // launches failed before trainrt started, in a row
    bool requeue = true;                      // [failure] requeue = auto
    double collective_timeout_s = 600;        // 0: no watchdog
    double peer_timeout_s = 60;               // 0: no heartbeats, no peer check
    bool fail_on_nonfinite = true;            // [failure] on_nonfinite = fail
};

LifecycleSettings lifecycle_settings(const JobConfig& config);

// The [stop] and [failure] keys with defaults and meanings (part of builtin_options()).
std::vector<OptionSpec> lifecycle_options();

// "USR2" / "SIGUSR2" / "12" -> 12; nullopt for anything that is not a catchable stop signal.
std::optional<int> stop_signal_number(const std::string& name);

}  // namespace trainrt::config
