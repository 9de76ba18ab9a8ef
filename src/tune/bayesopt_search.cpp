#include "tune/bayesopt_search.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trainrt/error.hpp"
#include "workloads/python_calls.hpp"

namespace trainrt::tune {

void check_bayesopt() { workloads::call_python("_bayesopt_search", "check", ""); }

TrialValues bayesopt_trial(const BayesOptRequest& request) {
    nlohmann::json body{{"maximize", request.mode == ScoreOrder::max},
                        {"seed", optuna_seed(request.seed, request.index)},
                        {"random_steps", request.random_steps},
                        {"utility", {{"kind", request.utility}, {"kappa", request.kappa}, {"xi", request.xi}}},
                        {"bounds", nlohmann::json::array()},
                        {"finished", nlohmann::json::array()}};
    for (const Domain& domain : *request.space) body["bounds"].push_back({domain.key, domain.low, domain.high});
    for (const FinishedTrial& trial : request.finished) {
        nlohmann::json values = nlohmann::json::object();
        for (const auto& [key, value] : trial.values) values[key] = value;
        body["finished"].push_back({{"values", values}, {"metric", trial.metrics.at(0)}});
    }
    const auto drawn = nlohmann::json::parse(workloads::call_python("_bayesopt_search", "suggest", body.dump()));
    TrialValues values;
    for (const Domain& domain : *request.space) {
        if (!drawn.contains(domain.key) || !drawn[domain.key].is_string())
            throw WorkloadError(fmt::format("tune: BayesOpt drew no value for {} (trainrt/_bayesopt_search.py)", domain.key));
        values.emplace_back(domain.key, drawn[domain.key].get<std::string>());
    }
    return values;
}

}  // namespace trainrt::tune
