#pragma once
// Merges command line > a program's settings > TRAINRT_* environment > INI file > defaults into one JobConfig, with
// Boost.Program_options doing the parsing. Everything wrong is a ConfigError of one line that
// names the key and where it was set (FILE:LINE for INI), what is accepted, and a close match.
#include <map>
#include <string>
#include <vector>

#include "config/settings.hpp"
#include "trainrt/config.hpp"

namespace trainrt::config {

// Train keys by workload name. A workload named "plugin:..." takes any train.* key.
using WorkloadKeys = std::map<std::string, std::vector<OptionSpec>>;

struct Flags {
    std::string config_file;
    bool help = false;
    bool print_config = false;
    bool version = false;
    bool exit_codes = false;     // --exit-codes
    bool exit_codes_markdown = false;
    bool keys_markdown = false;  // --keys-markdown
};

struct Loaded {
    JobConfig config;
    Flags flags;
};

// Settings a program gives in code (Python: Ray's RunConfig & co.), each with its source: above
// the INI file and TRAINRT_* variables, below the command line.
using ProgramSettings = std::map<std::string, ConfigValue>;

// A program's entry that only names a train.* key the program reads without setting it (a Python
// function's train_loop_config): it sets nothing, but a --train.KEY on the command line one edit
// away from it is refused with its name (check_train_overrides), as a misspelling.
ConfigValue named_only(const std::string& where);
bool is_named_only(const ConfigValue& value);

// `embedded_workload`: a program that embeds trainrt (trainrt::run) names its own training
// function; run.workload is then "embedded:<name>" whatever the config says, and any train.*
// key is accepted.
Loaded load(int argc, const char* const argv[], const WorkloadKeys& workloads,
            const std::string& embedded_workload = "", const ProgramSettings& program_settings = {});

// A plugin's declared train.* keys, known only once it is loaded: checks the config's train.*
// values against them (unknown key, type, bounds: ConfigError of one line) and adds defaults.
JobConfig with_train_keys(const JobConfig& config, const std::vector<OptionSpec>& train_keys,
                          const std::string& workload);

// `trainrt --help`: every key with its default and meaning, by section.
std::string help_text(const WorkloadKeys& workloads);

// `trainrt --keys-markdown`: the documentation's key table (docs/reference/configuration.md), one row per key (built-ins by section, then
// each workload's [train] keys), from the declarations.
std::string keys_markdown(const WorkloadKeys& workloads);

// `trainrt --print-config`: the merged config as an INI file, each value's source as a comment.
std::string print_config(const JobConfig& config);

}  // namespace trainrt::config
