#include "tune/sweep_config.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "config/ini_lines.hpp"
#include "config/loader.hpp"
#include "config/values.hpp"
#include "trainrt/error.hpp"
#include "workloads/registry.hpp"

namespace po = boost::program_options;

namespace trainrt {

const std::vector<std::pair<std::string, tune::SearchKind>>& EnumNames<tune::SearchKind>::get() {
    static const std::vector<std::pair<std::string, tune::SearchKind>> names = {
        {"grid", tune::SearchKind::grid}, {"random", tune::SearchKind::random}, {"optuna", tune::SearchKind::optuna},
        {"bayesopt", tune::SearchKind::bayesopt}, {"nevergrad", tune::SearchKind::nevergrad},
        {"hyperopt", tune::SearchKind::hyperopt}, {"bohb", tune::SearchKind::bohb}};
    return names;
}

const std::vector<std::pair<std::string, SchedulerKind>>& EnumNames<SchedulerKind>::get() {
    static const std::vector<std::pair<std::string, SchedulerKind>> names = {
        {"fifo", SchedulerKind::fifo}, {"asha", SchedulerKind::asha}, {"pbt", SchedulerKind::pbt},
        {"pb2", SchedulerKind::pb2}, {"hyperband", SchedulerKind::hyperband},
        {"median_stopping", SchedulerKind::median_stopping}};
    return names;
}

namespace tune {
namespace {

using Values = std::map<std::string, ConfigValue>;
constexpr const char* space_prefix = "space.";

struct SweepFile {
    Values tune;                                           // "tune.metric" -> value, FILE:LINE
    std::vector<std::pair<std::string, ConfigValue>> space;  // "train.lr" -> domain text, in order
};

// A key of a scheduler or searcher the sweep does not use (asha.max_t beside scheduler = fifo)
// would be accepted and do nothing: ConfigError naming it and what would use it.
void check_other_schedulers_keys(const Values& given, const SweepConfig& sweep) {
    const std::string scheduler = name_of(sweep.tune.scheduler.value), search = name_of(sweep.tune.search.value);
    const struct {
        const char* prefix;
        bool used;
        std::string now, wanted;
    } sections[] = {{"tune.asha.", scheduler == "asha", "scheduler = " + scheduler, "scheduler = asha"},
                    {"tune.pbt.resample_probability", scheduler == "pbt", "scheduler = " + scheduler, "scheduler = pbt"},
                    {"tune.pbt.", scheduler == "pbt" || scheduler == "pb2", "scheduler = " + scheduler,
                     "scheduler = pbt or pb2"},
                    {"tune.hyperband.", scheduler == "hyperband", "scheduler = " + scheduler, "scheduler = hyperband"},
                    {"tune.median.", scheduler == "median_stopping", "scheduler = " + scheduler,
                     "scheduler = median_stopping"},
                    {"tune.optuna.", search == "optuna", "search = " + search, "search = optuna"},
                    {"tune.bayesopt.", search == "bayesopt", "search = " + search, "search = bayesopt"},
                    {"tune.nevergrad.", search == "nevergrad", "search = " + search, "search = nevergrad"},
                    {"tune.hyperopt.", search == "hyperopt", "search = " + search, "search = hyperopt"},
                    {"tune.bohb.", search == "bohb", "search = " + search, "search = bohb"}};
    for (const auto& [key, value] : given)
        for (const auto& section : sections)
            if (!section.used && key.rfind(section.prefix, 0) == 0)
                throw ConfigError(fmt::format("tune: {} ({}) is set, but the sweep has {}: it would do nothing; "
                                              "remove it, or set {}", key, value.source, section.now, section.wanted));
}

// tune.repeat (Ray's Repeater) repeats a model-based searcher's draws: ConfigError for another
// search, or for a num_samples that is not a multiple of it.
void check_repeat(const SweepConfig& sweep) {
    const auto& repeat = sweep.tune.repeat;
    if (repeat.value == 1) return;
    if (!drawn_at_start(sweep.tune.search.value))
        throw ConfigError(fmt::format("tune: tune.repeat = {} ({}) repeats a searcher's draws (optuna, bayesopt, "
                                      "nevergrad, hyperopt, bohb), and the sweep has search = {}: raise num_samples instead",
                                      repeat.value, repeat.source, name_of(sweep.tune.search.value)));
    if (sweep.tune.num_samples.value % repeat.value != 0)
        throw ConfigError(fmt::format("tune: tune.num_samples = {} ({}) is not a multiple of tune.repeat = {} ({}): "
                                      "every drawn configuration runs repeat times", sweep.tune.num_samples.value,
                                      sweep.tune.num_samples.source, repeat.value, repeat.source));
}

// The sweep's scheduler and searcher against its keys: no other one's key, a metric when they
// compare trials (Optuna alone may have its objectives instead).
void check_scheduling(const Values& given, const SweepConfig& sweep) {
    check_other_schedulers_keys(given, sweep);
    if (sweep.tune.search.value == SearchKind::bohb && sweep.tune.scheduler.value != SchedulerKind::hyperband)
        throw ConfigError(fmt::format("tune: search = bohb ({}) learns from HyperBand's milestones, and the sweep has "
                                      "scheduler = {}: set scheduler = hyperband (Ray's HyperBandForBOHB), or search = "
                                      "optuna", sweep.tune.search.source, name_of(sweep.tune.scheduler.value)));
    const bool by_objectives = sweep.tune.search.value == SearchKind::optuna && !sweep.optuna.objectives.value.empty();
    const bool scheduler_compares = sweep.tune.scheduler.value != SchedulerKind::fifo;
    const bool searcher_compares = drawn_at_start(sweep.tune.search.value) && !by_objectives;
    const bool compares = scheduler_compares || searcher_compares;
    if (sweep.tune.metric.value.empty() && compares)
        throw ConfigError(fmt::format("tune: tune.metric is not set ({}); {} compares trials by a reported metric: "
                                      "name it, e.g. metric = test_accuracy", sweep.path,
                                      scheduler_compares ? "scheduler = " + std::string(name_of(sweep.tune.scheduler.value))
                                                         : "search = " + std::string(name_of(sweep.tune.search.value))));
}

SweepFile read_sweep_file(const std::string& path) {
    if (std::filesystem::is_directory(path) || !std::filesystem::exists(path))
        throw ConfigError(fmt::format("tune: sweep file '{}' {}; give an INI file with [tune] and [space] sections",
                                      path, std::filesystem::exists(path) ? "is a directory" : "does not exist"));
    std::ifstream in(path);
    const config::IniLines lines = config::index_ini(path);
    po::options_description none;
    po::parsed_options parsed(&none);
    try {
        parsed = po::parse_config_file(in, none, true);
    } catch (const po::error& error) {
        throw ConfigError(fmt::format("tune: {}: {}", lines.locate_error(error.what()), error.what()));
    }
    SweepFile file;
    for (const po::option& option : parsed.options) {
        const std::string& key = option.string_key;
        const ConfigValue value{option.value.empty() ? "" : option.value[0], lines.where(key)};
        if (key.rfind("tune.", 0) == 0) file.tune[key] = value;
        else if (key.rfind(space_prefix, 0) == 0) file.space.emplace_back(key.substr(std::string(space_prefix).size()), value);
        else
            throw ConfigError(fmt::format("tune: {} ({}): a sweep file holds [tune] and [space] only; the job's own "
                                          "settings go in the file tune.base names, or on the command line",
                                          key, value.source));
    }
    return file;
}

// `values` checked against `specs` (unknown key with a close match, type, bounds), defaults added.
JobConfig checked(Values values, const std::vector<OptionSpec>& specs) {
    std::vector<std::string> keys;
    for (const OptionSpec& spec : specs) keys.push_back(spec.key);
    for (auto& [key, value] : values) {
        auto spec = std::find_if(specs.begin(), specs.end(), [&](const OptionSpec& s) { return s.key == key; });
        if (spec == specs.end()) {
            const std::string close = config::closest_match(key, keys);
            throw ConfigError(fmt::format("tune: unknown key '{}' ({}){}; `trainrt tune --help` lists the [tune] keys",
                                          key, value.source, close.empty() ? "" : fmt::format(": did you mean '{}'?", close)));
        }
        value.value = config::check_value(*spec, value.value, value.source);
    }
    for (const OptionSpec& spec : specs)
        if (!values.count(spec.key) && !spec.default_value.empty()) values[spec.key] = {spec.default_value, "default"};
    return JobConfig(std::move(values));
}

// The base job: tune.base with the command line's settings on top, loaded as a run would be.
JobConfig load_base(const std::string& base_path, const std::vector<std::string>& overrides) {
    std::vector<std::string> words{"trainrt", "--config", base_path};
    words.insert(words.end(), overrides.begin(), overrides.end());
    std::vector<const char*> argv;
    for (const std::string& word : words) argv.push_back(word.c_str());
    return config::load(static_cast<int>(argv.size()), argv.data(), workloads::keys_by_workload()).config;
}

// Every domain's key must be one the base job takes (and not one the sweep sets itself).
void check_space(const std::vector<Domain>& space, const JobConfig& base) {
    std::vector<OptionSpec> specs = config::builtin_options();
    const auto workload_keys = workloads::keys_by_workload();
    const auto found = workload_keys.find(base.get(RunSettings::workload_key()));
    const bool free_train_keys = found == workload_keys.end();  // a plugin's or a Python function's
    if (!free_train_keys) specs.insert(specs.end(), found->second.begin(), found->second.end());
    std::vector<std::string> keys;
    for (const OptionSpec& spec : specs) keys.push_back(spec.key);
    for (const Domain& domain : space) {
        if (domain.key == RunSettings::name_key() || domain.key == RunSettings::storage_path_key())
            throw ConfigError(fmt::format("tune: [space] {} ({}): the sweep names each trial's run itself "
                                          "(SWEEP_DIR/trial_NNNN); remove it", domain.key, domain.source));
        auto spec = std::find_if(specs.begin(), specs.end(), [&](const OptionSpec& s) { return s.key == domain.key; });
        if (spec != specs.end()) {
            check_against(domain, *spec);
            continue;
        }
        if (free_train_keys && domain.key.rfind("train.", 0) == 0) continue;  // checked when the trial loads it
        const std::string close = config::closest_match(domain.key, keys);
        throw ConfigError(fmt::format("tune: [space] unknown key '{}' ({}){}; a domain sets a key of the base job "
                                      "(`trainrt --help`)", domain.key, domain.source,
                                      close.empty() ? "" : fmt::format(": did you mean '{}'?", close)));
    }
}

// What Optuna optimises: tune.optuna.objectives, else tune.metric and tune.mode; none without Optuna.
std::vector<Objective> optuna_objectives(const SweepConfig& sweep) {
    if (sweep.tune.search.value != SearchKind::optuna) return {};
    const auto& given = sweep.optuna.objectives;
    if (given.value.empty()) return {{sweep.tune.metric.value, sweep.tune.mode.value}};
    return parse_objectives(given.value, given.key, given.source);
}

// [space]'s domains, checked against the base job; none where Optuna's define-by-run function
// (tune.optuna.space) draws every value, which [space] domains would contradict.
void read_space(const SweepFile& file, SweepConfig& sweep) {
    const auto& function = sweep.optuna.space;
    if (!function.value.empty() && !file.space.empty())
        throw ConfigError(fmt::format("tune: {} = {} ({}) draws every trial's values, and {} has [space] domains "
                                      "too ({} ...): keep one of them", function.key, function.value, function.source,
                                      sweep.path, file.space.front().first));
    if (function.value.empty() && file.space.empty())
        throw ConfigError(fmt::format("tune: {} has no [space] domains; give at least one, e.g. train.lr = "
                                      "loguniform(1e-4, 1e-1)", sweep.path));
    for (const auto& [key, value] : file.space) sweep.space.push_back(parse_domain(key, value.value, value.source));
    check_space(sweep.space, sweep.base);
}

// tune.hyperopt.space (a pickled HyperOpt space) draws every [space] key, each searched() and a
// Python function's train.* key; without it no key is searched(). Its path is resolved against
// the sweep file's directory. PBT and PB2 perturb values they can read, which searched() are not.
void check_hyperopt_space(SweepConfig& sweep) {
    auto& file = sweep.hyperopt.space;
    const bool native = sweep.tune.search.value == SearchKind::hyperopt && !file.value.empty();
    for (const Domain& domain : sweep.space) {
        const bool searched = domain.kind == DomainKind::searched;
        if (native && !searched)
            throw ConfigError(fmt::format("tune: [space] {} = {} ({}): {} = {} draws every trial's values; write "
                                          "{} = searched() for a top-level key of that space, or leave {} unset",
                                          domain.key, domain.text(), domain.source, file.key, file.value, domain.key,
                                          file.key));
        if (searched && (sweep.tune.scheduler.value == SchedulerKind::pbt || sweep.tune.scheduler.value == SchedulerKind::pb2))
            throw ConfigError(fmt::format("tune: [space] {} = searched() ({}): scheduler = {} perturbs the values it "
                                          "explores, and a HyperOpt space's are its own; give [space] domains instead",
                                          domain.key, domain.source, name_of(sweep.tune.scheduler.value)));
        if (searched && !native)
            throw ConfigError(fmt::format("tune: [space] {} = searched() ({}) is drawn by search = hyperopt's space; "
                                          "set tune.hyperopt.space, or give a domain such as uniform(...)",
                                          domain.key, domain.source));
    }
    const std::filesystem::path path(file.value);
    if (native && !path.is_absolute()) file.value = (std::filesystem::path(sweep.path).parent_path() / path).string();
}

}  // namespace

std::vector<OptionSpec> tune_options() {
    std::vector<OptionSpec> specs = TuneKeys::specs();
    for (auto more : {AshaKeys::specs(), PbtKeys::specs(), HyperBandKeys::specs(), MedianKeys::specs(), OptunaKeys::specs(), BayesOptKeys::specs(),
                       NevergradKeys::specs(), HyperOptKeys::specs(), BohbKeys::specs()}) specs.insert(specs.end(), more.begin(), more.end());
    return specs;
}

SweepConfig load_sweep(int argc, const char* const argv[]) {
    SweepConfig sweep;
    std::vector<std::string> overrides;
    Values from_command_line;
    for (int i = 1; i < argc; ++i) {
        const std::string word = argv[i];
        if (word == "--config" && i + 1 < argc) sweep.path = argv[++i];
        else if (word.rfind("--config=", 0) == 0) sweep.path = word.substr(9);
        else if (word == "--resume-changed") sweep.resume_changed = true;
        else if (word == "--resume-errored") sweep.resume_errored = true;
        else if (word.rfind("--tune.", 0) == 0 && word.find('=') != std::string::npos)
            from_command_line[word.substr(2, word.find('=') - 2)] = {word.substr(word.find('=') + 1), "command line"};
        else overrides.push_back(word);
    }
    if (sweep.path.empty()) throw ConfigError("tune: no sweep file; run `trainrt tune --config sweep.ini`");
    SweepFile file = read_sweep_file(sweep.path);
    for (auto& [key, value] : from_command_line) file.tune[key] = value;
    const JobConfig tune = checked(file.tune, tune_options());
    sweep.tune = TuneKeys::read(tune), sweep.asha = AshaKeys::read(tune), sweep.pbt = PbtKeys::read(tune);
    sweep.hyperband = HyperBandKeys::read(tune), sweep.median = MedianKeys::read(tune);
    sweep.optuna = OptunaKeys::read(tune), sweep.bayesopt = BayesOptKeys::read(tune);
    sweep.nevergrad = NevergradKeys::read(tune), sweep.hyperopt = HyperOptKeys::read(tune);
    sweep.bohb = BohbKeys::read(tune);
    if (sweep.tune.base.value.empty())
        throw ConfigError(fmt::format("tune: tune.base is not set ({}); name the job every trial runs, e.g. "
                                      "base = jobs/fashion_mlp.ini", sweep.path));
    check_scheduling(file.tune, sweep);
    check_repeat(sweep);
    sweep.objectives = optuna_objectives(sweep);
    const std::filesystem::path base(sweep.tune.base.value);
    sweep.base_path = base.is_absolute() ? base.string() : (std::filesystem::path(sweep.path).parent_path() / base).string();
    sweep.base = load_base(sweep.base_path, overrides);
    sweep.overrides = overrides;
    read_space(file, sweep);
    check_hyperopt_space(sweep);
    sweep.trials = trial_count(sweep.space, sweep.tune.search.value, sweep.tune.num_samples.value,
                               sweep.tune.num_samples.source);
    return sweep;
}

}  // namespace tune
}  // namespace trainrt
