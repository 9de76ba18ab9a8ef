#include "runlog/sweep_record.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runlog/run_files.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace trainrt::runlog {
namespace {

constexpr const char* kStateFile = kSweepRecord;
const char* const kStatusNames[] = {"PENDING", "RUNNING", "TERMINATED", "ERROR"};

TrialStatus status_of(const std::string& name, const std::string& path) {
    for (int s = 0; s < 4; ++s)
        if (name == kStatusNames[s]) return static_cast<TrialStatus>(s);
    throw StorageError(fmt::format("{}: unknown trial status '{}'", path, name));
}

nlohmann::ordered_json values_json(const TrialValues& values) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (const auto& [key, value] : values) object[key] = value;
    return object;
}

TrialValues values_of(const nlohmann::ordered_json& object) {
    TrialValues values;
    for (const auto& [key, value] : object.items()) values.emplace_back(key, value.get<std::string>());
    return values;
}

nlohmann::ordered_json to_json(const TrialRecord& trial) {
    const nlohmann::ordered_json values = values_json(trial.values);
    nlohmann::ordered_json decisions = nlohmann::ordered_json::array();
    for (const RungDecision& d : trial.decisions) {
        nlohmann::ordered_json row = {{"rung", d.rung}, {"value", d.value}, {"cutoff", d.cutoff}, {"seen", d.seen},
                                      {"promoted", d.promoted}, {"donor", d.donor}};
        if (!d.values.empty()) row["values"] = values_json(d.values);
        decisions.push_back(row);
    }
    return {{"index", trial.index}, {"name", trial.name}, {"status", status_name(trial.status)},
            {"attempts", trial.attempts}, {"failures", trial.failures}, {"node_losses", trial.node_losses},
            {"last_exit", trial.last_exit}, {"target", trial.target},
            {"values", values}, {"decisions", decisions}, {"started_unix", trial.started_unix}};
}

TrialRecord trial_of(const nlohmann::ordered_json& row, const std::string& path) {
    TrialRecord trial;
    trial.index = row.at("index").get<std::size_t>();
    trial.name = row.at("name").get<std::string>();
    trial.status = status_of(row.at("status").get<std::string>(), path);
    trial.attempts = row.at("attempts").get<int>();
    trial.failures = row.value("failures", 0);
    trial.node_losses = row.value("node_losses", 0);
    trial.last_exit = row.at("last_exit").get<int>();
    trial.values = values_of(row.at("values"));
    trial.target = row.value("target", std::int64_t{0});
    trial.started_unix = row.value("started_unix", std::vector<double>{});
    for (const auto& d : row.value("decisions", nlohmann::ordered_json::array()))
        trial.decisions.push_back({d.at("rung").get<std::int64_t>(), d.at("value").get<double>(), d.at("cutoff").get<double>(),
                                   d.at("seen").get<std::size_t>(), d.at("promoted").get<bool>(),
                                   d.value("donor", std::int64_t{-1}),
                                   values_of(d.value("values", nlohmann::ordered_json::object()))});
    return trial;
}

}  // namespace

const char* status_name(TrialStatus status) { return kStatusNames[static_cast<int>(status)]; }

SweepState load_state(const std::string& sweep_dir) {
    const std::string path = sweep_dir + "/" + kStateFile;
    SweepState state;
    if (!std::filesystem::exists(path)) return state;
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    try {
        const nlohmann::ordered_json json = nlohmann::ordered_json::parse(text.str());
        state.definition = json.at("definition").get<std::map<std::string, std::string>>();
        state.metric = json.value("metric", std::string());
        state.mode = json.value("mode", std::string("max"));
        for (const nlohmann::ordered_json& row : json.at("trials")) state.trials.push_back(trial_of(row, path));
    } catch (const nlohmann::json::exception& error) {
        throw StorageError(fmt::format("{} does not read as a sweep record ({}); it was not written by "
                                          "trainrt tune, or was damaged: move it away to start the sweep over",
                                          path, error.what()));
    }
    return state;
}

void save_state(const std::string& sweep_dir, const SweepState& state) {
    nlohmann::ordered_json json{{"format", "trainrt-sweep"}, {"format_version", 1}};
    json["definition"] = state.definition;
    json["metric"] = state.metric;
    json["mode"] = state.mode;
    json["trials"] = nlohmann::ordered_json::array();
    for (const TrialRecord& trial : state.trials) json["trials"].push_back(to_json(trial));
    storage::write_file_atomic(sweep_dir + "/" + kStateFile, json.dump(2) + "\n");
}

std::size_t reopen_errored(SweepState& state) {
    std::size_t reopened = 0;
    for (TrialRecord& trial : state.trials)
        if (trial.status == TrialStatus::error) trial.status = TrialStatus::pending, trial.failures = 0, ++reopened;
    return reopened;
}

bool stopped_early(const SweepState& state, const TrialRecord& trial) {
    const auto rungs = state.definition.find("tune.asha.rungs");
    if (rungs == state.definition.end() || trial.status != TrialStatus::terminated || trial.decisions.empty()) return false;
    std::istringstream words(rungs->second);
    std::int64_t rung = 0, last = 0;
    while (words >> rung) last = rung;
    const RungDecision& decision = trial.decisions.back();
    return !decision.promoted && decision.rung < last;
}

std::string definition_change(const std::map<std::string, std::string>& stored,
                              const std::map<std::string, std::string>& now) {
    for (const auto& [key, value] : now) {
        auto found = stored.find(key);
        if (found == stored.end()) return fmt::format("{} added ({})", key, value);
        if (found->second != value) return fmt::format("{}: {} -> {}", key, found->second, value);
    }
    for (const auto& [key, value] : stored)
        if (!now.count(key)) return fmt::format("{} removed (was {})", key, value);
    return "";
}

}  // namespace trainrt::runlog
