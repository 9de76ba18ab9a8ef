"""A Tune script whose callback makes a class Trainable checkpoint, as Ray's
custom_checkpointing_with_callback example does: two trials of six steps, no periodic or end
checkpoints, a callback that sets result[SHOULD_CHECKPOINT] at iterations 2 and 5. Prints
CALLBACK_CHECKPOINT_GUIDE {json}: each trial's checkpoints (the iterations their metrics hold) and
what the last one restores; and a function trainable's sweep with the same callback (the request
does nothing there under Ray 2.60: a function checkpoints when it reports one): its trials'
iterations and checkpoints. Under Ray 2.60 it stores its line in tests/conformance/ray_guides.json;
tests/python/test_python_tuner.sh runs it after the port under trainrt and compares.
CALLBACK_CHECKPOINT_STORAGE and CALLBACK_CHECKPOINT_NAME place the run."""
import json
import os

from ray import tune
from ray.tune import Callback
from ray.tune.result import SHOULD_CHECKPOINT


class AtTwoAndFive(Callback):
    def on_trial_result(self, iteration, trials, trial, result, **info):
        if result["training_iteration"] in (2, 5):
            result[SHOULD_CHECKPOINT] = True


class Steps(tune.Trainable):
    def setup(self, config):
        self.step_count = 0

    def step(self):
        self.step_count += 1
        return {"score": self.step_count * self.config["rate"]}

    def save_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "state.json"), "w") as file:
            json.dump({"steps": self.step_count}, file)

    def load_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "state.json")) as file:
            self.step_count = json.load(file)["steps"]


def counting(config):
    for step in range(6):
        tune.report({"score": step * config["rate"]})


def function_sweep():
    """The same callback over a function trainable: {"iterations": [...], "checkpoints": [...]} per trial."""
    grid = tune.Tuner(
        counting, param_space={"rate": tune.grid_search([1.0, 2.0])},
        run_config=tune.RunConfig(
            name=os.environ.get("CALLBACK_CHECKPOINT_NAME", "callback_checkpoint") + "_function",
            storage_path=os.environ.get("CALLBACK_CHECKPOINT_STORAGE", os.path.abspath("runs")),
            callbacks=[AtTwoAndFive()])).fit()
    return {"iterations": sorted(r.metrics["training_iteration"] for r in grid),
            "checkpoints": sorted(len(r.best_checkpoints) for r in grid)}


if __name__ == "__main__":
    tuner = tune.Tuner(
        Steps,
        param_space={"rate": tune.grid_search([1.0, 2.0])},
        tune_config=tune.TuneConfig(metric="score", mode="max"),
        run_config=tune.RunConfig(
            name=os.environ.get("CALLBACK_CHECKPOINT_NAME", "callback_checkpoint"),
            storage_path=os.environ.get("CALLBACK_CHECKPOINT_STORAGE", os.path.abspath("runs")),
            stop={"training_iteration": 6}, callbacks=[AtTwoAndFive()],
            checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=0, checkpoint_at_end=False)))
    summary = {}
    for result in sorted(tuner.fit(), key=lambda r: r.config["rate"]):
        iterations = sorted(metrics["training_iteration"] for _, metrics in result.best_checkpoints)
        with result.checkpoint.as_directory() as directory, open(os.path.join(directory, "state.json")) as file:
            restored = json.load(file)["steps"]
        summary[f"rate{result.config['rate']}"] = {"checkpoint_iterations": iterations, "last_restores": restored}
    summary["function_trainable"] = function_sweep()
    print("CALLBACK_CHECKPOINT_GUIDE", json.dumps(summary))
