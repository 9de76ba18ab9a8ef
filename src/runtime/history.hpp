#pragma once
// What events.jsonl says about the run's attempts (one attempt = one `start` until its `stop`,
// `finish` or `failure`). Failures count against [failure] max_failures since the last `finish`
// or final `failure` record, across requeues and relaunches. Pure: unit-tested on event lists.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainrt::runtime {

struct AttemptHistory {
    int failures = 0;             // failed attempts counted so far
    bool open = false;            // the latest attempt started and has no end record
    std::string last_end;         // "stop (time_limit)", "failure: ...", "finish", "" when none
    std::string last_attempt_job; // job id of the latest start
    int last_attempt_restart = 0;
};

AttemptHistory summarize(const std::vector<nlohmann::json>& events);

// Parses <run_dir>/events.jsonl; a torn (unparsable) line is skipped. Empty when absent.
std::vector<nlohmann::json> read_events(const std::string& run_dir);

}  // namespace trainrt::runtime
