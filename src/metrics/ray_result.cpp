#include "metrics/ray_result.hpp"

#include <cmath>
#include <ctime>

namespace trainrt::metrics {
namespace {

// trainrt's autofilled field -> Ray's name for it.
constexpr std::pair<const char*, const char*> kRenamed[] = {{"_training_iteration", "training_iteration"},
                                                            {"_time_this_iter_s", "time_this_iter_s"},
                                                            {"_time_total_s", "time_total_s"}};

std::string local_date(std::time_t seconds) {
    std::tm local{};
    localtime_r(&seconds, &local);
    char text[32];
    return std::strftime(text, sizeof text, "%Y-%m-%d_%H-%M-%S", &local) > 0 ? text : "";
}

}  // namespace

Row with_ray_names(Row row) {
    if (!row.is_object()) return row;
    for (const auto& [ours, rays] : kRenamed)
        if (row.contains(ours) && !row.contains(rays)) row[rays] = row[ours];
    if (const std::optional<double> stamp = number_in(row, "_timestamp")) {
        const auto seconds = static_cast<std::time_t>(std::floor(*stamp));
        if (!row.contains("timestamp")) row["timestamp"] = static_cast<std::int64_t>(seconds);
        if (!row.contains("date")) row["date"] = local_date(seconds);
    }
    return row;
}

}  // namespace trainrt::metrics
