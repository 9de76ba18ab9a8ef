#pragma once
// A launch::EnvLookup over fixed variables, for unit tests of rules that read the environment.
#include <map>
#include <optional>
#include <string>

#include "launch/launcher.hpp"

namespace trainrt::testing {

inline launch::EnvLookup fake_env(std::map<std::string, std::string> vars) {
    return [vars](const std::string& name) -> std::optional<std::string> {
        auto found = vars.find(name);
        if (found == vars.end()) return std::nullopt;
        return found->second;
    };
}

}  // namespace trainrt::testing
