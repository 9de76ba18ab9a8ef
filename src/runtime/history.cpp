#include "runtime/history.hpp"

#include <fstream>

#include <fmt/format.h>

namespace trainrt::runtime {
namespace {

std::string field_text(const nlohmann::json& event, const char* key) {
    auto found = event.find(key);
    if (found == event.end() || found->is_null()) return "";
    return found->is_string() ? found->get<std::string>() : found->dump();
}

void on_start(AttemptHistory& history, const nlohmann::json& event) {
    if (history.open) {
        ++history.failures;
        history.last_end = "ended without a record (node failure, SIGKILL or time limit)";
    }
    history.open = true;
    history.last_attempt_job = field_text(event, "job_id");
    history.last_attempt_restart = event.value("restart_count", 0);
}

void on_failure(AttemptHistory& history, const nlohmann::json& event) {
    // Several ranks may record the same failed attempt: only the first record counts.
    const bool counts = history.open || event.value("phase", "") == "launch";
    if (counts && !event.value("final", false)) ++history.failures;
    if (counts || event.value("final", false))
        history.last_end = "failure: " + field_text(event, "message");
    history.open = false;
}

}  // namespace

AttemptHistory summarize(const std::vector<nlohmann::json>& events) {
    AttemptHistory history;
    for (const nlohmann::json& event : events) {
        const std::string kind = field_text(event, "event");
        if (kind == "start") {
            on_start(history, event);
        } else if (kind == "failure") {
            on_failure(history, event);
            if (event.value("final", false)) history.failures = 0;  // a new series begins
        } else if (kind == "stop") {
            history.open = false;
            const std::string signal = field_text(event, "signal");
            history.last_end = fmt::format("stop ({}{})", field_text(event, "reason"),
                                           signal.empty() ? "" : " " + signal);
        } else if (kind == "finish") {
            history = AttemptHistory{};
            history.last_end = "finish";
        }
    }
    return history;
}

std::vector<nlohmann::json> read_events(const std::string& run_dir) {
    std::vector<nlohmann::json> events;
    std::ifstream in(run_dir + "/events.jsonl");
    std::string line;
    while (std::getline(in, line)) {
        auto event = nlohmann::json::parse(line, nullptr, false);
        if (!event.is_discarded() && event.is_object()) events.push_back(std::move(event));
    }
    return events;
}

}  // namespace trainrt::runtime
