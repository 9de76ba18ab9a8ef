#include "cli/results_text.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cli/results_report.hpp"
#include "metrics/progress_csv.hpp"

namespace trainrt::cli {
namespace {

using Json = nlohmann::ordered_json;

std::string value_text(const Json& value) {
    if (value.is_number_float()) return fmt::format("{:.6g}", value.get<double>());
    if (value.is_string()) return value.get<std::string>();
    return value.dump();
}

std::string hms(double seconds) {
    const long long total = std::llround(std::max(seconds, 0.0));
    return fmt::format("{}:{:02d}:{:02d}", total / 3600, total / 60 % 60, total % 60);
}

std::string line(const char* label, const std::string& text) { return fmt::format("{:<19}{}\n", label, text); }

// The user's metrics of a row (keys without a leading '_', less world_size and restart_count).
std::string metrics_text(const Json& row) {
    if (!row.is_object()) return "none (no result rows yet)";
    std::string text;
    for (const auto& [key, value] : row.items()) {
        if (key.rfind('_', 0) == 0 || key == "world_size" || key == "restart_count") continue;
        text += (text.empty() ? "" : ", ") + key + " = " + value_text(value);
    }
    return text.empty() ? "(no user metrics)" : text;
}

std::string checkpoint_lines(const Json& report) {
    const Json& latest = report["latest_checkpoint"];
    if (latest.is_null()) return line("checkpoints:", "none committed");
    std::string text = line("latest checkpoint:", fmt::format("{} (iteration {})", latest["path"].get<std::string>(),
                                                             latest["iteration"].dump()));
    const Json& score = report["checkpoint_score"];
    text += score["attribute"].is_null() ? "best checkpoints:  by recency (no checkpoint.score_attribute)\n"
                                         : fmt::format("best checkpoints:  by {} ({})\n", score["attribute"].get<std::string>(),
                                                       score["order"].get<std::string>());
    const Json& best = report["best_checkpoints"];
    for (std::size_t i = 0; i < std::min<std::size_t>(3, best.size()); ++i)
        text += fmt::format("  {}. {} (iteration {}){}\n", i + 1, best[i]["path"].get<std::string>(),
                            best[i]["iteration"].dump(),
                            best[i]["score"].is_null() ? "" : ", score " + value_text(best[i]["score"]));
    return text;
}

std::string restart_lines(const Json& restarts) {
    if (restarts.empty()) return line("restarts:", "none");
    constexpr std::size_t kShown = 5;  // the latest ones; --json lists them all
    std::string text = line("restarts:", restarts.size() <= kShown ? std::to_string(restarts.size())
                                                                   : fmt::format("{} (the last {}:)", restarts.size(), kShown));
    for (std::size_t i = restarts.size() > kShown ? restarts.size() - kShown : 0; i < restarts.size(); ++i) {
        const Json& restart = restarts[i];
        const Json& from = restart["resumed_from"];
        text += fmt::format("  attempt {} at {}: {}{}\n", restart["attempt"].dump(), value_text(restart["time"]),
                            value_text(restart["reason"]),
                            from.is_null() ? "; fresh start (no checkpoint)"
                                           : fmt::format("; resumed from {} (iteration {})",
                                                         value_text(from["checkpoint"]), from["iteration"].dump()));
    }
    return text;
}

std::string error_text(const Json& error) {
    if (error.is_null()) return "none";
    const std::string where = error["rank"].is_null() ? "" : "rank " + error["rank"].dump() + ": ";
    return fmt::format("{}{} ({})", where, value_text(error["message"]), value_text(error["reason"]));
}

// "82.4% of 0:10:00 rank-time trained; lost: start-up 3.1%, ..." with the parts over 0.05%.
std::string goodput_text(const Json& goodput) {
    if (goodput["ratio"].is_null()) return "unknown (no timed attempt yet)";
    const double allocated = goodput["allocated_rank_s"].get<double>();
    std::string lost;
    for (const auto& [part, seconds] : goodput["lost_rank_s"].items()) {
        const double share = seconds.get<double>() / allocated;
        if (share < 0.0005) continue;
        std::string name = part == "start_up" ? "start-up" : part;
        std::replace(name.begin(), name.end(), '_', ' ');
        lost += fmt::format("{}{} {:.1f}%", lost.empty() ? "; lost: " : ", ", name, 100 * share);
    }
    const double queued = goodput["between_allocations_s"].get<double>();
    return fmt::format("{:.1f}% of {} rank-time trained{}{}", 100 * goodput["ratio"].get<double>(), hms(allocated),
                       lost, queued > 0 ? fmt::format("; {} queued between allocations (not charged)", hms(queued)) : "");
}

// "attempt 2: training again 18.2 s after the last row (detection 8.6 s, relaunch 8.9 s, ...)".
std::string recovery_lines(const Json& recoveries) {
    std::string text;
    constexpr std::size_t kShown = 3;  // the latest ones; --json lists them all
    for (std::size_t i = recoveries.size() > kShown ? recoveries.size() - kShown : 0; i < recoveries.size(); ++i) {
        const Json& back = recoveries[i];
        const Json& again = back["training_again_s"];
        text += fmt::format("  attempt {}: {} (detection {:.1f} s, relaunch {:.1f} s, start-up {:.1f} s, restore "
                            "{:.1f} s, first iteration {})\n", back["attempt"].dump(),
                            again.is_null() ? "not training yet"
                                            : fmt::format("training again {:.1f} s after the last row", again.get<double>()),
                            back["detection_s"].get<double>(), back["relaunch_s"].get<double>(),
                            back["start_up_s"].get<double>(), back["restore_s"].get<double>(),
                            back["first_iteration_s"].is_null()
                                ? std::string("-")
                                : fmt::format("{:.1f} s", back["first_iteration_s"].get<double>()));
    }
    return text.empty() ? "" : line("recoveries:", std::to_string(recoveries.size())) + text;
}

}  // namespace

std::string human_summary(const Json& report) {
    const std::string ended = report["exit_code"].is_null() ? "" : fmt::format(" (exit {})", report["exit_code"].dump());
    std::string text = line("status:", fmt::format("{}{}: {}", value_text(report["status"]), ended,
                                                   value_text(report["status_detail"])));
    text += line("path:", value_text(report["path"]));
    text += line("workload:", report["workload"].is_null() ? "unknown" : value_text(report["workload"]));
    text += line("world size:", report["world_size"].is_null() ? "unknown" : value_text(report["world_size"]));
    text += line("rows:", fmt::format("{} (last iteration {})", report["rows"].dump(), report["iterations"].dump()));
    text += line("last metrics:", metrics_text(report["metrics"]));
    text += checkpoint_lines(report);
    text += restart_lines(report["restarts"]);
    text += line("error:", error_text(report["error"]));
    text += line("time:", fmt::format("total {}, useful {} (sum of the iterations kept), {} attempt(s)",
                                      hms(report["total_time_s"].get<double>()),
                                      hms(report["useful_time_s"].get<double>()), report["attempts"].dump()));
    text += line("goodput:", goodput_text(report["goodput"]));
    text += recovery_lines(report["recoveries"]);
    for (const Json& warning : report["warnings"]) text += line("note:", value_text(warning));
    return text;
}

// The same table as progress.csv (metrics/progress_csv.hpp), from result.jsonl.
std::string metrics_csv(const std::vector<metrics::Row>& rows) {
    if (rows.empty()) return "";  // no rows: no columns either
    const metrics::TableSchema schema(rows);
    std::string out = metrics::csv_header(schema) + "\n";
    for (const metrics::Row& row : rows) out += metrics::csv_line(schema, metrics::flatten(row)) + "\n";
    return out;
}

}  // namespace trainrt::cli
