#pragma once
// The run record's one time format: UTC with milliseconds, "2026-11-22T09:15:00.123Z".
#include <optional>
#include <string>
#include <string_view>

namespace trainrt::runlog {

std::string format_time(double epoch_seconds);
std::string time_now();
double now_seconds();  // system clock, seconds since the epoch

// Seconds since the epoch; nullopt unless `text` is exactly format_time's format (the
// milliseconds may be absent: "2026-11-22T09:15:00Z").
std::optional<double> parse_time(std::string_view text);

}  // namespace trainrt::runlog
