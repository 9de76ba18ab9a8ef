#include "tune/python_search.hpp"

#include <fmt/format.h>

#include "trainrt/error.hpp"
#include "workloads/python_calls.hpp"

namespace trainrt::tune {

nlohmann::json domain_json(const Domain& domain) {
    return {{"key", domain.key}, {"kind", domain_kind_name(domain.kind)}, {"values", domain.values},
            {"low", domain.low}, {"high", domain.high}, {"q", domain.q}};
}

nlohmann::json values_json(const TrialValues& values) {
    nlohmann::json object = nlohmann::json::object();
    for (const auto& [key, value] : values) object[key] = value;
    return object;
}

TrialValues drawn_values(const std::vector<Domain>& space, const nlohmann::json& drawn, const std::string& module) {
    TrialValues values;
    for (const Domain& domain : space) {
        if (!drawn.contains(domain.key) || !drawn[domain.key].is_string())
            throw WorkloadError(fmt::format("tune: the searcher drew no value for {} (trainrt/{}.py)", domain.key, module));
        values.emplace_back(domain.key, drawn[domain.key].get<std::string>());
    }
    return values;
}

void check_python_search(const std::string& module, const nlohmann::json& settings) {
    workloads::call_python(module, "check", settings.dump());
}

TrialValues python_search_trial(const PythonSearchRequest& request) {
    nlohmann::json body{{"maximize", request.mode == ScoreOrder::max},
                        {"seed", optuna_seed(request.seed, request.index)},
                        {"index", request.index},
                        {"settings", request.settings},
                        {"space", nlohmann::json::array()},
                        {"finished", nlohmann::json::array()}};
    for (const Domain& domain : *request.space) body["space"].push_back(domain_json(domain));
    for (const FinishedTrial& trial : request.finished)
        body["finished"].push_back({{"values", values_json(trial.values)}, {"metric", trial.metrics.at(0)},
                                    {"budget", trial.budget}});
    const auto drawn = nlohmann::json::parse(workloads::call_python(request.module, "suggest", body.dump()));
    return drawn_values(*request.space, drawn, request.module);
}

}  // namespace trainrt::tune
