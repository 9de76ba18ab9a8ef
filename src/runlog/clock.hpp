#pragma once
// The run record's one time format: UTC with milliseconds, "2026-11-22T09:15:00.123Z".
#include <optional>
#include <string>
#include <string_view>

namespace trainrt::runlog {

std::string format_time(double epoch_seconds);
std::string time_now();
double now_seconds();  // system clock, seconds since the epoch
// When this process was created (exec of srun's or mpiexec's child, before the dynamic loader, MPI
// and Python start), seconds since the epoch: from /proc/self/stat's start time against the boot
// clock, to the kernel's tick (10 ms). nullopt where /proc cannot say.
std::optional<double> process_start_seconds();

// Seconds since the epoch; nullopt unless `text` is exactly format_time's format (the
// milliseconds may be absent: "2026-11-22T09:15:00Z").
std::optional<double> parse_time(std::string_view text);

}  // namespace trainrt::runlog
