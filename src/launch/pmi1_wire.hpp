#pragma once
// MPICH's simple PMI-1 wire format (src/pmi/simple in MPICH 4.0): one command or reply per
// '\n'-terminated line, made of space-separated `key=value` tokens, the first one `cmd=NAME`
// (or `mcmd=spawn`, which opens a multi-line command ended by a line `endcmd`). A value runs from
// the first '=' of its token to the next space, so it may itself hold '=' (MPICH stores
// `value=segments=3`) but never a space or a newline. The client reads replies into 1024-byte
// buffers, so a reply line must stay shorter than that.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainrt::launch::pmi1 {

// Longest line (with its '\n') MPICH's client reads in one piece (PMIU_MAXLINE - 1).
inline constexpr std::size_t max_client_line = 1023;

using Field = std::pair<std::string, std::string>;

// One parsed line: its fields in order.
struct Message {
    std::vector<Field> fields;

    // Value of the first field named `key`.
    std::optional<std::string> find(std::string_view key) const;
    // Value of `key`; throws LaunchError naming the key and the command when it is missing.
    std::string require(std::string_view key) const;
    // The `cmd` (or `mcmd`) value; empty when the line has neither.
    std::string command() const;
};

// Parses one line (without its '\n') the way MPICH's PMIU_parse_keyvals does. Throws LaunchError
// on a token without '=' or with an empty key. An empty or all-blank line has no fields.
Message parse_line(std::string_view line);

// Formats `key=value ...` plus '\n'. Throws LaunchError when a key is empty or holds ' ', '=' or
// '\n', or a value holds ' ' or '\n' (the client could not split the line back).
std::string format_line(const std::vector<Field>& fields);

// `text` with every character the wire cannot carry in a value (space, tab, newline, CR)
// replaced by '_': for human-readable `msg=` values.
std::string wire_safe(std::string_view text);

}  // namespace trainrt::launch::pmi1
