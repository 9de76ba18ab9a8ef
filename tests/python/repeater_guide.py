"""A Tune script with Ray's Repeater around a searcher, as Ray Tune's search guide shows it: Optuna's
draws of `x`, each run as two trials (set_index: config["__trial_index__"] is 0 or 1), four trials
one at a time. Prints REPEATER_GUIDE {json}: the number of trials, how many trials ran each drawn
x, how many trials had each __trial_index__. Under Ray 2.60 it stores its line in
tests/conformance/ray_guides.json; tests/python/test_python_tuner.sh runs it after the port under
trainrt and compares. REPEATER_STORAGE and REPEATER_NAME place the run."""
import collections
import json
import os

from ray import tune
from ray.tune.search import Repeater
from ray.tune.search.optuna import OptunaSearch


def objective(config):
    tune.report({"score": (config["x"] - 0.3) ** 2})


if __name__ == "__main__":
    tuner = tune.Tuner(
        objective,
        param_space={"x": tune.uniform(0, 1)},
        tune_config=tune.TuneConfig(metric="score", mode="min", num_samples=4, max_concurrent_trials=1,
                                    search_alg=Repeater(OptunaSearch(), repeat=2)),
        run_config=tune.RunConfig(name=os.environ.get("REPEATER_NAME", "repeater"),
                                  storage_path=os.environ.get("REPEATER_STORAGE", os.path.abspath("runs"))))
    grid = tuner.fit()
    configs = [r.config for r in grid]
    print("REPEATER_GUIDE", json.dumps({
        "trials": len(configs),
        "trials_per_x": sorted(collections.Counter(c["x"] for c in configs).values()),
        "trials_per_index": [n for _, n in sorted(collections.Counter(c["__trial_index__"] for c in configs).items())]}))
