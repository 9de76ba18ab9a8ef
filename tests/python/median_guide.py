"""A Tune script with Ray's MedianStoppingRule as Ray Tune's scheduler guide shows it: six trials of
a function that reports its `q` ten times, run one at a time (so that which trials have reached a
time is the same on every run), the rule deciding from the second report with three other trials'
running means. Prints MEDIAN_GUIDE {json}: each trial's q and its reported iterations (the rule
stops those whose best is under the median of the others'). Under Ray 2.60 it stores its line in
tests/conformance/ray_guides.json; tests/python/test_python_tuner.sh runs it after the port under
trainrt and compares. MEDIAN_STORAGE and MEDIAN_NAME place the run."""
import json
import os

from ray import tune
from ray.tune.schedulers import MedianStoppingRule


def objective(config):
    for _ in range(10):
        tune.report({"score": config["q"]})


if __name__ == "__main__":
    tuner = tune.Tuner(
        objective,
        param_space={"q": tune.grid_search([0.5, 0.6, 0.7, 0.1, 0.9, 0.2])},
        tune_config=tune.TuneConfig(metric="score", mode="max", max_concurrent_trials=1,
                                    scheduler=MedianStoppingRule(time_attr="training_iteration", grace_period=2,
                                                                 min_samples_required=3)),
        run_config=tune.RunConfig(name=os.environ.get("MEDIAN_NAME", "median"),
                                  storage_path=os.environ.get("MEDIAN_STORAGE", os.path.abspath("runs")),
                                  stop={"training_iteration": 10}))
    grid = tuner.fit()
    print("MEDIAN_GUIDE", json.dumps({f"iterations_q{r.config['q']}": r.metrics["training_iteration"]
                                      for r in sorted(grid, key=lambda r: r.config["q"])}))
