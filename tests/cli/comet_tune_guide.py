"""Ray Tune's Comet integration as Ray's tracking guide shows it, written here with Ray's names:
CometLoggerCallback(online=False, ...) in the Tuner's run_config (a Comet experiment per trial,
offline: a local archive that `comet upload` sends later). tests/cli/test_tracking.sh runs it
after the port (`ray` -> `trainrt`) and reads the archives back:

    python3 comet_tune_guide.py STORAGE_DIR OFFLINE_DIR
"""
import sys

from ray import tune
from ray.air.integrations.comet import CometLoggerCallback


def train_function(config):
    for step in range(config["steps"]):
        tune.report({"iterations": step, "mean_loss": 1.0 / (1 + config["width"] * step)})


def main(storage, offline_dir):
    tuner = tune.Tuner(
        train_function,
        run_config=tune.RunConfig(name="comet", storage_path=storage, callbacks=[
            CometLoggerCallback(online=False, tags=["trainrt-test"], project_name="comet_example",
                                offline_directory=offline_dir)]),
        tune_config=tune.TuneConfig(metric="mean_loss", mode="min"),
        param_space={"width": tune.grid_search([1, 3]), "steps": 3},
    )
    results = tuner.fit()
    print("COMET_TUNE best width", results.get_best_result().config["width"], flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:3])
