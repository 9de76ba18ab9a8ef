#include "checkpoint/format/catalog.hpp"

#include <algorithm>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "checkpoint/format/manifest.hpp"
#include "storage/posix.hpp"
#include "runlog/run_files.hpp"
#include "trainrt/error.hpp"

namespace fs = std::filesystem;

namespace trainrt::checkpoint {
namespace {

bool starts_with(const std::string& text, const std::string& prefix) {
    return text.rfind(prefix, 0) == 0;
}

double score_of(const Manifest& manifest, const std::string& attribute, bool higher_is_better) {
    const double worst = higher_is_better ? -1e308 : 1e308;
    if (attribute.empty()) return static_cast<double>(manifest.iteration);
    auto found = manifest.metrics.find(attribute);
    if (found == manifest.metrics.end() || !found->is_number()) return worst;
    return found->get<double>();
}

}  // namespace

std::int64_t iteration_of_name(const std::string& name) {
    if (!starts_with(name, runlog::kCheckpointPrefix)) return -1;
    const std::string digits = name.substr(std::string(runlog::kCheckpointPrefix).size());
    if (digits.empty() || digits.size() > 18 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
        return -1;
    return std::stoll(digits);
}

std::string checkpoints_dir(const std::string& run_dir) { return runlog::path_in(run_dir, runlog::kCheckpointsDir); }

std::string checkpoint_name(std::int64_t iteration) {
    return fmt::format("{}{:06d}", runlog::kCheckpointPrefix, iteration);
}

std::vector<std::string> committed_names(const std::string& run_dir) {
    std::vector<std::string> names;
    const std::string dir = checkpoints_dir(run_dir);
    if (!fs::is_directory(dir)) return names;
    for (const auto& entry : fs::directory_iterator(dir)) {
        std::string name = entry.path().filename().string();
        if (entry.is_directory() && starts_with(name, runlog::kCheckpointPrefix) && iteration_of_name(name) >= 0)
            names.push_back(name);
    }
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
        return iteration_of_name(a) < iteration_of_name(b);
    });
    return names;
}

std::vector<std::string> clean_leftovers(const std::string& run_dir) {
    std::vector<std::string> removed;
    const std::string dir = checkpoints_dir(run_dir);
    if (!fs::is_directory(dir)) return removed;
    for (const auto& entry : fs::directory_iterator(dir)) {
        std::string name = entry.path().filename().string();
        if (starts_with(name, runlog::kPendingPrefix) || starts_with(name, runlog::kDeletingPrefix) ||
            starts_with(name, std::string(runlog::kLatestCheckpoint) + ".tmp.")) {
            fs::remove_all(entry.path());
            removed.push_back(entry.path().string());
        }
    }
    return removed;
}

void write_latest(const std::string& run_dir, const std::string& name) {
    storage::write_file_atomic(checkpoints_dir(run_dir) + "/" + runlog::kLatestCheckpoint, name + "\n");
}

std::vector<std::string> retention_victims(const std::string& run_dir, const std::string& newest,
                                           const RetentionPolicy& policy) {
    if (policy.num_to_keep <= 0) return {};
    std::vector<std::pair<double, std::string>> ranked;
    for (const std::string& name : committed_names(run_dir)) {
        // Ranked by `badness` (ascending): recency ignores score_order; unreadable is worst.
        const bool by_recency = policy.score_attribute.empty();
        double badness = 1e308;
        try {
            double score = score_of(read_manifest(checkpoints_dir(run_dir) + "/" + name),
                                    policy.score_attribute, policy.higher_is_better);
            badness = by_recency || policy.higher_is_better ? -score : score;
        } catch (const Error&) {
        }
        ranked.emplace_back(badness, name);
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> victims;
    for (std::size_t i = 0; i < ranked.size(); ++i)
        if (i >= static_cast<std::size_t>(policy.num_to_keep) && ranked[i].second != newest)
            victims.push_back(ranked[i].second);
    return victims;
}

std::string retire_checkpoint(const std::string& run_dir, const std::string& name) {
    const std::string dir = checkpoints_dir(run_dir);
    const std::string doomed = dir + "/" + runlog::kDeletingPrefix + name;
    storage::rename_durable(dir + "/" + name, doomed);
    return doomed;
}

}  // namespace trainrt::checkpoint
