"""A Tune script with Ray's HyperOptSearch over a conditional HyperOpt space, as Ray Tune's HyperOpt
guide shows it: hp.choice between two dicts (one holding its own hp.uniform), a constant beside the
hp expressions, six trials one at a time, all but the first four from TPE. Prints HYPEROPT_SEARCH_GUIDE
{json}: the number of trials; for every trial, whether the config the function got equals
result.config, and whether its config has the space's shape (each key, and inside the nested dict the keys
of the option chosen); the
values are HyperOpt's draws, which differ between Ray and trainrt (each seeds its own). Under Ray
2.60 it stores its line in tests/conformance/ray_guides.json; tests/python/test_python_tuner.sh
runs it after the port under trainrt and compares. HYPEROPT_SEARCH_STORAGE and HYPEROPT_SEARCH_NAME place the run."""
import json
import os

from hyperopt import hp
from ray import tune
from ray.tune.search.hyperopt import HyperOptSearch

SPACE = {"optimizer": hp.choice("optimizer", [{"name": "sgd", "momentum": hp.uniform("momentum", 0.5, 0.99)},
                                              {"name": "adam"}]),
         "lr": hp.loguniform("lr", -7, -1), "epochs": 3}


def objective(config):
    loss = abs(config["lr"] - 0.05) + (0.1 if config["optimizer"]["name"] == "adam" else 0.0)
    for epoch in range(config["epochs"]):
        tune.report({"loss": loss / (epoch + 1), "seen": json.dumps(config, sort_keys=True)})


def shape(config):
    return sorted(f"{key}:{','.join(sorted(value))}" if isinstance(value, dict) else key for key, value in config.items())


if __name__ == "__main__":
    tuner = tune.Tuner(
        objective,
        tune_config=tune.TuneConfig(metric="loss", mode="min", num_samples=6, max_concurrent_trials=1,
                                    search_alg=HyperOptSearch(space=SPACE, metric="loss", mode="min", n_initial_points=4)),
        run_config=tune.RunConfig(name=os.environ.get("HYPEROPT_SEARCH_NAME", "hyperopt"),
                                  storage_path=os.environ.get("HYPEROPT_SEARCH_STORAGE", os.path.abspath("runs"))))
    grid = tuner.fit()
    results = list(grid)
    print("HYPEROPT_SEARCH_GUIDE", json.dumps({
        "trials": len(results),
        "iterations": sorted(r.metrics["training_iteration"] for r in results),
        "config_seen_by_the_function": all(json.loads(r.metrics["seen"]) == r.config for r in results),
        "every_config_a_shape_of_the_space": all(" ".join(shape(r.config)) in (
            "epochs lr optimizer:momentum,name", "epochs lr optimizer:name") for r in results),
        "momentum_only_with_sgd": all(("momentum" in r.config["optimizer"]) == (r.config["optimizer"]["name"] == "sgd")
                                      for r in results)}))
