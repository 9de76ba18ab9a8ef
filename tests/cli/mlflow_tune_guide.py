"""Ray Tune's MLflow integration as Ray's tune/examples/mlflow_example.py uses it, written here
with Ray's names: MLflowLoggerCallback(save_artifact=True) in the Tuner's run_config, and
setup_mlflow in the function trainable, the experiment made by the driver first. One difference
from Ray's example: setup_mlflow is given the experiment's name. Without it, Ray 2.60 looks for an
experiment named after the trial and fails (under Ray as under trainrt); Ray's conformance run of
that example fails so. tests/cli/test_tracking.sh runs this after the port (`ray` -> `trainrt`)
and checks what MLflow holds:

    python3 mlflow_tune_guide.py STORAGE_DIR CALLBACK_URI MIXIN_URI
"""
import sys

import mlflow

from ray import tune
from ray.air.integrations.mlflow import MLflowLoggerCallback, setup_mlflow


def train_function(config):
    tracker = setup_mlflow(config, tracking_uri=config["mlflow"]["tracking_uri"], experiment_name="mixin_example")
    for step in range(config["steps"]):
        loss = 1.0 / (1 + config["width"] * step)
        tracker.log_metrics({"mean_loss": loss}, step=step)
        tune.report({"iterations": step, "mean_loss": loss})


def main(storage, callback_uri, mixin_uri):
    mlflow.set_tracking_uri(mixin_uri)
    mlflow.set_experiment(experiment_name="mixin_example")
    tuner = tune.Tuner(
        train_function,
        run_config=tune.RunConfig(name="mlflow", storage_path=storage, callbacks=[
            MLflowLoggerCallback(tracking_uri=callback_uri, experiment_name="example", save_artifact=True)]),
        tune_config=tune.TuneConfig(metric="mean_loss", mode="min"),
        param_space={"width": tune.grid_search([1, 3]), "steps": 3, "mlflow": {"tracking_uri": mixin_uri}},
    )
    results = tuner.fit()
    print("MLFLOW_TUNE best width", results.get_best_result().config["width"], flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])
