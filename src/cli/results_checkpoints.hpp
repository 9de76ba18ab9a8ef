#pragma once
// A run directory's committed checkpoints as `trainrt results` reports them: the latest one, and
// all of them ranked best first by the run's checkpoint.score_attribute and score_order.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainrt::cli {

struct CheckpointScore {
    std::string attribute;         // a reported metric; "" ranks by recency
    bool higher_is_better = true;  // score_order = max
};

// From run.json's config snapshot; recency when run.json is null or has no score_attribute.
CheckpointScore checkpoint_score(const nlohmann::ordered_json& run);

struct CheckpointsReport {
    nlohmann::ordered_json latest = nullptr;                      // null or {path, iteration, metrics}
    nlohmann::ordered_json best = nlohmann::ordered_json::array();  // {path, iteration, metrics, score}
    std::vector<std::string> warnings;  // one line per committed checkpoint whose manifest is unreadable
};

// Paths are `run_dir` + "/checkpoints/<name>". Latest: the one the `latest` file names, else the
// newest by iteration. Best: by score (checkpoints without a numeric score last), ties and the
// rest newest first; with no score attribute, newest first and every score null.
CheckpointsReport report_checkpoints(const std::string& run_dir, const CheckpointScore& score);

}  // namespace trainrt::cli
