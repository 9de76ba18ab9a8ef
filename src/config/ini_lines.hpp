#pragma once
// Where each key of an INI file stands, so messages can say FILE:LINE (Boost.Program_options
// parses the file but does not report lines).
#include <map>
#include <string>

namespace trainrt::config {

struct IniLines {
    std::string path;
    std::map<std::string, int> key_lines;  // "section.key" -> last line that sets it
    std::map<int, std::string> raw_lines;  // line number -> text, for locating syntax errors

    std::string where(const std::string& key) const;          // "FILE:LINE" (or "FILE")
    std::string locate_error(const std::string& message) const;  // FILE:LINE of the bad line
};

// Reads `path`; throws ConfigError when a key is set twice in the file.
IniLines index_ini(const std::string& path);

}  // namespace trainrt::config
