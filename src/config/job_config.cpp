#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "config/values.hpp"
#include "trainrt/config.hpp"
#include "trainrt/error.hpp"

namespace trainrt {

bool JobConfig::has(const std::string& key) const { return values_.count(key) != 0; }

const ConfigValue& JobConfig::entry(const std::string& key) const {
    auto found = values_.find(key);
    if (found == values_.end())
        throw ConfigError(fmt::format("config: key '{}' is not set; set it in the INI file, as "
                                      "TRAINRT_<SECTION>_<KEY> or as --{}=VALUE", key, key));
    return found->second;
}

const std::string& JobConfig::get(const std::string& key) const { return entry(key).value; }

std::string JobConfig::get_or(const std::string& key, const std::string& fallback) const {
    return has(key) ? get(key) : fallback;
}

const std::string& JobConfig::source(const std::string& key) const { return entry(key).source; }

std::int64_t JobConfig::get_int(const std::string& key) const {
    const ConfigValue& value = entry(key);
    return config::parse_integer(key, value.value, value.source);
}

double JobConfig::get_double(const std::string& key) const {
    const ConfigValue& value = entry(key);
    return config::parse_real(key, value.value, value.source);
}

bool JobConfig::get_bool(const std::string& key) const {
    const ConfigValue& value = entry(key);
    return config::parse_boolean(key, value.value, value.source);
}

}  // namespace trainrt
