#include "config/settings.hpp"

#include <signal.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include <fmt/format.h>

#include "config/values.hpp"
#include "trainrt/error.hpp"

namespace trainrt {

const std::vector<std::pair<std::string, Backend>>& EnumNames<Backend>::get() {
    static const std::vector<std::pair<std::string, Backend>> names = {
        {"auto", Backend::automatic}, {"mpi", Backend::mpi}, {"nccl", Backend::nccl},
        {"gloo", Backend::gloo}, {"trainrt", Backend::trainrt}};
    return names;
}

// true/false: the boolean spelling of data.shuffle from before the shuffles had names.
const std::vector<std::pair<std::string, Shuffle>>& EnumNames<Shuffle>::get() {
    static const std::vector<std::pair<std::string, Shuffle>> names = {
        {"none", Shuffle::none}, {"global", Shuffle::global}, {"blocks", Shuffle::blocks},
        {"true", Shuffle::global}, {"false", Shuffle::none}};
    return names;
}

const std::vector<std::pair<std::string, CheckpointLayout>>& EnumNames<CheckpointLayout>::get() {
    static const std::vector<std::pair<std::string, CheckpointLayout>> names = {
        {"file_per_rank", CheckpointLayout::file_per_rank}, {"shared", CheckpointLayout::shared}};
    return names;
}

const std::vector<std::pair<std::string, CheckpointLevels>>& EnumNames<CheckpointLevels>::get() {
    static const std::vector<std::pair<std::string, CheckpointLevels>> names = {
        {"pfs", CheckpointLevels::pfs}, {"local,pfs", CheckpointLevels::local},
        {"local,partner,pfs", CheckpointLevels::partner}};
    return names;
}

const std::vector<std::pair<std::string, SnapshotMode>>& EnumNames<SnapshotMode>::get() {
    static const std::vector<std::pair<std::string, SnapshotMode>> names = {{"copy", SnapshotMode::copy},
                                                                           {"background", SnapshotMode::background}};
    return names;
}

const std::vector<std::pair<std::string, ReplicatedReads>>& EnumNames<ReplicatedReads>::get() {
    static const std::vector<std::pair<std::string, ReplicatedReads>> names = {
        {"auto", ReplicatedReads::automatic}, {"exchange", ReplicatedReads::exchange}, {"files", ReplicatedReads::files}};
    return names;
}

const std::vector<std::pair<std::string, ScoreOrder>>& EnumNames<ScoreOrder>::get() {
    static const std::vector<std::pair<std::string, ScoreOrder>> names = {{"max", ScoreOrder::max},
                                                                          {"min", ScoreOrder::min}};
    return names;
}

const std::vector<std::pair<std::string, ProgressSetting>>& EnumNames<ProgressSetting>::get() {
    static const std::vector<std::pair<std::string, ProgressSetting>> names = {
        {"auto", ProgressSetting::automatic}, {"tty", ProgressSetting::tty}, {"lines", ProgressSetting::lines},
        {"off", ProgressSetting::off}};
    return names;
}

const std::vector<std::pair<std::string, RequeuePolicy>>& EnumNames<RequeuePolicy>::get() {
    static const std::vector<std::pair<std::string, RequeuePolicy>> names = {{"auto", RequeuePolicy::automatic},
                                                                             {"never", RequeuePolicy::never}};
    return names;
}

const std::vector<std::pair<std::string, NonFinitePolicy>>& EnumNames<NonFinitePolicy>::get() {
    static const std::vector<std::pair<std::string, NonFinitePolicy>> names = {{"fail", NonFinitePolicy::fail},
                                                                               {"ignore", NonFinitePolicy::ignore}};
    return names;
}

const std::vector<std::pair<std::string, LogLevel>>& EnumNames<LogLevel>::get() {
    static const std::vector<std::pair<std::string, LogLevel>> names = {
        {"debug", LogLevel::debug}, {"info", LogLevel::info}, {"warning", LogLevel::warning},
        {"error", LogLevel::error}};
    return names;
}

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

}  // namespace

SignalList KeyType<SignalList>::read(const JobConfig& config, const std::string& key) {
    SignalList signals;
    const std::string& text = config.get(key);
    std::stringstream items(text);
    for (std::string item; std::getline(items, item, ',');) {
        item = trim(item);
        if (item.empty() && text.empty()) break;
        auto number = config::stop_signal_number(item);
        if (!number)
            throw ConfigError(fmt::format(
                "config: bad value '{}' for {} ({}): '{}' is not a stop signal; expected a comma list of USR1, "
                "USR2, TERM, INT, HUP, QUIT, XCPU, ALRM (or empty for none)", text, key, config.source(key), item));
        if (std::find(signals.numbers.begin(), signals.numbers.end(), *number) != signals.numbers.end()) continue;
        signals.numbers.push_back(*number);
        signals.names.push_back(signal_display_name(*number));
    }
    return signals;
}

SecondsOrAuto KeyType<SecondsOrAuto>::read(const JobConfig& config, const std::string& key) {
    const std::string& text = config.get(key);
    if (text == "auto") return {};
    const double seconds = config::parse_real(key, text, config.source(key));
    if (seconds < 0)
        throw ConfigError(fmt::format("config: bad value '{}' for {} ({}): expected auto or a number of seconds >= 0",
                                      text, key, config.source(key)));
    return {seconds};
}

Settings Settings::read(const JobConfig& config) {
    return {RunSettings::read(config),        ScalingSettings::read(config), DataSettings::read(config),
            CheckpointSettings::read(config), StopSettings::read(config),    FailureSettings::read(config),
            MetricsSettings::read(config),    LogSettings::read(config),     TrackingSettings::read(config)};
}

std::uint64_t run_seed(const JobConfig& config) {
    return static_cast<std::uint64_t>(RunSettings::read(config).seed.value);
}

Settings Settings::defaults() { return read(keys_detail::defaults_of(config::builtin_options())); }

namespace config {

const std::vector<std::string>& sections() {
    static const std::vector<std::string> names = {RunSettings::section_name,     ScalingSettings::section_name,
                                                   DataSettings::section_name,    CheckpointSettings::section_name,
                                                   StopSettings::section_name,    FailureSettings::section_name,
                                                   MetricsSettings::section_name, LogSettings::section_name,
                                                   TrackingSettings::section_name, kTrainSection};
    return names;
}

std::vector<OptionSpec> builtin_options() {
    std::vector<OptionSpec> specs;
    for (auto section : {RunSettings::specs(), ScalingSettings::specs(), DataSettings::specs(),
                         CheckpointSettings::specs(), StopSettings::specs(), FailureSettings::specs(),
                         MetricsSettings::specs(), LogSettings::specs(), TrackingSettings::specs()})
        specs.insert(specs.end(), section.begin(), section.end());
    return specs;
}

log::Level log_level_of(LogLevel level) {
    switch (level) {
        case LogLevel::debug: return log::Level::debug;
        case LogLevel::warning: return log::Level::warn;
        case LogLevel::error: return log::Level::error;
        case LogLevel::info: break;
    }
    return log::Level::info;
}

std::optional<int> stop_signal_number(const std::string& name) {
    std::string upper;
    for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (upper.rfind("SIG", 0) == 0) upper = upper.substr(3);
    for (const auto& [signal_name, number] : catchable_signals())
        if (upper == signal_name || upper == std::to_string(number)) return number;
    return std::nullopt;
}

}  // namespace config
}  // namespace trainrt
