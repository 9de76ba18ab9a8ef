#include "cli/results_checkpoints.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "checkpoint/format/catalog.hpp"
#include "checkpoint/format/manifest.hpp"
#include "config/settings.hpp"
#include "config/values.hpp"
#include "runlog/run_files.hpp"
#include "trainrt/error.hpp"

namespace fs = std::filesystem;

namespace trainrt::cli {
namespace {

using Json = nlohmann::ordered_json;

struct Entry {
    std::string name;
    checkpoint::Manifest manifest;
    std::optional<double> score;
};

// Committed checkpoints whose manifest reads, oldest first. One deleted by retention between the
// listing and the read (the job is running) is left out without a warning.
std::vector<Entry> readable(const std::string& run_dir, std::vector<std::string>& warnings) {
    std::vector<Entry> entries;
    for (const std::string& name : checkpoint::committed_names(run_dir)) {
        const std::string dir = checkpoint::checkpoints_dir(run_dir) + "/" + name;
        try {
            entries.push_back({name, checkpoint::read_manifest(dir), std::nullopt});
        } catch (const Error& error) {
            std::error_code ignored;
            if (fs::exists(dir, ignored)) warnings.push_back(fmt::format("checkpoints/{}: skipped: {}", name, error.what()));
        }
    }
    return entries;
}

Json entry_json(const std::string& run_dir, const Entry& entry) {
    return {{"path", checkpoint::checkpoints_dir(run_dir) + "/" + entry.name},
            {"iteration", entry.manifest.iteration},
            {"metrics", entry.manifest.metrics}};
}

// The name in checkpoints/latest, "" when absent or unreadable.
std::string latest_named(const std::string& run_dir) {
    std::ifstream in(checkpoint::checkpoints_dir(run_dir) + "/" + runlog::kLatestCheckpoint);
    std::string name;
    std::getline(in, name);
    return name;
}

std::optional<double> score_of(const Entry& entry, const std::string& attribute) {
    auto found = entry.manifest.metrics.find(attribute);
    if (attribute.empty() || found == entry.manifest.metrics.end() || !found->is_number()) return std::nullopt;
    return found->get<double>();
}

// run.json's config (key -> value text) as a JobConfig; the declared defaults fill what an old
// snapshot lacks, and a value that does not parse is left out (its default then holds).
JobConfig snapshot_config(const Json& config) {
    std::map<std::string, ConfigValue> values;
    for (const OptionSpec& spec : CheckpointSettings::specs()) {
        std::string text = spec.default_value;
        if (config.contains(spec.key) && config[spec.key].is_string()) text = config[spec.key].get<std::string>();
        try {
            values[spec.key] = {config::check_value(spec, text, runlog::kRunJson), runlog::kRunJson};
        } catch (const ConfigError&) {
            if (!spec.default_value.empty()) values[spec.key] = {spec.default_value, "default"};
        }
    }
    return JobConfig(std::move(values));
}

}  // namespace

CheckpointScore checkpoint_score(const Json& run) {
    CheckpointScore score;
    if (!run.is_object() || !run.contains("config") || !run["config"].is_object()) return score;
    const Json& config = run["config"];
    // The snapshot holds the run's merged config: the same keys, read the declared way.
    const CheckpointSettings settings = CheckpointSettings::read(snapshot_config(config));
    score.attribute = settings.score_attribute.value;
    score.higher_is_better = settings.score_order.value == ScoreOrder::max;
    return score;
}

CheckpointsReport report_checkpoints(const std::string& run_dir, const CheckpointScore& score) {
    CheckpointsReport report;
    std::vector<Entry> entries = readable(run_dir, report.warnings);
    if (entries.empty()) return report;
    const std::string latest = latest_named(run_dir);
    auto named = std::find_if(entries.begin(), entries.end(), [&](const Entry& e) { return e.name == latest; });
    report.latest = entry_json(run_dir, named != entries.end() ? *named : entries.back());
    std::reverse(entries.begin(), entries.end());  // newest first
    for (Entry& entry : entries) entry.score = score_of(entry, score.attribute);
    std::stable_sort(entries.begin(), entries.end(), [&score](const Entry& a, const Entry& b) {
        if (!a.score || !b.score) return a.score.has_value() && !b.score.has_value();
        return score.higher_is_better ? *a.score > *b.score : *a.score < *b.score;
    });
    for (const Entry& entry : entries) {
        Json best = entry_json(run_dir, entry);
        best["score"] = entry.score ? entry.manifest.metrics[score.attribute] : Json(nullptr);  // as reported
        report.best.push_back(std::move(best));
    }
    return report;
}

}  // namespace trainrt::cli
