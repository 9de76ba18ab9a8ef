#include "config/loader.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/ini_lines.hpp"
#include "config/values.hpp"
#include "trainrt/error.hpp"

namespace po = boost::program_options;

namespace trainrt::config {
namespace {

const std::string kTrainPrefix = std::string(kTrainSection) + ".";

// Every key any workload may take, plus the built-ins; deduplicated by key.
std::vector<OptionSpec> all_specs(const WorkloadKeys& workloads) {
    std::vector<OptionSpec> specs = builtin_options();
    std::set<std::string> seen;
    for (const OptionSpec& spec : specs) seen.insert(spec.key);
    for (const auto& [name, keys] : workloads)
        for (const OptionSpec& spec : keys)
            if (seen.insert(spec.key).second) specs.push_back(spec);
    return specs;
}

po::options_description describe(const std::vector<OptionSpec>& specs) {
    po::options_description desc("trainrt options");
    desc.add_options()("config", po::value<std::string>(), "INI job file")
        ("help", "list every key with its default and meaning")
        ("print-config", "print the merged configuration and exit")
        ("version", "print the version and exit")
        ("exit-codes", "print the exit code table as shell variables (TRAINRT_EXIT_STOPPED=9 ...) and exit")
        ("exit-codes-markdown", "print the exit code table as the documentation's markdown table (docs/reference/) and exit")
        ("keys-markdown", "print every key's declaration as the documentation's markdown table (docs/reference/) and exit");
    for (const OptionSpec& spec : specs)
        desc.add_options()(spec.key.c_str(), po::value<std::string>(), spec.help.c_str());
    return desc;
}

std::string env_name(const std::string& key) {
    std::string name = "TRAINRT_" + key;
    std::replace(name.begin(), name.end(), '.', '_');
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return name;
}

// TRAINRT_TRAIN_BATCH_SIZE -> train.batch_size, for the known sections only.
std::string env_to_key(const std::string& variable) {
    const std::string prefix = "TRAINRT_";
    if (variable.rfind(prefix, 0) != 0) return "";
    std::string rest = variable.substr(prefix.size());
    std::transform(rest.begin(), rest.end(), rest.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const std::string& section : sections())
        if (rest.rfind(section + "_", 0) == 0 && rest.size() > section.size() + 1)
            return section + "." + rest.substr(section.size() + 1);
    return "";
}

using Values = std::map<std::string, ConfigValue>;

void take_value(Values& values, const po::option& option, const std::string& source) {
    if (option.string_key.empty() || option.position_key >= 0)
        throw ConfigError(fmt::format("config: unexpected argument '{}' ({}); keys are given as "
                                      "--section.key=value",
                                      option.original_tokens.empty() ? "" : option.original_tokens[0],
                                      source));
    if (option.value.size() != 1)
        throw ConfigError(fmt::format("config: {} ({}) needs one value, e.g. --{}=VALUE",
                                      option.string_key, source, option.string_key));
    values[option.string_key] = {option.value[0], source};
}

// A program's own argument (a Python script's --smoke-test or -n 4, argparse's to read): with
// `program_arguments` (a program that embeds trainrt), a word that is neither a key of trainrt's
// --section.key form nor one of its flags is left to the program.
bool programs_own(const po::option& option, bool program_arguments) {
    if (!program_arguments) return false;
    return option.position_key >= 0 || (option.unregistered && option.string_key.find('.') == std::string::npos);
}

Flags take_command_line(Values& values, int argc, const char* const argv[],
                        const po::options_description& desc, bool program_arguments) {
    auto style = po::command_line_style::unix_style ^ po::command_line_style::allow_guessing;
    po::parsed_options parsed =
        po::command_line_parser(argc, argv).options(desc).style(style).allow_unregistered().run();
    Flags flags;
    for (const po::option& option : parsed.options) {
        if (programs_own(option, program_arguments)) continue;
        const std::string& key = option.string_key;
        if (key == "help") flags.help = true;
        else if (key == "print-config") flags.print_config = true;
        else if (key == "version") flags.version = true;
        else if (key == "exit-codes") flags.exit_codes = true;
        else if (key == "exit-codes-markdown") flags.exit_codes_markdown = true;
        else if (key == "keys-markdown") flags.keys_markdown = true;
        else if (key == "config") flags.config_file = option.value.empty() ? "" : option.value[0];
        else take_value(values, option, "command line");
    }
    return flags;
}

void take_file(Values& values, const std::string& path, const po::options_description& desc) {
    if (std::filesystem::is_directory(path))  // an ifstream opens a directory and reads nothing
        throw ConfigError(fmt::format("config: config file '{}' is a directory; give an INI file with "
                                      "--config FILE", path));
    std::ifstream in(path);
    if (!in)
        throw ConfigError(fmt::format("config: cannot read config file '{}': {}; give an existing "
                                      "INI file with --config FILE",
                                      path, std::strerror(errno)));
    IniLines lines = index_ini(path);
    po::parsed_options parsed(&desc);
    try {
        parsed = po::parse_config_file(in, desc, true);
    } catch (const po::error& error) {
        throw ConfigError(fmt::format("config: {}: {}", lines.locate_error(error.what()),
                                      error.what()));
    }
    for (const po::option& option : parsed.options)
        take_value(values, option, lines.where(option.string_key));
}

void take_environment(Values& values, const po::options_description& desc) {
    po::parsed_options parsed = po::parse_environment(desc, env_to_key);
    for (const po::option& option : parsed.options)
        take_value(values, option, "env " + env_name(option.string_key));
}

std::vector<std::string> keys_of(const std::vector<OptionSpec>& specs) {
    std::vector<std::string> keys;
    for (const OptionSpec& spec : specs) keys.push_back(spec.key);
    return keys;
}

[[noreturn]] void unknown_key(const std::string& key, const ConfigValue& value,
                              const std::vector<std::string>& accepted_keys,
                              const std::string& context) {
    std::string suggestion = closest_match(key, accepted_keys);
    throw ConfigError(fmt::format("config: unknown key '{}' ({}){}; {}", key, value.source,
                                  suggestion.empty() ? "" : fmt::format(": did you mean '{}'?", suggestion),
                                  context));
}

// A train.* key on the command line that no other source names, close to one another source does
// (--train.epoch=3 where the file or the function's config has train.epochs): for a workload whose
// train keys are free-form (a Python function's train_loop_config) it would be a new key the
// function never reads, and the misspelt setting would be silently ignored.
// Only one edit away and of 4 letters or more: a new key that merely resembles one (wd beside lr)
// stays the function's to read.
std::string where_set(const ConfigValue& value) {
    return is_named_only(value) ? value.source.substr(value.source.find(": ") + 2) : value.source;
}

void check_train_overrides(const Values& from_command_line, const Values& others) {
    const std::size_t prefix = std::string(kTrainPrefix).size();
    for (const auto& [key, value] : from_command_line) {
        if (key.rfind(kTrainPrefix, 0) != 0 || others.count(key) || key.size() < prefix + 4) continue;
        std::string suggestion;
        for (const auto& [other, source] : others)
            if (other.rfind(kTrainPrefix, 0) == 0 && edit_distance(key, other) == 1) suggestion = other;
        if (suggestion.empty()) continue;
        throw ConfigError(fmt::format("config: {} ({}) is no key of the job's [train] settings: did you mean '{}' "
                                      "({})? A new key with a close name goes in the config file",
                                      key, value.source, suggestion, where_set(others.at(suggestion))));
    }
}

std::string workload_of(const Values& values) {
    auto found = values.find(RunSettings::workload_key());
    return found == values.end() ? "" : found->second.value;
}

// The keys this job accepts: built-ins plus its workload's train keys. A workload libtrainrt
// does not hold (a plugin's, a component's, an embedded program's, a Python function) takes any
// train.* key here: its own keys are checked once it is loaded (with_train_keys), and an unknown
// name is refused then, with a close one.
std::vector<OptionSpec> job_specs(const Values& values, const WorkloadKeys& workloads, bool& free_train_keys) {
    std::vector<OptionSpec> specs = builtin_options();
    const std::string workload = workload_of(values);
    if (workload.empty())
        throw ConfigError(fmt::format("config: {} is not set; name the training function: a built-in workload "
                                      "(`trainrt --help` lists them), plugin:/path/lib.so[:name] or "
                                      "python:FILE.py:FUNC", RunSettings::workload_key()));
    auto found = workloads.find(workload);
    free_train_keys = found == workloads.end();
    if (!free_train_keys) specs.insert(specs.end(), found->second.begin(), found->second.end());
    return specs;
}

Values validate(Values values, const WorkloadKeys& workloads) {
    bool free_train_keys = false;
    std::vector<OptionSpec> specs = job_specs(values, workloads, free_train_keys);
    std::vector<std::string> accepted_keys = keys_of(specs);
    for (const auto& [key, value] : values) {
        auto spec = std::find_if(specs.begin(), specs.end(),
                                 [&](const OptionSpec& s) { return s.key == key; });
        if (spec != specs.end()) continue;
        if (free_train_keys && key.rfind(kTrainPrefix, 0) == 0) continue;
        unknown_key(key, value, accepted_keys,
                    fmt::format("run `trainrt --help` for the keys of workload '{}'",
                                workload_of(values)));
    }
    Values checked;
    for (const OptionSpec& spec : specs) {
        auto found = values.find(spec.key);
        if (found == values.end()) {
            if (!spec.default_value.empty()) checked[spec.key] = {spec.default_value, "default"};
            continue;
        }
        checked[spec.key] = {check_value(spec, found->second.value, found->second.source),
                             found->second.source};
    }
    for (const auto& [key, value] : values)
        if (!checked.count(key)) checked[key] = value;  // free-form plugin train keys
    return checked;
}

}  // namespace

namespace {
constexpr const char* kNamedOnly = "named only: ";
}  // namespace

ConfigValue named_only(const std::string& where) { return {"", kNamedOnly + where}; }

bool is_named_only(const ConfigValue& value) { return value.source.rfind(kNamedOnly, 0) == 0; }

Loaded load(int argc, const char* const argv[], const WorkloadKeys& workloads,
            const std::string& embedded_workload, const ProgramSettings& program_settings) {
    po::options_description desc = describe(all_specs(workloads));
    Values from_command_line;
    Flags flags;
    try {
        flags = take_command_line(from_command_line, argc, argv, desc, !embedded_workload.empty());
    } catch (const po::error& error) {
        throw ConfigError(fmt::format("config: command line: {}; run `trainrt --help`",
                                      error.what()));
    }
    Values merged;
    if (!flags.config_file.empty()) take_file(merged, flags.config_file, desc);
    take_environment(merged, desc);
    Values named;
    for (const auto& [key, value] : program_settings) (is_named_only(value) ? named : merged)[key] = value;
    Values before_command_line = merged;
    before_command_line.insert(named.begin(), named.end());
    for (auto& [key, value] : from_command_line) merged[key] = value;
    if (!embedded_workload.empty() || !workloads.count(workload_of(merged)))  // declared keys: validate() says it
        check_train_overrides(from_command_line, before_command_line);
    if (!embedded_workload.empty())
        merged[RunSettings::workload_key()] = {"embedded:" + embedded_workload, "set by the program (trainrt::run)"};
    if (flags.help || flags.version || flags.exit_codes || flags.exit_codes_markdown || flags.keys_markdown)
        return {JobConfig(merged), flags};
    return {JobConfig(validate(std::move(merged), workloads)), flags};
}

JobConfig with_train_keys(const JobConfig& config, const std::vector<OptionSpec>& train_keys,
                          const std::string& workload) {
    std::map<std::string, ConfigValue> values = config.values();
    const std::vector<std::string> accepted_keys = keys_of(train_keys);
    for (const auto& [key, value] : values) {
        if (key.rfind(kTrainPrefix, 0) != 0) continue;
        if (std::find(accepted_keys.begin(), accepted_keys.end(), key) == accepted_keys.end())
            unknown_key(key, value, accepted_keys,
                        fmt::format("workload {} accepts: {}", workload, fmt::join(accepted_keys, ", ")));
    }
    for (const OptionSpec& spec : train_keys) {
        auto found = values.find(spec.key);
        if (found != values.end())
            found->second.value = check_value(spec, found->second.value, found->second.source);
        else if (!spec.default_value.empty())
            values[spec.key] = {spec.default_value, "default"};
    }
    return JobConfig(std::move(values));
}

std::string help_text(const WorkloadKeys& workloads) {
    std::ostringstream out;
    out << "usage: trainrt --config FILE [--section.key=VALUE ...] [--print-config]\n"
           "       trainrt data import csv|npy|hdf5|fashion-mnist|mnist INPUT... --out DATA.h5\n"
           "       trainrt tune --config SWEEP.ini [--ranks N]   (trainrt tune --help)\n"
           "       trainrt --help | --version\n\n"
           "Each key is set (highest first) on the command line as --section.key=VALUE, in the\n"
           "environment as TRAINRT_<SECTION>_<KEY>, in the INI file as `key = value` under\n"
           "[section], or takes its default.\n";
    auto print = [&out](const OptionSpec& spec) {
        out << fmt::format("  {:<22} {:<22} {}\n                         accepts {}\n", spec.key,
                           spec.default_value.empty() ? "(unset)" : "= " + spec.default_value,
                           spec.help, accepted(spec));
    };
    std::string section;
    for (const OptionSpec& spec : builtin_options()) {
        std::string this_section = spec.key.substr(0, spec.key.find('.'));
        if (this_section != section) out << "\n[" << (section = this_section) << "]\n";
        print(spec);
    }
    for (const auto& [name, keys] : workloads) {
        out << fmt::format("\n[train] for workload = {}\n", name);
        for (const OptionSpec& spec : keys) print(spec);
    }
    return out.str();
}

namespace {

std::string markdown_cell(std::string text) {
    for (std::size_t at = text.find('|'); at != std::string::npos; at = text.find('|', at + 2)) text.replace(at, 1, "\\|");
    return text;
}

void markdown_rows(std::ostringstream& out, const std::vector<OptionSpec>& specs) {
    out << "| key | default | accepts | meaning |\n|---|---|---|---|\n";
    for (const OptionSpec& spec : specs)
        out << fmt::format("| `{}` | {} | {} | {} |\n", spec.key,
                           spec.default_value.empty() ? "unset" : "`" + spec.default_value + "`",
                           markdown_cell(accepted(spec)), markdown_cell(spec.help));
}

}  // namespace

std::string keys_markdown(const WorkloadKeys& workloads) {
    std::ostringstream out;
    markdown_rows(out, builtin_options());
    for (const auto& [name, keys] : workloads) {
        out << fmt::format("\n`[{}]` keys of workload `{}`:\n\n", kTrainSection, name);
        markdown_rows(out, keys);
    }
    return out.str();
}

std::string print_config(const JobConfig& config) {
    std::ostringstream out;
    std::string section;
    for (const auto& [key, value] : config.values()) {
        std::string this_section = key.substr(0, key.find('.'));
        if (this_section != section) out << (section.empty() ? "" : "\n") << "[" << (section = this_section) << "]\n";
        out << fmt::format("{} = {}    # {}\n", key.substr(key.find('.') + 1), value.value,
                           value.source);
    }
    return out.str();
}

}  // namespace trainrt::config
