// cli/tracking_plan: what an export sends to MLflow or TensorBoard, and what it remembers.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cli/tracking_plan.hpp"
#include "trainrt/error.hpp"

using namespace trainrt::cli;
using trainrt::metrics::Row;

namespace {

std::vector<Row> rows_of(std::vector<int> iterations) {
    std::vector<Row> rows;
    for (int i : iterations)
        rows.push_back(Row::parse(R"({"loss": )" + std::to_string(1.0 / i) + R"(, "phase": "train", "_training_iteration": )" +
                                  std::to_string(i) + R"(, "_timestamp": 100.5, "_ranks": {"loss": {"min": 0.5, "max": 1}}})"));
    return rows;
}

}  // namespace

TEST_CASE("--export's value: a tracker and its destination, else one line naming both forms") {
    const TrackingTarget mlflow = parse_export_target("mlflow=file:/x/mlruns");
    CHECK(mlflow.kind == TrackerKind::mlflow);
    CHECK(mlflow.where == "file:/x/mlruns");
    CHECK(parse_export_target("tensorboard=/x/tb=2").where == "/x/tb=2");
    CHECK_THROWS_WITH(parse_export_target("wandb=x"), Catch::Contains("unknown tracker 'wandb'") &&
                                                         Catch::Contains("mlflow=TRACKING_URI"));
    CHECK_THROWS_AS(parse_export_target("mlflow="), trainrt::ConfigError);
    CHECK_THROWS_AS(parse_export_target("mlflow"), trainrt::ConfigError);
}

TEST_CASE("An export remembers its tracker run and last iteration per destination") {
    const TrackingTarget a{TrackerKind::mlflow, "file:/a", "exp"};
    const TrackingTarget b{TrackerKind::mlflow, "file:/a", "other"};
    const TrackingTarget tb{TrackerKind::tensorboard, "/tb/run", ""};
    CHECK(exported_so_far(nlohmann::json::object(), a).run_id.empty());
    nlohmann::json state = with_exported(nullptr, a, {"r1", 7});
    state = with_exported(state, tb, {"/tb/run", 3});
    CHECK(exported_so_far(state, a).run_id == "r1");
    CHECK(exported_so_far(state, a).last_iteration == 7);
    CHECK(exported_so_far(state, b).run_id.empty());  // another experiment: another run
    CHECK(exported_so_far(state, tb).last_iteration == 3);
}

TEST_CASE("The document holds the rows after the last iteration sent, numeric columns only") {
    const nlohmann::ordered_json report = {{"path", "/runs/r"}, {"status", "stopped"},
                                           {"latest_checkpoint", {{"path", "/runs/r/checkpoints/checkpoint_000004"}}},
                                           {"best_checkpoints", nlohmann::ordered_json::array()}};
    const nlohmann::json run_json = {{"config", {{"run.name", "r"}, {"train.lr", "0.1"}}}};
    const std::vector<Row> rows = rows_of({1, 2, 3, 4});
    const TrackingTarget target{TrackerKind::mlflow, "file:/m", ""};
    const nlohmann::json first = export_document(target, {}, {report, run_json, rows});
    CHECK(first["experiment"] == "r");
    CHECK(first["status"] == "KILLED");
    CHECK(first["params"]["train.lr"] == "0.1");
    CHECK(first["tags"]["trainrt.checkpoint.latest"] == "/runs/r/checkpoints/checkpoint_000004");
    REQUIRE(first["points"].size() == 4);
    CHECK(first["points"][0]["step"] == 1);
    CHECK(first["points"][0]["timestamp"] == 100.5);
    const auto& metrics = first["points"][0]["metrics"];
    CHECK(metrics["loss"] == 1.0);
    CHECK(metrics["loss/min"] == 0.5);
    CHECK(!metrics.contains("phase"));
    CHECK(!metrics.contains("_timestamp"));
    const nlohmann::json again = export_document(target, {"r1", 3}, {report, run_json, rows});
    REQUIRE(again["points"].size() == 1);
    CHECK(again["points"][0]["step"] == 4);
    CHECK(again["params"].empty());  // MLflow's parameters are written once
    CHECK(again["run_id"] == "r1");
}

TEST_CASE("MLflow's status of a trainrt run") {
    CHECK(mlflow_status("finished") == "FINISHED");
    CHECK(mlflow_status("failed") == "FAILED");
    CHECK(mlflow_status("stopped") == "KILLED");
    CHECK(mlflow_status("running") == "RUNNING");
}

TEST_CASE("TensorBoard's directory of a run: grouped by the experiment when there is one") {
    CHECK(tensorboard_run_dir("/tb", "", "r") == "/tb/r");
    CHECK(tensorboard_run_dir("/tb", "sweep", "trial_0001") == "/tb/sweep/trial_0001");
}
