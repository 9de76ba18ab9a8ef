#include "runlog/clock.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>

namespace trainrt::runlog {

double now_seconds() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::optional<double> process_start_seconds() {
    std::ifstream in("/proc/self/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto after_name = stat.rfind(')');  // the command name may hold spaces and parentheses
    if (after_name == std::string::npos) return std::nullopt;
    std::istringstream fields(stat.substr(after_name + 2));
    std::string field;
    for (int i = 3; i < 22 && (fields >> field); ++i) {}  // fields 3..21: state .. itrealvalue
    unsigned long long start_ticks = 0;
    timespec boot{};
    if (!(fields >> start_ticks) || ::clock_gettime(CLOCK_BOOTTIME, &boot) != 0) return std::nullopt;
    const long ticks_per_s = ::sysconf(_SC_CLK_TCK);
    if (ticks_per_s <= 0) return std::nullopt;
    const double age_s = boot.tv_sec + boot.tv_nsec / 1e9 - static_cast<double>(start_ticks) / ticks_per_s;
    return now_seconds() - std::max(age_s, 0.0);
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
