#include "launch/pmi1_wire.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::launch::pmi1 {
namespace {

bool is_blank(char c) { return c == ' '; }

[[noreturn]] void throw_malformed(std::string_view line, std::size_t column, const char* why) {
    throw LaunchError(fmt::format("launch: malformed PMI-1 line '{}': {} at column {}", line,
                                  why, column + 1));
}

// Parses the token starting at `pos` into `out`; returns the position after it.
std::size_t parse_token(std::string_view line, std::size_t pos, Message& out) {
    std::size_t end = line.find(' ', pos);
    if (end == std::string_view::npos) end = line.size();
    std::string_view token = line.substr(pos, end - pos);
    std::size_t equals = token.find('=');
    if (equals == std::string_view::npos) throw_malformed(line, pos, "token without '='");
    if (equals == 0) throw_malformed(line, pos, "unexpected '='");
    out.fields.emplace_back(std::string(token.substr(0, equals)),
                            std::string(token.substr(equals + 1)));
    return end;
}

void check_field(const Field& field) {
    const auto& [key, value] = field;
    if (key.empty() || key.find_first_of(" =\n") != std::string::npos)
        throw LaunchError(fmt::format("launch: PMI-1 key '{}' cannot be sent on the wire", key));
    if (value.find_first_of(" \n") != std::string::npos)
        throw LaunchError(fmt::format("launch: PMI-1 value of '{}' holds a space or newline and "
                                      "cannot be sent on the wire", key));
}

}  // namespace

std::optional<std::string> Message::find(std::string_view key) const {
    auto it = std::find_if(fields.begin(), fields.end(),
                           [&](const Field& field) { return field.first == key; });
    if (it == fields.end()) return std::nullopt;
    return it->second;
}

std::string Message::require(std::string_view key) const {
    if (auto value = find(key)) return *value;
    throw LaunchError(fmt::format("launch: PMI-1 command '{}' lacks '{}='", command(), key));
}

std::string Message::command() const {
    if (auto name = find("cmd")) return *name;
    return find("mcmd").value_or("");
}

Message parse_line(std::string_view line) {
    Message message;
    std::size_t pos = 0;
    for (;;) {
        while (pos < line.size() && is_blank(line[pos])) ++pos;
        if (pos >= line.size()) return message;
        pos = parse_token(line, pos, message);
    }
}

std::string format_line(const std::vector<Field>& fields) {
    std::string line;
    for (const auto& field : fields) {
        check_field(field);
        if (!line.empty()) line += ' ';
        line += field.first;
        line += '=';
        line += field.second;
    }
    line += '\n';
    return line;
}

std::string wire_safe(std::string_view text) {
    std::string safe(text);
    std::replace_if(safe.begin(), safe.end(),
                    [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }, '_');
    return safe;
}

}  // namespace trainrt::launch::pmi1
