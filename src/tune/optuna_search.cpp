#include "tune/optuna_search.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trainrt/error.hpp"
#include "tune/python_search.hpp"
#include "workloads/python_calls.hpp"

namespace trainrt::tune {
std::uint32_t optuna_seed(std::uint64_t seed, std::size_t index) {
    std::uint64_t mixed = seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(index) + 1;
    mixed ^= mixed >> 31;
    mixed *= 0xBF58476D1CE4E5B9ULL;
    return static_cast<std::uint32_t>(mixed ^ (mixed >> 32));
}

void check_optuna(const std::string& space_function) {
    workloads::call_python("_optuna_search", "check", space_function);
}

namespace {

// A define-by-run function names [train] values without their section.
constexpr const char* kTrainPrefix = "train.";

nlohmann::json function_values_json(const TrialValues& values) {
    nlohmann::json object = nlohmann::json::object();
    for (const auto& [key, value] : values)
        if (key.rfind(kTrainPrefix, 0) == 0) object[key.substr(std::string(kTrainPrefix).size())] = value;
    return object;
}

TrialValues function_values(const nlohmann::json& drawn) {
    TrialValues values;
    for (const auto& [key, value] : drawn.items()) {
        if (!value.is_string())
            throw WorkloadError(fmt::format("tune: the define-by-run function's {} came back as {}, not config text "
                                            "(trainrt/_optuna_search.py)", key, value.dump()));
        values.emplace_back(kTrainPrefix + key, value.get<std::string>());
    }
    return values;
}

}  // namespace

std::vector<Objective> parse_objectives(const std::string& text, const std::string& key, const std::string& source) {
    std::vector<Objective> objectives;
    for (const std::string& entry : split_arguments(text)) {
        const std::size_t colon = entry.rfind(':');
        const std::string metric = colon == std::string::npos ? "" : trim(entry.substr(0, colon));
        const std::string mode = colon == std::string::npos ? "" : trim(entry.substr(colon + 1));
        const bool named_twice = std::any_of(objectives.begin(), objectives.end(),
                                             [&](const Objective& o) { return o.metric == metric; });
        if (metric.empty() || (mode != "min" && mode != "max") || named_twice)
            throw ConfigError(fmt::format("tune: {} = {} ({}): '{}' is not METRIC:min or METRIC:max{}; e.g. {} = "
                                          "loss:min, accuracy:max", key, text, source, entry,
                                          named_twice ? " (its metric is named twice)" : "", key));
        objectives.push_back({metric, mode == "min" ? ScoreOrder::min : ScoreOrder::max});
    }
    return objectives;
}

TrialValues optuna_trial(const OptunaRequest& request) {
    const bool by_function = !request.space_function.empty();
    nlohmann::json modes = nlohmann::json::array();
    for (const Objective& objective : request.objectives) modes.push_back(objective.mode == ScoreOrder::max ? "max" : "min");
    nlohmann::json body{{"modes", modes},
                        {"seed", optuna_seed(request.seed, request.index)},
                        {"n_startup_trials", request.n_startup_trials},
                        {"space", nlohmann::json::array()},
                        {"space_function", request.space_function},
                        {"finished", nlohmann::json::array()}};
    for (const Domain& domain : *request.space) body["space"].push_back(domain_json(domain));
    for (const FinishedTrial& trial : request.finished)
        body["finished"].push_back({{"values", by_function ? function_values_json(trial.values) : values_json(trial.values)},
                                    {"metrics", trial.metrics}});
    const auto drawn = nlohmann::json::parse(workloads::call_python("_optuna_search", "suggest", body.dump()));
    return by_function ? function_values(drawn) : drawn_values(*request.space, drawn, "_optuna_search");
}

}  // namespace trainrt::tune
