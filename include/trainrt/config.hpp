#pragma once
// The merged, immutable job configuration: command line > TRAINRT_* environment > INI file >
// defaults. Keys are "section.key" (e.g. "train.epochs"). Typed getters throw ConfigError naming
// the key, where its value came from and what is accepted.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace trainrt {

// `name`: one path component of letters, digits, '.', '_' and '-', not "." or ".." (a run name:
// the run directory is storage_path/name and must stay inside storage_path).
enum class ValueKind { string, integer, real, boolean, choice, path, name };

// One accepted key: its default, type, bounds and meaning (what --help prints).
struct OptionSpec {
    std::string key;            // "section.key"
    std::string default_value;  // as written in an INI file; "" means unset
    ValueKind kind = ValueKind::string;
    std::string help;
    double min = -1e300;        // integer/real bounds, inclusive
    double max = 1e300;
    std::vector<std::string> choices;  // for ValueKind::choice
};

struct ConfigValue {
    std::string value;
    std::string source;  // "default", "FILE:LINE", "env TRAINRT_X_Y", "command line"
};

class JobConfig {
public:
    JobConfig() = default;
    explicit JobConfig(std::map<std::string, ConfigValue> values) : values_(std::move(values)) {}

    bool has(const std::string& key) const;
    const std::string& get(const std::string& key) const;
    std::string get_or(const std::string& key, const std::string& fallback) const;
    std::int64_t get_int(const std::string& key) const;
    double get_double(const std::string& key) const;
    bool get_bool(const std::string& key) const;
    const std::string& source(const std::string& key) const;
    const std::map<std::string, ConfigValue>& values() const { return values_; }

private:
    const ConfigValue& entry(const std::string& key) const;
    std::map<std::string, ConfigValue> values_;
};

// run.seed, read through its declaration: a plugin's weight init seeds from it, as the built-in
// workloads do, so that one seed and one world size give bitwise-identical runs.
std::uint64_t run_seed(const JobConfig& config);

}  // namespace trainrt
