#include "runlog/clock.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

#include <fmt/format.h>

namespace trainrt::runlog {

double now_seconds() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string format_time(double epoch_seconds) {
    const long long millis_total = std::llround(epoch_seconds * 1000.0);
    const std::time_t seconds = static_cast<std::time_t>(millis_total / 1000);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
    return fmt::format("{}.{:03d}Z", text, static_cast<int>(millis_total % 1000));
}

std::string time_now() { return format_time(now_seconds()); }

std::optional<double> parse_time(std::string_view text) {
    const std::string copy(text);
    std::tm utc{};
    int millis = 0, used = 0;
    const int fields = std::sscanf(copy.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ%n", &utc.tm_year, &utc.tm_mon,
                                   &utc.tm_mday, &utc.tm_hour, &utc.tm_min, &utc.tm_sec, &millis, &used);
    if (fields != 7 || used != static_cast<int>(copy.size())) {
        millis = 0, used = 0;
        if (std::sscanf(copy.c_str(), "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &utc.tm_year, &utc.tm_mon, &utc.tm_mday,
                        &utc.tm_hour, &utc.tm_min, &utc.tm_sec, &used) != 6 ||
            used != static_cast<int>(copy.size()))
            return std::nullopt;
    }
    utc.tm_year -= 1900;
    utc.tm_mon -= 1;
    return static_cast<double>(::timegm(&utc)) + millis / 1000.0;
}

}  // namespace trainrt::runlog
