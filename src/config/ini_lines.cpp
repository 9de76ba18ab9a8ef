#include "config/ini_lines.hpp"

#include <fstream>

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::config {
namespace {

std::string trim(const std::string& text) {
    auto begin = text.find_first_not_of(" \t\r");
    if (begin == std::string::npos) return "";
    auto end = text.find_last_not_of(" \t\r");
    return text.substr(begin, end - begin + 1);
}

}  // namespace

std::string IniLines::where(const std::string& key) const {
    auto found = key_lines.find(key);
    return found == key_lines.end() ? path : fmt::format("{}:{}", path, found->second);
}

std::string IniLines::locate_error(const std::string& message) const {
    for (const auto& [number, text] : raw_lines)
        if (!text.empty() && message.find("'" + text + "'") != std::string::npos)
            return fmt::format("{}:{}", path, number);
    return path;
}

IniLines index_ini(const std::string& path) {
    IniLines lines{path, {}, {}};
    std::ifstream in(path);
    std::string line;
    std::string section;
    for (int number = 1; std::getline(in, line); ++number) {
        std::string text = trim(line.substr(0, line.find('#')));
        lines.raw_lines[number] = text;
        if (text.empty()) continue;
        if (text.front() == '[' && text.back() == ']') {
            section = trim(text.substr(1, text.size() - 2));
            continue;
        }
        auto equals = text.find('=');
        if (equals == std::string::npos) continue;
        std::string key = trim(text.substr(0, equals));
        if (!section.empty()) key = section + "." + key;
        if (auto previous = lines.key_lines.find(key); previous != lines.key_lines.end())
            throw ConfigError(fmt::format("config: key '{}' is set twice in {} (lines {} and {}); "
                                          "keep one", key, path, previous->second, number));
        lines.key_lines[key] = number;
    }
    return lines;
}

}  // namespace trainrt::config
